// The prompt's keyboard, in one place (Prompt.svelte only carries out what `keyOutcome` says).
//
// Single-key decisions: the same letters as the terminal approver (`portcullis approvals watch`,
// crates/cli/src/approvals/keys.rs) — a, s, A, d, D, r — plus the prompt's own e (edit the
// arguments) and x (extend the deadline); ← and → move through the queue. Never with Ctrl, Alt or
// Meta held.
//
// The rule that makes the prompt safe to type at: **single-key shortcuts are on only while no text
// field is shown in the prompt** (the type-the-name confirmation, a deny reason, edited arguments,
// a grant's reason or condition — any text field, found in the page rather than listed here). A
// click that takes the focus out of the field does not turn them back on: while a field is shown,
// a character typed anywhere in the prompt goes into the field (the focus moves there first), so a
// tool's name typed after a missed click is a name, not "r" for "deny with a reason".
//
// A held answer (lib/held-answer.ts) is passed once or refused: only a, d, r and x are its keys;
// the others do nothing, as their buttons are not shown.
//
// Escape: closes an open form (reason, edit, grant) and goes back to the call; with no form open
// it denies the call, from anywhere, the confirmation field included.
// Enter: on a focused button, presses it (the browser's own behaviour; Deny has the focus when a
// call without a text field is shown, so Enter never approves by accident). In the confirmation
// field it approves once, and only once the tool's name is typed exactly; in the reason field it
// denies with that reason; in the arguments editor it is a new line.

export type PromptAction =
  | 'approve-once'
  | 'approve-session'
  | 'approve-always'
  | 'deny'
  | 'deny-always'
  | 'deny-reason'
  | 'edit'
  | 'extend';

/** Key → action; each button shows its key as a hint. */
export const PROMPT_KEYS: Record<string, PromptAction> = {
  a: 'approve-once',
  s: 'approve-session',
  A: 'approve-always',
  d: 'deny',
  D: 'deny-always',
  r: 'deny-reason',
  e: 'edit',
  x: 'extend',
};

/** What a held answer offers: pass it on once, refuse it (with or without a reason), more time. */
export const ANSWER_ACTIONS: ReadonlySet<PromptAction> = new Set<PromptAction>(['approve-once', 'deny', 'deny-reason', 'extend']);

type KeyPress = Pick<KeyboardEvent, 'key' | 'ctrlKey' | 'altKey' | 'metaKey'>;

/** The key that triggers `action` (for the hint on its button). */
export function keyFor(action: PromptAction): string {
  return Object.entries(PROMPT_KEYS).find(([, a]) => a === action)?.[0] ?? '';
}

/** The action a key press stands for, or null (modifiers held, or not a prompt key). */
export function actionFor(e: KeyPress): PromptAction | null {
  if (e.ctrlKey || e.altKey || e.metaKey) return null;
  return PROMPT_KEYS[e.key] ?? null;
}

/** What a key press does in the prompt. */
export type KeyOutcome =
  | { kind: 'escape' }
  | { kind: 'action'; action: PromptAction }
  | { kind: 'queue'; step: 'next' | 'previous' }
  /** A character typed outside the shown text field: the focus moves to the field, which takes it. */
  | { kind: 'to-field' }
  /** Nothing of the prompt's own: the focused element (a field, a button) does what it does. */
  | { kind: 'none' };

export interface KeyContext {
  /** The key was pressed in a text field (or a list box, whose typing picks an option). */
  inField: boolean;
  /** A text field is shown in the prompt. */
  fieldShown: boolean;
  /** The shown request is a held answer: only `ANSWER_ACTIONS` are offered. */
  heldAnswer?: boolean;
}

const TEXT_INPUT_TYPES = new Set(['text', 'search', 'url', 'email', 'tel', 'password', 'number']);

/** A control a person types text into. */
export function isTextField(el: unknown): el is HTMLInputElement | HTMLTextAreaElement {
  if (typeof HTMLTextAreaElement !== 'undefined' && el instanceof HTMLTextAreaElement) return !el.disabled && !el.readOnly;
  if (typeof HTMLInputElement !== 'undefined' && el instanceof HTMLInputElement) {
    return TEXT_INPUT_TYPES.has(el.type) && !el.disabled && !el.readOnly;
  }
  return false;
}

/** Keys typed here belong to the element, never to the prompt's shortcuts. */
export function takesTyping(el: unknown): boolean {
  return isTextField(el) || (typeof HTMLSelectElement !== 'undefined' && el instanceof HTMLSelectElement);
}

/** The text fields shown in `root`, in page order. */
export function textFields(root: ParentNode | null): (HTMLInputElement | HTMLTextAreaElement)[] {
  if (!root) return [];
  return Array.from(root.querySelectorAll('input, textarea')).filter(isTextField);
}

/** A printable character (not a named key such as "Enter" or "ArrowLeft"), no modifier held.
 * Space is left out: on a focused button or radio it presses it. */
function typesACharacter(e: KeyPress): boolean {
  return [...e.key].length === 1 && e.key !== ' ' && !e.ctrlKey && !e.altKey && !e.metaKey;
}

export function keyOutcome(e: KeyPress, ctx: KeyContext): KeyOutcome {
  if (e.key === 'Escape') return { kind: 'escape' };
  if (ctx.inField) return { kind: 'none' };
  if (ctx.fieldShown) return typesACharacter(e) ? { kind: 'to-field' } : { kind: 'none' };
  if (e.ctrlKey || e.altKey || e.metaKey) return { kind: 'none' };
  if (e.key === 'ArrowRight') return { kind: 'queue', step: 'next' };
  if (e.key === 'ArrowLeft') return { kind: 'queue', step: 'previous' };
  const action = actionFor(e);
  if (action && ctx.heldAnswer && !ANSWER_ACTIONS.has(action)) return { kind: 'none' };
  return action ? { kind: 'action', action } : { kind: 'none' };
}
