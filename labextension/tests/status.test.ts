import { describe, expect, it } from 'vitest';

import { statusRows } from '../src/state/status';

// The shape of `GET status` (runtime.status() and each resource's status()).
const REPORT = {
  root_dir: '/srv',
  resources: {
    lsp: {
      servers: {
        basedpyright: { languages: ['python'], enabled: true, available: true, why_not: null },
        gopls: { languages: ['go'], enabled: true, available: false, why_not: 'gopls not found on PATH' }
      }
    },
    debug: {
      adapters: { delve: { available: false, markers: ['go.mod'], reason: 'no binary (dlv) on PATH' } },
      sessions: 0
    },
    kernels: { languages: { python: { available: true, kernel_name: 'python3', where: 'host' } }, kernels: 0 },
    questions: { available: true, timeout_seconds: 600, humans: {} },
    broken: { error: 'RuntimeError: boom' }
  }
};

describe('statusRows', () => {
  it('lists every server, adapter and kernel language with why it cannot serve', () => {
    expect(statusRows(REPORT)).toEqual([
      { resource: 'lsp', name: 'basedpyright', available: true, reason: null, detail: 'python' },
      { resource: 'lsp', name: 'gopls', available: false, reason: 'gopls not found on PATH', detail: 'go' },
      { resource: 'debug', name: 'delve', available: false, reason: 'no binary (dlv) on PATH', detail: null },
      { resource: 'kernels', name: 'python', available: true, reason: null, detail: 'python3' },
      { resource: 'questions', name: 'questions', available: true, reason: null, detail: null },
      { resource: 'broken', name: 'broken', available: false, reason: 'RuntimeError: boom', detail: null }
    ]);
  });

  it('is empty before the status is loaded', () => {
    expect(statusRows(null)).toEqual([]);
  });
});
