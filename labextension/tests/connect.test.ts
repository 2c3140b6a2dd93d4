import { describe, expect, it } from 'vitest';

import {
  DEFAULT_CEILING,
  mcpSettings,
  mcpUrl,
  mcpUrlWithToken,
  PYTHON_ONE_LINER,
  TOKEN_PLACEHOLDER,
  tokenRequest
} from '../src/state/connect';
import { notebookPathFromRoot } from '../src/state/runs';

describe('how an agent connects', () => {
  it('puts the MCP endpoint under the server base URL, never at a bare /agent-tools', () => {
    expect(mcpUrl('http://127.0.0.1:8888/')).toBe('http://127.0.0.1:8888/agent-tools/mcp');
    expect(mcpUrl('https://hub.example.org/user/ana/')).toBe('https://hub.example.org/user/ana/agent-tools/mcp');
  });

  it("gives jupyter-ai's mcp_settings.json entry as the docs do, valid JSON, with an agent token", () => {
    const url = 'https://hub.example.org/user/ana/agent-tools/mcp';
    const entry = (token: string) => ({
      mcp_servers: [
        {
          type: 'http',
          name: 'jupyter-agent-tools',
          url: `${url}?space=lab`,
          headers: [{ name: 'Authorization', value: `token ${token}` }]
        }
      ]
    });
    expect(JSON.parse(mcpSettings(url))).toEqual(entry(TOKEN_PLACEHOLDER));
    expect(JSON.parse(mcpSettings(url, 'jat_0123456789abcdef_x-y'))).toEqual(entry('jat_0123456789abcdef_x-y'));
    expect(mcpUrlWithToken(url, 'jat_a+b')).toBe(`${url}?token=jat_a%2Bb`);
    expect(PYTHON_ONE_LINER).toContain('from jupyter_agent_tools.notebook import open_panel');
  });

  it('mints tokens with the chosen ceiling, its cards in this lab', () => {
    expect(tokenRequest({ ...DEFAULT_CEILING, cwd: ' ', expiresDays: 1 }, 'x')).toEqual({
      label: 'x',
      surface: 'full',
      approvals: 'ask',
      cwd: '.',
      space: 'lab',
      expires_seconds: 86400
    });
  });

  it("opens a change's notebook from the server root: its path is from the run's cwd", () => {
    expect(notebookPathFromRoot({ cwd: '.' }, 'analysis.ipynb')).toBe('analysis.ipynb');
    expect(notebookPathFromRoot({ cwd: 'reports' }, 'q3/analysis.ipynb')).toBe('reports/q3/analysis.ipynb');
  });
});
