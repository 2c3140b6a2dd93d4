import { describe, expect, it } from 'vitest';

import type { AgentEvent, RunDescriptor, Worker } from '../src/api/types';
import { describeRun, MAX_TRANSCRIPT_ENTRIES, RunBook } from '../src/state/runs';

const run = (id: string, created_at: number): RunDescriptor => ({
  id,
  cwd: '.',
  surface: 'full',
  tools: ['read'],
  origin: 'http',
  approvals: 'ask',
  conversation_id: null,
  space: null,
  vibe: false,
  parent_id: null,
  resources: ['workdir'],
  created_at,
  transcript_dropped: 0
});

const worker = (worker_id: string, status: Worker['status'], result: string | null = null): Worker => ({
  worker_id,
  label: worker_id,
  tier: 'fast',
  status,
  elapsed_seconds: 1,
  result,
  restarts: 0,
  child_run_id: `child-${worker_id}`
});

const started = (call_id: string, tool = 'read'): AgentEvent => ({
  type: 'call_started', run_id: 'r', time: 10, origin: 'http', call_id, tool, label: `${tool} x`
});

describe('RunBook', () => {
  it('lists runs newest first and forgets the state of runs that are gone', () => {
    const book = new RunBook();
    book.setRuns([run('a', 1), run('b', 2)]);
    book.setTranscript('a', [
      { call_id: 'a-1', tool: 'read', label: 'read x', origin: 'http', ok: true, error_code: null, duration_ms: 3 }
    ]);
    expect(book.runs().map(r => r.id)).toEqual(['b', 'a']);
    book.setRuns([run('b', 2)]);
    expect(book.transcript('a')).toEqual([]);
  });

  it('builds a live transcript from call_started and call_finished', () => {
    const book = new RunBook();
    book.apply(started('r-1', 'bash'));
    expect(book.transcript('r')).toMatchObject([{ call_id: 'r-1', ok: null }]);
    book.apply({
      type: 'call_finished', run_id: 'r', time: 11, origin: 'http', call_id: 'r-1', tool: 'bash',
      label: 'bash x', ok: false, error_code: 'permission_denied', duration_ms: 4.5
    });
    expect(book.transcript('r')).toMatchObject([
      { call_id: 'r-1', ok: false, error_code: 'permission_denied', duration_ms: 4.5 }
    ]);
    // a second stream delivering the same start changes nothing
    book.apply(started('r-1', 'bash'));
    expect(book.transcript('r')).toHaveLength(1);
  });

  it('keeps a bounded transcript', () => {
    const book = new RunBook();
    for (let i = 0; i < MAX_TRANSCRIPT_ENTRIES + 5; i++) {
      book.apply(started(`r-${i}`));
    }
    expect(book.transcript('r')).toHaveLength(MAX_TRANSCRIPT_ENTRIES);
    expect(book.transcript('r')[0].call_id).toBe('r-5');
    expect(book.earlierCalls('r')).toBe(5);
  });

  it('counts the calls the server dropped with those past its own bound', () => {
    const book = new RunBook();
    const entries = Array.from({ length: MAX_TRANSCRIPT_ENTRIES + 2 }, (_, i) => ({
      call_id: `r-${i}`, tool: 'read', label: 'read a.py', origin: 'http', ok: true, error_code: null, duration_ms: 1
    }));
    book.setTranscript('r', entries, 40);
    expect(book.earlierCalls('r')).toBe(42);
    book.apply(started('r-new'));
    expect(book.earlierCalls('r')).toBe(43);
    book.setTranscript('r', entries.slice(0, 3), 7); // fetched again: the server's count anew
    expect(book.earlierCalls('r')).toBe(7);
  });

  it('asks for the diff of a newly staged edit, then tracks its resolution', () => {
    const book = new RunBook();
    const staged = book.apply({
      type: 'edit_staged', run_id: 'r', time: 1, edit_id: 'edit_1', files: ['a.py'], counts: { 'a.py': 2 }, replacements: 2
    });
    expect(staged).toEqual({ changed: true, needsEdit: 'edit_1' });
    book.putEdit('r', {
      edit_id: 'edit_1', status: 'staged', replacements: 2, files: { 'a.py': 2 }, created_at: 1, diff: '--- a/a.py\n'
    });
    const resolved = book.apply({
      type: 'edit_resolved', run_id: 'r', time: 2, edit_id: 'edit_1', action: 'accepted', files: ['a.py'],
      counts: { 'a.py': 2 }, replacements: 2
    });
    expect(resolved.needsEdit).toBeNull();
    expect(book.edits('r')).toMatchObject([{ edit_id: 'edit_1', status: 'accepted', diff: '--- a/a.py\n' }]);
  });

  it('lists staged edits before resolved ones', () => {
    const book = new RunBook();
    book.setEdits('r', [
      { edit_id: 'edit_1', status: 'accepted', replacements: 1, files: {}, created_at: 2 },
      { edit_id: 'edit_2', status: 'staged', replacements: 1, files: {}, created_at: 1 }
    ]);
    expect(book.edits('r').map(e => e.edit_id)).toEqual(['edit_2', 'edit_1']);
  });

  it('keeps the latest state of each worker and drops a closed run', () => {
    const book = new RunBook();
    book.setRuns([run('r', 1)]);
    book.apply({ type: 'worker_state', run_id: 'r', time: 1, ...worker('w1', 'running') });
    book.apply({ type: 'worker_state', run_id: 'r', time: 2, ...worker('w1', 'done', 'ok') });
    expect(book.workers('r')).toMatchObject([{ worker_id: 'w1', status: 'done', result: 'ok' }]);
    book.apply({ type: 'run_closed', run_id: 'r', time: 3 });
    expect(book.run('r')).toBeUndefined();
  });

  it('lists the workers the route gives (a reloaded panel), then follows their events', () => {
    const book = new RunBook();
    book.setRuns([run('r', 1)]);
    book.setWorkers('r', [worker('w1', 'running'), worker('w2', 'done', 'counted 3 files')]);
    book.apply({ type: 'worker_state', run_id: 'r', time: 2, ...worker('w1', 'failed', 'no such file') });
    expect(book.workers('r').map(w => [w.worker_id, w.status, w.result])).toEqual([
      ['w1', 'failed', 'no such file'],
      ['w2', 'done', 'counted 3 files']
    ]);
    book.setRuns([]);
    expect(book.workers('r')).toEqual([]);
  });

  it('describes a run by origin, surface and approvals', () => {
    expect(describeRun(run('a', 1))).toBe('http · full · approvals ask');
  });
});
