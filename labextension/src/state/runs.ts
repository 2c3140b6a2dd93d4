import { PathExt } from '@jupyterlab/coreutils';

import type {
  AgentEvent,
  Card,
  EditRow,
  RunDescriptor,
  TranscriptRow,
  Worker
} from '../api/types';

/** Most transcript entries kept per run in the panel (the server keeps the full record). */
export const MAX_TRANSCRIPT_ENTRIES = 500;

/**
 * The runs the panel knows, and for each its transcript, staged edits and workers as its
 * event stream tells them.
 */
export class RunBook {
  private runsById = new Map<string, RunDescriptor>();
  private readonly transcripts = new Map<string, TranscriptRow[]>();
  private readonly earlierCallsByRun = new Map<string, number>();
  private readonly editsByRun = new Map<string, Map<string, EditRow>>();
  private readonly workersByRun = new Map<string, Map<string, Worker>>();

  /** Replace the list of runs (`GET runs`); state of runs that are gone is forgotten. */
  setRuns(runs: RunDescriptor[]): void {
    this.runsById = new Map(runs.map(run => [run.id, run]));
    for (const map of [this.transcripts, this.earlierCallsByRun, this.editsByRun, this.workersByRun]) {
      for (const runId of [...map.keys()]) {
        if (!this.runsById.has(runId)) {
          map.delete(runId);
        }
      }
    }
  }

  /** Runs, newest first. */
  runs(): RunDescriptor[] {
    return [...this.runsById.values()].sort((a, b) => (b.created_at ?? 0) - (a.created_at ?? 0));
  }

  run(runId: string): RunDescriptor | undefined {
    return this.runsById.get(runId);
  }

  /**
   * Replace a run's transcript rows. `serverDropped` is given with a transcript fetched from
   * the server: the older calls its bounds dropped. Rows past the panel's own bound are
   * counted with them.
   */
  setTranscript(runId: string, entries: TranscriptRow[], serverDropped?: number): void {
    const trimmed = Math.max(0, entries.length - MAX_TRANSCRIPT_ENTRIES);
    const earlier = serverDropped ?? this.earlierCallsByRun.get(runId) ?? 0;
    this.earlierCallsByRun.set(runId, earlier + trimmed);
    this.transcripts.set(runId, entries.slice(-MAX_TRANSCRIPT_ENTRIES));
  }

  /** How many of a run's earliest calls its transcript rows lack (dropped by either bound). */
  earlierCalls(runId: string): number {
    return this.earlierCallsByRun.get(runId) ?? 0;
  }

  transcript(runId: string): TranscriptRow[] {
    return this.transcripts.get(runId) ?? [];
  }

  setEdits(runId: string, edits: EditRow[]): void {
    this.editsByRun.set(runId, new Map(edits.map(edit => [edit.edit_id, edit])));
  }

  /** Add or replace one edit (e.g. fetched with its diff). */
  putEdit(runId: string, edit: EditRow): void {
    this.edits_(runId).set(edit.edit_id, { ...this.edits_(runId).get(edit.edit_id), ...edit });
  }

  /** Staged edits first, then the resolved ones; newest first within each. */
  edits(runId: string): EditRow[] {
    const order = (edit: EditRow) => (edit.status === 'staged' ? 0 : 1);
    return [...(this.editsByRun.get(runId)?.values() ?? [])].sort(
      (a, b) => order(a) - order(b) || (b.created_at ?? 0) - (a.created_at ?? 0)
    );
  }

  /** Replace the workers of a run (`GET runs/{id}/workers`, e.g. after a reload). */
  setWorkers(runId: string, workers: Worker[]): void {
    this.workersByRun.set(runId, new Map(workers.map(worker => [worker.worker_id, worker])));
  }

  workers(runId: string): Worker[] {
    return [...(this.workersByRun.get(runId)?.values() ?? [])];
  }

  /**
   * Apply one frame of `runs/{id}/events`. Returns the id of an edit whose diff is not known
   * yet (the event carries no diff), else null.
   */
  apply(event: AgentEvent): { changed: boolean; needsEdit: string | null } {
    const runId = 'run_id' in event ? event.run_id : undefined;
    if (typeof runId !== 'string') {
      return { changed: false, needsEdit: null };
    }
    switch (event.type) {
      case 'call_started': {
        const entries = this.transcripts.get(runId) ?? [];
        if (!entries.some(entry => entry.call_id === event.call_id)) {
          entries.push({
            call_id: event.call_id,
            tool: event.tool,
            label: event.label,
            origin: event.origin,
            started_at: event.time,
            ok: null,
            error_code: null,
            duration_ms: null
          });
          this.setTranscript(runId, entries);
        }
        return { changed: true, needsEdit: null };
      }
      case 'call_finished': {
        const entries = this.transcripts.get(runId) ?? [];
        const entry = entries.find(item => item.call_id === event.call_id);
        const finished = { ok: event.ok, error_code: event.error_code, duration_ms: event.duration_ms };
        if (entry) {
          Object.assign(entry, finished);
        } else {
          entries.push({ call_id: event.call_id, tool: event.tool, label: event.label, origin: event.origin, ...finished });
          this.setTranscript(runId, entries);
        }
        return { changed: true, needsEdit: null };
      }
      case 'edit_staged':
      case 'edit_resolved': {
        const known = this.edits_(runId).get(event.edit_id);
        this.putEdit(runId, {
          edit_id: event.edit_id,
          status: event.type === 'edit_staged' ? 'staged' : event.action,
          replacements: event.replacements,
          files: event.counts,
          created_at: known?.created_at ?? event.time
        });
        return { changed: true, needsEdit: known?.diff ? null : event.edit_id };
      }
      case 'worker_state': {
        const workers = this.workersByRun.get(runId) ?? new Map<string, Worker>();
        workers.set(event.worker_id, event);
        this.workersByRun.set(runId, workers);
        return { changed: true, needsEdit: null };
      }
      case 'run_closed': {
        // Ended, not gone: its transcript, edits and decisions stay (the next `GET runs` has
        // how it ended from the run store).
        const run = this.runsById.get(runId);
        if (run && run.state !== 'ended') {
          this.runsById.set(runId, { ...run, state: 'ended', ended_by: run.ended_by ?? 'close', ended_at: event.time });
        }
        return { changed: true, needsEdit: null };
      }
      default:
        return { changed: false, needsEdit: null };
    }
  }

  /** How many of a run's edits the panel holds as staged. */
  stagedCount(runId: string): number {
    return this.edits(runId).filter(edit => edit.status === 'staged').length;
  }

  /**
   * Runs whose staged edits the panel must (re)load: the server counts a different number of
   * them than the panel holds (staged or resolved by another run, a human elsewhere, a restart).
   */
  editsToLoad(): string[] {
    return this.runs()
      .filter(run => (run.staged_edits ?? 0) !== this.stagedCount(run.id))
      .map(run => run.id);
  }

  /**
   * Everything waiting for the human across runs, oldest first: the pending cards given (the
   * spaces' streams hold them) and every run's staged edits.
   */
  pending(cards: Card[]): PendingItem[] {
    const items: PendingItem[] = cards.map(card => ({ kind: 'card', runId: card.run_id, card, at: card.created_at }));
    for (const run of this.runs()) {
      for (const edit of this.edits(run.id)) {
        if (edit.status === 'staged') {
          items.push({ kind: 'edit', runId: run.id, edit, at: edit.created_at ?? 0 });
        }
      }
    }
    return items.sort((a, b) => a.at - b.at);
  }

  /** How many decisions a run waits for: its pending cards among `cards`, its staged edits. */
  waiting(runId: string, cards: Card[]): number {
    return cards.filter(card => card.run_id === runId).length + this.stagedCount(runId);
  }

  private edits_(runId: string): Map<string, EditRow> {
    let edits = this.editsByRun.get(runId);
    if (!edits) {
      edits = new Map();
      this.editsByRun.set(runId, edits);
    }
    return edits;
  }
}

/** A decision waiting for the human: a question or permission card, or a staged edit. */
export type PendingItem =
  | { kind: 'card'; runId: string; card: Card; at: number }
  | { kind: 'edit'; runId: string; edit: EditRow; at: number };

/** Whether a run has ended (closed, idle, or a restart of the server). */
export function isEnded(run: Pick<RunDescriptor, 'state'>): boolean {
  return run.state === 'ended';
}

/**
 * Which program runs the agent, as a person tells runs apart: the MCP client's name and
 * version from initialize, else how the run was started.
 */
export function clientLabel(run: Pick<RunDescriptor, 'client' | 'origin'>): string {
  const client = run.client;
  if (client?.name) {
    return client.version ? `${client.name} ${client.version}` : client.name;
  }
  return originLabel(run.origin);
}

/** How each origin of a run is told to a person. */
const ORIGINS: Record<string, string> = {
  mcp: 'MCP client',
  http: 'HTTP API',
  api: 'Python API',
  notebook: 'notebook',
  cell: 'eval cell',
  worker: 'worker',
  cli: 'command line'
};

export function originLabel(origin: string | null | undefined): string {
  return (origin && ORIGINS[origin]) || origin || 'unknown';
}

/**
 * The folder a run works in, by name: its cwd's last part, or the server root's name for the
 * root itself (`.`).
 */
export function runFolder(run: Pick<RunDescriptor, 'cwd'>, rootDir: string | null): string {
  const parts = (cwd: string) => cwd.split(/[\\/]/).filter(part => part && part !== '.');
  const own = parts(run.cwd ?? '.');
  if (own.length > 0) {
    return own[own.length - 1];
  }
  const root = parts(rootDir ?? '');
  return root.length > 0 ? root[root.length - 1] : '/';
}

/**
 * A run's tools against the server's: a run sees the tools its options give it (ask_user
 * needs a space, debug a conversation, vibe_* vibe mode; plan and readonly surfaces no
 * write or exec tool), so it has fewer than `GET status` lists.
 */
export function toolCounts(run: Pick<RunDescriptor, 'tools'>, serverTools: string[] | null): {
  has: number;
  of: number | null;
  missing: string[];
} {
  const tools = run.tools ?? [];
  if (!serverTools) {
    return { has: tools.length, of: null, missing: [] };
  }
  const own = new Set(tools);
  return { has: tools.length, of: serverTools.length, missing: serverTools.filter(t => !own.has(t)) };
}

/** The calls still running, oldest first. */
export function runningCalls(transcript: TranscriptRow[]): TranscriptRow[] {
  return transcript.filter(entry => entry.ok === null);
}

/** A change the notebook tool made, as its kept result data tells it. */
export interface NotebookChange {
  action: string;
  /** The notebook, relative to the run's cwd (the result's `data.path`). */
  path: string;
  /** The cells the call touched, with their numbers after it. */
  cells: { cell: number; id: string | null }[];
  /** A deleted cell, as it was addressed. */
  deleted: { cell: number; id: string | null } | null;
  /** Set when the change can be reverted (a cell change of the agent's). */
  changeId: string | null;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function cellRef(value: unknown): { cell: number; id: string | null } | null {
  if (!isRecord(value) || typeof value.cell !== 'number') {
    return null;
  }
  return { cell: value.cell, id: typeof value.id === 'string' && value.id ? value.id : null };
}

/** The notebook change of a finished `notebook` call, or null (another tool, a failure, a read). */
export function notebookChange(entry: TranscriptRow): NotebookChange | null {
  const data = entry.data;
  if (entry.tool !== 'notebook' || !entry.ok || !isRecord(data) || typeof data.path !== 'string') {
    return null;
  }
  const action = isRecord(entry.args) && typeof entry.args.action === 'string' ? entry.args.action : 'notebook';
  const cells = Array.isArray(data.cells)
    ? data.cells.map(cellRef).filter((ref): ref is { cell: number; id: string | null } => ref !== null)
    : [];
  return {
    action,
    path: data.path,
    cells,
    deleted: cellRef(data.deleted),
    changeId: typeof data.change_id === 'string' ? data.change_id : null
  };
}

/** Where in a notebook an agent last worked: the newest `notebook` call that names a cell. */
export interface AgentPlace {
  callId: string;
  /** The notebook, relative to the run's cwd. */
  path: string;
  cell: number;
  cellId: string | null;
}

/** The place of the newest notebook call of a transcript that touched a cell, or null. */
export function latestNotebookPlace(transcript: TranscriptRow[]): AgentPlace | null {
  for (let i = transcript.length - 1; i >= 0; i--) {
    const change = notebookChange(transcript[i]);
    const ref = change?.cells[change.cells.length - 1];
    if (change && ref) {
      return { callId: transcript[i].call_id, path: change.path, cell: ref.cell, cellId: ref.id };
    }
  }
  return null;
}

/** The change ids a later, successful `notebook revert` of the transcript undid. */
export function revertedChanges(transcript: TranscriptRow[]): Set<string> {
  const reverted = new Set<string>();
  for (const entry of transcript) {
    const args = entry.args;
    if (entry.tool === 'notebook' && entry.ok && isRecord(args) && args.action === 'revert' &&
        typeof args.change_id === 'string') {
      reverted.add(args.change_id);
    }
  }
  return reverted;
}

/** The notebook a change names, as a path from the server root (the data says it from the cwd). */
export function notebookPathFromRoot(run: Pick<RunDescriptor, 'cwd'>, path: string): string {
  return PathExt.normalize(PathExt.join(run.cwd ?? '.', path));
}
