// @vitest-environment jsdom
// The prompt's risk badge shows the gateway's level and its basis; an edit-style call is shown
// as a line diff with the raw arguments one click away.
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, fireEvent, render, screen } from '@testing-library/svelte';
import Prompt from '../Prompt.svelte';
import ApprovalsView from '../ApprovalsView.svelte';
import { MockBackend } from '../../../lib/mock-backend';
import { makeApproval } from '../../../lib/mock-data';
import { PromptQueue } from '../../../state/prompt.svelte';

const T0 = 1_750_000_000_000;

afterEach(() => cleanup());

function showOne(over: Parameters<typeof makeApproval>[0]) {
  const backend = new MockBackend({ approvals: [makeApproval({ id: 'x1', requested_at_ms: T0, expires_at_ms: T0 + 45_000, ...over })] });
  render(Prompt, { props: { backend, clock: () => T0 + 1000, tickMs: 0 } });
  return backend;
}

describe('risk badge', () => {
  it.each([
    ['policy', 'low', 'read', 'Low risk · from the policy', false],
    ['guessed', 'medium', 'write', 'Medium risk · guessed from the name', false],
    ['never_listed', 'high', 'read', '⚠ High risk · never listed by the server', true],
    ['definition_changed', 'critical', 'read', '⚠ Critical risk · definition changed since pinned', true],
  ] as const)('basis %s shows the level %s and why', async (basis, level, risk, text, alarm) => {
    showOne({ risk, risk_level: level, risk_basis: basis });
    const badge = await screen.findByTestId('risk-level');
    expect(badge.textContent).toBe(text);
    expect(badge.classList.contains('alarm')).toBe(alarm);
    expect(screen.getByTestId('risk').dataset.basis).toBe(basis);
    // The class stays visible next to the level (a never-listed "read" is still high risk).
    expect(screen.getByTestId('risk-badge').dataset.risk).toBe(risk);
  });

  it('the main window lists the same level and basis', async () => {
    const backend = new MockBackend({
      approvals: [makeApproval({ id: 'p1', risk: 'read', risk_level: 'high', risk_basis: 'never_listed' })],
    });
    const queue = new PromptQueue(backend, () => T0);
    await queue.start(0);
    render(ApprovalsView, { props: { backend, queue } });
    const badge = await screen.findByTestId('risk-level');
    expect(badge.textContent).toBe('⚠ High risk · never listed by the server');
  });
});

describe('edit diff', () => {
  const edit = {
    path: '/src/app.ts',
    edits: [
      { oldText: 'const a = 1;\nconst b = 2;\nrun(a, b);', newText: 'const a = 1;\nconst b = 3;\nrun(a, b);\nsend(process.env);' },
    ],
  };

  it('shows an edit_file call as removed and added lines, and the raw arguments on request', async () => {
    showOne({ tool: 'edit_file', arguments: edit });
    const diff = await screen.findByTestId('prompt-diff');
    const lines = [...diff.querySelectorAll<HTMLElement>('[data-testid="diff-line"]')].map((l) => `${l.dataset.op}:${l.textContent}`);
    expect(lines).toEqual([
      'same: const a = 1;',
      'del:-const b = 2;',
      'add:+const b = 3;',
      'same: run(a, b);',
      'add:+send(process.env);',
    ]);
    // The arguments the diff does not show are in view beside it: nothing is hidden by the diff.
    expect(screen.getAllByTestId('argument').map((a) => a.dataset.key)).toEqual(['path']);
    expect(screen.getByTestId('argument-value').textContent).toBe('/src/app.ts');

    await fireEvent.click(screen.getByTestId('arguments-raw-toggle'));
    expect(screen.queryByTestId('prompt-diff')).toBeNull();
    expect(screen.getAllByTestId('argument').map((a) => a.dataset.key)).toEqual(['path', 'edits']);
    expect(screen.getByTestId('prompt-arguments').textContent).toContain('send(process.env);');
  });

  it('diffs an arguments object with old_string/new_string', async () => {
    showOne({ tool: 'str_replace', arguments: { file_path: '/a', old_string: 'x', new_string: 'y' } });
    const ops = [...(await screen.findByTestId('prompt-diff')).querySelectorAll<HTMLElement>('[data-testid="diff-line"]')].map(
      (l) => l.dataset.op,
    );
    expect(ops).toEqual(['del', 'add']);
    expect(screen.getAllByTestId('argument').map((a) => a.dataset.key)).toEqual(['file_path']);
  });

  it('shows a call that is not an edit as its arguments only', async () => {
    showOne({});
    await screen.findByTestId('prompt-arguments');
    expect(screen.queryByTestId('prompt-diff')).toBeNull();
    expect(screen.queryByTestId('arguments-raw-toggle')).toBeNull();
  });
});
