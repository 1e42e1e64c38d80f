// Who or what made an audited decision, in words a person reads ("timed out by timeout" said
// nothing). `short` fits the table's "By" column; `sentence` follows the decision in the detail.

import type { DecidedBy } from './types';

const WORDS: Record<DecidedBy, { short: string; sentence: string }> = {
  policy: { short: 'policy', sentence: 'by the policy' },
  user: { short: 'person', sentence: 'by a person' },
  timeout: { short: 'time limit', sentence: 'because no one decided in time' },
  client: { short: 'agent', sentence: 'by the agent, which withdrew the call' },
  gateway: { short: 'Portcullis', sentence: 'by Portcullis itself (see the reason)' },
};

export function decidedByShort(by: DecidedBy): string {
  return WORDS[by]?.short ?? by;
}

export function decidedBySentence(by: DecidedBy): string {
  return WORDS[by]?.sentence ?? `by ${by}`;
}
