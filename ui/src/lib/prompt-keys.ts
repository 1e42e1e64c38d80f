// The prompt's single-key decisions: the same letters as the terminal approver
// (`portcullis approvals watch`, crates/cli/src/approvals/keys.rs) — a, s, A, d, D, r — plus the
// prompt's own e (edit the arguments) and x (extend the deadline). Esc denies, as before.
// Keys are read only outside text fields, and never with Ctrl, Alt or Meta held.

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

/** The key that triggers `action` (for the hint on its button). */
export function keyFor(action: PromptAction): string {
  return Object.entries(PROMPT_KEYS).find(([, a]) => a === action)?.[0] ?? '';
}

/** The action a key press stands for, or null (modifiers held, or not a prompt key). */
export function actionFor(e: Pick<KeyboardEvent, 'key' | 'ctrlKey' | 'altKey' | 'metaKey'>): PromptAction | null {
  if (e.ctrlKey || e.altKey || e.metaKey) return null;
  return PROMPT_KEYS[e.key] ?? null;
}
