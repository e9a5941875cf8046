# Two commands for a newcomer:  `make demo` (main job)  and  `make test` (test suite).
# Each creates its own virtualenv in .venv and installs what it needs from the package registries.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.codea1-installed
VLLM_VENV  ?= .venv-vllm
VLLM_STAMP := $(VLLM_VENV)/.codea1-installed

.PHONY: install demo test lint clean

install: $(STAMP)

$(STAMP): pyproject.toml scripts/install.sh
	PYTHON=$(PYTHON) VENV=$(VENV) bash scripts/install.sh
	touch $(STAMP)

demo: install
	$(VENV)/bin/codea1 demo

# the real-engine tier (vLLM's CPU build) lives in an environment of its own: scripts/install-vllm.sh
$(VLLM_STAMP): pyproject.toml scripts/install-vllm.sh
	PYTHON=$(PYTHON) VLLM_VENV=$(VLLM_VENV) bash scripts/install-vllm.sh
	[ ! -d $(VLLM_VENV) ] || touch $(VLLM_STAMP)

test: install $(VLLM_STAMP)
	VLLM_VENV=$(VLLM_VENV) bash scripts/test.sh

lint: install
	$(VENV)/bin/ruff check codea1 tests benchmarks scripts && $(VENV)/bin/ruff format --check codea1 tests benchmarks scripts

clean:
	rm -rf $(VENV) $(VLLM_VENV) .pytest_cache
