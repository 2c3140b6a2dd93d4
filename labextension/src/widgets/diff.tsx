import type { TranslationBundle } from '@jupyterlab/translation';
import * as React from 'react';

import type { StagedEdit } from '../api/types';
import { parseUnifiedDiff } from '../state/diffs';

export interface IEditViewProps {
  runId: string;
  edit: StagedEdit;
  trans: TranslationBundle;
  onResolve: (runId: string, editId: string, action: 'accept' | 'discard') => Promise<unknown>;
}

/** A staged edit: its diff per file (collapsible, coloured) and Accept / Discard. */
export function EditView({ runId, edit, trans, onResolve }: IEditViewProps): JSX.Element {
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
              <div key={index} className={`jp-AgentTools-diffLine jp-AgentTools-diff-${line.kind}`}>
                {line.text}
              </div>
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
