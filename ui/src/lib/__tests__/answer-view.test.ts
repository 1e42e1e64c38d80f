import { describe, expect, it } from 'vitest';
import { answerPieces, findingActionWords, findingKindWords, findingWhere } from '../answer-view';
import type { AnswerFinding } from '../types';

const at = (mark: [number, number] | undefined, kind = 'secret'): AnswerFinding => ({
  kind,
  action: 'redact',
  location: { path: '/content/0/text', offset: 0, len: 0 },
  what: 'test',
  excerpt: '',
  ...(mark ? { mark } : {}),
});

const shape = (answer: string, findings: AnswerFinding[]) =>
  answerPieces(answer, findings).map((p) => (p.finding ? `[${p.text}]` : p.text));

describe('answer pieces: byte marks to text', () => {
  it('reads a mark as UTF-8 bytes, not string indices', () => {
    // "é" is two bytes, one UTF-16 unit.
    expect(shape('é [redacted] x', [at([3, 10])])).toEqual(['é ', '[[redacted]]', ' x']);
    // "😀" is four bytes, two UTF-16 units; "—" three bytes.
    expect(shape('😀 a — b', [at([5, 1]), at([11, 1])])).toEqual(['😀 ', '[a]', ' — ', '[b]']);
    expect(shape('日本語', [at([3, 3])])).toEqual(['日', '[本]', '語']);
  });

  it('orders marks by offset, whatever the order of the findings', () => {
    expect(shape('abcdef', [at([4, 2]), at([0, 1])])).toEqual(['[a]', 'bcd', '[ef]']);
  });

  it('lists an unmarked finding nowhere in the text; a mark overlapping an earlier one is left out', () => {
    expect(shape('abcdef', [at(undefined), at([1, 3]), at([2, 3])])).toEqual(['a', '[bcd]', 'ef']);
  });

  it('cuts a mark past the end to the end and drops one that starts past it', () => {
    expect(shape('abc', [at([1, 99])])).toEqual(['a', '[bc]']);
    expect(shape('abc', [at([7, 2])])).toEqual(['abc']);
    expect(shape('abc', [at([1, 0])])).toEqual(['abc']);
  });

  it('widens a mark that cuts a character to the whole character', () => {
    // Byte 1 is inside "é" (bytes 0–1): the mark takes all of it.
    expect(shape('éx', [at([1, 1])])).toEqual(['[é]', 'x']);
    expect(shape('xé', [at([0, 2])])).toEqual(['[xé]']);
  });

  it('an empty answer is no pieces', () => {
    expect(answerPieces('', [at([0, 3])])).toEqual([]);
  });
});

describe('a finding in words', () => {
  it('says what was done in a past participle', () => {
    expect(['strip', 'redact', 'flag', 'hold', 'passed', 'refused', 'other'].map(findingActionWords)).toEqual([
      'stripped',
      'redacted',
      'flagged',
      'withheld from the agent',
      'held, then passed on',
      'held, then refused',
      'other',
    ]);
  });

  it('names the kind and the place', () => {
    expect(findingKindWords('invisible')).toBe('Hidden characters');
    expect(findingKindWords('escape')).toBe('Terminal escape');
    expect(findingKindWords('new-kind')).toBe('new-kind');
    expect(findingWhere({ location: { path: '/content/0/text', offset: 12, len: 3 } })).toBe('/content/0/text at byte 12');
  });
});
