// Which held calls ask for a deliberate confirmation (DESIGN §5: "destructive tools ask for a
// deliberate confirmation"): approving them needs the tool's name typed first, so neither a
// stray key nor a reflex click approves a deletion.
//
// TODO(h-decide): use the policy's own risk level (`critical`) once PendingApproval carries it;
// until then the gateway's class `delete` stands for it.

import type { PendingApproval } from './types';

export function needsTypedConfirm(a: Pick<PendingApproval, 'risk'>): boolean {
  return a.risk === 'delete';
}
