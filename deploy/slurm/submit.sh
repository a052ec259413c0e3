#!/bin/bash
# Submits an evaluation's shards (shards.sbatch) and its merge (merge.sbatch), which starts
# when every shard has ended, whether it succeeded or not (`afterany`: the merge then names
# the shards to retry). Prints the two job ids. Usage, from this directory or with its path:
#   EVAL_BIN=… EVAL_TASK=… LOG_DIR=… [EVAL_ARGS=…] submit.sh [sbatch options for the shards]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
shards=$(sbatch --parsable --export=ALL "$@" "$here/shards.sbatch")
shards=${shards%%;*}
merge=$(sbatch --parsable --export=ALL --dependency="afterany:$shards" "$here/merge.sbatch")
echo "$shards $merge"
