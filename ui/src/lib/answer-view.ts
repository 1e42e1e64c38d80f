// What came back for a forwarded request, as the audit viewer shows it: the answer's excerpt cut
// into plain and marked pieces, and a finding in words a person reads.
//
// A finding's `mark` is a BYTE offset and length into the excerpt's UTF-8 (the Rust side slices
// a `str`), not a JavaScript string index: "é" is two bytes and one UTF-16 unit, "😀" four bytes
// and two units. The pieces are cut from the encoded bytes and decoded back.

import type { AnswerFinding } from './types';

/** A piece of the excerpt: plain text, or the text one finding marks. */
export interface AnswerPiece {
  text: string;
  finding: AnswerFinding | null;
}

const isContinuation = (b: number) => (b & 0xc0) === 0x80;

/**
 * The excerpt cut at its findings' marks, in order. A mark past the end is cut to the end; one
 * that overlaps an earlier mark is left unmarked (the finding is still listed); a mark that does
 * not fall on a character boundary is widened to the characters it touches.
 */
export function answerPieces(answer: string, findings: readonly AnswerFinding[]): AnswerPiece[] {
  const bytes = new TextEncoder().encode(answer);
  const decoder = new TextDecoder();
  const marked = findings
    .filter((f) => f.mark != null)
    .map((f) => {
      const [offset, length] = f.mark!;
      let start = Math.min(Math.max(0, offset), bytes.length);
      let end = Math.min(start + Math.max(0, length), bytes.length);
      while (start > 0 && start < bytes.length && isContinuation(bytes[start])) start--;
      while (end < bytes.length && isContinuation(bytes[end])) end++;
      return { start, end, finding: f };
    })
    .filter((m) => m.end > m.start)
    .sort((a, b) => a.start - b.start || b.end - a.end);

  const pieces: AnswerPiece[] = [];
  const plain = (from: number, to: number) => {
    if (to > from) pieces.push({ text: decoder.decode(bytes.subarray(from, to)), finding: null });
  };
  let at = 0;
  for (const m of marked) {
    if (m.start < at) continue; // overlaps the mark before it
    plain(at, m.start);
    pieces.push({ text: decoder.decode(bytes.subarray(m.start, m.end)), finding: m.finding });
    at = m.end;
  }
  plain(at, bytes.length);
  return pieces;
}

const KIND_WORDS: Record<string, string> = {
  invisible: 'Hidden characters',
  escape: 'Terminal escape',
  secret: 'Secret',
  instruction: 'Instruction to the agent',
};

/** What kind of thing was found, for a heading: "Secret", "Hidden characters", … */
export function findingKindWords(kind: string): string {
  return KIND_WORDS[kind] ?? kind;
}

const ACTION_WORDS: Record<string, string> = {
  strip: 'stripped',
  redact: 'redacted',
  flag: 'flagged',
  hold: 'withheld from the agent',
  passed: 'held, then passed on',
  refused: 'held, then refused',
};

/** What the gate did with it: "stripped", "redacted", "flagged", "withheld from the agent" (a held answer is withheld until held answers are asked of a person). */
export function findingActionWords(action: string): string {
  return ACTION_WORDS[action] ?? action;
}

/** Where in the answer: "/content/0/text at byte 12". */
export function findingWhere(f: Pick<AnswerFinding, 'location'>): string {
  return `${f.location.path || '/'} at byte ${f.location.offset}`;
}
