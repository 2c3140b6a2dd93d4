import { Clipboard } from '@jupyterlab/apputils';
import type { TranslationBundle } from '@jupyterlab/translation';
import { copyIcon, ReactWidget, refreshIcon } from '@jupyterlab/ui-components';
import { MessageLoop } from '@lumino/messaging';
import { Widget } from '@lumino/widgets';
import * as React from 'react';
import { flushSync } from 'react-dom';

import type { AgentToken, RunDescriptor, ToolResult, TranscriptRow, Worker } from '../api/types';
import {
  clientLabel,
  isEnded,
  latestNotebookPlace,
  MAX_TRANSCRIPT_ENTRIES,
  NotebookChange,
  notebookChange,
  notebookPathFromRoot,
  originLabel,
  PendingItem,
  revertedChanges,
  runFolder,
  runningCalls,
  toolCounts
} from '../state/runs';
import {
  DEFAULT_CEILING,
  ICeilingChoice,
  mcpSettings,
  mcpUrl,
  mcpUrlWithToken,
  PYTHON_ONE_LINER,
  tokenRequest
} from '../state/connect';
import { groupByReadiness, Readiness, StatusRow, statusRows } from '../state/status';
import { IAgentTools, PANEL_ID } from '../tokens';
import { CardView } from './cards';
import { EditView, Highlighter } from './diff';

/** Opens a notebook (a path from the server root) at a cell: by id, else by number. */
export type CellOpener = (path: string, cellId: string | null, cellNumber: number | null) => Promise<void>;

/** How often the run list and status are refreshed while the panel is visible. */
const REFRESH_MS = 5000;

/** The "Agent Tools" side panel: cards, runs, the selected run's edits, transcript, workers. */
export class AgentToolsPanel extends ReactWidget {
  private timer: ReturnType<typeof setInterval> | null = null;

  constructor(
    readonly model: IAgentTools,
    readonly trans: TranslationBundle,
    readonly highlighter: Highlighter | null = null,
    readonly openCell: CellOpener | null = null
  ) {
    super();
    this.id = PANEL_ID;
    this.addClass('jp-AgentTools');
    this.title.caption = trans.__('Agent Tools');
    model.changed.connect(() => this.update(), this);
    // A card is what a person waits to see: render it now, not on the next animation frame
    // (Lumino's update request) nor in React's next scheduled task (flushSync).
    model.cardAdded.connect(() => {
      if (this.isVisible) {
        flushSync(() => MessageLoop.sendMessage(this, Widget.Msg.UpdateRequest));
      }
    }, this);
  }

  protected onAfterShow(): void {
    void this.model.refresh();
    this.timer = setInterval(() => void this.model.refresh(), REFRESH_MS);
  }

  protected onAfterHide(): void {
    if (this.timer !== null) {
      clearInterval(this.timer);
      this.timer = null;
    }
  }

  dispose(): void {
    this.onAfterHide();
    super.dispose();
  }

  render(): JSX.Element {
    return (
      <PanelBody model={this.model} trans={this.trans} highlighter={this.highlighter} openCell={this.openCell} />
    );
  }
}

interface IBodyProps {
  model: IAgentTools;
  trans: TranslationBundle;
  highlighter?: Highlighter | null;
  openCell?: CellOpener | null;
}

function Section(props: {
  title: string;
  /** What the title means, on hover. */
  tooltip?: string;
  count?: number;
  name: string;
  open?: boolean;
  children: React.ReactNode;
}): JSX.Element {
  return (
    <details className={`jp-AgentTools-section jp-AgentTools-${props.name}`} open={props.open ?? true}>
      <summary className="jp-AgentTools-sectionTitle" title={props.tooltip}>
        {props.title}
        {props.count !== undefined && <span className="jp-AgentTools-count">{props.count}</span>}
      </summary>
      <div className="jp-AgentTools-sectionBody">{props.children}</div>
    </details>
  );
}


/** Re-render every second while `active` (elapsed times of running calls). */
function useTicking(active: boolean): void {
  const [, setTick] = React.useState(0);
  React.useEffect(() => {
    if (!active) {
      return;
    }
    const timer = setInterval(() => setTick(tick => tick + 1), 1000);
    return () => clearInterval(timer);
  }, [active]);
}

/** Seconds since `startedAt` (server time, in seconds), never negative. */
function elapsedSeconds(startedAt: number | undefined): number | null {
  return typeof startedAt === 'number' ? Math.max(0, Math.round(Date.now() / 1000 - startedAt)) : null;
}

function PanelBody({ model, trans, highlighter = null, openCell = null }: IBodyProps): JSX.Element {
  const cards = model.cards.pending();
  const runs = model.runs.runs();
  const selected = model.selectedRunId ? model.runs.run(model.selectedRunId) : undefined;
  const notebooks = model.spaces.filter(space => space !== 'lab');
  return (
    <div className="jp-AgentTools-body">
      <div className="jp-AgentTools-toolbar">
        <span className="jp-AgentTools-title">{trans.__('Agent Tools')}</span>
        <span
          className="jp-AgentTools-muted jp-AgentTools-listening"
          title={trans.__(
            'Questions and permission prompts of agents show here when their run is aimed at this lab (space "lab") or at a notebook open in it (its path): %1',
            model.spaces.join(', ')
          )}
        >
          {notebooks.length === 0
            ? trans.__('for this lab')
            : trans._n('lab + %1 notebook', 'lab + %1 notebooks', notebooks.length)}
        </span>
        <button
          className="jp-Button jp-mod-minimal jp-AgentTools-refresh"
          title={trans.__('Refresh runs and status')}
          aria-label={trans.__('Refresh runs and status')}
          onClick={() => void model.refresh()}
        >
          <refreshIcon.react tag="span" elementSize="normal" />
        </button>
      </div>
      {model.error && (
        <div className="jp-AgentTools-error" role="alert">
          {model.error}
        </div>
      )}
      {runs.length === 0 && cards.length === 0 ? (
        <Section title={trans.__('Connect an agent')} name="connectSection">
          <ConnectGuide model={model} trans={trans} first />
        </Section>
      ) : (
        <PendingSection items={model.runs.pending(cards)} model={model} trans={trans} highlighter={highlighter} />
      )}
      {runs.length > 0 && (
        <Section
          title={trans.__('Runs')}
          tooltip={trans.__('A run is one agent session: its folder, its tools and what it did')}
          count={runs.length}
          name="runs"
        >
          <ul className="jp-AgentTools-runList">
            {runs.map(run => (
              <RunRow
                key={run.id}
                run={run}
                model={model}
                trans={trans}
                selected={run.id === model.selectedRunId}
                waiting={model.runs.waiting(run.id, cards)}
              />
            ))}
          </ul>
        </Section>
      )}
      {selected && (
        <RunDetails run={selected} model={model} trans={trans} highlighter={highlighter} openCell={openCell} />
      )}
      {runs.length > 0 && (
        <Section title={trans.__('Connect an agent')} name="connectSection" open={false}>
          <ConnectGuide model={model} trans={trans} />
        </Section>
      )}
      <StatusSection model={model} trans={trans} />
    </div>
  );
}

/**
 * Everything waiting for the human, across runs, on top: each card or staged edit opens in
 * place (answered, accepted or discarded here), tagged with the run it belongs to.
 */
function PendingSection(props: {
  items: PendingItem[];
  model: IAgentTools;
  trans: TranslationBundle;
  highlighter: Highlighter | null;
}): JSX.Element {
  const { items, model, trans, highlighter } = props;
  return (
    <Section
      title={trans.__('Waiting for you')}
      tooltip={trans.__(
        'What agents wait for, from every run: questions, permission to write or run something, and staged edits to accept or discard'
      )}
      count={items.length}
      name="cards"
    >
      {items.length === 0 ? (
        <div className="jp-AgentTools-empty">{trans.__('Nothing is waiting for you.')}</div>
      ) : (
        items.map(item => (
          <div
            key={item.kind === 'card' ? item.card.id : `${item.runId}/${item.edit.edit_id}`}
            className={`jp-AgentTools-pending jp-AgentTools-pending-${item.kind}`}
            data-run-id={item.runId}
          >
            <RunTag runId={item.runId} model={model} trans={trans} />
            {item.kind === 'card' ? (
              <CardView card={item.card} trans={trans} onAnswer={(c, b) => model.answer(c, b)} />
            ) : (
              <EditView
                runId={item.runId}
                edit={item.edit}
                trans={trans}
                onResolve={(r, e, a) => model.resolveEdit(r, e, a)}
                highlighter={highlighter}
              />
            )}
          </div>
        ))
      )}
    </Section>
  );
}

/** Which run a pending item is of (its client and folder); a click shows that run below. */
function RunTag({ runId, model, trans }: { runId: string; model: IAgentTools; trans: TranslationBundle }): JSX.Element {
  const run = model.runs.run(runId);
  const name = run
    ? `${clientLabel(run)} · ${runFolder(run, model.status?.root_dir ?? null)}`
    : trans.__('run %1', runId.slice(0, 8));
  return (
    <button
      className="jp-AgentTools-runTag"
      title={trans.__('Show run %1 below', runId)}
      onClick={() => void model.selectRun(runId)}
    >
      {name}
      {run && isEnded(run) && <span className="jp-AgentTools-muted"> · {endedWords(run, trans)}</span>}
    </button>
  );
}

/** How an ended run ended, in words. */
function endedWords(run: RunDescriptor, trans: TranslationBundle): string {
  switch (run.ended_by) {
    case 'restart':
      return trans.__('ended by restart');
    case 'idle':
      return trans.__('ended: idle');
    default:
      return trans.__('ended');
  }
}

/** A time of the server's clock (seconds) as a person reads it: the hour today, else the date. */
function startedWords(seconds: number): string {
  const when = new Date(seconds * 1000);
  const today = new Date().toDateString() === when.toDateString();
  return today
    ? when.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' })
    : when.toLocaleString([], { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' });
}

/**
 * Text with a button that copies it, saying so for a moment. With `make`, what is copied is
 * what it gives when clicked (a snippet with an agent token minted for this copy).
 */
function CopyButton({
  text,
  trans,
  what,
  make
}: {
  text: string;
  trans: TranslationBundle;
  what: string;
  make?: () => Promise<string>;
}): JSX.Element {
  const [copied, setCopied] = React.useState(false);
  React.useEffect(() => {
    if (!copied) {
      return;
    }
    const timer = setTimeout(() => setCopied(false), 2000);
    return () => clearTimeout(timer);
  }, [copied]);
  return (
    <button
      className="jp-Button jp-mod-minimal jp-AgentTools-copy"
      title={trans.__('Copy %1', what)}
      aria-label={trans.__('Copy %1', what)}
      onClick={() => {
        if (!make) {
          Clipboard.copyToSystem(text);
          setCopied(true);
          return;
        }
        void make().then(
          made => {
            Clipboard.copyToSystem(made);
            setCopied(true);
          },
          () => undefined // the caller says why nothing was copied
        );
      }}
    >
      <copyIcon.react tag="span" elementSize="normal" />
      <span>{copied ? trans.__('Copied') : trans.__('Copy')}</span>
    </button>
  );
}

/** A text to copy, with what it is for and its copy button above it. */
function Snippet(props: {
  caption: string;
  text: string;
  what: string;
  name: string;
  /** Long lines scroll (JSON) instead of wrapping (a URL, a line of Python). */
  scroll?: boolean;
  /** What Copy copies, made when clicked (else `text`). */
  make?: () => Promise<string>;
  trans: TranslationBundle;
}): JSX.Element {
  return (
    <div className={`jp-AgentTools-snippet jp-AgentTools-snippet-${props.name}`}>
      <div className="jp-AgentTools-snippetBar">
        <span className="jp-AgentTools-muted">{props.caption}</span>
        <CopyButton text={props.text} what={props.what} trans={props.trans} make={props.make} />
      </div>
      <pre className={`jp-AgentTools-snippetText${props.scroll ? ' jp-mod-scroll' : ''}`}>{props.text}</pre>
    </div>
  );
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** How to connect an agent: the panel's first run, and later a closed section. Each Copy of a
 * snippet an agent uses mints an agent token with the ceiling chosen here (never the user's own
 * token); the tokens are listed below, each with Revoke. */
function ConnectGuide({ model, trans, first = false }: IBodyProps & { first?: boolean }): JSX.Element {
  const url = mcpUrl(model.client.settings.baseUrl);
  const client = model.client;
  const [ceiling, setCeiling] = React.useState<ICeilingChoice>(DEFAULT_CEILING);
  const [tokens, setTokens] = React.useState<AgentToken[] | null>(null);
  const [tokenError, setTokenError] = React.useState<string | null>(null);
  const reload = React.useCallback(async () => {
    try {
      setTokens(await client.tokens());
    } catch (error) {
      setTokenError(trans.__('The agent tokens could not be listed: %1', errorText(error)));
    }
  }, [client, trans]);
  React.useEffect(() => {
    void reload();
  }, [reload]);
  const mint = async (label: string): Promise<string> => {
    try {
      const created = await client.createToken(tokenRequest(ceiling, label));
      setTokenError(null);
      void reload();
      return created.token;
    } catch (error) {
      setTokenError(trans.__('No agent token was made, nothing was copied: %1', errorText(error)));
      throw error;
    }
  };
  const revoke = async (token: AgentToken): Promise<void> => {
    try {
      await client.revokeToken(token.id);
      setTokenError(null);
    } catch (error) {
      setTokenError(trans.__('Agent token %1 was not revoked: %2', token.label, errorText(error)));
    }
    await reload();
  };
  const choose = (change: Partial<ICeilingChoice>): void => setCeiling({ ...ceiling, ...change });
  return (
    <div className="jp-AgentTools-connect">
      <p>
        {first
          ? trans.__(
              'No agent has used this server yet. Connect one: its questions, permission prompts, edits and calls show here.'
            )
          : trans.__('Each agent session is a run listed above; its questions and permission prompts show here.')}
      </p>
      <div className="jp-AgentTools-connectStep jp-AgentTools-ceiling">
        <div className="jp-AgentTools-connectTitle">{trans.__('What an agent may do')}</div>
        <div className="jp-AgentTools-muted">
          {trans.__(
            'Each Copy below makes a new agent token (never your own token). A run opened with it gets at most:'
          )}
        </div>
        <label>
          {trans.__('Tools')}
          <select
            className="jp-AgentTools-ceilingSurface"
            value={ceiling.surface}
            onChange={event => choose({ surface: event.target.value as ICeilingChoice['surface'] })}
          >
            <option value="full">{trans.__('full: read, write and run')}</option>
            <option value="plan">{trans.__('plan: read only')}</option>
            <option value="readonly">{trans.__('readonly: read only')}</option>
          </select>
        </label>
        <label>
          {trans.__('Approvals')}
          <select
            className="jp-AgentTools-ceilingApprovals"
            title={trans.__('Approvals: whether its writes and commands wait for your Allow here')}
            value={ceiling.approvals}
            onChange={event => choose({ approvals: event.target.value as ICeilingChoice['approvals'] })}
          >
            <option value="ask">{trans.__('ask me first')}</option>
            <option value="deny">{trans.__('deny changes')}</option>
            <option value="auto">{trans.__('auto: never ask')}</option>
          </select>
        </label>
        <label>
          {trans.__('Folder')}
          <input
            className="jp-AgentTools-ceilingCwd"
            value={ceiling.cwd}
            title={trans.__('Its runs work in this folder (relative to the server root) or one inside it')}
            onChange={event => choose({ cwd: event.target.value })}
          />
        </label>
        <label>
          {trans.__('Expires after')}
          <select
            className="jp-AgentTools-ceilingExpires"
            value={ceiling.expiresDays}
            onChange={event => choose({ expiresDays: Number(event.target.value) })}
          >
            <option value={1}>{trans.__('1 day')}</option>
            <option value={7}>{trans.__('7 days')}</option>
            <option value={30}>{trans.__('30 days')}</option>
            <option value={90}>{trans.__('90 days')}</option>
          </select>
        </label>
      </div>
      <div className="jp-AgentTools-connectStep">
        <div className="jp-AgentTools-connectTitle">{trans.__('MCP (any MCP client)')}</div>
        <Snippet
          caption={trans.__(
            'Streamable HTTP. Copy makes an agent token and copies the URL with it:'
          )}
          text={mcpUrlWithToken(url)}
          make={async () => mcpUrlWithToken(url, await mint('MCP URL (panel)'))}
          what={trans.__('the MCP URL')}
          name="mcpUrl"
          trans={trans}
        />
      </div>
      <div className="jp-AgentTools-connectStep">
        <div className="jp-AgentTools-connectTitle">{trans.__('jupyter-ai (Claude Code, Codex, Gemini CLI…)')}</div>
        <Snippet
          caption={trans.__("In .jupyter/mcp_settings.json of the chat's workspace; Copy makes its token:")}
          text={mcpSettings(url)}
          make={async () => mcpSettings(url, await mint('jupyter-ai (panel)'))}
          what={trans.__('the mcp_settings.json entry')}
          name="mcpSettings"
          scroll
          trans={trans}
        />
      </div>
      <div className="jp-AgentTools-connectStep">
        <div className="jp-AgentTools-connectTitle">{trans.__('Python, in a notebook of this lab')}</div>
        <Snippet
          caption={trans.__('A run for your own agent loop; then session.call(tool, args):')}
          text={PYTHON_ONE_LINER}
          what={trans.__('the Python line')}
          name="python"
          trans={trans}
        />
      </div>
      <div className="jp-AgentTools-connectStep jp-AgentTools-tokens">
        <div className="jp-AgentTools-connectTitle">{trans.__('Agent tokens')}</div>
        {tokenError && (
          <div className="jp-AgentTools-error" role="alert">
            {tokenError}
          </div>
        )}
        {tokens !== null && tokens.length === 0 && (
          <div className="jp-AgentTools-empty">{trans.__('No agent token yet: Copy above makes one.')}</div>
        )}
        {tokens !== null && tokens.length > 0 && (
          <ul className="jp-AgentTools-tokenList">
            {tokens.map(token => (
              <li key={token.id} className="jp-AgentTools-token" data-token-id={token.id}>
                <span className="jp-AgentTools-tokenLabel">{token.label}</span>
                <span className="jp-AgentTools-muted jp-AgentTools-tokenCeiling">
                  {[
                    token.surface,
                    token.approvals,
                    token.cwd === '.' ? trans.__('any folder') : token.cwd,
                    token.expired
                      ? trans.__('expired')
                      : trans.__('until %1', new Date(token.expires_at * 1000).toLocaleDateString())
                  ].join(' · ')}
                </span>
                <button
                  className="jp-Button jp-mod-minimal jp-AgentTools-revoke"
                  title={trans.__('Revoke this agent token: its next request is refused')}
                  onClick={() => void revoke(token)}
                >
                  {trans.__('Revoke')}
                </button>
              </li>
            ))}
          </ul>
        )}
      </div>
    </div>
  );
}

function surfaceWords(run: RunDescriptor, trans: TranslationBundle): { text: string; tooltip: string } {
  switch (run.surface) {
    case 'plan':
      return { text: trans.__('plan only'), tooltip: trans.__('Surface "plan": the agent sees read tools only; it cannot write or run anything') };
    case 'readonly':
      return { text: trans.__('read only'), tooltip: trans.__('Surface "readonly": the agent sees read tools only; it cannot write or run anything') };
    default:
      return { text: trans.__('full access'), tooltip: trans.__('Surface "full": the agent sees every tool, writing and running included') };
  }
}

function approvalWords(run: RunDescriptor, trans: TranslationBundle): { text: string; tooltip: string } {
  switch (run.approvals) {
    case 'ask':
      return { text: trans.__('asks first'), tooltip: trans.__('Approvals "ask": every write or command waits for your Allow or Deny here') };
    case 'deny':
      return { text: trans.__('denies changes'), tooltip: trans.__('Approvals "deny": every write or command is refused') };
    default:
      return { text: trans.__('no approval asked'), tooltip: trans.__('Approvals "auto": writes and commands run without asking you') };
  }
}

function RunRow(props: {
  run: RunDescriptor;
  model: IAgentTools;
  trans: TranslationBundle;
  selected: boolean;
  /** Decisions it waits for: pending cards and staged edits. */
  waiting: number;
}): JSX.Element {
  const { run, model, trans, selected, waiting } = props;
  const ended = isEnded(run);
  const folder = runFolder(run, model.status?.root_dir ?? null);
  const counts = toolCounts(run, model.status?.tools ?? null);
  const surface = surfaceWords(run, trans);
  const approvals = approvalWords(run, trans);
  const running = selected ? runningCalls(model.runs.transcript(run.id)) : [];
  const toolsTooltip =
    counts.of === null
      ? (run.tools ?? []).join(', ')
      : trans.__(
          'This run has %1 of the server\'s %2 tools: %3.\nNot in this run: %4.\nA run has the tools its options give it: ask_user needs a space, debug a conversation, vibe_* vibe mode; plan and read-only runs have no write or run tools.',
          counts.has,
          counts.of,
          (run.tools ?? []).join(', '),
          counts.missing.join(', ') || trans.__('none')
        );
  return (
    <li
      className={`jp-AgentTools-run${selected ? ' jp-mod-selected' : ''}${ended ? ' jp-mod-ended' : ''}`}
      data-run-id={run.id}
      data-state={run.state ?? 'open'}
      onClick={() => void model.selectRun(run.id)}
      title={trans.__('Run %1 in %2', run.id, run.cwd)}
    >
      <div className="jp-AgentTools-runHead">
        {run.client?.name && (
          <span className="jp-AgentTools-runClient" title={trans.__('The agent\'s program, as it named itself')}>
            {clientLabel(run)}
          </span>
        )}
        <span className="jp-AgentTools-runFolder">{folder}</span>
        <span className="jp-AgentTools-runOrigin" title={trans.__('How the run was started (origin "%1")', run.origin)}>
          {trans.__('via %1', originLabel(run.origin))}
        </span>
        {waiting > 0 && (
          <span
            className="jp-AgentTools-badge jp-AgentTools-waiting"
            title={trans.__('Waits for you: its questions, permission prompts and staged edits are listed on top')}
          >
            {trans._n('%1 waiting', '%1 waiting', waiting)}
          </span>
        )}
        {ended && (
          <span
            className="jp-AgentTools-badge jp-AgentTools-runEnded"
            title={trans.__('Its transcript, changes and staged edits are kept in the run store')}
          >
            {endedWords(run, trans)}
          </span>
        )}
        {run.space && (
          <span
            className="jp-AgentTools-badge jp-AgentTools-runSpace"
            title={trans.__('Its questions go to: %1', run.space === 'lab' ? trans.__('this lab') : run.space)}
          >
            {run.space === 'lab' ? trans.__('lab') : run.space}
          </span>
        )}
        {running.length > 0 && <span className="jp-AgentTools-spinner" title={trans.__('Running')} />}
      </div>
      <div className="jp-AgentTools-muted jp-AgentTools-runMeta">
        <span className="jp-AgentTools-runStarted" title={new Date(run.created_at * 1000).toLocaleString()}>
          {trans.__('started %1', startedWords(run.created_at))}
        </span>
        {' · '}
        <span title={surface.tooltip}>{surface.text}</span>
        {' · '}
        <span title={approvals.tooltip}>{approvals.text}</span>
        {' · '}
        <span className="jp-AgentTools-runTools" title={toolsTooltip}>
          {counts.of === null
            ? trans._n('%1 tool', '%1 tools', counts.has)
            : trans.__('%1 of %2 tools', counts.has, counts.of)}
        </span>
        {run.parent_id && ` · ${trans.__('worker of %1', run.parent_id.slice(0, 8))}`}
      </div>
    </li>
  );
}

function RunDetails(props: {
  run: RunDescriptor;
  model: IAgentTools;
  trans: TranslationBundle;
  highlighter: Highlighter | null;
  openCell: CellOpener | null;
}): JSX.Element {
  const { run, model, trans, highlighter, openCell } = props;
  const edits = model.runs.edits(run.id);
  const staged = model.runs.stagedCount(run.id);
  const transcript = model.runs.transcript(run.id);
  const earlierCalls = model.runs.earlierCalls(run.id);
  const workers = model.runs.workers(run.id);
  const running = runningCalls(transcript);
  const reverted = revertedChanges(transcript);
  useTicking(running.length > 0 || workers.some(worker => worker.status === 'running'));
  const place = latestNotebookPlace(transcript);
  const [following, setFollowing] = React.useState<string | null>(null); // the run followed
  const follow = following === run.id && !isEnded(run);
  React.useEffect(() => {
    // Each new place of the followed agent scrolls its notebook there (opened if need be).
    if (follow && place && openCell) {
      void openCell(notebookPathFromRoot(run, place.path), place.cellId, place.cell);
    }
  }, [follow, place?.callId]);
  return (
    <>
      {openCell && !isEnded(run) && (
        <label
          className="jp-AgentTools-follow"
          title={trans.__(
            'Follow this agent: each time it changes or runs a cell, its notebook scrolls to that cell. In a notebook open with collaboration, the agent also shows as a collaborator with its name and cursor.'
          )}
        >
          <input
            type="checkbox"
            className="jp-AgentTools-followToggle"
            checked={follow}
            onChange={event => setFollowing(event.target.checked ? run.id : null)}
          />
          {trans.__('Follow %1 in the notebook', clientLabel(run))}
          {place && (
            <span className="jp-AgentTools-muted">
              {' '}
              {trans.__('(last at %1, cell %2)', place.path, place.cell)}
            </span>
          )}
        </label>
      )}
      {isEnded(run) && (
        <div className="jp-AgentTools-muted jp-AgentTools-runEndedNote" data-run-id={run.id}>
          {trans.__(
            '%1 (%2) %3%4: its transcript and edits are kept here.',
            clientLabel(run),
            runFolder(run, model.status?.root_dir ?? null),
            endedWords(run, trans),
            run.ended_at ? ` ${startedWords(run.ended_at)}` : ''
          )}
          {run.notice && <div>{run.notice}</div>}
        </div>
      )}
      {running.length > 0 && (
        <div className="jp-AgentTools-running" role="status">
          {running.map(entry => (
            <div key={entry.call_id} className="jp-AgentTools-runningCall" data-call-id={entry.call_id}>
              <span className="jp-AgentTools-spinner" />
              <span>{trans.__('Running')}</span> <span className="jp-AgentTools-callTool">{entry.tool}</span>{' '}
              <span className="jp-AgentTools-callLabel">{callDetail(entry)}</span>
              <Elapsed entry={entry} />
            </div>
          ))}
        </div>
      )}
      {edits.length > 0 && (
        <Section
          title={trans.__('Edits')}
          tooltip={trans.__('Changes the agent proposed (ast_edit): the staged ones wait on top, under "Waiting for you"')}
          count={edits.length}
          name="edits"
        >
          {staged > 0 && (
            <div className="jp-AgentTools-muted jp-AgentTools-stagedAbove">
              {trans._n('%1 staged edit waits for you above.', '%1 staged edits wait for you above.', staged)}
            </div>
          )}
          {edits.filter(edit => edit.status !== 'staged').map(edit => (
            <EditView
              key={edit.edit_id}
              runId={run.id}
              edit={edit}
              trans={trans}
              onResolve={(r, e, a) => model.resolveEdit(r, e, a)}
              highlighter={highlighter}
            />
          ))}
        </Section>
      )}
      <Section
        title={trans.__('Transcript')}
        tooltip={trans.__('Every call of this run, newest last; open one for its arguments and result')}
        count={transcript.length}
        name="transcript"
      >
        {earlierCalls > 0 && (
          <div className="jp-AgentTools-muted jp-AgentTools-earlierCalls">
            {trans._n(
              '%1 earlier call is not shown: a transcript keeps the newest calls (the server up to c.Runtime.max_transcript_entries and max_transcript_bytes, this panel %2).',
              '%1 earlier calls are not shown: a transcript keeps the newest calls (the server up to c.Runtime.max_transcript_entries and max_transcript_bytes, this panel %2).',
              earlierCalls,
              MAX_TRANSCRIPT_ENTRIES
            )}
          </div>
        )}
        {transcript.length === 0 ? (
          <div className="jp-AgentTools-empty">{trans.__('No call yet.')}</div>
        ) : (
          <ol className="jp-AgentTools-transcript">
            {transcript.map(entry => (
              <TranscriptRowView
                key={entry.call_id}
                entry={entry}
                run={run}
                model={model}
                trans={trans}
                openCell={openCell}
                reverted={reverted}
              />
            ))}
          </ol>
        )}
      </Section>
      {workers.length > 0 && (
        <Section
          title={trans.__('Workers')}
          tooltip={trans.__('Background agents this run started (vibe mode), each with a run of its own')}
          count={workers.length}
          name="workers"
        >
          {workers.map(worker => (
            <WorkerRow key={worker.worker_id} worker={worker} />
          ))}
        </Section>
      )}
    </>
  );
}

function Elapsed({ entry }: { entry: TranscriptRow }): JSX.Element | null {
  const seconds = elapsedSeconds(entry.started_at);
  return seconds === null ? null : <span className="jp-AgentTools-muted jp-AgentTools-elapsed"> {seconds} s</span>;
}

function TranscriptRowView(props: {
  entry: TranscriptRow;
  run: RunDescriptor;
  model: IAgentTools;
  trans: TranslationBundle;
  openCell: CellOpener | null;
  reverted: Set<string>;
}): JSX.Element {
  const { entry, run, model, trans, openCell, reverted } = props;
  const state = entry.ok === null ? 'running' : entry.ok ? 'ok' : 'error';
  const change = notebookChange(entry);
  return (
    <li className={`jp-AgentTools-call jp-AgentTools-call-${state}`} data-call-id={entry.call_id}>
      <details
        onToggle={event => {
          if ((event.target as HTMLDetailsElement).open && entry.args === undefined) {
            void model.loadTranscript(run.id);
          }
        }}
      >
        <summary>
          <span className="jp-AgentTools-callTool">{entry.tool}</span>{' '}
          {change ? (
            <span className="jp-AgentTools-callLabel">
              {change.action} <span className="jp-AgentTools-mono">{change.path}</span>
            </span>
          ) : (
            <span className="jp-AgentTools-callLabel">{callDetail(entry)}</span>
          )}{' '}
          {state === 'running' ? (
            <>
              <span className="jp-AgentTools-spinner" title={trans.__('Running')} />
              <Elapsed entry={entry} />
            </>
          ) : (
            <span className={`jp-AgentTools-badge jp-AgentTools-status-${state}`}>
              {state === 'error' ? entry.error_code ?? 'error' : state}
            </span>
          )}
          {entry.duration_ms !== null && (
            <span className="jp-AgentTools-muted"> {formatDuration(entry.duration_ms)}</span>
          )}
        </summary>
        {typeof entry.args_omitted_bytes === 'number' ? (
          <div className="jp-AgentTools-muted jp-AgentTools-argsOmitted">
            {trans.__(
              'Arguments not kept: about %1 bytes, more than the transcript holds (c.Runtime.max_transcript_bytes). Replay refuses this call.',
              entry.args_omitted_bytes.toLocaleString()
            )}
          </div>
        ) : (
          entry.args !== undefined && (
            <pre className="jp-AgentTools-cardArgs">{JSON.stringify(entry.args, null, 2)}</pre>
          )
        )}
        {entry.text && <pre className="jp-AgentTools-result">{entry.text}</pre>}
      </details>
      {change && (
        <NotebookChangeView
          change={change}
          run={run}
          model={model}
          trans={trans}
          openCell={openCell}
          reverted={change.changeId !== null && reverted.has(change.changeId)}
        />
      )}
    </li>
  );
}

function NotebookChangeView(props: {
  change: NotebookChange;
  run: RunDescriptor;
  model: IAgentTools;
  trans: TranslationBundle;
  openCell: CellOpener | null;
  reverted: boolean;
}): JSX.Element {
  const { change, run, model, trans, openCell, reverted } = props;
  const [refusal, setRefusal] = React.useState<string | null>(null);
  const [busy, setBusy] = React.useState(false);
  const path = notebookPathFromRoot(run, change.path);
  const open = (cellId: string | null, cellNumber: number | null) => {
    if (openCell) {
      void openCell(path, cellId, cellNumber);
    }
  };
  const revert = async () => {
    if (!change.changeId) {
      return;
    }
    setBusy(true);
    const result: ToolResult | null = await model.revertNotebookChange(run.id, change.path, change.changeId);
    setBusy(false);
    setRefusal(result && !result.ok ? result.text ?? result.error?.message ?? null : null);
  };
  return (
    <div className="jp-AgentTools-notebookChange" data-change-id={change.changeId ?? undefined}>
      {/* A reverted insert's cell is gone: nothing to open there. */}
      {!(reverted && change.action === 'insert') &&
        change.cells.map(ref => (
        <button
          key={`${ref.cell}-${ref.id}`}
          className="jp-AgentTools-cellLink"
          data-cell-id={ref.id ?? undefined}
          title={trans.__('Open %1 at this cell (id %2)', path, ref.id ?? '?')}
          onClick={() => open(ref.id, ref.cell)}
        >
          {trans.__('cell %1', ref.cell)}
        </button>
        ))}
      {change.deleted && (
        <span className="jp-AgentTools-muted">{trans.__('deleted cell %1', change.deleted.cell)}</span>
      )}
      {change.cells.length === 0 && (
        <button className="jp-AgentTools-cellLink" title={trans.__('Open %1', path)} onClick={() => open(null, null)}>
          {trans.__('open')}
        </button>
      )}
      {change.changeId &&
        (reverted ? (
          <span className="jp-AgentTools-badge jp-AgentTools-reverted">{trans.__('reverted')}</span>
        ) : (
          <button
            className="jp-AgentTools-revert"
            title={trans.__('Undo this change of the agent\'s, if the cell still holds what the agent left')}
            disabled={busy}
            onClick={() => void revert()}
          >
            {trans.__('Revert')}
          </button>
        ))}
      {refusal && (
        <div className="jp-AgentTools-revertRefused" role="alert">
          {refusal}
        </div>
      )}
    </div>
  );
}

function formatDuration(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
}

/** The label without the tool's name, which the row already shows. */
function callDetail(entry: TranscriptRow): string {
  return entry.label.startsWith(`${entry.tool} `) ? entry.label.slice(entry.tool.length + 1) : entry.label;
}

function WorkerRow({ worker }: { worker: Worker }): JSX.Element {
  return (
    <div className="jp-AgentTools-worker" data-worker-id={worker.worker_id}>
      <div>
        <span className="jp-AgentTools-mono">{worker.worker_id}</span> {worker.label}{' '}
        {worker.status === 'running' && <span className="jp-AgentTools-spinner" />}
        <span className={`jp-AgentTools-badge jp-AgentTools-status-${worker.status}`}>{worker.status}</span>
      </div>
      {worker.result && <pre className="jp-AgentTools-result">{worker.result}</pre>}
    </div>
  );
}

function readinessTitle(readiness: Readiness, trans: TranslationBundle): { title: string; tooltip: string } {
  switch (readiness) {
    case 'broken':
      return {
        title: trans.__('Broken'),
        tooltip: trans.__('Installed or configured, and failing: these need fixing')
      };
    case 'absent':
      return {
        title: trans.__('Not installed (optional)'),
        tooltip: trans.__('Languages and features this server could serve once installed; nothing is wrong without them')
      };
    default:
      return { title: trans.__('Ready'), tooltip: trans.__('What agents can use now') };
  }
}

function StatusSection({ model, trans }: IBodyProps): JSX.Element {
  const rows = statusRows(model.status);
  const broken = rows.filter(row => row.readiness === 'broken').length;
  return (
    <Section
      title={broken > 0 ? trans._n('Status: %1 broken', 'Status: %1 broken', broken) : trans.__('Status')}
      tooltip={trans.__('What the server can serve: language servers, debuggers, kernels, workers')}
      name="status"
      open={false}
    >
      {!model.status ? (
        <div className="jp-AgentTools-empty">{trans.__('Not loaded yet.')}</div>
      ) : (
        <div className="jp-AgentTools-statusList">
          <div className="jp-AgentTools-muted jp-AgentTools-serverTools" title={model.status.tools.join(', ')}>
            {trans.__('%1 tools on this server; each run has those its options give it.', model.status.tools.length)}
          </div>
          {groupByReadiness(rows).map(group => {
            const heading = readinessTitle(group.readiness, trans);
            return (
              <div
                key={group.readiness}
                className={`jp-AgentTools-statusGroup jp-AgentTools-readiness-${group.readiness}`}
                data-readiness={group.readiness}
              >
                <div className="jp-AgentTools-statusHeading" title={heading.tooltip}>
                  {heading.title} <span className="jp-AgentTools-count">{group.rows.length}</span>
                </div>
                {group.rows.map(row => (
                  <StatusRowView key={`${row.resource}/${row.name}`} row={row} trans={trans} />
                ))}
              </div>
            );
          })}
        </div>
      )}
    </Section>
  );
}

const RESOURCE_NAMES: Record<string, string> = {
  lsp: 'language server',
  debug: 'debugger',
  kernels: 'eval kernel',
  workers: 'worker tier',
  parser: 'structural search',
  questions: 'questions',
  resources: 'resource',
  tools: 'tool'
};

function StatusRowView({ row, trans }: { row: StatusRow; trans: TranslationBundle }): JSX.Element {
  const kind = RESOURCE_NAMES[row.resource] ?? row.resource;
  const label = row.name === row.resource ? kind : row.name;
  // A long list of languages would take lines: it is on hover then.
  const detail = row.detail && row.detail.length <= 24 ? row.detail : null;
  return (
    <div
      className="jp-AgentTools-statusRow"
      data-resource={row.resource}
      data-available={String(row.available)}
      data-readiness={row.readiness}
      title={row.detail ? `${label}: ${row.detail}` : undefined}
    >
      <span className="jp-AgentTools-dot">●</span> <span className="jp-AgentTools-statusName">{label}</span>
      <span className="jp-AgentTools-muted">
        {row.name === row.resource ? '' : ` ${kind}`}
        {detail ? ` (${detail})` : ''}
      </span>
      {row.readiness !== 'ready' && row.install ? (
        <div className="jp-AgentTools-install">
          <span className="jp-AgentTools-muted">{trans.__('Install:')}</span>{' '}
          <code className="jp-AgentTools-mono" title={row.reason ?? undefined}>
            {row.install}
          </code>
          <CopyButton text={row.install} what={trans.__('the install command')} trans={trans} />
        </div>
      ) : (
        row.reason && <div className="jp-AgentTools-muted jp-AgentTools-reason">{row.reason}</div>
      )}
    </div>
  );
}
