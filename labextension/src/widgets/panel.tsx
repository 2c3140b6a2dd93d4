import type { TranslationBundle } from '@jupyterlab/translation';
import { ReactWidget } from '@jupyterlab/ui-components';
import { MessageLoop } from '@lumino/messaging';
import { Widget } from '@lumino/widgets';
import * as React from 'react';
import { flushSync } from 'react-dom';

import type { RunDescriptor, TranscriptRow, Worker } from '../api/types';
import { describeRun, MAX_TRANSCRIPT_ENTRIES } from '../state/runs';
import { statusRows } from '../state/status';
import { IAgentTools, PANEL_ID } from '../tokens';
import { CardView } from './cards';
import { EditView, Highlighter } from './diff';

/** How often the run list and status are refreshed while the panel is visible. */
const REFRESH_MS = 5000;

/** The "Agent Tools" side panel: cards, runs, the selected run's edits, transcript, workers. */
export class AgentToolsPanel extends ReactWidget {
  private timer: ReturnType<typeof setInterval> | null = null;

  constructor(
    readonly model: IAgentTools,
    readonly trans: TranslationBundle,
    readonly highlighter: Highlighter | null = null
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
    return <PanelBody model={this.model} trans={this.trans} highlighter={this.highlighter} />;
  }
}

interface IBodyProps {
  model: IAgentTools;
  trans: TranslationBundle;
  highlighter?: Highlighter | null;
}

function Section(props: {
  title: string;
  count?: number;
  name: string;
  open?: boolean;
  children: React.ReactNode;
}): JSX.Element {
  return (
    <details className={`jp-AgentTools-section jp-AgentTools-${props.name}`} open={props.open ?? true}>
      <summary className="jp-AgentTools-sectionTitle">
        {props.title}
        {props.count !== undefined && <span className="jp-AgentTools-count">{props.count}</span>}
      </summary>
      <div className="jp-AgentTools-sectionBody">{props.children}</div>
    </details>
  );
}

function PanelBody({ model, trans, highlighter = null }: IBodyProps): JSX.Element {
  const cards = model.cards.pending();
  const runs = model.runs.runs();
  const selected = model.selectedRunId ? model.runs.run(model.selectedRunId) : undefined;
  return (
    <div className="jp-AgentTools-body">
      <div className="jp-AgentTools-toolbar">
        <span className="jp-AgentTools-title">{trans.__('Agent Tools')}</span>
        <span className="jp-AgentTools-muted" title={model.spaces.join('\n')}>
          {trans._n('%1 space', '%1 spaces', model.spaces.length)}
        </span>
        <button
          className="jp-Button jp-mod-minimal jp-AgentTools-refresh"
          title={trans.__('Refresh runs and status')}
          onClick={() => void model.refresh()}
        >
          ⟳
        </button>
      </div>
      {model.error && (
        <div className="jp-AgentTools-error" role="alert">
          {model.error}
        </div>
      )}
      <Section title={trans.__('Questions')} count={cards.length} name="cards">
        {cards.length === 0 ? (
          <div className="jp-AgentTools-empty">{trans.__('No question is waiting for you.')}</div>
        ) : (
          cards.map(card => (
            <CardView key={card.id} card={card} trans={trans} onAnswer={(c, b) => model.answer(c, b)} />
          ))
        )}
      </Section>
      <Section title={trans.__('Runs')} count={runs.length} name="runs">
        {runs.length === 0 ? (
          <div className="jp-AgentTools-empty">{trans.__('No run yet.')}</div>
        ) : (
          <ul className="jp-AgentTools-runList">
            {runs.map(run => (
              <RunRow key={run.id} run={run} model={model} selected={run.id === model.selectedRunId} />
            ))}
          </ul>
        )}
      </Section>
      {selected && <RunDetails run={selected} model={model} trans={trans} highlighter={highlighter} />}
      <Section title={trans.__('Status')} name="status" open={false}>
        <StatusView model={model} trans={trans} />
      </Section>
    </div>
  );
}

function RunRow(props: { run: RunDescriptor; model: IAgentTools; selected: boolean }): JSX.Element {
  const { run, model, selected } = props;
  return (
    <li
      className={`jp-AgentTools-run${selected ? ' jp-mod-selected' : ''}`}
      data-run-id={run.id}
      onClick={() => void model.selectRun(run.id)}
      title={(run.tools ?? []).join(', ')}
    >
      <div>
        <span className="jp-AgentTools-mono">{run.id.slice(0, 8)}</span>{' '}
        <span className="jp-AgentTools-mono">{run.cwd}</span>
        {run.space && <span className="jp-AgentTools-badge">{run.space}</span>}
      </div>
      <div className="jp-AgentTools-muted">
        {describeRun(run)} · {(run.tools ?? []).length} tools
        {run.parent_id && ` · worker of ${run.parent_id.slice(0, 8)}`}
      </div>
    </li>
  );
}

function RunDetails(props: {
  run: RunDescriptor;
  model: IAgentTools;
  trans: TranslationBundle;
  highlighter: Highlighter | null;
}): JSX.Element {
  const { run, model, trans, highlighter } = props;
  const edits = model.runs.edits(run.id);
  const transcript = model.runs.transcript(run.id);
  const earlierCalls = model.runs.earlierCalls(run.id);
  const workers = model.runs.workers(run.id);
  return (
    <>
      <Section title={trans.__('Staged edits')} count={edits.filter(e => e.status === 'staged').length} name="edits">
        {edits.length === 0 ? (
          <div className="jp-AgentTools-empty">{trans.__('No staged edit in this run.')}</div>
        ) : (
          edits.map(edit => (
            <EditView
              key={edit.edit_id}
              runId={run.id}
              edit={edit}
              trans={trans}
              onResolve={(r, e, a) => model.resolveEdit(r, e, a)}
              highlighter={highlighter}
            />
          ))
        )}
      </Section>
      <Section title={trans.__('Transcript')} count={transcript.length} name="transcript">
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
              <TranscriptRow key={entry.call_id} entry={entry} runId={run.id} model={model} trans={trans} />
            ))}
          </ol>
        )}
      </Section>
      {workers.length > 0 && (
        <Section title={trans.__('Workers')} count={workers.length} name="workers">
          {workers.map(worker => (
            <WorkerRow key={worker.worker_id} worker={worker} />
          ))}
        </Section>
      )}
    </>
  );
}

function TranscriptRow(props: {
  entry: TranscriptRow;
  runId: string;
  model: IAgentTools;
  trans: TranslationBundle;
}): JSX.Element {
  const { entry, runId, model, trans } = props;
  const state = entry.ok === null ? 'running' : entry.ok ? 'ok' : 'error';
  return (
    <li className={`jp-AgentTools-call jp-AgentTools-call-${state}`} data-call-id={entry.call_id}>
      <details
        onToggle={event => {
          if ((event.target as HTMLDetailsElement).open && entry.args === undefined) {
            void model.loadTranscript(runId);
          }
        }}
      >
        <summary>
          <span className="jp-AgentTools-callTool">{entry.tool}</span>{' '}
          <span className="jp-AgentTools-callLabel">{callDetail(entry)}</span>{' '}
          <span className={`jp-AgentTools-badge jp-AgentTools-status-${state}`}>
            {state === 'error' ? entry.error_code ?? 'error' : state}
          </span>
          {entry.duration_ms !== null && (
            <span className="jp-AgentTools-muted"> {Math.round(entry.duration_ms)} ms</span>
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
    </li>
  );
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
        <span className={`jp-AgentTools-badge jp-AgentTools-status-${worker.status}`}>{worker.status}</span>
      </div>
      {worker.result && <pre className="jp-AgentTools-result">{worker.result}</pre>}
    </div>
  );
}

function StatusView({ model, trans }: IBodyProps): JSX.Element {
  if (!model.status) {
    return <div className="jp-AgentTools-empty">{trans.__('Not loaded yet.')}</div>;
  }
  const rows = statusRows(model.status);
  const resources = [...new Set(rows.map(row => row.resource))];
  return (
    <div className="jp-AgentTools-statusList">
      {resources.map(resource => (
        <div key={resource} className="jp-AgentTools-statusGroup" data-resource={resource}>
          <div className="jp-AgentTools-statusResource">{resource}</div>
          {rows
            .filter(row => row.resource === resource)
            .map(row => {
              const state = row.available === false ? 'unavailable' : 'ok';
              return (
                <div key={row.name} className="jp-AgentTools-statusRow" data-available={String(row.available)}>
                  <span className={`jp-AgentTools-dot jp-AgentTools-status-${state}`}>●</span>{' '}
                  <span>{row.name}</span>
                  {row.detail && <span className="jp-AgentTools-muted"> ({row.detail})</span>}
                  {row.reason && <div className="jp-AgentTools-muted jp-AgentTools-reason">{row.reason}</div>}
                </div>
              );
            })}
        </div>
      ))}
    </div>
  );
}
