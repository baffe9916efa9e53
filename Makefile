# `make demo` and `make test` set everything up on a fresh machine (Python 3.11 + the registries).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)

.PHONY: venv demo test lint typecheck pytest clean schemas schemas-check

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	@rm -f $(VENV)/.installed-*
	@touch $@

venv: $(STAMP)

demo: venv
	$(BIN)/python -m agentls.demo

lint: venv
	$(BIN)/ruff check server tests
	$(BIN)/ruff format --check server tests

typecheck: venv
	$(BIN)/mypy

pytest: venv
	@bash scripts/ensure-system-deps.sh
	$(BIN)/python -m pytest -q -ra

schemas: venv
	$(BIN)/python -m agentls.protocol.schema

schemas-check: venv
	$(BIN)/python -m agentls.protocol.schema --check

test: lint typecheck schemas-check pytest

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
