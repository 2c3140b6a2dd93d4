import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

import type { paths } from './schema';
import type {
  AgentToken,
  AnswerBody,
  Card,
  RunDescriptor,
  StagedEdit,
  TokenCreated,
  TokenRequest,
  ToolResult,
  TranscriptEntry,
  Worker
} from './types';

export type StatusReport =
  paths['/agent-tools/api/status']['get']['responses'][200]['content']['application/json'];

const API = 'agent-tools/api';

/** An HTTP answer that was not 2xx, with the server's {error: {code, message}} when it sent one. */
export class ApiRequestError extends Error {
  constructor(
    readonly status: number,
    readonly code: string | null,
    message: string
  ) {
    super(message);
  }
}

/**
 * The HTTP and WebSocket client of the agent-tools API, through JupyterLab's server connection
 * (base URL, token, XSRF cookie), so it works behind JupyterHub and Binder as the lab does.
 */
export class AgentToolsClient {
  constructor(readonly settings: ServerConnection.ISettings = ServerConnection.makeSettings()) {}

  async request<T>(path: string, init: RequestInit = {}): Promise<T> {
    return (await this.exchange<T>(path, init)).data;
  }

  /** The parsed body, with the response for its headers. */
  private async exchange<T>(path: string, init: RequestInit = {}): Promise<{ data: T; response: Response }> {
    const url = URLExt.join(this.settings.baseUrl, API, path);
    const response = await ServerConnection.makeRequest(url, init, this.settings);
    const body = await response.text();
    const data = body ? JSON.parse(body) : null;
    if (!response.ok) {
      const error = data?.error ?? {};
      throw new ApiRequestError(
        response.status,
        error.code ?? null,
        error.message ?? data?.message ?? `${response.status} ${response.statusText}`
      );
    }
    return { data: data as T, response };
  }

  private post<T>(path: string, body: unknown): Promise<T> {
    return this.request<T>(path, { method: 'POST', body: JSON.stringify(body) });
  }

  status(): Promise<StatusReport> {
    return this.request<StatusReport>('status');
  }

  runs(): Promise<RunDescriptor[]> {
    return this.request<RunDescriptor[]>('runs');
  }

  /** A run's transcript, and how many older calls the server dropped from it (its bounds). */
  async transcript(runId: string): Promise<{ entries: TranscriptEntry[]; dropped: number }> {
    const { data, response } = await this.exchange<TranscriptEntry[]>(`runs/${runId}/transcript`);
    return { entries: data, dropped: Number(response.headers.get('X-Transcript-Dropped') ?? 0) || 0 };
  }

  edits(runId: string): Promise<StagedEdit[]> {
    return this.request<StagedEdit[]>(`runs/${runId}/edits`);
  }

  edit(runId: string, editId: string): Promise<StagedEdit> {
    return this.request<StagedEdit>(`runs/${runId}/edits/${encodeURIComponent(editId)}`);
  }

  /** Accept or discard a staged edit of an ended run (an open run's goes through `resolve`). */
  resolveEndedEdit(runId: string, editId: string, action: 'accept' | 'discard'): Promise<StagedEdit> {
    return this.post<StagedEdit>(`runs/${runId}/edits/${encodeURIComponent(editId)}`, { action });
  }

  workers(runId: string): Promise<Worker[]> {
    return this.request<Worker[]>(`runs/${runId}/workers`);
  }

  answer(card: Card, body: AnswerBody): Promise<Card> {
    return this.post<Card>(`runs/${card.run_id}/questions/${encodeURIComponent(card.id)}`, body);
  }

  /** A tool call through the run's one dispatch path (approvals and wrappers apply). */
  call(runId: string, tool: string, args: Record<string, unknown>): Promise<ToolResult> {
    return this.post<ToolResult>(`runs/${runId}/calls`, { tool, args });
  }

  /** The user's agent tokens (ceilings and expiry; never the tokens). */
  tokens(): Promise<AgentToken[]> {
    return this.request<AgentToken[]>('tokens');
  }

  /** Mint an agent token: the answer is the only place the token itself is shown. */
  createToken(body: TokenRequest): Promise<TokenCreated> {
    return this.post<TokenCreated>('tokens', body);
  }

  /** Revoke an agent token: its next request is refused. */
  async revokeToken(id: string): Promise<void> {
    await this.request<null>(`tokens/${encodeURIComponent(id)}`, { method: 'DELETE' });
  }

  /** The URL of an event stream: `spaces/{space}/events` or `runs/{id}/events`. */
  socketUrl(path: string): string {
    const url = URLExt.join(this.settings.wsUrl, API, path);
    const token = this.settings.token;
    return this.settings.appendToken && token ? `${url}?token=${encodeURIComponent(token)}` : url;
  }

  spaceEventsUrl(space: string): string {
    return this.socketUrl(`spaces/${encodeURIComponent(space)}/events`);
  }

  runEventsUrl(runId: string): string {
    return this.socketUrl(`runs/${runId}/events`);
  }
}
