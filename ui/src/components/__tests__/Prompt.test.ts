// @vitest-environment jsdom
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/svelte';
import Prompt from '../Prompt.svelte';
import { MockBackend } from '../../lib/mock-backend';
import { makeApproval } from '../../lib/mock-data';

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
    expect(screen.getByTestId('prompt-agent').textContent).toBe('claude-code 2.1.0');
    expect(screen.getByTestId('prompt-session').textContent).toBe('sess-7f3a');
    expect(screen.getByTestId('prompt-rule').textContent).toBe('tools.write_file');
    expect(screen.getByTestId('json-view').textContent).toContain('"/tmp/notes.txt"');
    expect(screen.getByTestId('countdown-value').textContent).toBe('44 s');
  });

  it('focuses Deny by default', async () => {
    setup();
    await shown();
    await waitFor(() => expect(document.activeElement).toBe(screen.getByTestId('deny')));
  });

  it.each([
    ['approve-once', { approve: 'once' }],
    ['approve-session', { approve: 'session' }],
    ['approve-always', { approve: 'always' }],
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

  it('Deny always sends the typed reason; Esc in the reason field only closes it', async () => {
    const { backend } = setup();
    await shown();
    await fireEvent.click(screen.getByTestId('deny-always'));
    const input = screen.getByTestId('deny-reason') as HTMLInputElement;
    await fireEvent.keyDown(input, { key: 'Escape' });
    expect(screen.queryByTestId('deny-reason')).toBeNull();
    expect(backend.callsOf('decide_approval')).toEqual([]);

    await fireEvent.click(screen.getByTestId('deny-always'));
    await fireEvent.input(screen.getByTestId('deny-reason'), { target: { value: '  no shell from agents ' } });
    await fireEvent.click(screen.getByTestId('deny-always-confirm'));
    await waitFor(() =>
      expect(backend.callsOf('decide_approval')).toEqual([
        { id: 'a1', choice: { deny: { reason: 'no shell from agents', always: true } } },
      ]),
    );
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

  it('removes a call resolved elsewhere (ApprovalResolved)', async () => {
    const { backend } = setup(2);
    await shown();
    backend.resolveElsewhere('a1', 'approved');
    await waitFor(() => expect(screen.getByTestId('prompt-tool').textContent).toBe('tool_2'));
    expect(screen.queryByTestId('prompt-position')).toBeNull();
    backend.resolveElsewhere('a2', 'timed_out', 'timeout');
    await screen.findByTestId('prompt-empty');
    expect(backend.callsOf('decide_approval')).toEqual([]);
  });

  it('pauses the countdown display while the pointer is over the call', async () => {
    const { view, setNow } = setup();
    const card = await shown();
    const queue = (view.component as unknown as { getQueue(): import('../../state/prompt.svelte').PromptQueue }).getQueue();
    await fireEvent.mouseEnter(card);
    expect(screen.getByTestId('countdown-paused')).toBeTruthy();
    setNow(T0 + 20_000);
    queue.tick();
    await waitFor(() => expect(screen.getByTestId('countdown-value').textContent).toBe('44 s'));
    await fireEvent.mouseLeave(card);
    await waitFor(() => expect(screen.getByTestId('countdown-value').textContent).toBe('25 s'));
    expect(screen.queryByTestId('countdown-paused')).toBeNull();
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
  }

  it('shows every digit of a large integer argument', async () => {
    showOne({ arguments: { n: 12345678901234567000 }, arguments_json: '{"n": 12345678901234567890}' });
    await shown();
    const json = screen.getByTestId('json-view').textContent ?? '';
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
    const json = screen.getByTestId('json-view').textContent ?? '';
    expect(json).toContain('"report\\u{202e}fdp.exe"');
    expect(screen.getByTestId('prompt-call').textContent).not.toMatch(/[\u202a-\u202e\u2066-\u2069\u001b]/);
  });
});
