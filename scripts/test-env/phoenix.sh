#!/usr/bin/env bash
# Arize Phoenix, the OpenTelemetry consumer the OTLP exporter's end-to-end test
# (crates/actuator/tests/otel_phoenix.rs) sends a run's spans to and reads them back from, in
# its own venv under target/test-env (its pins clash with the other servers'). The test starts
# `phoenix serve` itself on loopback, with its own storage and telemetry off, and opens the
# trace in Phoenix's UI with inspect.sh's Playwright and Chromium for a screenshot.
# Called by scripts/setup-test-env; cached: a second run only checks the stamp.
set -euo pipefail
cd "$(dirname "$0")/../.."

stamp_dir="${CARGO_TARGET_DIR:-target}/test-env"
mkdir -p "$stamp_dir"
stamp_dir="$(cd "$stamp_dir" && pwd)"

python_bin() {
    local py
    for py in python3.11 python3; do
        if command -v "$py" >/dev/null && "$py" -c 'import sys, venv; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; then
            echo "$py"
            return 0
        fi
    done
    echo "setup-test-env: a Python >= 3.10 with the venv module is needed for Phoenix" >&2
    exit 1
}

want="arize-phoenix==20.26.1"
venv="$stamp_dir/venv-phoenix"
stamp="$venv/.actuator-complete"
if [[ -f "$stamp" ]] && [[ "$(cat "$stamp")" == "$want" ]]; then
    echo "setup-test-env: venv-phoenix ready ($want), cached"
    exit 0
fi
echo "setup-test-env: building venv-phoenix ($want) in $venv"
rm -rf "$venv"
"$(python_bin)" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$want"
# Telemetry off even for this check: Phoenix reports usage unless told not to.
PHOENIX_TELEMETRY_ENABLED=false "$venv/bin/phoenix" --help >/dev/null
echo "$want" >"$stamp"
echo "setup-test-env: venv-phoenix ready ($want)"
