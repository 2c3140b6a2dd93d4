import { describe, expect, it } from 'vitest';

import { mcpSettings, mcpUrl, PYTHON_ONE_LINER } from '../src/state/connect';
import { notebookPathFromRoot } from '../src/state/runs';

describe('how an agent connects', () => {
  it('puts the MCP endpoint under the server base URL, never at a bare /agent-tools', () => {
    expect(mcpUrl('http://127.0.0.1:8888/')).toBe('http://127.0.0.1:8888/agent-tools/mcp');
    expect(mcpUrl('https://hub.example.org/user/ana/')).toBe('https://hub.example.org/user/ana/agent-tools/mcp');
  });

  it("gives jupyter-ai's mcp_settings.json entry as the README does, valid JSON", () => {
    const url = 'https://hub.example.org/user/ana/agent-tools/mcp';
    expect(JSON.parse(mcpSettings(url))).toEqual({
      mcp_servers: [
        {
          type: 'http',
          name: 'jupyter-agent-tools',
          url: `${url}?cwd=.&surface=full&approvals=auto&space=lab`,
          headers: [{ name: 'Authorization', value: 'token <your Jupyter token>' }]
        }
      ]
    });
    expect(PYTHON_ONE_LINER).toContain('from jupyter_agent_tools.notebook import open_panel');
  });

  it("opens a change's notebook from the server root: its path is from the run's cwd", () => {
    expect(notebookPathFromRoot({ cwd: '.' }, 'analysis.ipynb')).toBe('analysis.ipynb');
    expect(notebookPathFromRoot({ cwd: 'reports' }, 'q3/analysis.ipynb')).toBe('reports/q3/analysis.ipynb');
  });
});
