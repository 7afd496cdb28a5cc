# The two commands of the README:
#   make book   -- set up the environment if missing, execute every chapter (smoke profile, CPU), build the HTML
#   make test   -- set up the environment if missing, run every test (unit tests + notebooks with nbval)
# Other targets: make env | chapters | bench | clean.  Variables: PROFILE, DEVICE, CHAPTERS, PYTHON, VENV.

PYTHON   ?= python3
VENV     ?= .venv
PROFILE  ?= smoke
DEVICE   ?= cpu
CHAPTERS ?= all
BIN      := $(VENV)/bin
STAMP    := $(VENV)/.hashlib-installed

# Nothing in the book downloads from the Hugging Face hub: keep every HF library offline and its cache local.
export HF_HUB_OFFLINE ?= 1
export HF_DATASETS_OFFLINE ?= 1
export TRANSFORMERS_OFFLINE ?= 1
export HF_HOME ?= $(CURDIR)/.cache/huggingface
export MPLBACKEND ?= Agg
export PYDEVD_DISABLE_FILE_VALIDATION ?= 1

.PHONY: book test env chapters bench clean

env: $(STAMP)

# torch is installed on its own first, pinned, so that no other package pulls a CUDA build of a newer torch.
# On a CUDA host, install the CUDA build of the same torch version into $(VENV) first (README, "GPU hosts");
# `pip install torch==2.13.0` then finds it already satisfied.
$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet "torch==2.13.0"
	$(BIN)/python -m pip install --quiet -e ".[book,dev]"
	@touch $@

book: env
	$(BIN)/python -m hashlib_core.runner --profile $(PROFILE) --device $(DEVICE) --chapters $(CHAPTERS) --html

chapters: env
	$(BIN)/python -m hashlib_core.runner --profile $(PROFILE) --device $(DEVICE) --chapters $(CHAPTERS)

test: env
	$(BIN)/python -m pytest

bench: env
	$(BIN)/python -m hashlib_core.benchmarks.hashing

clean:
	rm -rf _build .cache/huggingface .pytest_cache .hypothesis
