// @vitest-environment jsdom
import { describe, expect, it } from 'vitest';
import { isTextField, keyOutcome, textFields } from '../prompt-keys';

const key = (k: string, mods: Partial<Record<'ctrlKey' | 'altKey' | 'metaKey', boolean>> = {}) => ({
  key: k,
  ctrlKey: false,
  altKey: false,
  metaKey: false,
  ...mods,
});
const idle = { inField: false, fieldShown: false };
const fieldShown = { inField: false, fieldShown: true };
const inField = { inField: true, fieldShown: true };

describe('keyOutcome: shortcuts only while no text field is shown', () => {
  it('with no field shown, the letters decide and the arrows move through the queue', () => {
    expect(keyOutcome(key('a'), idle)).toEqual({ kind: 'action', action: 'approve-once' });
    expect(keyOutcome(key('r'), idle)).toEqual({ kind: 'action', action: 'deny-reason' });
    expect(keyOutcome(key('ArrowRight'), idle)).toEqual({ kind: 'queue', step: 'next' });
    expect(keyOutcome(key('a', { ctrlKey: true }), idle)).toEqual({ kind: 'none' });
    expect(keyOutcome(key('q'), idle)).toEqual({ kind: 'none' });
  });

  it('with a field shown and the focus elsewhere, every character goes to the field: no letter decides', () => {
    for (const k of [...'asAdDrex', ...'write_file', 'é', '1']) expect(keyOutcome(key(k), fieldShown)).toEqual({ kind: 'to-field' });
    for (const k of ['ArrowRight', 'ArrowLeft', 'Enter', 'Tab', ' ']) expect(keyOutcome(key(k), fieldShown)).toEqual({ kind: 'none' });
    expect(keyOutcome(key('a', { ctrlKey: true }), fieldShown)).toEqual({ kind: 'none' });
  });

  it('in a field, keys are the field’s; Escape is the prompt’s everywhere', () => {
    for (const k of ['a', 'r', 'ArrowLeft', 'Enter']) expect(keyOutcome(key(k), inField)).toEqual({ kind: 'none' });
    for (const ctx of [idle, fieldShown, inField]) expect(keyOutcome(key('Escape'), ctx)).toEqual({ kind: 'escape' });
  });
});

describe('keyOutcome for a held answer: only pass on, refuse, refuse with a reason and more time', () => {
  it('s, A, D and e do nothing; a, d, r and x do what they always do', () => {
    const answer = { ...idle, heldAnswer: true };
    for (const k of ['s', 'A', 'D', 'e']) expect(keyOutcome(key(k), answer), k).toEqual({ kind: 'none' });
    expect(keyOutcome(key('a'), answer)).toEqual({ kind: 'action', action: 'approve-once' });
    expect(keyOutcome(key('d'), answer)).toEqual({ kind: 'action', action: 'deny' });
    expect(keyOutcome(key('r'), answer)).toEqual({ kind: 'action', action: 'deny-reason' });
    expect(keyOutcome(key('x'), answer)).toEqual({ kind: 'action', action: 'extend' });
    expect(keyOutcome(key('Escape'), answer)).toEqual({ kind: 'escape' });
  });
});

describe('text fields are found in the page, not listed', () => {
  it('counts text inputs and text areas that take typing; not buttons, radios, or disabled fields', () => {
    const root = document.createElement('div');
    root.innerHTML = `<input type="text" id="t"><textarea id="a"></textarea><input type="radio"><button>b</button>
      <input type="text" disabled><input type="search" id="s"><select><option>x</option></select><textarea readonly></textarea>`;
    expect(textFields(root).map((f) => f.id)).toEqual(['t', 'a', 's']);
    expect(isTextField(root.querySelector('button'))).toBe(false);
    expect(textFields(null)).toEqual([]);
  });
});
