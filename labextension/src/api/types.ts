// The shapes the panel reads, all generated from the OpenAPI document the server serves
// (schema.d.ts, `npm run api`): a field the panel needs is added to the server's pydantic model
// (jupyter_agent_tools/http/models.py, events.py) and regenerated, never declared here. What
// this file adds are names, and the partial rows the panel builds from events before the full
// record is fetched.
import type { components } from './schema';

type Schemas = components['schemas'];

export type ToolResult = Schemas['CallResult'];

/** A run descriptor (`GET runs`). */
export type RunDescriptor = Schemas['RunDescriptor'];

/** An agent token as `GET tokens` lists it (never the token itself). */
export type AgentToken = Schemas['AgentTokenDescriptor'];

/** A new agent token (`POST tokens`): the token itself is in this answer only. */
export type TokenCreated = Schemas['TokenCreated'];

/** The body of `POST tokens`. */
export type TokenRequest = Schemas['TokenRequest'];

/** A question or permission card as front ends receive it. */
export type Card = Schemas['QuestionCard'];
export type CardOption = Schemas['CardOption'];

/** The body of `POST runs/{id}/questions/{qid}`: every field has a server default. */
export type AnswerBody = Partial<Schemas['AnswerRequest']>;

/** One call of a run (`GET runs/{id}/transcript`). */
export type TranscriptEntry = Schemas['TranscriptEntry'];

/**
 * A transcript row as the panel keeps it: from the transcript route, or built from the call
 * events, which carry neither the arguments nor the result text (fetched when a row is opened).
 */
export type TranscriptRow = Pick<
  TranscriptEntry,
  'call_id' | 'tool' | 'label' | 'origin' | 'ok' | 'error_code' | 'duration_ms'
> &
  Partial<Pick<TranscriptEntry, 'args' | 'args_omitted_bytes' | 'text' | 'started_at' | 'data'>>;

/** A staged edit with its diff (`GET runs/{id}/edits[/{edit_id}]`). */
export type StagedEdit = Schemas['StagedEdit'];

/** A staged edit as the panel keeps it: its events carry no diff until it is fetched. */
export type EditRow = Pick<StagedEdit, 'edit_id' | 'status' | 'replacements' | 'files' | 'created_at'> &
  Partial<Pick<StagedEdit, 'diff' | 'pattern' | 'rewrite' | 'language'>>;

/** A background worker of a run (`GET runs/{id}/workers`; `worker_state` events carry one). */
export type Worker = Schemas['WorkerDescriptor'];

/** A frame of `spaces/{space}/events` or `runs/{id}/events`. */
export type AgentEvent = Schemas['Event'];
