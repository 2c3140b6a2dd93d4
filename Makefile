# The two commands of the README: `make demo` (the main job) and `make test`.
VENV ?= .venv

.PHONY: setup demo test bench

setup:
	bash scripts/setup.sh

demo: setup
	PATH="$(CURDIR)/.tools/node/node_modules/.bin:$$PATH" $(VENV)/bin/jupyter agent-tools demo

test: setup
	PATH="$(CURDIR)/.tools/node/node_modules/.bin:$$PATH" $(VENV)/bin/python -m pytest

bench: setup
	PATH="$(CURDIR)/.tools/node/node_modules/.bin:$$PATH" $(VENV)/bin/python -m benchmarks
