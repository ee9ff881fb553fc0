# Two commands a new user needs: `make run` and `make test`.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: run test venv lint types pytest bench clean

$(BIN)/activate:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

venv: $(BIN)/activate
	$(BIN)/pip install -q -e '.[test]'

run: $(BIN)/activate
	$(BIN)/pip install -q -e .
	$(BIN)/python -m pm_core.mcp.run_demo

lint:
	$(BIN)/ruff check pm_core plugins tests examples
	$(BIN)/ruff format --check pm_core plugins tests examples
	$(BIN)/lint-imports

# mypy finds the built-in plugins under their installed name, pm_plugins, through a
# link to plugins/ (setuptools maps the directory; mypy cannot follow that mapping).
types:
	mkdir -p $(VENV)/typecheck
	ln -sfn $(CURDIR)/plugins $(VENV)/typecheck/pm_plugins
	$(BIN)/mypy

pytest:
	$(BIN)/pytest -p no:cacheprovider -q

test: venv lint types pytest

bench: venv
	$(BIN)/python tests/bench/run.py

clean:
	rm -rf $(VENV) build dist *.egg-info
