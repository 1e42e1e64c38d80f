// @vitest-environment jsdom
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import PoliciesView from '../PoliciesView.svelte';
import { MockBackend } from '../../../lib/mock-backend';
import type { ServerStatus, ServerTool } from '../../../lib/types';

afterEach(() => cleanup());

const POLICY = `{
  "version": "1",
  "default": "require_approval",
  "tools": {
    "read_*": {},
    "write_file": { "action": "require_approval", "approval_timeout": 60 },
    "move_file": { "action": "deny", "reason": "Moving files is not allowed" },
    "edit_file": { "class": "write", "risk": "medium" }
  }
}
`;

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

function setup() {
  const backend = new MockBackend({
    servers: [server('filesystem', 'ok'), server('shell', 'missing')],
    tools: {
      filesystem: [tool('read_file', 'read'), { ...tool('write_file', 'write'), description: 'Create a file or overwrite an existing file.' }, tool('move_file', 'write'), tool('edit_file', 'write')],
      shell: [tool('run_command', 'execute'), tool('list_processes', 'read')],
    },
    policies: { filesystem: POLICY, shell: null },
  });
  render(PoliciesView, { props: { backend } });
  return backend;
}

async function rowsReady() {
  await waitFor(() => expect(screen.getAllByTestId('tool-row').length).toBeGreaterThan(0));
}

function rawText(): string {
  return (screen.getByTestId('raw-json') as HTMLTextAreaElement).value;
}

async function currentJson(): Promise<Record<string, unknown>> {
  await fireEvent.click(screen.getByTestId('policy-tab-raw'));
  const json = JSON.parse(rawText());
  await fireEvent.click(screen.getByTestId('policy-tab-tools'));
  return json;
}

const stateOf = (name: string) => screen.getAllByTestId('tool-row').find((r) => r.dataset.tool === name)!.dataset.state;

describe('Policies view', () => {
  it('shows each live tool in its state', async () => {
    setup();
    await rowsReady();
    expect(screen.getAllByTestId('tool-row').map((r) => [r.dataset.tool, r.dataset.state])).toEqual([
      ['read_file', 'allow'],
      ['write_file', 'require_approval'],
      ['move_file', 'deny'],
      ['edit_file', 'allow'],
    ]);
    expect((screen.getByTestId('timeout-write_file') as HTMLInputElement).value).toBe('60');
    expect((screen.getByTestId('reason-move_file') as HTMLInputElement).value).toBe('Moving files is not allowed');
  });

  it('changing a tool state writes the expected JSON, keeping other fields and order', async () => {
    const backend = setup();
    await rowsReady();
    await fireEvent.click(screen.getByTestId('state-move_file-require_approval'));
    expect(stateOf('move_file')).toBe('require_approval');
    await fireEvent.click(screen.getByTestId('state-edit_file-deny'));
    await fireEvent.change(screen.getByTestId('reason-edit_file'), { target: { value: 'ask me' } });
    await fireEvent.click(screen.getByTestId('state-write_file-rate_limit'));
    await fireEvent.change(screen.getByTestId('rl-max-write_file'), { target: { value: '5' } });
    await fireEvent.click(screen.getByTestId('state-read_file-hide'));

    const json = await currentJson();
    expect(json).toEqual({
      version: '1',
      default: 'require_approval',
      hide: ['read_file'],
      tools: {
        'read_*': {},
        write_file: { rate_limit: { max: 5, window: 60 } },
        move_file: { action: 'require_approval' },
        edit_file: { action: 'deny', reason: 'ask me', class: 'write', risk: 'medium' },
      },
    });
    expect(Object.keys(json)).toEqual(['version', 'default', 'hide', 'tools']);
    expect(Object.keys(json.tools as object)).toEqual(['read_*', 'write_file', 'move_file', 'edit_file']);
    expect(screen.getByTestId('policy-dirty')).toBeTruthy();

    await fireEvent.click(screen.getByTestId('policy-save'));
    await waitFor(() => expect(backend.callsOf('save_policy')).toHaveLength(1));
    const saved = backend.callsOf('save_policy')[0] as { server: string; text: string };
    expect(saved.server).toBe('filesystem');
    expect(JSON.parse(saved.text)).toEqual(json);
    expect(saved.text.endsWith('}\n')).toBe(true);
    await waitFor(() => expect(screen.getByTestId('policy-message').textContent).toContain('Saved'));
    expect(screen.queryByTestId('policy-dirty')).toBeNull();
  });

  it('rejects a bad number in place without touching the JSON', async () => {
    setup();
    await rowsReady();
    await fireEvent.change(screen.getByTestId('timeout-write_file'), { target: { value: '0' } });
    expect(screen.getByTestId('field-error').textContent).toContain('at least 1');
    expect((await currentJson()).tools).toMatchObject({ write_file: { action: 'require_approval', approval_timeout: 60 } });
    await fireEvent.change(screen.getByTestId('timeout-write_file'), { target: { value: '' } });
    expect((await currentJson()).tools).toMatchObject({ write_file: { action: 'require_approval' } });
  });

  it('invalid raw JSON shows its problems in place and blocks Save', async () => {
    const backend = setup();
    await rowsReady();
    await fireEvent.click(screen.getByTestId('policy-tab-raw'));
    const area = screen.getByTestId('raw-json');
    await fireEvent.input(area, { target: { value: '{\n  "version": "1",\n  "tools": {\n    "a": { "acton": "deny" }\n  }\n}\n' } });
    const problems = await screen.findAllByTestId('raw-problem');
    expect(problems.map((p) => p.textContent)).toEqual([
      expect.stringContaining('$.tools["a"].acton'),
    ]);
    expect(problems[0].textContent).toContain('line 4');
    expect(problems[0].textContent).toContain('unknown field "acton"');
    expect(screen.getAllByTestId('gutter-error').map((g) => g.dataset.line)).toEqual(['4']);
    expect((screen.getByTestId('policy-save') as HTMLButtonElement).disabled).toBe(true);
    expect(screen.getByTestId('problem-count').textContent).toBe('1');

    // A syntax error points at its line; the Tools tab refuses to guess.
    await fireEvent.input(area, { target: { value: '{\n  "version": "1",\n  "tools": {\n}\n' } });
    const syntax = await screen.findAllByTestId('raw-problem');
    expect(syntax).toHaveLength(1);
    expect(syntax[0].textContent).toContain('invalid JSON');
    expect(screen.getAllByTestId('gutter-error').map((g) => g.dataset.line)).toEqual(['5']);
    await fireEvent.click(screen.getByTestId('policy-tab-tools'));
    expect(screen.getByTestId('policy-unreadable')).toBeTruthy();

    await fireEvent.click(screen.getByTestId('policy-save'));
    expect(backend.callsOf('save_policy')).toEqual([]);
  });

  it('shows problems only the gateway finds (bad glob), located by path', async () => {
    const backend = setup();
    backend.validatePolicy = async () => ({
      problems: [{ path: '$.tools["read_*"]', message: 'bad pattern' }],
    });
    await rowsReady();
    await fireEvent.click(screen.getByTestId('policy-tab-raw'));
    await fireEvent.input(screen.getByTestId('raw-json'), { target: { value: rawText().replace('"default"', '"default" ') } });
    const problem = await screen.findByTestId('raw-problem', {}, { timeout: 3000 });
    expect(problem.textContent).toContain('bad pattern');
    expect(problem.textContent).toContain('(gateway)');
    expect(problem.textContent).toContain('line 5');
  });

  it('creates a policy for a server without one', async () => {
    const backend = setup();
    await rowsReady();
    await fireEvent.click(screen.getByTestId('policy-server-shell'));
    await screen.findByTestId('policy-missing');
    await fireEvent.click(screen.getByTestId('create-policy'));
    await rowsReady();
    expect(stateOf('run_command')).toBe('require_approval');
    expect(stateOf('list_processes')).toBe('allow');
    await fireEvent.click(screen.getByTestId('policy-save'));
    await waitFor(() => expect(backend.callsOf('save_policy')).toHaveLength(1));
    expect(JSON.parse((backend.callsOf('save_policy')[0] as { text: string }).text)).toEqual({
      version: '1',
      default: 'require_approval',
      tools: { list_processes: {} },
    });
    expect(backend.policyText('shell')).not.toBeNull();
  });

  it('shows each tool description and finds tools by any word of their name or description', async () => {
    setup();
    await rowsReady();
    expect(screen.getByTestId('description-write_file').textContent).toContain('overwrite an existing file');
    // Every state button says what it does.
    expect(screen.getByTestId('state-write_file-hide').closest('label')!.title).toContain('do not see the tool');
    const total = screen.getAllByTestId('tool-row').length;
    expect(screen.getByTestId('policy-shown').textContent).toBe(`${total} tools`);
    await fireEvent.input(screen.getByTestId('policy-search'), { target: { value: 'OVERWRITE file' } });
    await waitFor(() => expect(screen.getAllByTestId('tool-row').map((r) => r.dataset.tool)).toEqual(['write_file']));
    expect(screen.getByTestId('policy-shown').textContent).toBe(`1 of ${total} tools`);
    await fireEvent.input(screen.getByTestId('policy-search'), { target: { value: 'no-such-tool' } });
    await waitFor(() => expect(screen.queryAllByTestId('tool-row')).toEqual([]));
    expect(screen.getByTestId('policy-editor').textContent).toContain('No tool matches "no-such-tool"');
  });

  it('changing the default moves every unlisted tool', async () => {
    setup();
    await rowsReady();
    const select = screen.getByTestId('policy-default');
    await fireEvent.change(select, { target: { value: 'deny' } });
    const editor = screen.getByTestId('policy-editor');
    expect(within(editor).getAllByTestId('tool-row').every((r) => r.dataset.state !== undefined)).toBe(true);
    expect((await currentJson()).default).toBe('deny');
  });

  it('shows what the gateway answers for the unsaved text (golden answers of the Rust explain)', async () => {
    const backend = setup();
    await rowsReady();
    // read_file has no entry of its own: the glob read_* decides, as the policy crate says.
    expect(screen.getByTestId('source-read_file').textContent).toBe('no entry of its own: the pattern "read_*" decides');
    expect(screen.getByTestId('source-read_file').title).toContain('most specific matching glob');
    expect(screen.getByTestId('source-write_file').textContent).toBe('its own entry in the policy');

    await fireEvent.click(screen.getByTestId('state-read_file-deny'));
    await waitFor(() => expect(stateOf('read_file')).toBe('deny'));
    expect(screen.getByTestId('source-read_file').textContent).toBe('its own entry in the policy');
    // Asked about the text being edited, before any save.
    const asked = backend.callsOf('explain_policy') as { server: string; text: string; tools: string[] }[];
    const last = asked[asked.length - 1];
    expect(last.server).toBe('filesystem');
    expect(JSON.parse(last.text)).toEqual(await currentJson());
    expect(last.tools).toEqual(['read_file', 'write_file', 'move_file', 'edit_file']);
    expect(backend.callsOf('save_policy')).toHaveLength(0);
  });

  it('says so when the gateway cannot explain the text, and decides nothing itself', async () => {
    const backend = new MockBackend({
      servers: [server('filesystem', 'ok')],
      tools: { filesystem: [tool('read_file', 'read')] },
      // No golden answer exists for this text: the mock fails as a gateway error would.
      policies: { filesystem: '{"version": "1", "default": "allow", "tools": {"unanswered_*": {}}}' },
    });
    render(PoliciesView, { props: { backend } });
    await screen.findByTestId('explain-error');
    expect(screen.queryAllByTestId('tool-row')).toHaveLength(0);
  });
});
