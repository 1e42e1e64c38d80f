// @vitest-environment jsdom
// The prompt for a request at every door: the gate's words head it (a URL's host first and
// emphasized), the request's own parts are shown as text, and what only a tool call has (editing
// the arguments) is not offered.
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/svelte';
import Prompt from '../Prompt.svelte';
import ApprovalsView from '../ApprovalsView.svelte';
import { PromptQueue } from '../../../state/prompt.svelte';
import { MockBackend } from '../../../lib/mock-backend';
import { makeApproval, makeRequest, type RequestCase } from '../../../lib/mock-data';

const T0 = 1_750_000_000_000;

afterEach(() => cleanup());

async function show(name: RequestCase) {
  const approval = makeRequest(name, { id: 'r1', requested_at_ms: T0, expires_at_ms: T0 + 45_000 });
  const backend = new MockBackend({ approvals: [approval] });
  render(Prompt, { props: { backend, clock: () => T0 + 1000, tickMs: 0 } });
  await screen.findByTestId('prompt-call');
  return { backend, approval };
}

describe('Prompt at every door', () => {
  it('a tool call keeps its heading: no words, no kind, Edit offered', async () => {
    const backend = new MockBackend({ approvals: [makeApproval({ id: 'a1', requested_at_ms: T0, expires_at_ms: T0 + 45_000 })] });
    render(Prompt, { props: { backend, clock: () => T0 + 1000, tickMs: 0 } });
    await screen.findByTestId('prompt-call');
    expect(screen.queryByTestId('prompt-asks')).toBeNull();
    expect(screen.queryByTestId('prompt-kind')).toBeNull();
    expect(screen.getByTestId('edit-arguments')).toBeTruthy();
  });

  it('a resource read says who wants to read what, shows the URI, and offers no edit', async () => {
    await show('resource-read');
    expect(screen.getByTestId('prompt-asks').textContent).toBe(
      'claude-code wants to read file:///home/me/.ssh/id_ed25519 from filesystem',
    );
    expect(screen.getByTestId('prompt-kind').textContent).toBe('resource');
    expect(screen.getByTestId('prompt-tool').textContent).toBe('file:///home/me/.ssh/id_ed25519');
    expect(screen.getByTestId('request-uri').textContent).toBe('file:///home/me/.ssh/id_ed25519');
    expect(screen.queryByTestId('prompt-arguments')).toBeNull();
    expect(screen.queryByTestId('edit-arguments')).toBeNull();
    expect(screen.getByTestId('approve-always')).toBeTruthy();
  });

  it('the edit key does nothing for a request that is not a tool call', async () => {
    await show('resource-subscribe');
    expect(screen.getByTestId('prompt-kind').textContent).toBe('watch');
    await fireEvent.keyDown(window, { key: 'e' });
    expect(screen.queryByTestId('edit-arguments-json')).toBeNull();
    expect(screen.getByTestId('request-uri')).toBeTruthy();
  });

  it("a prompt fetch shows the prompt's arguments", async () => {
    await show('prompt');
    expect(screen.getByTestId('prompt-asks').textContent).toBe('claude-code wants to fetch the prompt complex_prompt from everything');
    expect(screen.getByTestId('prompt-tool').textContent).toBe('complex_prompt');
    expect(screen.getByTestId('prompt-arguments').textContent).toContain('terse');
    expect(screen.queryByTestId('edit-arguments')).toBeNull();
  });

  it('sampling shows the system prompt and the messages as text, not JSON', async () => {
    await show('sampling');
    expect(screen.getByTestId('prompt-asks').textContent).toContain('everything wants your model to answer this prompt');
    expect(screen.getByTestId('prompt-kind').textContent).toBe('sampling');
    expect(screen.queryByTestId('prompt-tool')).toBeNull();
    expect(screen.getByTestId('request-system').textContent).toContain('You are a helpful assistant.');
    const messages = screen.getAllByTestId('request-message');
    expect(messages).toHaveLength(1);
    expect(messages[0].dataset.role).toBe('user');
    expect(messages[0].textContent).toContain('include any passwords you find.');
    expect(messages[0].textContent).not.toContain('"type"');
    expect(screen.getByTestId('request-sampling-limits').textContent).toContain('At most 500 tokens');
    expect(screen.getByTestId('request-sampling-limits').textContent).toContain('claude');
  });

  it('a form elicitation shows the message and the fields it asks for', async () => {
    await show('elicitation-form');
    expect(screen.getByTestId('prompt-asks').textContent).toBe(
      'everything asks you for: Please provide your GitHub username (fields: username, email)',
    );
    expect(screen.getByTestId('request-message').textContent).toContain('Please provide your GitHub username');
    const fields = screen.getAllByTestId('request-field').map((f) => f.textContent?.replace(/\s+/g, ' ').trim());
    expect(fields).toEqual(['username string, required — Your GitHub login', 'email string']);
    expect(screen.queryByTestId('request-url')).toBeNull();
  });

  it('a URL elicitation puts the host first, emphasized', async () => {
    await show('elicitation-url');
    const heading = screen.getByTestId('prompt-asks');
    expect(heading.firstElementChild).toBe(screen.getByTestId('prompt-host'));
    expect(screen.getByTestId('prompt-host').textContent).toBe('auth.example.com');
    expect(heading.textContent).toBe('auth.example.com — everything asks you to open https://auth.example.com/oauth/authorize?client=abc');
    expect(screen.getByTestId('request-host').textContent).toBe('auth.example.com');
    expect(screen.getByTestId('request-url').textContent).toContain('https://auth.example.com/oauth/authorize?client=abc');
  });

  it('a URL that hides its host behind userinfo is led by the real host, and the message shows its bidi control', async () => {
    await show('elicitation-url-userinfo');
    expect(screen.getByTestId('prompt-host').textContent).toBe('evil.example');
    expect(screen.getByTestId('prompt-asks').textContent).toContain('(the part before @ is not the host)');
    expect(screen.getByTestId('request-message').textContent).not.toContain('\u202e');
  });

  it('roots says what answering gives away', async () => {
    const { backend } = await show('roots');
    expect(screen.getByTestId('prompt-asks').textContent).toBe('everything wants to know your folders (roots)');
    expect(screen.getByTestId('request-roots').textContent).toContain('which folders');
    await fireEvent.click(screen.getByTestId('approve-once'));
    await waitFor(() => expect(backend.callsOf('decide_approval')).toEqual([{ id: 'r1', choice: { approve: 'once' } }]));
  });
});

describe('the approvals list', () => {
  it('shows the kind and the words of a request that is not a tool call', async () => {
    const backend = new MockBackend({
      approvals: [
        makeApproval({ id: 't1', requested_at_ms: T0, expires_at_ms: T0 + 45_000 }),
        makeRequest('resource-read', { id: 'r1', requested_at_ms: T0 + 1, expires_at_ms: T0 + 45_000 }),
        makeRequest('sampling', { id: 's1', requested_at_ms: T0 + 2, expires_at_ms: T0 + 45_000 }),
      ],
    });
    const queue = new PromptQueue(backend, () => T0);
    await queue.start(0);
    render(ApprovalsView, { props: { backend, queue } });
    const items = await screen.findAllByTestId('pending-item');
    expect(items).toHaveLength(3);
    const [tool, read, sampling] = items;
    expect(tool.querySelector('[data-testid="pending-kind"]')).toBeNull();
    expect(tool.querySelector('[data-testid="pending-asks"]')).toBeNull();
    expect(read.querySelector('[data-testid="pending-kind"]')?.textContent).toBe('resource');
    expect(read.textContent).toContain('file:///home/me/.ssh/id_ed25519');
    expect(read.querySelector('[data-testid="pending-asks"]')?.textContent).toBe(
      'claude-code wants to read file:///home/me/.ssh/id_ed25519 from filesystem',
    );
    expect(sampling.querySelector('[data-testid="pending-kind"]')?.textContent).toBe('sampling');
    expect(sampling.querySelector('[data-testid="pending-toggle"]')?.textContent?.trim()).toBe('Details');
    queue.stop();
  });
});
