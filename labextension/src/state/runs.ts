import type {
  AgentEvent,
  EditEvent,
  RunDescriptor,
  StagedEdit,
  TranscriptEntry,
  WorkerState
} from '../api/types';

/** Most transcript entries kept per run in the panel (the server keeps the full record). */
export const MAX_TRANSCRIPT_ENTRIES = 500;

/**
 * The runs the panel knows, and for each its transcript, staged edits and workers as its
 * event stream tells them.
 */
export class RunBook {
  private runsById = new Map<string, RunDescriptor>();
  private readonly transcripts = new Map<string, TranscriptEntry[]>();
  private readonly editsByRun = new Map<string, Map<string, StagedEdit>>();
  private readonly workersByRun = new Map<string, Map<string, WorkerState>>();

  /** Replace the list of runs (`GET runs`); state of runs that are gone is forgotten. */
  setRuns(runs: RunDescriptor[]): void {
    this.runsById = new Map(runs.map(run => [run.id, run]));
    for (const map of [this.transcripts, this.editsByRun, this.workersByRun]) {
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

  setTranscript(runId: string, entries: TranscriptEntry[]): void {
    this.transcripts.set(runId, entries.slice(-MAX_TRANSCRIPT_ENTRIES));
  }

  transcript(runId: string): TranscriptEntry[] {
    return this.transcripts.get(runId) ?? [];
  }

  setEdits(runId: string, edits: StagedEdit[]): void {
    this.editsByRun.set(runId, new Map(edits.map(edit => [edit.edit_id, edit])));
  }

  /** Add or replace one edit (e.g. fetched with its diff). */
  putEdit(runId: string, edit: StagedEdit): void {
    this.edits_(runId).set(edit.edit_id, { ...this.edits_(runId).get(edit.edit_id), ...edit });
  }

  /** Staged edits first, then the resolved ones; newest first within each. */
  edits(runId: string): StagedEdit[] {
    const order = (edit: StagedEdit) => (edit.status === 'staged' ? 0 : 1);
    return [...(this.editsByRun.get(runId)?.values() ?? [])].sort(
      (a, b) => order(a) - order(b) || (b.created_at ?? 0) - (a.created_at ?? 0)
    );
  }

  workers(runId: string): WorkerState[] {
    return [...(this.workersByRun.get(runId)?.values() ?? [])];
  }

  /**
   * Apply one frame of `runs/{id}/events`. Returns the id of an edit whose diff is not known
   * yet (the event carries no diff), else null.
   */
  apply(event: AgentEvent): { changed: boolean; needsEdit: string | null } {
    const runId = event.run_id;
    if (!runId) {
      return { changed: false, needsEdit: null };
    }
    switch (event.type) {
      case 'call_started': {
        const e = event as Extract<AgentEvent, { type: 'call_started' }>;
        const entries = this.transcripts.get(runId) ?? [];
        if (!entries.some(entry => entry.call_id === e.call_id)) {
          entries.push({
            call_id: e.call_id,
            tool: e.tool,
            label: e.label,
            origin: e.origin,
            started_at: e.time,
            ok: null,
            error_code: null,
            duration_ms: null
          });
          this.setTranscript(runId, entries);
        }
        return { changed: true, needsEdit: null };
      }
      case 'call_finished': {
        const e = event as Extract<AgentEvent, { type: 'call_finished' }>;
        const entries = this.transcripts.get(runId) ?? [];
        const entry = entries.find(item => item.call_id === e.call_id);
        const finished = { ok: e.ok, error_code: e.error_code, duration_ms: e.duration_ms };
        if (entry) {
          Object.assign(entry, finished);
        } else {
          entries.push({ call_id: e.call_id, tool: e.tool, label: e.label, origin: e.origin, ...finished });
          this.setTranscript(runId, entries);
        }
        return { changed: true, needsEdit: null };
      }
      case 'edit_staged':
      case 'edit_resolved': {
        const e = event as EditEvent;
        const known = this.edits_(runId).get(e.edit_id);
        const status = event.type === 'edit_staged' ? 'staged' : (e.action ?? 'accepted');
        this.putEdit(runId, {
          edit_id: e.edit_id,
          status,
          replacements: e.replacements,
          files: e.counts,
          created_at: known?.created_at ?? e.time
        });
        return { changed: true, needsEdit: known?.diff ? null : e.edit_id };
      }
      case 'worker_state': {
        const worker = event as unknown as WorkerState;
        const workers = this.workersByRun.get(runId) ?? new Map<string, WorkerState>();
        workers.set(worker.worker_id, worker);
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

  private edits_(runId: string): Map<string, StagedEdit> {
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
