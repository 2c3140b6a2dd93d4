import { describe, expect, it } from 'vitest';

import type { AgentEvent, Card, RunDescriptor, TranscriptRow, Worker } from '../src/api/types';
import {
  clientLabel,
  isEnded,
  latestNotebookPlace,
  MAX_TRANSCRIPT_ENTRIES,
  notebookChange,
  originLabel,
  revertedChanges,
  RunBook,
  runFolder,
  runningCalls,
  toolCounts
} from '../src/state/runs';

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
  transcript_dropped: 0,
  state: 'open',
  ended_by: null,
  ended_at: null,
  resumed_from: null,
  notice: null,
  client: null,
  staged_edits: 0,
  sandbox: null
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

  it('keeps the latest state of each worker, and a closed run as ended with what it did', () => {
    const book = new RunBook();
    book.setRuns([run('r', 1)]);
    book.apply({ type: 'worker_state', run_id: 'r', time: 1, ...worker('w1', 'running') });
    book.apply({ type: 'worker_state', run_id: 'r', time: 2, ...worker('w1', 'done', 'ok') });
    book.apply(started('r-1'));
    expect(book.workers('r')).toMatchObject([{ worker_id: 'w1', status: 'done', result: 'ok' }]);
    book.apply({ type: 'run_closed', run_id: 'r', time: 3 });
    expect(book.run('r')).toMatchObject({ state: 'ended', ended_by: 'close', ended_at: 3 });
    expect(isEnded(book.run('r')!)).toBe(true);
    expect(book.transcript('r')).toHaveLength(1); // the panel never forgets
  });

  it('lists what waits for the human across runs, oldest first, and counts it per run', () => {
    const book = new RunBook();
    book.setRuns([run('a', 1), { ...run('b', 2), state: 'ended', ended_by: 'restart', staged_edits: 1 }]);
    expect(book.editsToLoad()).toEqual(['b']); // the server counts a staged edit the panel lacks
    book.setEdits('b', [
      { edit_id: 'edit_1', status: 'staged', replacements: 1, files: {}, created_at: 5 },
      { edit_id: 'edit_0', status: 'accepted', replacements: 1, files: {}, created_at: 4 }
    ]);
    expect(book.editsToLoad()).toEqual([]);
    const card = { id: 'q1', run_id: 'a', created_at: 3 } as Card;
    expect(book.pending([card]).map(item => [item.kind, item.runId])).toEqual([
      ['card', 'a'],
      ['edit', 'b']
    ]);
    expect([book.waiting('a', [card]), book.waiting('b', [card])]).toEqual([1, 1]);
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

});

describe('a run as a person reads it', () => {
  it('is named by its folder: the cwd, or the server root for the root itself', () => {
    expect(runFolder({ cwd: '.' }, '/home/ana/projects/sales')).toBe('sales');
    expect(runFolder({ cwd: 'reports/q3' }, '/home/ana/projects/sales')).toBe('q3');
    expect(runFolder({ cwd: '.' }, null)).toBe('/');
  });

  it('is told apart by its client: the name and version it gave, else how it was started', () => {
    expect(clientLabel({ client: { name: 'claude-code', version: '2.1.0' }, origin: 'mcp' })).toBe('claude-code 2.1.0');
    expect(clientLabel({ client: { name: 'codex', version: null }, origin: 'mcp' })).toBe('codex');
    expect(clientLabel({ client: null, origin: 'http' })).toBe('HTTP API');
  });

  it('says how it was started', () => {
    expect(originLabel('mcp')).toBe('MCP client');
    expect(originLabel('api')).toBe('Python API');
    expect(originLabel('something-new')).toBe('something-new');
  });

  it("counts its tools against the server's and names those it lacks", () => {
    expect(toolCounts({ tools: ['read', 'write'] }, ['ask_user', 'read', 'write', 'debug'])).toEqual({
      has: 2,
      of: 4,
      missing: ['ask_user', 'debug']
    });
    expect(toolCounts({ tools: ['read'] }, null)).toEqual({ has: 1, of: null, missing: [] });
  });
});

const row = (call_id: string, fields: Partial<TranscriptRow>): TranscriptRow => ({
  call_id, tool: 'notebook', label: 'notebook', origin: 'mcp', ok: true, error_code: null, duration_ms: 5, ...fields
});

describe('notebook changes in the transcript', () => {
  it("reads the action, the notebook and the cells from the call's kept data", () => {
    const inserted = row('c1', {
      args: { action: 'insert', path: 'analysis.ipynb', source: 'x = 1' },
      data: { path: 'analysis.ipynb', cells: [{ cell: 3, id: 'a1b2' }], cell_count: 3, change_id: 'chg-1' }
    });
    expect(notebookChange(inserted)).toEqual({
      action: 'insert', path: 'analysis.ipynb', cells: [{ cell: 3, id: 'a1b2' }], deleted: null, changeId: 'chg-1'
    });
    const deleted = row('c2', {
      args: { action: 'delete', path: 'analysis.ipynb', cell: 2 },
      data: { path: 'analysis.ipynb', cells: [], deleted: { cell: 2, id: 'zz' }, change_id: 'chg-2' }
    });
    expect(notebookChange(deleted)).toMatchObject({ cells: [], deleted: { cell: 2, id: 'zz' }, changeId: 'chg-2' });
  });

  it('is none for another tool, a failed call, or a call whose data was not kept', () => {
    expect(notebookChange(row('c1', { tool: 'read', data: { path: 'a.ipynb' } }))).toBeNull();
    expect(notebookChange(row('c2', { ok: false, data: { path: 'a.ipynb' } }))).toBeNull();
    expect(notebookChange(row('c3', { data: null }))).toBeNull();
  });

  it("knows where in a notebook the agent last worked (what Follow scrolls to)", () => {
    const transcript = [
      row('c1', { args: { action: 'set_source', path: 'a.ipynb', cell: 2 }, data: { path: 'a.ipynb', cells: [{ cell: 2, id: 'x2' }] } }),
      row('c2', { tool: 'read', args: { path: 'b.py' } }),
      row('c3', { args: { action: 'run', path: 'a.ipynb', cells: [3, 4] }, data: { path: 'a.ipynb', cells: [{ cell: 3, id: 'x3' }, { cell: 4, id: 'x4' }] } })
    ];
    expect(latestNotebookPlace(transcript)).toEqual({ callId: 'c3', path: 'a.ipynb', cell: 4, cellId: 'x4' });
    expect(latestNotebookPlace(transcript.slice(1, 2))).toBeNull();
  });

  it('knows which changes a later revert undid, and which calls still run', () => {
    const transcript = [
      row('c1', { args: { action: 'insert', path: 'a.ipynb' }, data: { path: 'a.ipynb', cells: [], change_id: 'chg-1' } }),
      row('c2', { args: { action: 'revert', path: 'a.ipynb', change_id: 'chg-1' } }),
      row('c3', { args: { action: 'revert', path: 'a.ipynb', change_id: 'chg-9' }, ok: false, error_code: 'stale_edit' }),
      row('c4', { tool: 'eval', ok: null, duration_ms: null })
    ];
    expect([...revertedChanges(transcript)]).toEqual(['chg-1']);
    expect(runningCalls(transcript).map(entry => entry.call_id)).toEqual(['c4']);
  });
});
