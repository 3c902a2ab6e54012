# The two commands of the README: `make demo` and `make test`.
# Both create the virtual environment on first use (from the package registries).
PYTHON ?= python3
VENV   ?= .venv
BIN     = $(VENV)/bin
STAMP   = $(VENV)/.installed-stamp
DEMO_CLAIM ?= examples/01-expansion-cap-carryforward.claim.json

.PHONY: demo test venv bench clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
# the package's bytecode, once: where PYTHONDONTWRITEBYTECODE is set, every command would compile it again
	$(BIN)/python -m compileall -q src >/dev/null
	touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(BIN)/qmcredit compute $(DEMO_CLAIM)
	$(BIN)/qmcredit serve

test: $(STAMP)
	$(BIN)/python -m pytest $(PYTEST_ARGS)

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_compute.py

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
