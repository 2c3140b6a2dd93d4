import { describe, expect, it } from 'vitest';

import { groupByReadiness, installCommand, readinessOf, statusRows } from '../src/state/status';

// The shape of `GET status` (runtime.status() and each resource's status()), with reasons in
// the server's own words.
const REPORT = {
  root_dir: '/srv',
  tools: ['read', 'write'],
  resources: {
    lsp: {
      servers: {
        basedpyright: { languages: ['python'], enabled: true, available: true, why_not: null },
        gopls: {
          languages: ['go'],
          enabled: true,
          available: false,
          why_not: "no binary (gopls) found on PATH or in the Python environment's bin folder"
        },
        'rust-analyzer': {
          languages: ['rust'],
          enabled: true,
          available: false,
          why_not:
            "/root/.cargo/bin/rust-analyzer does not run: `rust-analyzer --version` exited with status 1 (error: Unknown binary 'rust-analyzer' in official toolchain 'stable-x86_64-unknown-linux-gnu'.). Install it (for a rustup shim: rustup component add rust-analyzer)"
        },
        clangd: {
          languages: ['c', 'cpp'],
          enabled: true,
          available: false,
          why_not: '/usr/bin/clangd does not run: `clangd --version` exited with status 127. Install it, or name another binary in its spec'
        },
        pyls: { languages: ['python'], enabled: false, available: false, why_not: null }
      },
      spec_errors: { mylang: 'root_markers: Input should be a valid tuple' }
    },
    debug: {
      adapters: { delve: { available: false, markers: ['go.mod'], reason: 'no binary (dlv) found on PATH' } },
      sessions: 0
    },
    kernels: {
      languages: {
        python: { available: true, kernel_name: 'python3', where: 'host' },
        javascript: {
          available: false,
          reason:
            "No javascript kernel is installed (kernelspec 'deno' not found). Install the Deno kernelspec: `python -m jupyter_agent_tools.kernels.deno_spec --install` (needs `pip install deno`)."
        }
      },
      kernels: 0
    },
    workers: {
      backend_error: null,
      tiers: {
        fast: { available: false, reason: "No command is configured for tier 'fast'. Set c.CommandBackend.argv = {'fast': [...]}, or use the python backend." }
      }
    },
    questions: { available: true, timeout_seconds: 600, humans: {} },
    broken: { error: 'RuntimeError: boom' }
  },
  tool_load_errors: { mytool: 'ImportError: no module named x' },
  resource_errors: {}
};

describe('statusRows', () => {
  it('says of every server, adapter, kernel and tier whether it is ready, absent or broken', () => {
    const rows = statusRows(REPORT).map(r => [r.resource, r.name, r.readiness, r.install]);
    expect(rows).toEqual([
      ['lsp', 'basedpyright', 'ready', null],
      ['lsp', 'gopls', 'absent', null],
      ['lsp', 'rust-analyzer', 'absent', 'rustup component add rust-analyzer'],
      ['lsp', 'clangd', 'broken', null], // found, and fails: that is broken
      ['lsp', 'pyls', 'absent', null], // turned off in the configuration
      ['lsp', 'mylang', 'broken', null], // a configured spec that does not load
      ['debug', 'delve', 'absent', null],
      ['kernels', 'python', 'ready', null],
      ['kernels', 'javascript', 'absent', 'python -m jupyter_agent_tools.kernels.deno_spec --install'],
      ['workers', 'fast', 'absent', null],
      ['questions', 'questions', 'ready', null],
      ['broken', 'broken', 'broken', null],
      ['tools', 'mytool', 'broken', null]
    ]);
  });

  it('keeps the reasons and what each serves', () => {
    const rows = statusRows(REPORT);
    expect(rows.find(r => r.name === 'basedpyright')).toMatchObject({ detail: 'python', available: true, reason: null });
    expect(rows.find(r => r.name === 'pyls')?.reason).toBe('turned off in the server configuration');
    expect(rows.find(r => r.name === 'mytool')?.reason).toBe('does not load: ImportError: no module named x');
  });

  it('is empty before the status is loaded', () => {
    expect(statusRows(null)).toEqual([]);
  });

  it('groups broken first, then ready, then absent, leaving out empty groups', () => {
    const groups = groupByReadiness(statusRows(REPORT));
    expect(groups.map(g => [g.readiness, g.rows.length])).toEqual([
      ['broken', 4],
      ['ready', 3],
      ['absent', 6]
    ]);
    expect(groupByReadiness(statusRows({ resources: { questions: { available: true } } })).map(g => g.readiness)).toEqual([
      'ready'
    ]);
  });
});

describe('installCommand', () => {
  it('takes the command the reason names', () => {
    expect(
      installCommand(
        "no binary (basedpyright-langserver) found on PATH or in the Python environment's bin folder; to add it: pip install 'jupyter-agent-tools[basedpyright]'"
      )
    ).toBe("pip install 'jupyter-agent-tools[basedpyright]'");
    expect(installCommand('Install ipykernel (`pip install ipykernel`) in the server\'s environment.')).toBe(
      'pip install ipykernel'
    );
    expect(installCommand('no binary (gopls) found on PATH')).toBeNull();
    expect(installCommand(null)).toBeNull();
  });

  it('calls absent only what is not there', () => {
    expect(readinessOf(true, null)).toBe('ready');
    expect(readinessOf(null, null)).toBe('ready');
    expect(readinessOf(false, 'no binary (dart) found on PATH')).toBe('absent');
    expect(readinessOf(false, 'the kernel gateway did not answer')).toBe('broken');
    expect(readinessOf(false, null, false)).toBe('absent');
  });
});
