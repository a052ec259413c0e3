#!/usr/bin/env bash
# Slurm for the cluster test (crates/actuator/tests/slurm.rs): Debian's slurmctld, slurmd,
# slurm-client and munge (Slurm 22.05 on bookworm). Only the packages: the test itself writes
# a configuration for this host in a temporary directory (its cores, loopback addresses,
# free ports, a fresh munge key), starts munged, slurmctld and slurmd there as its own child
# processes and stops them by PID at its end. The packages' own services are never started
# (no systemd here; policy-rc.d refuses them in containers). Idempotent: a stamp and the
# binaries answering mean nothing to do.
set -euo pipefail
cd "$(dirname "$0")/../.."

stamp_dir="${CARGO_TARGET_DIR:-target}/test-env"
stamp="$stamp_dir/slurm.ok"

ready() {
    command -v slurmctld >/dev/null && command -v slurmd >/dev/null \
        && command -v sbatch >/dev/null && command -v munged >/dev/null
}

if [[ -f "$stamp" ]] && ready; then
    echo "setup-test-env: Slurm ready ($(slurmctld -V)), cached"
    exit 0
fi

if ! ready; then
    if [[ "$(id -u)" != 0 ]] || ! command -v apt-get >/dev/null; then
        echo "setup-test-env: Slurm is missing; install Debian's slurmctld slurmd slurm-client munge (as root)" >&2
        exit 1
    fi
    echo "setup-test-env: installing Slurm and munge (apt-get)"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        slurmctld slurmd slurm-client munge >/dev/null
fi

ready
mkdir -p "$stamp_dir"
touch "$stamp"
echo "setup-test-env: Slurm ready ($(slurmctld -V))"
