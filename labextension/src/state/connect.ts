// How an agent connects to this server: what the panel's first run shows (README, "MCP" and
// "jupyter-ai"; "Notebooks" for the Python line).
import { URLExt } from '@jupyterlab/coreutils';

/** The MCP endpoint of this server: under its base URL (JupyterHub, Binder), never bare. */
export function mcpUrl(baseUrl: string): string {
  return URLExt.join(baseUrl, 'agent-tools/mcp');
}

/** The `.jupyter/mcp_settings.json` entry jupyter-ai's agents read (README, "jupyter-ai"). */
export function mcpSettings(url: string): string {
  // As the README gives it, one server per object, laid out to read in a narrow panel.
  const server = `${url}?cwd=.&surface=full&approvals=auto&space=lab`;
  return [
    '{',
    '  "mcp_servers": [{',
    '    "type": "http",',
    '    "name": "jupyter-agent-tools",',
    `    "url": ${JSON.stringify(server)},`,
    '    "headers": [{"name": "Authorization",',
    '                 "value": "token <your Jupyter token>"}]',
    '  }]',
    '}'
  ].join('\n');
}

export const PYTHON_ONE_LINER = 'from jupyter_agent_tools.notebook import open_panel; session = open_panel()';
