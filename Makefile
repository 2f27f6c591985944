# `make demo` and `make test` work on a fresh machine with only python3.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

# Real clients the tests drive (Debian packages; each package's command has its name), and
# Node.js for the TypeScript package (js/).
SYSTEM_PACKAGES := curl zstd chromium valgrind

.PHONY: demo test lint typecheck clean system js

$(STAMP): pyproject.toml src/zeroc/learned/_native.c
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev,bench,http,tabular,dataframes]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/zeroc bench --quick

lint: $(STAMP)
	$(BIN)/ruff check src tests spec examples fuzz
	$(BIN)/ruff format --check src tests spec examples fuzz

typecheck: $(STAMP)
	$(BIN)/mypy

system:
	@missing=""; for p in $(SYSTEM_PACKAGES); do command -v $$p >/dev/null || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; sudo=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$sudo apt-get update -q && $$sudo apt-get install -y -q --no-install-recommends $$missing; \
	fi; \
	if ! command -v node >/dev/null || ! command -v npm >/dev/null; then \
	  echo "installing Debian packages: nodejs npm"; sudo=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$sudo apt-get update -q && $$sudo apt-get install -y -q --no-install-recommends nodejs npm; \
	fi

# The TypeScript package (js/): its dependencies as locked, then tsc and node's test runner,
# which decodes every golden vector in spec/vectors.
js/node_modules/.package-lock.json: js/package-lock.json
	cd js && npm ci --no-audit --no-fund

js: system js/node_modules/.package-lock.json
	cd js && npm test

test: lint typecheck system js
	$(BIN)/pytest -q

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis js/node_modules js/dist
