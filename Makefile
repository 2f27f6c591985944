# `make demo` and `make test` work on a fresh machine with only python3.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint typecheck clean

$(STAMP): pyproject.toml src/zeroc/learned/_native.c
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev,bench,http,tabular]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/zeroc bench --quick

lint: $(STAMP)
	$(BIN)/ruff check src tests spec examples
	$(BIN)/ruff format --check src tests spec examples

typecheck: $(STAMP)
	$(BIN)/mypy

test: lint typecheck
	$(BIN)/pytest -q

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis
