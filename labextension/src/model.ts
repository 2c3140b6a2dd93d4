import { ISignal, Signal } from '@lumino/signaling';

import { AgentToolsClient, ApiRequestError, StatusReport } from './api/client';
import type { AgentEvent, AnswerBody, Card, ToolResult } from './api/types';
import { CardBook } from './state/cards';
import { isEnded, RunBook } from './state/runs';
import type { IAgentTools } from './tokens';

/** The space every lab joins; notebooks add their own paths. */
export const LAB_SPACE = 'lab';
const RECONNECT_MS = [500, 1000, 2000, 5000, 10000];

/**
 * A WebSocket that reconnects with backoff until closed on purpose, handing each JSON frame
 * to `onEvent`. A space socket counts as a human while open, so it must stay open.
 */
export class EventSocket {
  private socket: WebSocket | null = null;
  private attempts = 0;
  private closed = false;
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly url: string,
    private readonly onEvent: (event: AgentEvent) => void,
    private readonly onOpen: () => void = () => undefined
  ) {
    this.connect();
  }

  private connect(): void {
    const socket = new WebSocket(this.url);
    this.socket = socket;
    socket.onopen = () => {
      this.attempts = 0;
      this.onOpen();
    };
    socket.onmessage = message => {
      try {
        this.onEvent(JSON.parse(String(message.data)) as AgentEvent);
      } catch (error) {
        console.warn('agent-tools: a frame that is not JSON was ignored', error);
      }
    };
    socket.onclose = () => {
      if (this.closed) {
        return;
      }
      const delay = RECONNECT_MS[Math.min(this.attempts++, RECONNECT_MS.length - 1)];
      this.timer = setTimeout(() => this.connect(), delay);
    };
  }

  close(): void {
    this.closed = true;
    if (this.timer !== null) {
      clearTimeout(this.timer);
    }
    this.socket?.close();
  }
}

export class AgentToolsModel implements IAgentTools {
  readonly cards = new CardBook();
  readonly runs = new RunBook();
  status: StatusReport | null = null;
  selectedRunId: string | null = null;
  error: string | null = null;

  private readonly spaceSockets = new Map<string, EventSocket>();
  private runSocket: EventSocket | null = null;
  private readonly changed_ = new Signal<IAgentTools, void>(this);
  private readonly cardAdded_ = new Signal<IAgentTools, Card>(this);
  private readonly cardRemoved_ = new Signal<IAgentTools, Card>(this);
  private refreshing: Promise<void> | null = null;

  constructor(readonly client: AgentToolsClient = new AgentToolsClient()) {
    this.joinSpace(LAB_SPACE);
  }

  get changed(): ISignal<IAgentTools, void> {
    return this.changed_;
  }
  get cardAdded(): ISignal<IAgentTools, Card> {
    return this.cardAdded_;
  }
  get cardRemoved(): ISignal<IAgentTools, Card> {
    return this.cardRemoved_;
  }

  get spaces(): string[] {
    return [...this.spaceSockets.keys()];
  }

  setNotebookSpaces(paths: string[]): void {
    const wanted = new Set([LAB_SPACE, ...paths]);
    for (const space of this.spaces) {
      if (!wanted.has(space)) {
        this.spaceSockets.get(space)?.close();
        this.spaceSockets.delete(space);
        this.cards.dropSpace(space).forEach(card => this.cardRemoved_.emit(card));
      }
    }
    wanted.forEach(space => this.joinSpace(space));
    this.changed_.emit();
  }

  private joinSpace(space: string): void {
    if (this.spaceSockets.has(space)) {
      return;
    }
    const socket = new EventSocket(this.client.spaceEventsUrl(space), event =>
      this.onSpaceEvent(event)
    );
    this.spaceSockets.set(space, socket);
  }

  private onSpaceEvent(event: AgentEvent): void {
    const change = this.cards.apply(event);
    if (change?.kind === 'added') {
      this.cardAdded_.emit(change.card);
      if (!this.runs.run(change.card.run_id)) {
        void this.refresh(); // a run the panel has not listed yet
      }
    } else if (change?.kind === 'removed') {
      this.cardRemoved_.emit(change.card);
    }
    if (change) {
      this.changed_.emit();
    }
  }

  async selectRun(runId: string | null): Promise<void> {
    if (runId === this.selectedRunId) {
      return;
    }
    this.runSocket?.close();
    this.runSocket = null;
    this.selectedRunId = runId;
    this.changed_.emit();
    if (!runId) {
      return;
    }
    // Subscribe first, then load: an event that lands in between is applied twice at worst
    // (call ids and edit ids make that harmless), never missed.
    this.runSocket = new EventSocket(this.client.runEventsUrl(runId), event =>
      this.onRunEvent(event)
    );
    await Promise.all([this.loadTranscript(runId), this.loadEdits(runId), this.loadWorkers(runId)]);
  }

  private onRunEvent(event: AgentEvent): void {
    const runId = this.selectedRunId;
    if (!runId || !('run_id' in event) || event.run_id !== runId) {
      return;
    }
    const { changed, needsEdit } = this.runs.apply(event);
    if (needsEdit) {
      void this.loadEdit(runId, needsEdit);
    }
    if (event.type === 'run_closed') {
      void this.refresh();
    }
    if (event.type === 'call_finished' && event.tool === 'notebook') {
      // The event carries no result: the transcript has the cells changed and the change id.
      void this.loadTranscript(runId);
    }
    if (changed) {
      this.changed_.emit();
    }
  }

  async loadTranscript(runId: string): Promise<void> {
    await this.guard(async () => {
      const { entries, dropped } = await this.client.transcript(runId);
      this.runs.setTranscript(runId, entries, dropped);
    });
  }

  private async loadEdits(runId: string): Promise<void> {
    await this.guard(async () => {
      try {
        this.runs.setEdits(runId, await this.client.edits(runId));
      } catch (error) {
        // A run without a parser has no edits: not an error worth showing.
        if (!(error instanceof ApiRequestError && error.status === 404)) {
          throw error;
        }
      }
    });
  }

  private async loadWorkers(runId: string): Promise<void> {
    await this.guard(async () => this.runs.setWorkers(runId, await this.client.workers(runId)));
  }

  private async loadEdit(runId: string, editId: string): Promise<void> {
    await this.guard(async () => this.runs.putEdit(runId, await this.client.edit(runId, editId)));
  }

  refresh(): Promise<void> {
    // Concurrent callers share one round of requests.
    this.refreshing ??= this.guard(async () => {
      const [runs, status] = await Promise.all([this.client.runs(), this.client.status()]);
      this.runs.setRuns(runs);
      this.status = status;
      // Every run's staged edits, not only the selected one's: the panel lists them all on top.
      const loading = this.runs.editsToLoad().map(runId => this.loadEdits(runId));
      const selected = this.selectedRunId;
      if (!selected || !this.runs.run(selected)) {
        const listed = this.runs.runs();
        await this.selectRun((listed.find(run => !isEnded(run)) ?? listed[0])?.id ?? null);
      }
      await Promise.all(loading);
    }).finally(() => (this.refreshing = null));
    return this.refreshing;
  }

  async answer(card: Card, body: AnswerBody): Promise<void> {
    await this.guard(async () => {
      const answered = await this.client.answer(card, body);
      this.cards.close(answered);
      this.cardRemoved_.emit(answered);
    });
  }

  async resolveEdit(
    runId: string,
    editId: string,
    action: 'accept' | 'discard'
  ): Promise<ToolResult | null> {
    let result: ToolResult | null = null;
    const run = this.runs.run(runId);
    if (run && isEnded(run)) {
      // An ended run has no tools: the human resolves its edits through the edits route.
      await this.guard(async () => {
        try {
          this.runs.putEdit(runId, await this.client.resolveEndedEdit(runId, editId, action));
        } finally {
          await this.loadEdits(runId);
        }
      });
      return null;
    }
    await this.guard(async () => {
      const answer = await this.client.call(runId, 'resolve', { edit_id: editId, action });
      result = answer;
      await this.loadEdits(runId);
      if (!answer.ok) {
        throw new Error(answer.text ?? String(answer.error?.code ?? 'resolve failed'));
      }
    });
    return result;
  }

  async revertNotebookChange(runId: string, path: string, changeId: string): Promise<ToolResult | null> {
    let result: ToolResult | null = null;
    await this.guard(async () => {
      // Through the run, as the agent's own call would go: its approvals and transcript apply.
      result = await this.client.call(runId, 'notebook', { action: 'revert', path, change_id: changeId });
      await this.loadTranscript(runId);
    });
    return result;
  }

  /** Run a request; a failure becomes `error` (shown in the panel) instead of a rejection. */
  private async guard(work: () => Promise<void>): Promise<void> {
    try {
      await work();
      this.error = null;
    } catch (error) {
      this.error = error instanceof Error ? error.message : String(error);
    } finally {
      this.changed_.emit();
    }
  }

  dispose(): void {
    this.spaceSockets.forEach(socket => socket.close());
    this.spaceSockets.clear();
    this.runSocket?.close();
    Signal.clearData(this);
  }
}
