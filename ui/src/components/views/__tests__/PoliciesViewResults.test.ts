// @vitest-environment jsdom
// What comes back (`results`) in the Policies view: the file's four findings in a panel, a tool's
// under its row ("+ answers"), each a select of its own choices; a change edits the unsaved text
// and Save sends it through the same save_policy as every other edit.
//
// The mock answers explain_policy, validate_policy and save_policy from golden answers the Rust
// side wrote, and none of those texts has `results`. Here the gateway's explanation of a text
// with `results` is that of the same text without them (they decide no call, and explain says
// nothing of them: crates/policy/src/explain.rs), and its problems are the schema check's (the
// schema is generated from the Rust types).
import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import PoliciesView from '../PoliciesView.svelte';
import { MockBackend } from '../../../lib/mock-backend';
import { validatePolicyValue } from '../../../lib/policy-schema';
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

const WITH_RESULTS = POLICY.replace('"default": "require_approval",', '"default": "require_approval",\n  "results": { "secrets": "redact", "instructions": "hold" },');

const tool = (name: string, risk: ServerTool['risk']): ServerTool => ({ name, title: null, description: null, annotations: null, input_schema: null, risk });
const server: ServerStatus = {
  name: 'filesystem',
  transport: 'stdio',
  state: 'running',
  tool_count: 4,
  stderr_tail: [],
  sessions: [],
  policy: { state: 'ok', problems: [] },
};

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The text without any `results` (top level and tool entries), key order kept. */
function withoutResults(text: string): string {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return text;
  }
  if (!isObject(doc)) return text;
  const strip = (o: Json): Json => Object.fromEntries(Object.entries(o).filter(([k]) => k !== 'results'));
  const out = strip(doc);
  if (isObject(out.tools)) {
    out.tools = Object.fromEntries(Object.entries(out.tools).map(([k, v]) => [k, isObject(v) ? strip(v) : v]));
  }
  return JSON.stringify(out);
}

const hasResults = (text: string) => text.includes('"results"');
const schemaProblems = (text: string) => validatePolicyValue(JSON.parse(text)).map((p) => ({ path: p.path, message: p.message }));

function setup(policy = POLICY) {
  const backend = new MockBackend({
    servers: [server],
    tools: { filesystem: [tool('read_file', 'read'), tool('write_file', 'write'), tool('move_file', 'write'), tool('edit_file', 'write')] },
    policies: { filesystem: policy },
  });
  const explain = backend.explainPolicy.bind(backend);
  const validate = backend.validatePolicy.bind(backend);
  const save = backend.savePolicy.bind(backend);
  vi.spyOn(backend, 'explainPolicy').mockImplementation((s, text, tools) => explain(s, withoutResults(text), tools));
  vi.spyOn(backend, 'validatePolicy').mockImplementation(async (s, text) => (hasResults(text) ? { problems: schemaProblems(text) } : validate(s, text)));
  const saved = vi.spyOn(backend, 'savePolicy').mockImplementation(async (s, text) => (hasResults(text) ? { problems: schemaProblems(text) } : save(s, text)));
  render(PoliciesView, { props: { backend } });
  return { backend, saved };
}

async function ready() {
  await waitFor(() => expect(screen.getAllByTestId('tool-row')).toHaveLength(4));
  await screen.findByTestId('results-panel');
}

const select = (testid: string) => screen.getByTestId(testid) as HTMLSelectElement;
const shown = (testid: string) => {
  const s = select(testid);
  return s.options[s.selectedIndex].textContent;
};

async function currentJson(): Promise<Json> {
  await fireEvent.click(screen.getByTestId('policy-tab-raw'));
  const json = JSON.parse((screen.getByTestId('raw-json') as HTMLTextAreaElement).value);
  await fireEvent.click(screen.getByTestId('policy-tab-tools'));
  return json;
}

describe('Policies view: what comes back', () => {
  it('a file without results shows the defaults, each finding and its action in a line', async () => {
    setup();
    await ready();
    const panel = screen.getByTestId('results-panel');
    expect(within(panel).getByRole('heading').textContent).toBe('What comes back');
    expect(['invisible', 'escapes', 'secrets', 'instructions'].map((k) => [select(`results-${k}`).value, shown(`results-${k}`)])).toEqual([
      ['', 'strip (default)'],
      ['', 'strip (default)'],
      ['', 'flag (default)'],
      ['', 'flag (default)'],
    ]);
    // Each select offers only its own choices.
    const options = (k: string) => Array.from(select(`results-${k}`).options).map((o) => o.value);
    expect(options('invisible')).toEqual(['', 'strip', 'flag', 'hold']);
    expect(options('escapes')).toEqual(['', 'strip', 'flag', 'hold']);
    expect(options('secrets')).toEqual(['', 'redact', 'flag', 'hold']);
    expect(options('instructions')).toEqual(['', 'flag', 'hold']);
    expect(screen.getByTestId('results-invisible-help').textContent).toContain('zero-width');
    expect(screen.getByTestId('results-invisible-help').textContent).toContain('Removed from the answer');
    expect(screen.getByTestId('results-secrets-help').textContent).toContain('the audit records the finding');
    expect(screen.queryByTestId('policy-dirty')).toBeNull();
  });

  it('a change writes results where the README puts them, other keys kept; Save sends that document', async () => {
    const { saved } = setup();
    await ready();
    await fireEvent.change(select('results-secrets'), { target: { value: 'hold' } });
    await fireEvent.change(select('results-invisible'), { target: { value: 'flag' } });
    expect(select('results-secrets').value).toBe('hold');
    expect(screen.getByTestId('results-secrets-help').textContent).toContain('until a person passes the answer');
    expect(screen.getByTestId('policy-dirty')).toBeTruthy();
    const json = await currentJson();
    expect(Object.keys(json)).toEqual(['version', 'default', 'results', 'tools']);
    expect(json.results).toEqual({ invisible: 'flag', secrets: 'hold' });
    expect(json.tools).toEqual(JSON.parse(POLICY).tools);
    expect(Object.keys(json.tools as Json)).toEqual(['read_*', 'write_file', 'move_file', 'edit_file']);
    // The rows stay explained while the text has results.
    expect(screen.queryByTestId('explain-error')).toBeNull();

    await fireEvent.click(screen.getByTestId('policy-save'));
    await waitFor(() => expect(saved).toHaveBeenCalledTimes(1));
    expect(saved.mock.calls[0][0]).toBe('filesystem');
    expect(JSON.parse(saved.mock.calls[0][1])).toEqual(json);
    await waitFor(() => expect(screen.getByTestId('policy-message').textContent).toContain('Saved'));
    expect(screen.queryByTestId('policy-dirty')).toBeNull();
  });

  it("shows a file's results as written; back to the default removes the field, then the emptied object", async () => {
    setup(WITH_RESULTS);
    await ready();
    expect(select('results-secrets').value).toBe('redact');
    expect(select('results-instructions').value).toBe('hold');
    expect(screen.getByTestId('results-secrets-help').textContent).toContain('[redacted]');
    await fireEvent.change(select('results-secrets'), { target: { value: '' } });
    expect((await currentJson()).results).toEqual({ instructions: 'hold' });
    await fireEvent.change(select('results-instructions'), { target: { value: '' } });
    const json = await currentJson();
    expect(json).toEqual(JSON.parse(POLICY));
    expect(Object.keys(json)).toEqual(['version', 'default', 'tools']);
  });

  it("a tool's own entry: the file's values as the inherit option, a change written to the entry", async () => {
    const { saved } = setup(WITH_RESULTS);
    await ready();
    expect(screen.queryByTestId('tool-results-write_file')).toBeNull();
    await fireEvent.click(screen.getByTestId('results-toggle-write_file'));
    const details = screen.getByTestId('tool-results-write_file');
    expect(within(details).getAllByRole('combobox')).toHaveLength(4);
    expect(shown('tool-results-write_file-instructions')).toBe('as the file says (hold)');
    expect(shown('tool-results-write_file-invisible')).toBe('as the file says (strip, the default)');

    await fireEvent.change(select('tool-results-write_file-instructions'), { target: { value: 'flag' } });
    await fireEvent.change(select('tool-results-write_file-secrets'), { target: { value: 'hold' } });
    await waitFor(() => expect(screen.getByTestId('results-note-write_file').textContent).toBe(': secrets hold, instructions flag'));
    const json = await currentJson();
    expect((json.tools as Json).write_file).toEqual({ action: 'require_approval', approval_timeout: 60, results: { secrets: 'hold', instructions: 'flag' } });
    expect(json.results).toEqual({ secrets: 'redact', instructions: 'hold' }); // the file's stay

    // Back to the file's: the field goes. (The Raw JSON tab closed the details.)
    await fireEvent.click(screen.getByTestId('results-toggle-write_file'));
    expect(select('tool-results-write_file-secrets').value).toBe('hold');
    await fireEvent.change(select('tool-results-write_file-secrets'), { target: { value: '' } });
    expect(((await currentJson()).tools as Json).write_file).toEqual({ action: 'require_approval', approval_timeout: 60, results: { instructions: 'flag' } });
    await fireEvent.click(screen.getByTestId('policy-save'));
    await waitFor(() => expect(saved).toHaveBeenCalledTimes(1));
    expect(JSON.parse(saved.mock.calls[0][1]).tools.write_file.results).toEqual({ instructions: 'flag' });
  });
});
