// `?mock`: the UI against demo data in a plain browser. A new held call arrives now and then,
// and calls nobody decides time out, so the prompt and the live tail have something to show.

import { MockBackend } from './mock-backend';
import { demoData, makeApproval } from './mock-data';

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
