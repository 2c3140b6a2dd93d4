// How an agent connects to this server: what the panel's first run shows (README, "MCP" and
// "jupyter-ai"; "Notebooks" for the Python line), each with an agent token minted per Copy.
import { URLExt } from '@jupyterlab/coreutils';

/** The MCP endpoint of this server: under its base URL (JupyterHub, Binder), never bare. */
export function mcpUrl(baseUrl: string): string {
  return URLExt.join(baseUrl, 'agent-tools/mcp');
}

/** What the snippets show where the agent token goes: each Copy mints a fresh one. */
export const TOKEN_PLACEHOLDER = '<new agent token>';

/** The MCP URL with an agent token as `?token=`, for clients that take a URL alone. */
export function mcpUrlWithToken(url: string, token: string = TOKEN_PLACEHOLDER): string {
  return `${url}?token=${token === TOKEN_PLACEHOLDER ? token : encodeURIComponent(token)}`;
}

/** The `.jupyter/mcp_settings.json` entry jupyter-ai's agents read (docs: "jupyter-ai"). */
export function mcpSettings(url: string, token: string = TOKEN_PLACEHOLDER): string {
  // As the docs give it, one server per object, laid out to read in a narrow panel. The run's
  // options are the agent token's ceiling; the URL names only where its cards show.
  const server = `${url}?space=lab`;
  return [
    '{',
    '  "mcp_servers": [{',
    '    "type": "http",',
    '    "name": "jupyter-agent-tools",',
    `    "url": ${JSON.stringify(server)},`,
    '    "headers": [{"name": "Authorization",',
    `                 "value": ${JSON.stringify(`token ${token}`)}}]`,
    '  }]',
    '}'
  ].join('\n');
}

/** A ceiling as the panel mints it: what each Copy's token allows at most. */
export interface ICeilingChoice {
  surface: 'readonly' | 'plan' | 'full';
  approvals: 'auto' | 'ask' | 'deny';
  cwd: string;
  expiresDays: number;
}

export const DEFAULT_CEILING: ICeilingChoice = { surface: 'full', approvals: 'ask', cwd: '.', expiresDays: 7 };

/** The body of `POST tokens` for a ceiling chosen in the panel. */
export function tokenRequest(ceiling: ICeilingChoice, label: string): {
  label: string;
  surface: ICeilingChoice['surface'];
  approvals: ICeilingChoice['approvals'];
  cwd: string;
  space: string;
  expires_seconds: number;
} {
  return {
    label,
    surface: ceiling.surface,
    approvals: ceiling.approvals,
    cwd: ceiling.cwd.trim() || '.',
    space: 'lab',
    expires_seconds: Math.round(ceiling.expiresDays * 86400)
  };
}

export const PYTHON_ONE_LINER = 'from jupyter_agent_tools.notebook import open_panel; session = open_panel()';
