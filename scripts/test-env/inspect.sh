#!/usr/bin/env bash
# The reference itself, for the eval crate's interop tests: inspect_ai 0.3.285 in a venv under
# target/test-env (its log reader, `inspect log dump`, `inspect view`), Playwright for Python
# to drive a browser, and Debian's Chromium (the browser, launched offline by the tests).
# Called by scripts/setup-test-env; cached: a second run only checks the stamp.
set -euo pipefail
cd "$(dirname "$0")/../.."

env_dir="${CARGO_TARGET_DIR:-target}/test-env"
venv="$env_dir/venv-inspect"
packages=("inspect_ai==0.3.285" "playwright==1.65.2")
stamp="$venv/.actuator-ok-$(echo "${packages[*]}" | tr ' =' '_-')"

if ! command -v chromium >/dev/null; then
    if [[ "$(id -u)" != 0 ]] || ! command -v apt-get >/dev/null; then
        echo "setup-test-env: Chromium is missing; install Debian's 'chromium' package (as root: apt-get install -y chromium)" >&2
        exit 1
    fi
    echo "setup-test-env: installing chromium (apt-get)"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi

if [[ -f "$stamp" ]] && "$venv/bin/python" -c "import inspect_ai, playwright" 2>/dev/null; then
    echo "setup-test-env: inspect_ai and playwright ready (cached); $(chromium --version 2>/dev/null)"
    exit 0
fi

echo "setup-test-env: installing ${packages[*]} into $venv"
rm -rf "$venv"
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check "${packages[@]}"
"$venv/bin/python" -c "import inspect_ai, playwright" >/dev/null
touch "$stamp"
echo "setup-test-env: inspect_ai and playwright ready; $(chromium --version 2>/dev/null)"
