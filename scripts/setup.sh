#!/usr/bin/env bash
# One set-up for a fresh machine: a virtualenv with the package, every extra and the test and
# benchmark tools, the documentation tools, plus the non-Python servers the tools use (npm language servers, Debian debug
# tools). Idempotent: re-running it only installs what is missing. Prints a line per step with
# its time.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON="${PYTHON:-python3}"
VENV="${VENV:-.venv}"

# step "what" command...: a line when it starts, one with its time when it ends.
step() {
  local title=$1 began=$SECONDS
  shift
  echo "setup: $title ..."
  "$@"
  echo "setup:   done in $((SECONDS - began))s"
}

make_venv() {
  if [ ! -x "$VENV/bin/python" ]; then
    "$PYTHON" -m venv "$VENV"
  fi
  "$VENV/bin/python" -m pip install --quiet --upgrade pip
}

# The editable install also builds the JupyterLab extension (labextension/, with npm) unless its
# build is newer than its sources; see [tool.hatch.build.hooks.jupyter-builder] in pyproject.toml.
# Every extra ([all]: ruff, basedpyright, debugpy, deno), the test and the benchmark tools, and
# the documentation tools ([docs]: `make docs`).
install_package() {
  PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 "$VENV/bin/python" -m pip install --quiet -e ".[all,test,bench,docs]"
}

# npm-installed servers go under .tools/node, found by the specs through the runtime's PATH.
install_npm_servers() {
  mkdir -p .tools/node
  if [ ! -x .tools/node/node_modules/.bin/typescript-language-server ]; then
    npm install --silent --no-fund --no-audit --prefix .tools/node \
      typescript-language-server@4 typescript@6 >/dev/null
  fi
  # JupyterHub's proxy, for the tests under a real hub (tests/hub).
  if [ ! -x .tools/node/node_modules/.bin/configurable-http-proxy ]; then
    npm install --silent --no-fund --no-audit --prefix .tools/node configurable-http-proxy@5 >/dev/null
  fi
  # The TypeScript MCP SDK's client, which checks results against outputSchema with ajv
  # (tests/mcp_endpoint/test_ts_client.py).
  if [ ! -f .tools/node/node_modules/@modelcontextprotocol/sdk/package.json ]; then
    npm install --silent --no-fund --no-audit --prefix .tools/node @modelcontextprotocol/sdk@1 >/dev/null
  fi
  # The MCP Inspector's CLI (tests/mcp_endpoint/test_clients.py).
  if [ ! -x .tools/node/node_modules/.bin/mcp-inspector ]; then
    npm install --silent --no-fund --no-audit --prefix .tools/node @modelcontextprotocol/inspector@2 >/dev/null
  fi
}

# Jupyter Enterprise Gateway for tests/kernels/test_enterprise_gateway.py, in a virtualenv of its
# own: it pins jupyter_server<2 and jupyter_client<7, which this project's venv cannot have.
install_enterprise_gateway() {
  local eg=.tools/enterprise-gateway
  if [ ! -x "$eg/bin/jupyter-enterprisegateway" ]; then
    "$PYTHON" -m venv "$eg"
    "$eg/bin/python" -m pip install --quiet "jupyter_enterprise_gateway>=3.3,<4"
  fi
}

# langchain-mcp-adapters for tests/mcp_endpoint/test_clients.py, in a virtualenv of its own: it
# pins mcp<2, and this project's venv has the newest mcp (2.x).
install_langchain_mcp() {
  local lc=.tools/langchain-mcp
  if [ ! -x "$lc/bin/python" ] || ! "$lc/bin/python" -c "import langchain_mcp_adapters" 2>/dev/null; then
    "$PYTHON" -m venv "$lc"
    "$lc/bin/python" -m pip install --quiet "langchain-mcp-adapters>=0.3,<0.4"
  fi
}

# Debian packages for the C/C++ language server and debugger, and the browser of the JupyterLab
# panel's tests (tests/lab drive Debian's chromium; no browser is ever downloaded). Skipped when
# not root/apt.
# lldb-dap ships only in the versioned lldb-NN packages (bookworm's plain `lldb` is 14, without it).
# Never add plain `lldb` too: its python3-lldb-14 conflicts, and apt would remove lldb-19.
# nginx-light: the reverse proxy tests/mcp_endpoint/test_behind_proxy.py puts in front of the server
# (a short proxy_read_timeout: no call may need a request open longer than max_call_seconds).
DEBIAN_PACKAGES=(clangd lldb-19 gcc chromium nginx-light)
install_debian_packages() {
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null) \
    || echo "setup: could not install $* (their tools will report unavailable)" >&2
}

# The Deno kernel spec for JavaScript eval, inside the venv: registered now so JupyterLab lists
# it from the start (eval would register it at first use anyway).
register_deno_kernel() {
  "$VENV/bin/python" -m jupyter_agent_tools.kernels.deno_spec --install >/dev/null
}

started=$SECONDS
step "virtualenv $VENV" make_venv
step "pip install -e '.[all,test,bench,docs]' (builds the JupyterLab extension when its sources changed)" \
  install_package
if command -v npm >/dev/null 2>&1; then
  step "npm tools in .tools/node (TypeScript language server, JupyterHub's proxy, MCP's TypeScript SDK and Inspector)" install_npm_servers
else
  echo "setup: no npm: the TypeScript language server is left out"
fi
step "Jupyter Enterprise Gateway in .tools/enterprise-gateway (its own venv)" install_enterprise_gateway
step "langchain-mcp-adapters in .tools/langchain-mcp (its own venv)" install_langchain_mcp
missing=()
for pkg in "${DEBIAN_PACKAGES[@]}"; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if [ "${#missing[@]}" -gt 0 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  step "Debian packages: ${missing[*]}" install_debian_packages "${missing[@]}"
fi
step "Deno kernelspec" register_deno_kernel
echo "setup: ready in $((SECONDS - started))s"
