// `?mock`: the UI against demo data in a plain browser. A new held call arrives now and then,
// and calls nobody decides time out, so the prompt and the live tail have something to show.

import { MockBackend } from './mock-backend';
import { demoData, makeApproval } from './mock-data';
import { auditNow } from './golden-audit';

/**
 * The audit view's clock in the demo: fixed at the time its audit data set was recorded at (a
 * relative range like "last 24 hours" is then one the recording answers).
 */
export const demoClock = (): number => auditNow('demo');

let shared: MockBackend | null = null;

export function demoBackend(): MockBackend {
  if (shared) return shared;
  const now = Date.now();
  const backend = new MockBackend(demoData(now), { autoExpire: true });
  let n = 0;
  setInterval(() => {
    n++;
    backend.hold(
      makeApproval({
        id: `demo-${n}`,
        server: 'everything',
        tool: 'echo',
        title: 'Echo',
        description: 'Echoes back the input.',
        risk: 'read',
        arguments: { message: `hello #${n}` },
        rule: 'default',
        annotations: null,
      }),
    );
  }, 40_000);
  (globalThis as { portcullisMock?: MockBackend }).portcullisMock = backend;
  shared = backend;
  return backend;
}
