import { Token } from '@lumino/coreutils';
import type { ISignal } from '@lumino/signaling';

import type { AgentToolsClient, StatusReport } from './api/client';
import type { AnswerBody, Card, ToolResult } from './api/types';
import type { CardBook } from './state/cards';
import type { RunBook } from './state/runs';

/** The ids other plugins and tests rely on (CONTRACT.md, "JupyterLab panel"). */
export const PANEL_ID = 'agent-tools-panel';
export const CommandIds = {
  openPanel: 'agent-tools:open-panel',
  refresh: 'agent-tools:refresh'
} as const;

/** The panel's state: spaces joined, pending cards, runs, and the selected run's details. */
export interface IAgentTools {
  readonly client: AgentToolsClient;
  readonly cards: CardBook;
  readonly runs: RunBook;
  readonly status: StatusReport | null;
  /** The spaces this lab is a human front end for: `lab` and the open notebooks' paths. */
  readonly spaces: string[];
  readonly selectedRunId: string | null;
  /** The last error to show (a failed request), or null. */
  readonly error: string | null;
  /** Anything shown changed. */
  readonly changed: ISignal<IAgentTools, void>;
  /** A card arrived that was not pending before (not a replay of one already shown). */
  readonly cardAdded: ISignal<IAgentTools, Card>;
  readonly cardRemoved: ISignal<IAgentTools, Card>;
  setNotebookSpaces(paths: string[]): void;
  selectRun(runId: string | null): Promise<void>;
  refresh(): Promise<void>;
  answer(card: Card, body: AnswerBody): Promise<void>;
  resolveEdit(runId: string, editId: string, action: 'accept' | 'discard'): Promise<ToolResult | null>;
  /**
   * Undo one notebook change of the agent's (`notebook {action: "revert"}` through the run):
   * its result says why not when the cell changed since (`stale_edit`).
   */
  revertNotebookChange(runId: string, path: string, changeId: string): Promise<ToolResult | null>;
  /** The transcript with arguments and result texts (the live events carry neither). */
  loadTranscript(runId: string): Promise<void>;
}

export const IAgentTools = new Token<IAgentTools>(
  'jupyter-agent-tools:IAgentTools',
  'The agent-tools state shared by the panel, the status bar item and the notifications.'
);
