# The two commands of the README: `make demo` (the main job) and `make test`.
VENV ?= .venv

.PHONY: setup demo test test-hub bench

setup:
	bash scripts/setup.sh

demo: setup
	PATH="$(CURDIR)/.tools/node/node_modules/.bin:$$PATH" $(VENV)/bin/jupyter agent-tools demo

# The suite but the JupyterHub tests (tests/hub, about 1.5 minutes of their own: CI runs them
# as `make test-hub`), so that it stays within 10 minutes on two cores.
test: setup
	PATH="$(CURDIR)/.tools/node/node_modules/.bin:$$PATH" $(VENV)/bin/python -m pytest -m "not hub"

test-hub: setup
	PATH="$(CURDIR)/.tools/node/node_modules/.bin:$$PATH" $(VENV)/bin/python -m pytest -m hub

bench: setup
	PATH="$(CURDIR)/.tools/node/node_modules/.bin:$$PATH" $(VENV)/bin/python -m benchmarks
