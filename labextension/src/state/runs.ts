import { PathExt } from '@jupyterlab/coreutils';

import type {
  AgentEvent,
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
      case 'run_closed':
        this.runsById.delete(runId);
        return { changed: true, needsEdit: null };
      default:
        return { changed: false, needsEdit: null };
    }
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
