#!/usr/bin/env bash
# The MCP interop tests' components (actuator-mcp), pinned, installed into caches under
# target/test-env: the official Python SDK and mcp-server-time in a venv, and the reference
# servers server-everything and server-filesystem from npm. Tests run them directly (python
# from the venv, node on the installed entry points): nothing reaches the network at test time.
# Idempotent: a stamp naming the pins skips the work when they are installed already.
set -euo pipefail
cd "$(dirname "$0")/../.."

MCP_PY_VERSION="2.3.0"
MCP_TIME_VERSION="2026.10.19"
EVERYTHING_VERSION="2026.8.31"
FILESYSTEM_VERSION="2026.8.31"

dir="${CARGO_TARGET_DIR:-target}/test-env"
venv="$dir/venv-mcp"
npm_dir="$dir/npm-mcp"
pins="mcp==$MCP_PY_VERSION mcp-server-time==$MCP_TIME_VERSION everything@$EVERYTHING_VERSION filesystem@$FILESYSTEM_VERSION"
stamp="$dir/mcp.ok"

installed() {
    [[ -f "$stamp" ]] && [[ "$(cat "$stamp")" == "$pins" ]] \
        && "$venv/bin/python" -c 'import mcp, mcp_server_time' 2>/dev/null \
        && [[ -f "$npm_dir/node_modules/@modelcontextprotocol/server-everything/dist/index.js" ]] \
        && [[ -f "$npm_dir/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js" ]]
}

if installed; then
    echo "setup-test-env: MCP components ready ($pins), cached"
    exit 0
fi

for tool in python3 node npm; do
    if ! command -v "$tool" >/dev/null; then
        echo "setup-test-env: '$tool' is missing; the MCP tests need Python 3.10+ and Node 20+" >&2
        exit 1
    fi
done

mkdir -p "$dir"
echo "setup-test-env: installing the MCP Python SDK $MCP_PY_VERSION and mcp-server-time $MCP_TIME_VERSION ($venv)"
[[ -x "$venv/bin/python" ]] || python3 -m venv "$venv"
"$venv/bin/python" -m pip install -q --disable-pip-version-check \
    "mcp==$MCP_PY_VERSION" "mcp-server-time==$MCP_TIME_VERSION"

echo "setup-test-env: installing server-everything $EVERYTHING_VERSION and server-filesystem $FILESYSTEM_VERSION ($npm_dir)"
mkdir -p "$npm_dir"
[[ -f "$npm_dir/package.json" ]] || echo '{"name": "actuator-mcp-test-env", "private": true}' > "$npm_dir/package.json"
npm install --prefix "$npm_dir" --no-audit --no-fund --loglevel=error --save-exact \
    "@modelcontextprotocol/server-everything@$EVERYTHING_VERSION" \
    "@modelcontextprotocol/server-filesystem@$FILESYSTEM_VERSION" >/dev/null

echo "$pins" > "$stamp"
echo "setup-test-env: MCP components ready ($pins)"
