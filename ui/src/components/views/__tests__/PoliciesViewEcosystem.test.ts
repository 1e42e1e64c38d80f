// @vitest-environment jsdom
// The Policies view's tool-pin notice and "Generate starter policy", against the mock backend.
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/svelte';
import PoliciesView from '../PoliciesView.svelte';
import { MockBackend } from '../../../lib/mock-backend';
import { makeApproval, makePinChange } from '../../../lib/mock-data';
import type { ChangedTool, ServerStatus, StarterPolicyText, ServerTool } from '../../../lib/types';

afterEach(() => cleanup());

const tool = (name: string, risk: ServerTool['risk']): ServerTool => ({ name, title: null, description: null, annotations: null, input_schema: null, risk });
const server = (name: string, policy: ServerStatus['policy']['state']): ServerStatus => ({
  name,
  transport: 'stdio',
  state: 'running',
  tool_count: 2,
  stderr_tail: [],
  sessions: [],
  policy: { state: policy, problems: [] },
});

const POLICY = '{\n  "version": "1",\n  "default": "require_approval"\n}\n';
const STARTER_TEXT = `{
  "version": "1",
  "default": "require_approval",
  "tools": {
    "list_processes": {"action": "allow", "class": "read", "risk": "low"},
    "run_command": {"action": "require_approval", "class": "execute", "risk": "high"}
  }
}
`;
const STARTER: StarterPolicyText = {
  text: STARTER_TEXT,
  tools: [
    { name: 'list_processes', class: 'read', risk: 'low', rule: 'allow' },
    { name: 'run_command', class: 'execute', risk: 'high', rule: 'require_approval' },
  ],
  skipped: [],
};

function changedTool(over: Partial<ChangedTool> = {}): ChangedTool {
  const change = makePinChange();
  return { server: 'filesystem', tool: 'read_file', digest: change.old_digest, pinned_at: change.pinned_at, change, ...over };
}

function setup(extra: { changedTools?: ChangedTool[]; starters?: Record<string, StarterPolicyText> } = {}) {
  const backend = new MockBackend({
    servers: [server('filesystem', 'ok'), server('shell', 'missing')],
    tools: {
      filesystem: [tool('read_file', 'read')],
      shell: [tool('run_command', 'execute'), tool('list_processes', 'read')],
    },
    policies: { filesystem: POLICY, shell: null },
    ...extra,
  });
  render(PoliciesView, { props: { backend } });
  return backend;
}

const raw = () => (screen.getByTestId('raw-json') as HTMLTextAreaElement).value;

describe('Policies view: changed tools', () => {
  it('shows the changed tool of the open server with what changed, and a count beside the server', async () => {
    setup({ changedTools: [changedTool()] });
    const notice = await screen.findByTestId('changed-tools');
    expect(notice.textContent).toContain('1 tool of this server changed its definition');
    expect(screen.getByTestId('changed-tool-read_file').textContent).toContain("This tool's definition changed since you first allowed it");
    expect(screen.getByTestId('pin-change-fields').textContent).toBe('description, inputSchema');
    expect(screen.getByTestId('changed-count-filesystem').textContent).toBe('1 changed');
    expect(screen.queryByTestId('changed-count-shell')).toBeNull();
  });

  it('Accept sends the reviewed new digest and the notice goes away', async () => {
    const item = changedTool();
    const backend = setup({ changedTools: [item] });
    await fireEvent.click(await screen.findByTestId('accept-tool-read_file'));
    await waitFor(() =>
      expect(backend.callsOf('accept_tool')).toEqual([{ server: 'filesystem', tool: 'read_file', digest: item.change.new_digest }]),
    );
    await waitFor(() => expect(screen.queryByTestId('changed-tools')).toBeNull());
    expect(screen.queryByTestId('changed-count-filesystem')).toBeNull();
  });

  it('a tool that changed again since it was listed is refused and stays, with the reason', async () => {
    const item = changedTool();
    const backend = setup({ changedTools: [item] });
    await screen.findByTestId('accept-tool-read_file');
    // The server changes the tool once more after the view listed it.
    const again = changedTool({ change: { ...item.change, new_digest: 'sha256:3333' } });
    (backend as unknown as { data: { changedTools: ChangedTool[] } }).data.changedTools = [again];
    await fireEvent.click(screen.getByTestId('accept-tool-read_file'));
    const error = await screen.findByTestId('changed-tools-error');
    expect(error.textContent).toContain('changed again');
    expect(screen.getByTestId('changed-tool-read_file')).toBeTruthy();
  });

  it('a call held for a changed tool refreshes the list', async () => {
    const backend = setup();
    await screen.findByTestId('policy-editor');
    await waitFor(() => expect(backend.callsOf('list_changed_tools')).toHaveLength(1));
    expect(screen.queryByTestId('changed-tools')).toBeNull();
    (backend as unknown as { data: { changedTools: ChangedTool[] } }).data.changedTools = [changedTool()];
    backend.hold(makeApproval({ server: 'filesystem', tool: 'read_file', rule: 'pin:changed', pin_change: makePinChange() }));
    await screen.findByTestId('changed-tools');
  });
});

describe('Policies view: Generate starter policy', () => {
  it('puts the generated policy in the editor for review and Save writes it', async () => {
    const backend = setup({ starters: { shell: STARTER } });
    await fireEvent.click(await screen.findByTestId('policy-server-shell'));
    await fireEvent.click(await screen.findByTestId('generate-policy'));
    await waitFor(() => expect(raw()).toBe(STARTER_TEXT));
    expect(backend.callsOf('generate_policy')).toEqual([{ server: 'shell' }]);
    expect(backend.callsOf('save_policy')).toEqual([]);
    expect(screen.getByTestId('policy-dirty')).toBeTruthy();
    expect(screen.getByTestId('starter-tool-run_command').textContent).toContain('execute');
    expect(screen.getByTestId('starter-summary').textContent).toContain('1 read, 1 execute');

    await fireEvent.click(screen.getByTestId('policy-save'));
    await waitFor(() => expect(backend.callsOf('save_policy')).toEqual([{ server: 'shell', text: STARTER_TEXT }]));
    expect(backend.policyText('shell')).toBe(STARTER_TEXT);
  });

  it('a policy file that appeared meanwhile is not replaced by Save', async () => {
    const backend = setup({ starters: { shell: STARTER } });
    await fireEvent.click(await screen.findByTestId('policy-server-shell'));
    await fireEvent.click(await screen.findByTestId('generate-policy'));
    await waitFor(() => expect(raw()).toBe(STARTER_TEXT));
    await backend.savePolicy('shell', POLICY); // written by someone else (the CLI, an editor)
    await fireEvent.click(screen.getByTestId('policy-save'));
    const message = await screen.findByTestId('policy-message');
    expect(message.textContent).toContain('created meanwhile; nothing was written');
    expect(backend.callsOf('save_policy')).toHaveLength(1);
    expect(backend.policyText('shell')).toBe(POLICY);
  });

  it('a server whose tools cannot be listed says why and leaves the editor empty', async () => {
    const backend = setup();
    await fireEvent.click(await screen.findByTestId('policy-server-shell'));
    await fireEvent.click(await screen.findByTestId('generate-policy'));
    const message = await screen.findByTestId('policy-message');
    expect(message.textContent).toContain('cannot list the tools of "shell"');
    expect(screen.getByTestId('policy-missing')).toBeTruthy();
    expect(backend.callsOf('save_policy')).toEqual([]);
  });

  it('is offered only for a server without a policy file', async () => {
    setup({ starters: { shell: STARTER } });
    await screen.findByTestId('policy-editor');
    await waitFor(() => expect(screen.queryByTestId('policy-tab-raw')).toBeTruthy());
    expect(screen.queryByTestId('generate-policy')).toBeNull();
  });
});
