// Who or what made an audited decision. One word for each everywhere: the value itself
// (`policy`, `user`, `timeout`, `client`, `gateway`), as `portcullis audit` and the Approvals view
// print it — the person who decides is "the user" in every view and in the CLI. `short` is that
// word (the table's "By" column); `sentence` follows the decision in the detail and says what it
// means ("timed out by timeout" said nothing).

import type { DecidedBy } from './types';

const SENTENCES: Record<DecidedBy, string> = {
  policy: 'by the policy',
  user: 'by the user',
  timeout: 'because no one decided in time',
  client: 'by the agent, which withdrew the call',
  gateway: 'by Portcullis itself (see the reason)',
};

export function decidedByShort(by: DecidedBy): string {
  return by;
}

export function decidedBySentence(by: DecidedBy): string {
  return SENTENCES[by] ?? `by ${by}`;
}
