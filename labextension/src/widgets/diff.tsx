import type { TranslationBundle } from '@jupyterlab/translation';
import * as React from 'react';

import type { EditRow } from '../api/types';
import { DiffLine, parseUnifiedDiff } from '../state/diffs';

/** Writes `code`, syntax-highlighted as the language of `path`, into `el` (JupyterLab's editor
 * languages); without one, lines are shown as plain text. */
export type Highlighter = (code: string, path: string, el: HTMLElement) => Promise<void>;

export interface IEditViewProps {
  runId: string;
  edit: EditRow;
  trans: TranslationBundle;
  onResolve: (runId: string, editId: string, action: 'accept' | 'discard') => Promise<unknown>;
  highlighter: Highlighter | null;
}

/** A staged edit: its diff per file (collapsible, coloured) and Accept / Discard. */
export function EditView({ runId, edit, trans, onResolve, highlighter }: IEditViewProps): JSX.Element {
  const [busy, setBusy] = React.useState(false);
  const files = React.useMemo(() => parseUnifiedDiff(edit.diff ?? ''), [edit.diff]);
  const staged = edit.status === 'staged';
  const resolve = async (action: 'accept' | 'discard') => {
    setBusy(true);
    try {
      await onResolve(runId, edit.edit_id, action);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div className="jp-AgentTools-edit" data-edit-id={edit.edit_id} data-status={edit.status}>
      <div className="jp-AgentTools-editHeader">
        <span className="jp-AgentTools-editId">{edit.edit_id}</span>
        <span className={`jp-AgentTools-badge jp-AgentTools-status-${edit.status}`}>
          {trans.__(edit.status)}
        </span>
        <span className="jp-AgentTools-muted">
          {trans._n('%1 replacement', '%1 replacements', edit.replacements)}
        </span>
      </div>
      {edit.pattern && (
        <div className="jp-AgentTools-muted jp-AgentTools-mono">
          {edit.pattern} → {edit.rewrite}
        </div>
      )}
      {files.map(file => (
        <details key={file.path} className="jp-AgentTools-diffFile" open={staged}>
          <summary>
            <span className="jp-AgentTools-mono">{file.path}</span>{' '}
            <span className="jp-AgentTools-diffAdded">+{file.added}</span>{' '}
            <span className="jp-AgentTools-diffDeleted">−{file.deleted}</span>
          </summary>
          <pre className="jp-AgentTools-diff">
            {file.lines.map((line, index) => (
              <DiffLineView key={index} line={line} path={file.path} highlighter={highlighter} />
            ))}
          </pre>
        </details>
      ))}
      {staged && (
        <div className="jp-AgentTools-cardActions">
          <button
            className="jp-Button jp-mod-styled jp-mod-accept"
            disabled={busy}
            onClick={() => void resolve('accept')}
          >
            {trans.__('Accept')}
          </button>
          <button
            className="jp-Button jp-mod-styled jp-mod-reject"
            disabled={busy}
            onClick={() => void resolve('discard')}
          >
            {trans.__('Discard')}
          </button>
        </div>
      )}
    </div>
  );
}

/** One diff line: its +/-/space marker, then the code, highlighted once the language loads. */
function DiffLineView(props: { line: DiffLine; path: string; highlighter: Highlighter | null }): JSX.Element {
  const { line, path, highlighter } = props;
  const code = React.useRef<HTMLSpanElement>(null);
  const isCode = line.kind === 'add' || line.kind === 'delete' || line.kind === 'context';
  React.useEffect(() => {
    const el = code.current;
    if (!el) {
      return;
    }
    const text = isCode ? line.text.slice(1) : line.text;
    el.textContent = text; // React renders no children here: this span is ours
    if (!isCode || !highlighter) {
      return;
    }
    let current = true;
    const rendered = document.createElement('span');
    highlighter(text, path, rendered)
      .then(() => current && el.replaceChildren(...Array.from(rendered.childNodes)))
      .catch(() => undefined); // plain text stays
    return () => {
      current = false;
    };
  }, [line.text, path, highlighter]);
  return (
    <div className={`jp-AgentTools-diffLine jp-AgentTools-diff-${line.kind}`}>
      {isCode && <span className="jp-AgentTools-diffMarker">{line.text[0]}</span>}
      <span ref={code} />
    </div>
  );
}
