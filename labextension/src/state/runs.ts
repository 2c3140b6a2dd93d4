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

/** How a run is described in one line: where it came from, what it may do. */
export function describeRun(run: RunDescriptor): string {
  const parts = [run.origin ?? 'run', run.surface ?? 'full', `approvals ${run.approvals ?? 'auto'}`];
  return parts.join(' · ');
}
