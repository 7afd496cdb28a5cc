# The two commands of the README:
#   make book   -- set up the environment if missing, execute every chapter (smoke profile, CPU), build the HTML
#   make test   -- set up the environment if missing, run every test (unit tests + notebooks with nbval)
# Other targets: make env | chapters | browser-test | notebooks | bench | clean.
# Variables: PROFILE, DEVICE, CHAPTERS, SOURCE (book: committed, the richest committed results, computing PROFILE
# only where none exist; live: compute PROFILE in every chapter), TEST_WORKERS (processes for the unit tests: auto,
# one per core), PYTHON, VENV.

PYTHON   ?= python3
VENV     ?= .venv
PROFILE  ?= smoke
DEVICE   ?= cpu
CHAPTERS ?= all
SOURCE   ?= committed
TEST_WORKERS ?= auto
BIN      := $(VENV)/bin
STAMP    := $(VENV)/.hashlib-installed

# Nothing in the book downloads from the Hugging Face hub: keep every HF library offline and its cache local.
export HF_HUB_OFFLINE ?= 1
export HF_DATASETS_OFFLINE ?= 1
export TRANSFORMERS_OFFLINE ?= 1
export HF_HOME ?= $(CURDIR)/.cache/huggingface
export MPLBACKEND ?= Agg
export PYDEVD_DISABLE_FILE_VALIDATION ?= 1

.PHONY: book test env chapters browser-test notebooks bench clean

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
	$(BIN)/python -m hashlib_core.runner --profile $(PROFILE) --device $(DEVICE) --source $(SOURCE) \
		--chapters $(CHAPTERS) --html

chapters: env
	$(BIN)/python -m hashlib_core.runner --profile $(PROFILE) --device $(DEVICE) --source live --chapters $(CHAPTERS)

# The unit tests spread over TEST_WORKERS processes (pytest-xdist; a file's tests stay together), then the notebooks
# one after another: a chapter notebook and the scorecard share the smoke results they compute.
test: env
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile tests
	$(BIN)/python -m pytest book

# Opens every page of the built book (_build/html, from `make book`) in Debian's headless chromium: figures loaded,
# math typeset, no stderr boxes or machine paths, wide tables scroll. Screenshots: _build/screenshots/<page>.png.
# Needs the Debian packages chromium and chromium-driver (.ci/run installs them).
browser-test: env
	$(BIN)/python -m pytest -m browser tests/book

# Sync every chapter notebook with its MyST text file (book/src/<name>.md; the newer one wins), without outputs.
notebooks: env
	$(BIN)/jupytext --sync book/*.ipynb

bench: env
	$(BIN)/python -m hashlib_core.benchmarks.hashing

clean:
	rm -rf _build .cache/huggingface .pytest_cache .hypothesis
