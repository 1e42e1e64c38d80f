// How a changed tool definition (`PinChange`, from the gateway's tool pins) reads to a person:
// the description old → new, and one short line per difference. Pure, so it is tested alone and
// shared by the prompt and the Policies view's "changed tools" notice.

import type { DiffEntry, PinChange } from './types';

/** Longest value shown inline in a diff line; the full definitions stay one click away. */
export const VALUE_CHARS = 80;

/** A JSON value as one short line: strings bare, everything else compact JSON, cut with `…`. */
export function shortValue(value: unknown, max = VALUE_CHARS): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value) ?? String(value);
  const flat = text.replace(/\s+/g, ' ');
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

function field(definition: unknown, key: string): unknown {
  if (typeof definition !== 'object' || definition === null) return undefined;
  return (definition as Record<string, unknown>)[key];
}

/** The description before and after, when it is one of the changed fields. */
export function descriptionChange(change: PinChange): { old: string; new: string } | null {
  if (!change.fields.includes('description')) return null;
  const text = (v: unknown) => (typeof v === 'string' ? v : v === undefined || v === null ? '' : JSON.stringify(v));
  return { old: text(field(change.old, 'description')), new: text(field(change.new, 'description')) };
}

/** One difference as a line: `path: old → new` (added: `+ new`, removed: `− old`). */
export function diffLine(entry: DiffEntry): string {
  switch (entry.change) {
    case 'added':
      return `${entry.path}: + ${shortValue(entry.new)}`;
    case 'removed':
      return `${entry.path}: − ${shortValue(entry.old)}`;
    default:
      return `${entry.path}: ${shortValue(entry.old)} → ${shortValue(entry.new)}`;
  }
}
