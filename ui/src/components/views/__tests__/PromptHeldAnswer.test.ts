// @vitest-environment jsdom
// A held answer (rule `results:hold`): the call already ran, and what came back waits for a
// person, who passes it to the agent once or refuses it. The prompt and the Approvals list show
// the answer with the findings that hold it marked, and offer nothing the keeper would refuse.
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/svelte';
import Prompt from '../Prompt.svelte';
import ApprovalsView from '../ApprovalsView.svelte';
import { PromptQueue } from '../../../state/prompt.svelte';
import { MockBackend } from '../../../lib/mock-backend';
import { makeApproval, makeHeldAnswer } from '../../../lib/mock-data';
import type { PendingApproval } from '../../../lib/types';

const T0 = 1_750_000_000_000;
const HIDDEN = ['approve-session', 'approve-always', 'grant-options', 'edit-arguments', 'deny-always'];

afterEach(() => cleanup());

async function show(over: Partial<PendingApproval> = {}, others: PendingApproval[] = []) {
  const approval = makeHeldAnswer({ id: 'h1', requested_at_ms: T0, expires_at_ms: T0 + 45_000, ...over });
  const backend = new MockBackend({ approvals: [approval, ...others] });
  render(Prompt, { props: { backend, clock: () => T0 + 1000, tickMs: 0 } });
  await screen.findByTestId('prompt-call');
  return { backend, approval };
}

describe('Prompt on a held answer', () => {
  it('is headed by the asks, says the call already ran, and shows the answer with the findings that hold it marked', async () => {
    await show();
    expect(screen.getByTestId('prompt-asks').textContent).toBe(
      'The answer of read_text_file from filesystem holds AWS access key and tag characters: pass it to cursor?',
    );
    expect(screen.getByTestId('prompt-answer-tag').textContent).toBe('answer');
    expect(screen.getByTestId('held-answer-ran').textContent).toContain('The call already ran');
    // Nobody deciding refuses the answer: the countdown says so.
    expect(screen.getByTestId('countdown').textContent).toContain('Refused in');
    expect(screen.queryByTestId('prompt-arguments')).toBeNull();

    const excerpt = screen.getByTestId('answer-excerpt');
    expect(excerpt.textContent).toContain('AWS_REGION=eu-west-1');
    const marks = [...excerpt.querySelectorAll<HTMLElement>('[data-testid="answer-mark"]')];
    const holding = marks.filter((m) => m.classList.contains('holds'));
    expect(holding.map((m) => [m.textContent, m.dataset.action])).toEqual([
      ['[redacted]', 'hold'],
      ['\\u{E0049}\\u{E0067}\\u{E006E}', 'hold'],
    ]);
    // The zero-width space is only stripped: marked, but not as what holds the answer.
    const stripped = marks.filter((m) => !m.classList.contains('holds'));
    expect(stripped.map((m) => [m.textContent, m.dataset.action])).toEqual([['\\u{200B}', 'strip']]);

    const listed = screen.getAllByTestId('answer-finding');
    expect(listed.map((f) => [f.dataset.action, f.classList.contains('holds')])).toEqual([
      ['hold', true],
      ['hold', true],
      ['strip', false],
    ]);
    expect(listed[0].querySelector('[data-testid="finding-action"]')?.textContent).toBe('withheld from the agent');
  });

  it('offers only "Pass to the agent" and "Refuse" (with an optional reason): no session, always, grant or edit', async () => {
    await show();
    expect(screen.getByTestId('approve-once').textContent).toContain('Pass to the agent');
    expect(screen.getByTestId('deny').textContent).toContain('Refuse');
    expect(screen.getByTestId('deny-with-reason')).toBeTruthy();
    for (const id of HIDDEN) expect(screen.queryByTestId(id), `${id} is not offered for an answer`).toBeNull();
  });

  it('"Pass to the agent" sends approve once', async () => {
    const { backend } = await show();
    await fireEvent.click(screen.getByTestId('approve-once'));
    await waitFor(() => expect(backend.callsOf('decide_approval')).toEqual([{ id: 'h1', choice: { approve: 'once' } }]));
    await screen.findByTestId('prompt-empty');
  });

  it('"Refuse" sends deny, never always', async () => {
    const { backend } = await show();
    await fireEvent.click(screen.getByTestId('deny'));
    await waitFor(() =>
      expect(backend.callsOf('decide_approval')).toEqual([{ id: 'h1', choice: { deny: { reason: null, always: false } } }]),
    );
  });

  it('refusing with a reason sends deny with the reason, never always', async () => {
    const { backend } = await show();
    await fireEvent.keyDown(window, { key: 'r' });
    expect(screen.getByTestId('deny-reason-confirm').textContent).toBe('Refuse');
    await fireEvent.input(screen.getByTestId('deny-reason'), { target: { value: ' keys stay here ' } });
    await fireEvent.click(screen.getByTestId('deny-reason-confirm'));
    await waitFor(() =>
      expect(backend.callsOf('decide_approval')).toEqual([{ id: 'h1', choice: { deny: { reason: 'keys stay here', always: false } } }]),
    );
  });

  it('the keys of the choices it does not offer (s, A, D, e) do nothing', async () => {
    const { backend } = await show();
    for (const key of ['s', 'A', 'D', 'e']) await fireEvent.keyDown(window, { key });
    expect(screen.queryByTestId('grant-panel')).toBeNull();
    expect(screen.queryByTestId('edit-arguments-json')).toBeNull();
    expect(backend.callsOf('decide_approval')).toEqual([]);
    expect(backend.callsOf('dry_run_approval')).toEqual([]);
    expect(screen.getByTestId('prompt-call').dataset.id).toBe('h1');
  });

  it('a destructive call’s answer asks for no typed name, and is alike to no other held request', async () => {
    const sameCall = { session: 'sess-7f3a', tool: 'delete_file', risk: 'delete' as const, arguments: { path: '/tmp/x' } };
    const plain = makeApproval({ id: 'p1', requested_at_ms: T0 + 10, expires_at_ms: T0 + 45_000, ...sameCall });
    const { backend } = await show(sameCall, [plain]);
    expect(screen.queryByTestId('prompt-confirm')).toBeNull();
    expect(screen.queryByTestId('prompt-alike')).toBeNull();
    await fireEvent.click(screen.getByTestId('approve-once'));
    await waitFor(() => expect(backend.callsOf('decide_approval')).toEqual([{ id: 'h1', choice: { approve: 'once' } }]));
    await waitFor(() => expect(screen.getByTestId('prompt-call').dataset.id).toBe('p1'));
  });
});

describe('PromptQueue on a held answer', () => {
  it('sends no choice the keeper would refuse for an answer', async () => {
    const backend = new MockBackend({ approvals: [makeHeldAnswer({ id: 'h1', requested_at_ms: T0, expires_at_ms: T0 + 45_000 })] });
    const queue = new PromptQueue(backend, () => T0);
    await queue.start(0);
    expect(await queue.approve('session')).toBe(false);
    expect(await queue.approve('always')).toBe(false);
    expect(await queue.deny(true)).toBe(false);
    expect(await queue.decide({ edit: { arguments_json: '{}' } })).toBe(false);
    expect(backend.callsOf('decide_approval')).toEqual([]);
    expect(queue.error).toContain('passed to the agent once or refused');
    expect(await queue.deny()).toBe(true);
    expect(backend.callsOf('decide_approval')).toEqual([{ id: 'h1', choice: { deny: { reason: null, always: false } } }]);
    queue.stop();
  });
});

describe('Approvals list with a held answer', () => {
  it('tags it "answer", says what it asks, shows the answer, and decides it once', async () => {
    const backend = new MockBackend({
      approvals: [
        makeApproval({ id: 'a1', requested_at_ms: T0, expires_at_ms: T0 + 45_000 }),
        makeHeldAnswer({ id: 'h1', requested_at_ms: T0 + 1, expires_at_ms: T0 + 45_000 }),
      ],
    });
    const queue = new PromptQueue(backend, () => T0);
    await queue.start(0);
    render(ApprovalsView, { props: { backend, queue } });
    const [call, answer] = await screen.findAllByTestId('pending-item');
    expect(call.querySelector('[data-testid="pending-answer"]')).toBeNull();
    expect(answer.querySelector('[data-testid="pending-answer"]')?.textContent).toBe('answer');
    expect(answer.querySelector('[data-testid="pending-asks"]')?.textContent).toContain('holds AWS access key and tag characters');
    expect(answer.querySelector('[data-testid="pending-approve"]')?.textContent?.trim()).toBe('Pass to the agent');
    expect(answer.querySelector('[data-testid="pending-deny"]')?.textContent?.trim()).toBe('Refuse');

    await fireEvent.click(answer.querySelector<HTMLElement>('[data-testid="pending-toggle"]')!);
    const marks = [...answer.querySelectorAll<HTMLElement>('[data-testid="answer-mark"].holds')];
    expect(marks.map((m) => m.textContent)).toEqual(['[redacted]', '\\u{E0049}\\u{E0067}\\u{E006E}']);

    await fireEvent.click(answer.querySelector<HTMLElement>('[data-testid="pending-deny"]')!);
    await waitFor(() =>
      expect(backend.callsOf('decide_approval')).toEqual([{ id: 'h1', choice: { deny: { reason: null, always: false } } }]),
    );
    queue.stop();
  });
});
