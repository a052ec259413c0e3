#!/usr/bin/env bash
# The reference itself, for the eval crate's interop tests: inspect_ai 0.3.285 in a venv under
# target/test-env (its log reader, `inspect log dump`, `inspect view`). Called by
# scripts/setup-test-env; cached: a second run only checks the stamp.
set -euo pipefail
cd "$(dirname "$0")/../.."

env_dir="${CARGO_TARGET_DIR:-target}/test-env"
venv="$env_dir/venv-inspect"
stamp="$venv/.actuator-ok-0.3.285"

if [[ -f "$stamp" ]] && "$venv/bin/python" -c "import inspect_ai" 2>/dev/null; then
    echo "setup-test-env: inspect_ai ready (cached)"
    exit 0
fi

echo "setup-test-env: installing inspect_ai==0.3.285 into $venv"
rm -rf "$venv"
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check "inspect_ai==0.3.285"
"$venv/bin/python" -c "import inspect_ai" >/dev/null
touch "$stamp"
echo "setup-test-env: inspect_ai ready"
