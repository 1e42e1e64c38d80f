// The preset reasons a person can deny with in one click; the agent reads the reason in the
// `[portcullis]` answer (DESIGN §5 "deny always carries an optional reason").
export const DENY_PRESETS = ['not now', 'wrong target', 'ask me first'] as const;
