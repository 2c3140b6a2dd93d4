import { describe, expect, it } from 'vitest';

import type { AgentEvent, Card, CardOption } from '../src/api/types';
import { answerBody, CardBook, toggleChoice } from '../src/state/cards';

function option(label: string): CardOption {
  return { label, description: null, value: null };
}

function asked(shown: Card, replay = false): AgentEvent {
  return { type: 'question_asked', run_id: shown.run_id, space: shown.space, time: 1, card: shown, replay };
}

function closed(shown: Card): AgentEvent {
  return { type: 'question_closed', run_id: shown.run_id, space: shown.space, time: 2, card: shown };
}

function card(overrides: Partial<Card> = {}): Card {
  return {
    id: 'c1',
    number: 1,
    run_id: 'r1',
    space: 'lab',
    kind: 'question',
    question: 'Which colour?',
    context: '',
    options: [option('Red'), option('Blue')],
    allow_free_text: false,
    multi_select: false,
    tool: null,
    tier: null,
    label: null,
    args: null,
    status: 'pending',
    answer: null,
    text: null,
    created_at: 1,
    ...overrides
  };
}

describe('CardBook', () => {
  it('shows a card once, whichever streams announce it, and drops it when it closes', () => {
    const book = new CardBook();
    expect(book.apply(asked(card()))).toEqual({ kind: 'added', card: card() });
    expect(book.apply(asked(card(), true))).toBeNull();
    expect(book.count).toBe(1);

    const answered = closed(card({ status: 'answered' }));
    expect(book.apply(answered)?.kind).toBe('removed');
    expect(book.count).toBe(0);
    expect(book.apply(answered)).toBeNull();
  });

  it('never shows again a card that closed before a late replay of it arrived', () => {
    const book = new CardBook();
    book.apply(closed(card({ status: 'skipped' })));
    expect(book.apply(asked(card(), true))).toBeNull();
    expect(book.pending()).toEqual([]);
  });

  it('lists pending cards oldest first and forgets a space the lab left', () => {
    const book = new CardBook();
    book.apply(asked(card({ id: 'new', created_at: 5, space: 'a.ipynb' })));
    book.apply(asked(card({ id: 'old', created_at: 2 })));
    expect(book.pending().map(c => c.id)).toEqual(['old', 'new']);
    expect(book.dropSpace('a.ipynb').map(c => c.id)).toEqual(['new']);
    expect(book.pending().map(c => c.id)).toEqual(['old']);
  });

  it('counts the humans of each space', () => {
    const book = new CardBook();
    expect(book.apply({ type: 'humans', space: 'lab', humans: 2, time: 1 })).toEqual({
      kind: 'humans',
      space: 'lab',
      humans: 2
    });
    expect(book.humans('lab')).toBe(2);
    expect(book.humans('other')).toBe(0);
  });

  it('ignores frames that are not about cards', () => {
    const call: AgentEvent = {
      type: 'call_started', run_id: 'r1', time: 1, origin: 'http', call_id: 'x', tool: 'read', label: 'read'
    };
    expect(new CardBook().apply(call)).toBeNull();
  });
});

describe('answerBody', () => {
  it('sends one label on a single-choice card', () => {
    expect(answerBody(card(), ['Blue'], '')).toEqual({ answer: 'Blue' });
  });

  it('sends the list of labels on a multi-select card', () => {
    expect(answerBody(card({ multi_select: true }), ['Red', 'Blue'], '')).toEqual({ answer: ['Red', 'Blue'] });
  });

  it('sends free text only where the card takes it', () => {
    expect(answerBody(card({ allow_free_text: true }), [], '  teal  ')).toEqual({ text: 'teal' });
    expect(answerBody(card(), [], 'teal')).toBeNull();
  });

  it('has nothing to send for no choice, blank text or a label the card does not offer', () => {
    expect(answerBody(card({ allow_free_text: true }), [], '   ')).toBeNull();
    expect(answerBody(card(), ['Green'], '')).toBeNull();
  });
});

describe('toggleChoice', () => {
  it('toggles labels on a multi-select card and keeps the last one otherwise', () => {
    const multi = card({ multi_select: true });
    expect(toggleChoice(multi, ['Red'], 'Blue')).toEqual(['Red', 'Blue']);
    expect(toggleChoice(multi, ['Red', 'Blue'], 'Red')).toEqual(['Blue']);
    expect(toggleChoice(card(), ['Red'], 'Blue')).toEqual(['Blue']);
  });
});
