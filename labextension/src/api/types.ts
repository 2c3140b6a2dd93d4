// The shapes the panel reads. Results, runs and bodies come from the generated OpenAPI types
// (schema.d.ts). The cards, transcript entries, staged edits and WebSocket frames below are
// written by hand; the document now has them too (QuestionCard, TranscriptEntry, StagedEdit,
// Event), and moving these onto the generated types is still to do — keep them in step.
import type { components } from './schema';

export type ToolResult = components['schemas']['CallResult'];
export type RunRequest = components['schemas']['RunRequest'];
export type ApiError = components['schemas']['ErrorResponse'];

/** A run descriptor (`GET runs`). */
export type RunDescriptor = components['schemas']['RunDescriptor'];

export interface CardOption {
  label: string;
  description?: string;
  value?: string;
}

export type CardKind = 'question' | 'permission';
export type CardStatus = 'pending' | 'answered' | 'skipped' | 'timed_out' | 'cancelled';

/** A question or permission card as front ends receive it. */
export interface Card {
  id: string;
  number: number;
  run_id: string;
  space: string;
  kind: CardKind;
  question: string;
  context: string;
  options: CardOption[];
  allow_free_text: boolean;
  multi_select: boolean;
  tool: string | null;
  tier: string | null;
  label: string | null;
  args: Record<string, unknown> | null;
  status: CardStatus;
  answer: string | string[] | null;
  text: string | null;
  created_at: number;
}

/** The body of `POST runs/{id}/questions/{qid}`. */
export interface AnswerBody {
  answer?: string | string[];
  text?: string;
  skip?: boolean;
}

export interface TranscriptEntry {
  call_id: string;
  tool: string;
  label: string;
  args?: Record<string, unknown>;
  origin?: string;
  started_at?: number;
  ok: boolean | null;
  error_code: string | null;
  duration_ms: number | null;
  text?: string | null;
}

export type EditStatus = 'staged' | 'accepted' | 'discarded' | 'stale';

export interface StagedEdit {
  edit_id: string;
  status: EditStatus;
  pattern?: string;
  rewrite?: string;
  language?: string;
  replacements: number;
  files: Record<string, number>;
  created_at?: number;
  diff?: string;
}

export interface WorkerState {
  worker_id: string;
  label: string;
  tier?: string;
  status: string;
  elapsed_seconds?: number | null;
  result?: string;
  restarts?: number;
  child_run_id?: string;
}

interface EventBase {
  time?: number;
  run_id?: string;
}

/** `edit_staged` / `edit_resolved` on a run's stream (the diff is fetched separately). */
export interface EditEvent extends EventBase {
  type: 'edit_staged' | 'edit_resolved';
  edit_id: string;
  files: string[];
  counts: Record<string, number>;
  replacements: number;
  action?: EditStatus;
}

/** Frames of `spaces/{space}/events` and `runs/{id}/events`. */
export type AgentEvent =
  | (EventBase & { type: 'humans'; space: string; humans: number })
  | (EventBase & { type: 'question_asked' | 'question_closed'; space: string; card: Card; replay?: boolean })
  | (EventBase & { type: 'call_started'; call_id: string; tool: string; label: string; origin?: string })
  | (EventBase & {
      type: 'call_finished';
      call_id: string;
      tool: string;
      label: string;
      origin?: string;
      ok: boolean;
      error_code: string | null;
      duration_ms: number | null;
    })
  | EditEvent
  | (EventBase & { type: 'worker_state' } & WorkerState)
  | (EventBase & { type: 'run_closed' })
  | (EventBase & { type: string; [key: string]: unknown });
