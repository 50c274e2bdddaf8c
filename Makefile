# Entry points (see README.md): `make release`, `make test` (everything, what CI runs) and
# `make test-fast` (without the `e2e` and `slow` tests, for local work); `make mathlib
# MATHLIB=<a Mathlib clone, or https://github.com/leanprover-community/mathlib4>` lays out Mathlib at
# the pinned commit, and Batteries and Lean core at the versions it uses (BATTERIES=, LEAN4=: clones
# or URLs; GitHub by default), and the Stacks Project its embedder recipe trains on (STACKS=), under
# build/corpora/ and builds their release into $(OUT)/mathlib.
PY      ?= python3.11
VENV    ?= .venv
BIN     := $(VENV)/bin
OUT     ?= build
MATHLIB_SOURCES := bench/sources/mathlib.yaml
BATTERIES ?= https://github.com/leanprover-community/batteries
LEAN4     ?= https://github.com/leanprover/lean4
STACKS    ?= https://github.com/stacks/stacks-project
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS := 120
export PREFECT_SERVER_ANALYTICS_ENABLED := false
export DO_NOT_TRACK := 1

.PHONY: venv install test test-fast release mathlib clean

$(BIN)/python:
	$(PY) -m venv $(VENV) || python3 -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

# torch first, pinned: an unpinned torch pulls a multi-GB CUDA build.
$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e '.[build,serve,test]'
	touch $@

venv install: $(VENV)/.installed

release: $(VENV)/.installed
	$(BIN)/mathindex release --out $(OUT)

mathlib: $(VENV)/.installed
	@test -n "$(MATHLIB)" || { echo "make mathlib: give MATHLIB=<a Mathlib clone, or https://github.com/leanprover-community/mathlib4>" >&2; exit 2; }
	$(BIN)/mathindex get-corpus "$(MATHLIB)" --sources $(MATHLIB_SOURCES) --name mathlib
	$(BIN)/mathindex get-corpus "$(BATTERIES)" --sources $(MATHLIB_SOURCES) --name batteries
	$(BIN)/mathindex get-corpus "$(LEAN4)" --sources $(MATHLIB_SOURCES) --name lean4
	$(BIN)/mathindex get-corpus "$(STACKS)" --sources $(MATHLIB_SOURCES) --name stacks
	$(BIN)/mathindex release --sources $(MATHLIB_SOURCES) --out $(OUT)/mathlib

test: $(VENV)/.installed
	$(BIN)/python -m pytest --durations=15

test-fast: $(VENV)/.installed
	$(BIN)/python -m pytest -m "not e2e and not slow"

clean:
	rm -rf $(OUT)
