import type { TranslationBundle } from '@jupyterlab/translation';
import * as React from 'react';

import type { AnswerBody, Card } from '../api/types';
import { answerBody, toggleChoice } from '../state/cards';

export interface ICardViewProps {
  card: Card;
  trans: TranslationBundle;
  onAnswer: (card: Card, body: AnswerBody) => Promise<void>;
}

/** One pending question or permission card, answerable in place. */
export function CardView({ card, trans, onAnswer }: ICardViewProps): JSX.Element {
  const [selected, setSelected] = React.useState<string[]>([]);
  const [text, setText] = React.useState('');
  const [busy, setBusy] = React.useState(false);

  const send = async (body: AnswerBody | null) => {
    if (!body || busy) {
      return;
    }
    setBusy(true);
    try {
      await onAnswer(card, body);
    } finally {
      setBusy(false);
    }
  };
  const pick = (label: string) => {
    if (card.multi_select) {
      setSelected(toggleChoice(card, selected, label));
    } else {
      void send(answerBody(card, [label], text));
    }
  };
  const submit = answerBody(card, selected, text);
  const permission = card.kind === 'permission';

  return (
    <div
      className={`jp-AgentTools-card jp-AgentTools-card-${card.kind}`}
      data-card-id={card.id}
      data-run-id={card.run_id}
    >
      <div className="jp-AgentTools-cardHeader">
        <span className="jp-AgentTools-cardNumber">#{card.number}</span>
        <span
          className="jp-AgentTools-cardSpace"
          title={
            card.space === 'lab'
              ? trans.__('Asked in this lab (space "lab")')
              : trans.__('Asked for the notebook %1 (its space)', card.space)
          }
        >
          {card.space}
        </span>
        {permission && card.tier && (
          <span
            className="jp-AgentTools-badge"
            title={trans.__('Tier "%1": read looks, write changes files or cells, exec runs code or commands', card.tier)}
          >
            {card.tier}
          </span>
        )}
      </div>
      <div className="jp-AgentTools-cardQuestion">{card.question}</div>
      {card.context && <div className="jp-AgentTools-cardContext">{card.context}</div>}
      {permission && card.args && (
        <pre className="jp-AgentTools-cardArgs">{JSON.stringify(card.args, null, 2)}</pre>
      )}
      {card.options.length > 0 && (
        <div className={`jp-AgentTools-cardOptions${permission ? ' jp-AgentTools-permission' : ''}`}>
          {card.options.map(option => {
            const chosen = selected.includes(option.label);
            const deny = permission && option.value === 'deny';
            return (
              <button
                key={option.label}
                className={
                  permission
                    ? `jp-Button jp-mod-styled ${deny ? 'jp-mod-warn' : 'jp-mod-accept'}`
                    : `jp-Button jp-AgentTools-option${chosen ? ' jp-mod-active' : ''}`
                }
                title={option.description ?? ''}
                aria-pressed={card.multi_select ? chosen : undefined}
                disabled={busy}
                onClick={() => pick(option.label)}
              >
                {card.multi_select ? (chosen ? '☑ ' : '☐ ') : ''}
                {option.label}
              </button>
            );
          })}
        </div>
      )}
      {card.allow_free_text && (
        <textarea
          className="jp-AgentTools-cardText"
          placeholder={trans.__('Type an answer')}
          value={text}
          disabled={busy}
          onChange={event => setText(event.target.value)}
          onKeyDown={event => {
            if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) {
              void send(submit);
            }
          }}
        />
      )}
      <div className="jp-AgentTools-cardActions">
        {(card.multi_select || card.allow_free_text) && (
          <button
            className="jp-Button jp-mod-styled jp-mod-accept"
            disabled={busy || !submit}
            onClick={() => void send(submit)}
          >
            {trans.__('Send')}
          </button>
        )}
        {!permission && (
          <button
            className="jp-Button jp-mod-styled jp-mod-reject"
            disabled={busy}
            onClick={() => void send({ skip: true })}
          >
            {trans.__('Skip')}
          </button>
        )}
      </div>
    </div>
  );
}
