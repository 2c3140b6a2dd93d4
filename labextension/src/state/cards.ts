import type { AgentEvent, AnswerBody, Card } from '../api/types';

/** What an event did to the pending cards. */
export type CardChange =
  | { kind: 'added'; card: Card }
  | { kind: 'removed'; card: Card }
  | { kind: 'humans'; space: string; humans: number };

/**
 * The pending cards of the spaces the panel serves. A card is shown once even when several
 * streams announce it; it goes when any stream says it closed (first answer wins anywhere).
 */
export class CardBook {
  private readonly cards = new Map<string, Card>();
  private readonly closed = new Set<string>();
  private readonly humansBySpace = new Map<string, number>();

  /** Apply one frame of a space or run stream; null when it changed nothing here. */
  apply(event: AgentEvent): CardChange | null {
    if (event.type === 'humans') {
      this.humansBySpace.set(event.space, event.humans);
      return { kind: 'humans', space: event.space, humans: event.humans };
    }
    if (event.type !== 'question_asked' && event.type !== 'question_closed') {
      return null;
    }
    return event.type === 'question_closed' ? this.close(event.card) : this.add(event.card);
  }

  /** A card closed (answered here or anywhere else: first answer wins). */
  close(card: Card): CardChange | null {
    this.closed.add(card.id);
    return this.cards.delete(card.id) ? { kind: 'removed', card } : null;
  }

  private add(card: Card): CardChange | null {
    if (card.status !== 'pending') {
      return this.close(card);
    }
    if (this.cards.has(card.id) || this.closed.has(card.id)) {
      return null; // a replay, or the same card from a second stream
    }
    this.cards.set(card.id, card);
    return { kind: 'added', card };
  }

  /** Forget the cards of a space the panel no longer serves. */
  dropSpace(space: string): Card[] {
    const dropped = [...this.cards.values()].filter(card => card.space === space);
    dropped.forEach(card => this.cards.delete(card.id));
    this.humansBySpace.delete(space);
    return dropped;
  }

  /** Pending cards, oldest first. */
  pending(): Card[] {
    return [...this.cards.values()].sort((a, b) => a.created_at - b.created_at);
  }

  get count(): number {
    return this.cards.size;
  }

  get(cardId: string): Card | undefined {
    return this.cards.get(cardId);
  }

  humans(space: string): number {
    return this.humansBySpace.get(space) ?? 0;
  }
}

/**
 * The answer body for what a human picked on a card: the chosen labels (one, or several on a
 * multi-select card) and/or free text. Null when there is nothing to send yet.
 */
export function answerBody(card: Card, selected: string[], text: string): AnswerBody | null {
  const labels = card.options.map(option => option.label);
  const chosen = selected.filter(label => labels.includes(label));
  const words = card.allow_free_text ? text.trim() : '';
  if (chosen.length === 0 && !words) {
    return null;
  }
  const body: AnswerBody = {};
  if (chosen.length > 0) {
    body.answer = card.multi_select ? chosen : chosen[0];
  }
  if (words) {
    body.text = words;
  }
  return body;
}

/** Toggle one label in a multi-select choice (a single-select card keeps only the last one). */
export function toggleChoice(card: Card, selected: string[], label: string): string[] {
  if (!card.multi_select) {
    return [label];
  }
  return selected.includes(label) ? selected.filter(l => l !== label) : [...selected, label];
}
