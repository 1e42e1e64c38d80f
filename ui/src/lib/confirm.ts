// Which held calls ask for a deliberate confirmation (DESIGN §5: "destructive tools ask for a
// deliberate confirmation"): approving them needs the tool's name typed first, so neither a
// stray key nor a reflex click approves a deletion.
// Destructive: the gateway's risk level `critical` (from the policy, or a never-listed or changed
// tool), or the class `delete`.

import type { PendingApproval } from './types';

export function needsTypedConfirm(a: Pick<PendingApproval, 'risk' | 'risk_level'>): boolean {
  return a.risk_level === 'critical' || a.risk === 'delete';
}
