#!/usr/bin/env bash
# `make docker-rehearsal` (docs/submitting.md): the contest's `docker run`, on our own CPUs. A CPU
# image with the contest image's stack (Python 3.10, numpy 1.26.4, transformers 4.53.2, vLLM
# 0.9.2's CPU build on torch 2.6.0) and none of what the zip must bring; the zip unpacked into it
# as the contest does, and the organizers' `run.py`, unchanged, over the contest sample with
# `--network none` and the small converted model in GigaChat's place.
#
#     tools/docker_rehearsal/rehearse.sh [ZIP]          # default dist/submission.zip
#
# Steps, each failing with one line that names it (its log: $D/logs/STEP.log); what is built is
# kept and reused, so a second run after `make zip` only runs the two containers:
#   docker     Debian's docker.io (and mmdebstrap) installed when absent, with apt-get: the only
#              system-wide installs; dockerd started in the background when not running
#   base       a Debian 13 root filesystem made by mmdebstrap from Debian's archive, `docker
#              import`ed as gigamemory-rehearsal-base:<digest of its packages> (kept)
#   wheels     the image's wheels, fetched from PyPI by this machine's Python 3.10 (the one
#              tools/vllm_cpu/setup.sh finds) into $D/wheels; a marker named by the lists' digest
#   image      `docker build` of Dockerfile here, its layers cached; the wheels are served on the
#              host's loopback to a build on the host's network, the only network it has
#   contents   the image's versions are the contest's, and it has none of the zip's pins but
#              those the contest image has too (verdict.py image)
#   model      the GGUF converted to a Hugging Face folder inside the image (tools/vllm_cpu/convert.py)
#   harness    the organizers' src/ from $ORGANIZERS (a git directory or a checkout of
#              github.com/ai-forever/memory_aij2025), or our replica with REPLICA=1; one must be named
#   no-wheels  the run with the zip's wheels removed: it must stop, naming what the image lacks
#   run        the run: submit.csv in $D/output, 4 rows, no fallback, the zip's embedder (verdict.py run)
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
D="${DOCKER_REHEARSAL_DIR:-$ROOT/.docker-rehearsal}"
ZIP="$(realpath -m "${1:-$ROOT/dist/submission.zip}")"
SAMPLE="$(realpath -m "${GIGAMEMORY_SAMPLE:-$ROOT/../shared/data/gigamemory/format_example.jsonl}")"
GGUF="$(realpath -m "${GGUF:-$ROOT/.models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf}")"
ORGANIZERS="${ORGANIZERS:-}"  # a clone of the organizers' repository, or
REPLICA="${REPLICA:-}"  # non-empty: our replica of their harness instead
HARNESS=  # which harness ran, said on the last line (step_harness)
IMAGE="${DOCKER_REHEARSAL_IMAGE:-gigamemory-rehearsal-cpu}"
PORT="${DOCKER_REHEARSAL_PORT:-38765}"
HOST_PYTHON="${HOST_PYTHON:-python3}"  # runs verdict.py (standard library only)
EXIT_GRACE="${DOCKER_REHEARSAL_EXIT_GRACE:-120}"  # seconds a run may take to exit after writing submit.csv
SUITE=trixie
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
# What CPython 3.10 (built on Debian 12) and vLLM's CPU wheel load, in Debian 13's names, and g++:
# torch's inductor compiles vLLM's CPU graphs at start-up (on the GPU, Triton needs a C compiler too).
PACKAGES=ca-certificates,libssl3t64,libffi8,libsqlite3-0,libbz2-1.0,liblzma5,libreadline8t64,libncursesw6,libuuid1,libexpat1,libnsl2,libnuma1,libgomp1,g++
MODEL_NAME=qwen2.5-coder-0.5b-instruct
MODEL="$D/models/$MODEL_NAME"
DOCKER="$(command -v /usr/bin/docker || command -v docker || echo docker)"  # Debian's CLI: the daemon's version

fail() { echo "docker-rehearsal: step '$1' failed: $2 (log: $D/logs/$1.log)" >&2; exit 1; }

# step NAME FUNCTION: the function's output goes to the step's log; a failure is one line.
step() {
    local began=$SECONDS
    echo "docker-rehearsal: $1 ..."
    "$2" >"$D/logs/$1.log" 2>&1 || fail "$1" "$(tail -n 1 "$D/logs/$1.log")"
    sed -n 's/^summary: /  /p' "$D/logs/$1.log"
    echo "  ($((SECONDS - began)) s)"
}

digest() { cat "$@" | sha256sum | cut -c1-12; }

step_docker() {
    if ! command -v dockerd >/dev/null || ! command -v mmdebstrap >/dev/null; then
        [ "$(id -u)" = 0 ] || { echo "no dockerd or mmdebstrap, and not root: apt-get install docker.io mmdebstrap"; return 1; }
        apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q docker.io mmdebstrap || return 1
        DOCKER="$(command -v /usr/bin/docker || command -v docker)"
        echo "summary: installed from Debian: $(dpkg-query -W -f '${Package} ${Version}  ' docker.io mmdebstrap)"
    fi
    if "$DOCKER" info >/dev/null 2>&1; then echo "summary: dockerd running already"; return 0; fi
    # No init system runs it here: started in the background, left running for the next rehearsal.
    setsid dockerd >"$D/logs/dockerd.log" 2>&1 </dev/null &
    echo $! >"$D/dockerd.pid"
    for _ in $(seq 60); do
        "$DOCKER" info >/dev/null 2>&1 && { echo "summary: dockerd started, pid $(cat "$D/dockerd.pid")"; return 0; }
        sleep 1
    done
    echo "dockerd did not answer in 60 s: $(tail -n 1 "$D/logs/dockerd.log")"; return 1
}

step_base() {
    if "$DOCKER" image inspect "$BASE" >/dev/null 2>&1; then echo "summary: $BASE exists"; return 0; fi
    command -v mmdebstrap >/dev/null || { echo "no mmdebstrap: apt-get install mmdebstrap"; return 1; }
    mmdebstrap --variant=minbase --include="$PACKAGES" "$SUITE" "$D/rootfs.tar" "$MIRROR" || return 1
    "$DOCKER" import "$D/rootfs.tar" "$BASE" && rm -f "$D/rootfs.tar" && echo "summary: $BASE imported"
}

host_python() {  # the Python 3.10 tools/vllm_cpu/setup.sh takes (pyenv's, or VLLM_CPU_PYTHON)
    bash -c 'source "$1" && base_python' host_python "$ROOT/tools/vllm_cpu/setup.sh"
}

step_wheels() {
    local marker="$D/.done/wheels-$(digest "$ROOT/tools/vllm_cpu/requirements.txt" "$HERE/image.txt")" py
    if [ -e "$marker" ]; then echo "summary: $(ls "$D/wheels" | wc -l) wheels fetched already"; return 0; fi
    py="$(host_python)" || return 1
    rm -rf "$D/wheels" && mkdir -p "$D/wheels"
    "$py" -m pip wheel -q --wheel-dir "$D/wheels" --no-deps vllm-cpu==0.9.2.post2 || return 1
    "$py" -m pip wheel -q --wheel-dir "$D/wheels" torch==2.6.0 \
        -r "$ROOT/tools/vllm_cpu/requirements.txt" -r "$HERE/image.txt" || return 1
    touch "$marker" && echo "summary: $(ls "$D/wheels" | wc -l) wheels, $(du -sh "$D/wheels" | cut -f1)"
}

context() {  # the build context: the Dockerfile, its lists, the machine's Python 3.10 (no site-packages)
    local py prefix
    py="$(host_python)" || return 1
    prefix="$("$py" -c 'import sys; print(sys.base_prefix)')"
    [ -e "$prefix/lib/libpython3.10.so.1.0" ] && [ "$prefix" != /usr ] \
        || { echo "$py is not a self-contained build (pyenv's, --enable-shared): set VLLM_CPU_PYTHON"; return 1; }
    rm -rf "$D/context" && mkdir -p "$D/context/python"
    cp "$HERE/Dockerfile" "$HERE/image.txt" "$ROOT/tools/vllm_cpu/requirements.txt" "$D/context/"
    tar -C "$prefix" -cf - --exclude='lib/python3.10/site-packages/*' --exclude=lib/python3.10/test \
        --exclude=__pycache__ bin/python3.10 include lib | tar -C "$D/context/python" -xf - || return 1
    echo "python: $prefix"
}

step_image() {
    local status
    context || return 1
    "$(host_python)" -m http.server --bind 127.0.0.1 --directory "$D/wheels" "$PORT" &
    SERVER=$!
    sleep 2
    kill -0 "$SERVER" 2>/dev/null || { echo "cannot serve the wheels on 127.0.0.1:$PORT (DOCKER_REHEARSAL_PORT)"; return 1; }
    "$DOCKER" build --network host --cpu-shares 512 --build-arg BASE="$BASE" \
        --build-arg WHEELS="http://127.0.0.1:$PORT/" -t "$IMAGE" "$D/context"
    status=$?
    kill "$SERVER" && SERVER=
    [ $status = 0 ] || return $status
    # A changed list leaves the previous image behind (~8 GB): older bases and untagged builds go.
    "$DOCKER" image prune -f --filter label=gigamemory.rehearsal=cpu
    "$DOCKER" image ls gigamemory-rehearsal-base --format '{{.Repository}}:{{.Tag}}' | grep -vxF "$BASE" \
        | xargs -r "$DOCKER" rmi
    echo "summary: $IMAGE built"
}

step_contents() {
    local version line
    "$DOCKER" run --rm --network none "$IMAGE" python -m pip list --format json >"$D/logs/pip-list.json" || return 1
    version="$("$DOCKER" run --rm --network none "$IMAGE" python -V)" || return 1
    line="$("$HOST_PYTHON" "$HERE/verdict.py" image "$ROOT/submit/wheels/pins.txt" "$D/logs/pip-list.json" 2>&1)" \
        || { echo "$line"; return 1; }
    echo "summary: $version, $line"
}

step_model() {
    if [ ! -f "$MODEL/config.json" ]; then
        [ -f "$GGUF" ] || { echo "no GGUF at $GGUF (make model)"; return 1; }
        mkdir -p "$D/models"
        "$DOCKER" run --rm --network none --cpu-shares 512 --user 0 -v "$GGUF:/gguf/$(basename "$GGUF"):ro" \
            -v "$ROOT/tools/vllm_cpu/convert.py:/convert.py:ro" -v "$D/models:/models" "$IMAGE" \
            python /convert.py "/gguf/$(basename "$GGUF")" "/models/$MODEL_NAME" || return 1
    fi
    # safetensors writes the weights readable by their owner only; the container's user is jovyan
    chmod -R a+rX "$MODEL" && echo "summary: $MODEL"
}

step_harness() {
    rm -rf "$D/harness" && mkdir -p "$D/harness"
    if [ -n "$REPLICA" ]; then
        HARNESS="our replica of the organizers' harness (tools/rehearse.py, local_eval/contest)"
    elif [ -f "$ORGANIZERS/src/run.py" ]; then
        cp -r "$ORGANIZERS/src" "$D/harness/src" || return 1
        HARNESS="the organizers' run.py, from the checkout $ORGANIZERS"
    elif [ -n "$ORGANIZERS" ] && git --git-dir="$ORGANIZERS" rev-parse -q --verify HEAD >/dev/null 2>&1; then
        git --git-dir="$ORGANIZERS" archive HEAD src | tar -x -C "$D/harness" || return 1
        HARNESS="the organizers' run.py, from $ORGANIZERS at $(git --git-dir="$ORGANIZERS" rev-parse --short HEAD)"
    else
        echo "no harness named: ORGANIZERS=DIR (git clone https://github.com/ai-forever/memory_aij2025 DIR) or REPLICA=1"
        return 1
    fi
    echo "summary: $HARNESS"
}

# contest_run OUT [docker run options...]: the container, as the contest runs a submission, its
# output to the step's log. A harness still running EXIT_GRACE s after it wrote submit.csv hangs
# (the contest would wait out its 8 hours, then count nothing): stopped, and a failure.
contest_run() {
    local out="$1" mode=replica mounts cid logs status
    shift
    rm -rf "$out" && mkdir -p "$out" && chown 1000:1000 "$out"  # the image's user, jovyan, writes there
    mounts=(-v "$ROOT/tools:/repo/tools:ro" -v "$ROOT/local_eval:/repo/local_eval:ro")
    [ -d "$D/harness/src" ] && { mode=organizers; mounts=(-v "$D/harness/src:/harness/src:ro"); }
    # The budget plans for the sample's dialogues, and an answer on two CPU cores may take many
    # minutes where GigaChat on the A100 takes seconds: no dialogue may be cut for time.
    cid="$("$DOCKER" run -d --network none --cpu-shares 512 "${mounts[@]}" \
        -v "$ZIP:/dist/submission.zip:ro" -v "$SAMPLE:/home/jovyan/data/leaderboard_data.jsonl:ro" \
        -v "$MODEL:/app/models/$MODEL_NAME:ro" -v "$HERE:/rehearsal:ro" -v "$out:/home/jovyan/output" \
        -e "GIGAMEMORY_LLM=vllm:/app/models/$MODEL_NAME" -e GIGAMEMORY_VLLM_MAX_MODEL_LEN=8192 \
        -e "GIGAMEMORY_EXPECTED_DIALOGUES=$(grep -c . "$SAMPLE")" -e GIGAMEMORY_ANSWER_CEILING_S=7200 \
        "$@" "$IMAGE" sh /rehearsal/in_container.sh "$mode")" || return 1
    "$DOCKER" logs -f "$cid" 2>&1 &
    logs=$!
    while [ "$("$DOCKER" inspect -f '{{.State.Running}}' "$cid")" = true ]; do
        if [ -f "$out/submit.csv" ] && [ $(($(date +%s) - $(stat -c %Y "$out/submit.csv"))) -gt "$EXIT_GRACE" ]; then
            "$DOCKER" stop -t 5 "$cid" >/dev/null
            wait "$logs"
            "$DOCKER" rm "$cid" >/dev/null
            echo "the harness wrote submit.csv but had not exited $EXIT_GRACE s later: stopped"
            return 1
        fi
        sleep 5
    done
    wait "$logs"
    status="$("$DOCKER" wait "$cid")"
    "$DOCKER" rm "$cid" >/dev/null
    return "$status"
}

step_no_wheels() {
    if contest_run "$D/output-no-wheels" -e REHEARSAL_NO_WHEELS=1; then
        echo "the run passed without the zip's wheels"; return 1
    fi
    local stopped
    stopped="$(tail -n 1 "$D/logs/no-wheels.log")"
    "$HOST_PYTHON" "$HERE/verdict.py" no-wheels "$D/output-no-wheels" || return 1
    echo "summary: as it must, it stopped: $stopped"
}

step_run() {
    local status
    contest_run "$D/output"
    status=$?
    "$HOST_PYTHON" "$HERE/verdict.py" run "$SAMPLE" "$D/output" | sed 's/^/summary: /' || return 1
    [ $status = 0 ] || { echo "the harness exited with $status"; return 1; }
}

SERVER=
trap '[ -z "$SERVER" ] || kill "$SERVER" 2>/dev/null' EXIT
mkdir -p "$D/.done" "$D/logs" || { echo "docker-rehearsal: cannot create $D" >&2; exit 1; }
[ -f "$ZIP" ] || { echo "docker-rehearsal: no zip at $ZIP (make wheels zip)" >&2; exit 1; }
[ -f "$SAMPLE" ] || { echo "docker-rehearsal: no sample at $SAMPLE (GIGAMEMORY_SAMPLE)" >&2; exit 1; }
BASE="gigamemory-rehearsal-base:$SUITE-$(echo "$SUITE $PACKAGES" | digest -)"
start=$SECONDS
step docker step_docker
step base step_base
step wheels step_wheels
step image step_image
step contents step_contents
step model step_model
step harness step_harness
echo "docker-rehearsal: image and model ready in $((SECONDS - start)) s"
start=$SECONDS
step no-wheels step_no_wheels
step run step_run
echo "docker-rehearsal: passed; the two runs took $((SECONDS - start)) s; outputs in $D/output"
echo "docker-rehearsal: the harness that ran: $HARNESS"
