# The two commands of the README: `make demo` (the main job) and `make test`.
VENV ?= .venv

.PHONY: setup demo test test-hub bench docs

setup:
	bash scripts/setup.sh

demo: setup
	PATH="$(CURDIR)/.tools/node/node_modules/.bin:$$PATH" $(VENV)/bin/jupyter agent-tools demo

# The suite but the JupyterHub tests (tests/hub, about 1.5 minutes of their own: CI runs them
# as `make test-hub`), so that it stays within 10 minutes on two cores. Two workers, a test
# file each at a time (its module-scoped servers stay in one worker): most of a test's time
# is waiting on servers, kernels and the browser, so two cores carry two files at once.
test: setup
	PATH="$(CURDIR)/.tools/node/node_modules/.bin:$$PATH" $(VENV)/bin/python -m pytest -m "not hub" --numprocesses=2 --dist=loadfile

test-hub: setup
	PATH="$(CURDIR)/.tools/node/node_modules/.bin:$$PATH" $(VENV)/bin/python -m pytest -m hub

bench: setup
	PATH="$(CURDIR)/.tools/node/node_modules/.bin:$$PATH" $(VENV)/bin/python -m benchmarks

# The documentation site (docs/): warnings are errors; pages generated from the code
# (configuration, the HTTP routes, the tools' arguments) are written at build time.
docs: setup
	$(VENV)/bin/sphinx-build -W --keep-going -b html docs docs/_build/html
