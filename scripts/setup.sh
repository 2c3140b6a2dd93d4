#!/usr/bin/env bash
# One set-up for a fresh machine: a virtualenv with the package and its test extras, plus the
# non-Python servers the default tools use (npm language servers, Debian debug tools).
# Idempotent: re-running it only installs what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON="${PYTHON:-python3}"
VENV="${VENV:-.venv}"

if [ ! -x "$VENV/bin/python" ]; then
  "$PYTHON" -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install --quiet --upgrade pip
# The editable install also builds the JupyterLab extension (labextension/, with npm) unless its
# build is newer than its sources; see [tool.hatch.build.hooks.jupyter-builder] in pyproject.toml.
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1
"$VENV/bin/python" -m pip install --quiet -e ".[test,bench]"

# npm-installed servers go under .tools/node, found by the specs through the runtime's PATH.
if command -v npm >/dev/null 2>&1; then
  mkdir -p .tools/node
  if [ ! -x .tools/node/node_modules/.bin/typescript-language-server ]; then
    npm install --silent --no-fund --no-audit --prefix .tools/node \
      typescript-language-server@4 typescript@6 >/dev/null
  fi
  # JupyterHub's proxy, for the tests under a real hub (tests/hub).
  if [ ! -x .tools/node/node_modules/.bin/configurable-http-proxy ]; then
    npm install --silent --no-fund --no-audit --prefix .tools/node configurable-http-proxy@5 >/dev/null
  fi
fi

# Debian packages for the C/C++ language server and debugger, and the browser of the JupyterLab
# panel's tests (tests/lab drive Debian's chromium; no browser is ever downloaded). Skipped when
# not root/apt.
# lldb-dap ships only in the versioned lldb-NN packages (bookworm's plain `lldb` is 14, without it).
# Never add plain `lldb` too: its python3-lldb-14 conflicts, and apt would remove lldb-19.
DEBIAN_PACKAGES=(clangd lldb-19 gcc chromium)
missing=()
for pkg in "${DEBIAN_PACKAGES[@]}"; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if [ "${#missing[@]}" -gt 0 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null) \
    || echo "setup: could not install ${missing[*]} (their tools will report unavailable)" >&2
fi

# The Deno kernel spec for JavaScript eval, inside the venv.
"$VENV/bin/python" -m jupyter_agent_tools.kernels.deno_spec --install >/dev/null
