// @vitest-environment jsdom
// Argument rules in the Policies view's Tools tab: listed in words under their tool, added with
// the condition builder (arguments offered from the tool's inputSchema), moved, deleted, and
// saved through the same path as every other edit. Explanations are the gateway's golden answers.
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/svelte';
import PoliciesView from '../PoliciesView.svelte';
import { MockBackend } from '../../../lib/mock-backend';
import type { ServerStatus, ServerTool } from '../../../lib/types';

afterEach(() => cleanup());

const POLICY = `{
  "version": "1",
  "default": "require_approval",
  "tools": {
    "write_file": {
      "action": "require_approval",
      "rules": [
        { "when": { "arguments.path": { "prefix": "/etc" } }, "action": "deny", "reason": "system files" }
      ]
    }
  }
}
`;

const schema = { type: 'object', properties: { path: { type: 'string' }, content: { type: 'string' } } };
const tool = (name: string, input_schema: Record<string, unknown> | null): ServerTool => ({
  name,
  title: null,
  description: null,
  annotations: null,
  input_schema,
  risk: 'write',
});
const server: ServerStatus = {
  name: 'filesystem',
  transport: 'stdio',
  state: 'running',
  tool_count: 2,
  stderr_tail: [],
  sessions: [],
  policy: { state: 'ok', problems: [] },
};

function setup() {
  const backend = new MockBackend({
    servers: [server],
    tools: { filesystem: [tool('write_file', schema), tool('read_file', null)] },
    policies: { filesystem: POLICY },
  });
  render(PoliciesView, { props: { backend } });
  return backend;
}

const lines = () => screen.queryAllByTestId(/^rule-text-write_file-/).map((e) => e.textContent);

async function ready() {
  await waitFor(() => expect(lines()).toHaveLength(1));
}

async function addRule(op: string, value: string, action: string) {
  await fireEvent.click(screen.getByTestId('add-rule-write_file'));
  const argument = screen.getByTestId('rule-cond-argument-0') as HTMLInputElement;
  expect(argument.value).toBe('path');
  await fireEvent.change(screen.getByTestId('rule-cond-op-0'), { target: { value: op } });
  await fireEvent.input(screen.getByTestId('rule-cond-value-0'), { target: { value } });
  await fireEvent.change(screen.getByTestId('rule-action'), { target: { value: action } });
  await fireEvent.click(screen.getByTestId('rule-apply'));
}

describe('Policies view: argument rules', () => {
  it('lists a rule in words, says that order matters, offers the schema properties', async () => {
    setup();
    await ready();
    expect(lines()).toEqual(['deny when path starts with /etc — reason “system files”']);
    expect(screen.getByTestId('rules-write_file').textContent).toContain('first whose conditions all hold decides');
    await fireEvent.click(screen.getByTestId('add-rule-write_file'));
    const options = Array.from(document.querySelectorAll('datalist option')).map((o) => (o as HTMLOptionElement).value);
    expect(options).toEqual(['path', 'content', 'client.name', 'client.version']);
    // A tool listed without an inputSchema starts from an empty argument.
    await fireEvent.click(screen.getByTestId('rule-cancel'));
    await fireEvent.click(screen.getByTestId('add-rule-read_file'));
    expect((screen.getByTestId('rule-cond-argument-0') as HTMLInputElement).value).toBe('');
  });

  it('adds, moves and saves a rule into the unsaved text; Save writes it', async () => {
    const backend = setup();
    await ready();
    await addRule('path_under', '/tmp', 'allow');
    await waitFor(() => expect(lines()).toHaveLength(2));
    expect(lines()[1]).toBe('allow when path is under /tmp');
    expect(screen.getByTestId('policy-dirty')).toBeTruthy();
    await fireEvent.click(screen.getByTestId('rule-up-write_file-1'));
    await waitFor(() => expect(lines()[0]).toBe('allow when path is under /tmp'));
    await fireEvent.click(screen.getByTestId('policy-save'));
    await waitFor(() => expect(backend.callsOf('save_policy')).toHaveLength(1));
    const saved = JSON.parse((backend.callsOf('save_policy')[0] as { text: string }).text);
    expect(saved.tools.write_file).toEqual({
      action: 'require_approval',
      rules: [
        { when: { 'arguments.path': { path_under: '/tmp' } }, action: 'allow' },
        { when: { 'arguments.path': { prefix: '/etc' } }, action: 'deny', reason: 'system files' },
      ],
    });
    expect(screen.queryByTestId('explain-error')).toBeNull();
  });

  it('edits a rule in place and deletes it; no rules left drops the field', async () => {
    setup();
    await ready();
    await fireEvent.click(screen.getByTestId('rule-edit-write_file-0'));
    expect((screen.getByTestId('rule-cond-value-0') as HTMLInputElement).value).toBe('/etc');
    await fireEvent.input(screen.getByTestId('rule-cond-value-0'), { target: { value: '/etc/ssh' } });
    await fireEvent.input(screen.getByTestId('rule-reason'), { target: { value: 'keys' } });
    await fireEvent.click(screen.getByTestId('rule-apply'));
    await waitFor(() => expect(lines()).toEqual(['deny when path starts with /etc/ssh — reason “keys”']));
    await fireEvent.click(screen.getByTestId('rule-delete-write_file-0'));
    await waitFor(() => expect(lines()).toEqual([]));
    await fireEvent.click(screen.getByTestId('policy-tab-raw'));
    const json = JSON.parse((screen.getByTestId('raw-json') as HTMLTextAreaElement).value);
    expect(json.tools.write_file).toEqual({ action: 'require_approval' });
  });

  it('a rule the builder cannot build is not applied', async () => {
    setup();
    await ready();
    await fireEvent.click(screen.getByTestId('add-rule-write_file'));
    await fireEvent.change(screen.getByTestId('rule-cond-op-0'), { target: { value: 'gt' } });
    await fireEvent.input(screen.getByTestId('rule-cond-value-0'), { target: { value: 'big' } });
    expect(screen.getByTestId('rule-cond-error').textContent).toContain('needs a number');
    expect((screen.getByTestId('rule-apply') as HTMLButtonElement).disabled).toBe(true);
    expect(screen.queryByTestId('policy-dirty')).toBeNull();
  });
});
