#!/usr/bin/env bash
# cargo-deny, which CI runs on deny.toml (licences, duplicate versions, bans, sources), built
# from crates.io at a pinned version into target/tools/cargo-deny-<version>: the version is
# in the path, so a new pin installs beside the old one and a cached build is never stale.
# Its build uses cargo's own temporary target directory, not ours, and nothing of it is
# shared with the workspace's builds. Idempotent: an installed binary that answers with the
# pinned version is reused.
set -euo pipefail
cd "$(dirname "$0")/../.."

CARGO_DENY_VERSION="0.20.2"

target="${CARGO_TARGET_DIR:-target}"
mkdir -p "$target/tools"
root="$(cd "$target/tools" && pwd)/cargo-deny-$CARGO_DENY_VERSION"
bin="$root/bin/cargo-deny"

if [[ -x "$bin" ]] && [[ "$("$bin" --version 2>/dev/null)" == "cargo-deny $CARGO_DENY_VERSION" ]]; then
    echo "setup-test-env: cargo-deny $CARGO_DENY_VERSION ready, cached"
    exit 0
fi

echo "setup-test-env: building cargo-deny $CARGO_DENY_VERSION from crates.io (a few minutes, once)"
env -u CARGO_TARGET_DIR cargo install --quiet --locked --force \
    --root "$root" --version "$CARGO_DENY_VERSION" cargo-deny
"$bin" --version
