// The policy editor's state for one server: the file's text is the source of truth; the tool
// form writes it through policy-model. What state each tool is in — which entry, glob, hide
// pattern or default decides it — is the gateway's answer for the text as edited
// (`explain_policy`, the policy crate's own precedence rules); the form shows the last answer, so
// it always pairs a text with the decisions for that text. Problems come from two places: the
// schema check here (instant) and the gateway's `validate_policy` (globs, regexes; debounced).

import { errorText, type Backend, type Unlisten } from '../lib/backend';
import { parseJson, parsePath, stringifyPretty, type Position } from '../lib/json-doc';
import { validatePolicyValue } from '../lib/policy-schema';
import {
  defaultAction,
  setDefault,
  setToolState,
  starterPolicy,
  toolView,
  type Action,
  type PolicyDoc,
  type ToolState,
  type ToolView,
} from '../lib/policy-model';
import { isGlob } from '../lib/glob';
import { deleteRule, moveRule, putRule, rulesKey, rulesOf, type Rule } from '../lib/rule-edit';
import { entryResults, fileResults, setFileResult, setToolResult, type EffectiveResults, type FindingKind, type Treatment } from '../lib/results-model';
import type { PolicyExplanation, PolicyProblem, StarterPolicyText, ServerTool } from '../lib/types';

export interface ShownProblem extends PolicyProblem {
  /** Where in the text, when the path (or the syntax error) can be found there. */
  position: Position | null;
  source: 'syntax' | 'schema' | 'gateway';
}

export interface ToolRow {
  name: string;
  info: ServerTool | null;
  /** Listed by the running server (false: only named in the policy). */
  live: boolean;
  view: ToolView;
  /** The gateway's explanation, as `portcullis policy explain` prints it. */
  lines: string[];
  /** The entry whose argument rules the row shows (its own, or the glob that decides it), in
   * the text as edited, so a rule the gateway refuses is shown with its problem. */
  rulesKey: string | null;
  rules: unknown[];
  /** What is done with findings in the tool's answers (the deciding entry's `results` fields,
   * then the file's, then the defaults), in the text as edited. */
  results: EffectiveResults;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export class PolicyEditor {
  server = $state<string | null>(null);
  path = $state('');
  /** Whether a policy file exists on disk. */
  exists = $state(false);
  text = $state('');
  savedText = $state('');
  tools = $state<ServerTool[]>([]);
  toolsError = $state<string | null>(null);
  gatewayProblems = $state<PolicyProblem[]>([]);
  /** Problems the gateway announced for the file on disk (PolicyRejected). */
  rejected = $state<string[]>([]);
  loading = $state(false);
  saving = $state(false);
  message = $state<{ kind: 'ok' | 'error'; text: string } | null>(null);
  mode = $state<'tools' | 'raw'>('tools');
  /** The gateway's starter policy shown for review (its classification beside the text). */
  starter = $state<StarterPolicyText | null>(null);
  generating = $state(false);

  parsed = $derived(parseJson(this.text));
  doc = $derived<PolicyDoc | null>(this.parsed.ok && isObject(this.parsed.value) ? this.parsed.value : null);
  dirty = $derived(this.text !== this.savedText);
  /** Nothing to edit: no file on disk and none started. */
  empty = $derived(!this.exists && this.text === '');

  problems = $derived.by((): ShownProblem[] => {
    if (this.text === '') return [];
    const parsed = this.parsed;
    const out: ShownProblem[] = [];
    if (!parsed.ok) {
      out.push({ path: '$', message: `invalid JSON: ${parsed.message}`, position: parsed.position, source: 'syntax' });
    } else {
      for (const p of validatePolicyValue(parsed.value)) {
        out.push({ path: p.path, message: p.message, position: parsed.locate(p.segments), source: 'schema' });
      }
    }
    const seen = new Set(out.map((p) => `${p.path}\n${p.message}`));
    for (const p of this.gatewayProblems) {
      if (!parsed.ok && p.path === '$') continue; // the syntax error, said once
      if (seen.has(`${p.path}\n${p.message}`)) continue;
      const position = parsed.ok ? parsed.locate(parsePath(p.path)) : null;
      out.push({ ...p, position, source: 'gateway' });
    }
    return out;
  });

  /** Live tools first (in the server's order), then names only the policy mentions. */
  rowNames = $derived.by((): string[] => {
    const doc = this.doc;
    if (!doc) return [];
    const names = new Set(this.tools.map((t) => t.name));
    const mentioned = [
      ...Object.keys(isObject(doc.tools) ? doc.tools : {}),
      ...(Array.isArray(doc.hide) ? doc.hide.filter((h): h is string => typeof h === 'string') : []),
    ];
    for (const name of mentioned) if (!isGlob(name)) names.add(name);
    return [...names];
  });

  /** The gateway's last answer and the text it answers (rows come from that pair). */
  explained = $state<{ text: string; answer: PolicyExplanation } | null>(null);
  /** Why the gateway could not explain the text, if it could not. */
  explainError = $state<string | null>(null);
  /** The rows show an older text than the one being edited (an answer is on its way, or the
   * text is not a valid policy). */
  rowsStale = $derived(this.explained !== null && this.explained.text !== this.text);

  rows = $derived.by((): ToolRow[] => {
    const e = this.explained;
    if (!this.doc || !e) return [];
    const parsed = parseJson(e.text);
    const doc = parsed.ok && isObject(parsed.value) ? parsed.value : null;
    if (!doc) return [];
    const info = new Map(this.tools.map((t) => [t.name, t]));
    const now = this.doc;
    return e.answer.tools.map((d) => {
      const view = toolView(doc, d);
      const key = rulesKey(now, d.tool, view);
      return {
        name: d.tool,
        info: info.get(d.tool) ?? null,
        live: info.has(d.tool),
        view,
        lines: d.lines,
        rulesKey: key,
        rules: rulesOf(now, key),
        results: entryResults(now, key),
      };
    });
  });

  /** Glob keys of `tools` and `hide` (shown for context; edited in the raw JSON). */
  patterns = $derived.by((): string[] => {
    const doc = this.doc;
    if (!doc) return [];
    const keys = Object.keys(isObject(doc.tools) ? doc.tools : {}).filter(isGlob);
    const hides = (Array.isArray(doc.hide) ? doc.hide : []).filter((h): h is string => typeof h === 'string' && isGlob(h));
    return [...keys.map((k) => `tools: ${k}`), ...hides.map((h) => `hide: ${h}`)];
  });

  defaultAction = $derived<Action>(this.doc ? defaultAction(this.doc) : 'require_approval');

  /** The file's top-level `results`, each field with where it comes from (file or default). */
  fileResults = $derived<EffectiveResults | null>(this.doc ? fileResults(this.doc) : null);

  private validateTimer: ReturnType<typeof setTimeout> | null = null;
  private validateSeq = 0;
  private explainSeq = 0;
  private unlisten: Unlisten[] = [];

  constructor(
    private backend: Backend,
    private validateDelayMs = 300,
  ) {}

  async start(): Promise<void> {
    this.unlisten.push(
      await this.backend.on('PolicyReloaded', ({ server }) => {
        if (server !== this.server) return;
        this.rejected = [];
        if (!this.dirty) void this.reload();
      }),
      await this.backend.on('PolicyRejected', ({ server, problems }) => {
        if (server === this.server) this.rejected = problems;
      }),
    );
  }

  stop(): void {
    this.unlisten.forEach((u) => u());
    this.unlisten = [];
    if (this.validateTimer) clearTimeout(this.validateTimer);
  }

  async open(server: string): Promise<void> {
    this.server = server;
    this.message = null;
    this.starter = null;
    this.gatewayProblems = [];
    this.rejected = [];
    this.loading = true;
    this.tools = [];
    this.toolsError = null;
    this.explained = null;
    this.explainError = null;
    const toolsLoad = this.backend
      .listTools(server)
      .then((t) => {
        if (this.server === server) this.tools = t;
      })
      .catch((e) => {
        if (this.server === server) this.toolsError = errorText(e);
      });
    await Promise.all([this.reload(), toolsLoad]);
    this.loading = false;
    await this.explainNow();
  }

  /** Reads the file from the gateway, dropping unsaved edits. */
  async reload(): Promise<void> {
    const server = this.server;
    if (!server) return;
    try {
      const file = await this.backend.readPolicy(server);
      if (this.server !== server) return;
      this.path = file.path;
      this.exists = file.text !== null;
      this.text = file.text ?? '';
      this.savedText = this.text;
      this.gatewayProblems = [];
      if (this.exists) this.scheduleValidate(0);
      if (!this.loading) await this.explainNow();
    } catch (e) {
      this.message = { kind: 'error', text: errorText(e) };
    }
  }

  /** Raw text edited by hand. */
  setText(text: string): void {
    this.text = text;
    this.message = null;
    this.scheduleValidate();
  }

  /** A change from the form: the rows follow as soon as the gateway has explained it. */
  private write(doc: PolicyDoc): void {
    if (doc === this.doc) return; // nothing changed: the text stays as it is written
    this.setText(stringifyPretty(doc));
    void this.explainNow();
  }

  setToolState(tool: string, state: ToolState): void {
    if (!this.doc) return;
    const current = this.rows.find((r) => r.name === tool)?.view ?? null;
    try {
      this.write(setToolState(this.doc, tool, state, current));
    } catch (e) {
      this.message = { kind: 'error', text: errorText(e) };
    }
  }

  /** Puts an argument rule at `index` of the tool's own entry (null: a new rule, placed by newRuleIndex). */
  putRule(tool: string, index: number | null, rule: Rule): void {
    this.editRules(tool, (doc, view) => putRule(doc, tool, view, index, rule));
  }

  moveRule(tool: string, from: number, to: number): void {
    this.editRules(tool, (doc, view) => moveRule(doc, tool, view, from, to));
  }

  deleteRule(tool: string, index: number): void {
    this.editRules(tool, (doc, view) => deleteRule(doc, tool, view, index));
  }

  private editRules(tool: string, edit: (doc: PolicyDoc, view: ToolView) => PolicyDoc): void {
    const view = this.rows.find((r) => r.name === tool)?.view;
    if (!this.doc || !view) return;
    try {
      this.write(edit(this.doc, view));
    } catch (e) {
      this.message = { kind: 'error', text: errorText(e) };
    }
  }

  /** Sets (or with null removes, back to the default) a field of the file's `results`. */
  setFileResult(kind: FindingKind, value: Treatment | null): void {
    if (!this.doc) return;
    try {
      this.write(setFileResult(this.doc, kind, value));
    } catch (e) {
      this.message = { kind: 'error', text: errorText(e) };
    }
  }

  /** Sets (or with null removes, back to the file's) a field of the tool's own entry's `results`. */
  setToolResult(tool: string, kind: FindingKind, value: Treatment | null): void {
    this.editRules(tool, (doc, view) => setToolResult(doc, tool, view, kind, value));
  }

  setDefault(action: Action): void {
    if (this.doc) this.write(setDefault(this.doc, action));
  }

  /** Starts a policy for a server without one (saved only on Save). */
  create(): void {
    this.write(starterPolicy(this.tools));
    this.mode = 'tools';
  }

  /** Asks the gateway for a starter policy from the server's live tools (like `portcullis policy
   * init`) and puts it in the editor, unsaved: the person reviews it and Save writes it. */
  async generate(): Promise<void> {
    const server = this.server;
    if (!server || this.generating) return;
    this.generating = true;
    this.message = null;
    try {
      const starter = await this.backend.generatePolicy(server);
      if (this.server !== server) return;
      this.starter = starter;
      this.setText(starter.text);
      this.mode = 'raw';
      this.message = { kind: 'ok', text: 'Generated from the live tool list; review it, then Save.' };
    } catch (e) {
      if (this.server === server) this.message = { kind: 'error', text: errorText(e) };
    } finally {
      this.generating = false;
    }
  }

  /** A new file is written only if none appeared since the editor read the server's policy
   * (the CLI or a text editor may have made one): that one is never replaced unseen. */
  private async appearedMeanwhile(server: string): Promise<boolean> {
    if (this.exists) return false;
    const file = await this.backend.readPolicy(server);
    if (file.text === null) return false;
    this.exists = true;
    this.savedText = file.text;
    this.message = {
      kind: 'error',
      text: `${file.path} was created meanwhile; nothing was written. Revert shows it; Save again replaces it.`,
    };
    return true;
  }

  revert(): void {
    this.text = this.savedText;
    this.gatewayProblems = [];
    this.message = null;
    this.scheduleValidate(0);
    void this.explainNow();
  }

  scheduleValidate(delay = this.validateDelayMs): void {
    if (this.validateTimer) clearTimeout(this.validateTimer);
    this.validateTimer = setTimeout(() => {
      void this.validateNow();
      void this.explainNow();
    }, delay);
  }

  /** Asks the gateway how the text as it is now decides each row's tool. An answer with
   * problems (not a valid policy) leaves the rows of the last valid text in place. */
  async explainNow(): Promise<void> {
    const server = this.server;
    const text = this.text;
    if (!server || !this.doc) return;
    if (this.explained?.text === text) return;
    const seq = ++this.explainSeq;
    try {
      const answer = await this.backend.explainPolicy(server, text, this.rowNames);
      if (seq !== this.explainSeq || this.server !== server) return;
      this.explainError = null;
      if (answer.problems.length === 0) this.explained = { text, answer };
    } catch (e) {
      if (seq === this.explainSeq) this.explainError = errorText(e);
    }
  }

  /** Asks the gateway about the text as it is now. */
  async validateNow(): Promise<void> {
    const server = this.server;
    const text = this.text;
    if (!server || text === '') return;
    const seq = ++this.validateSeq;
    try {
      const { problems } = await this.backend.validatePolicy(server, text);
      if (seq === this.validateSeq && this.text === text) this.gatewayProblems = problems;
    } catch {
      // The schema check still shows what it can.
    }
  }

  async save(): Promise<boolean> {
    const server = this.server;
    if (!server || this.saving) return false;
    if (this.problems.length) {
      this.message = { kind: 'error', text: 'Fix the problems before saving.' };
      return false;
    }
    this.saving = true;
    this.message = null;
    const text = this.text;
    try {
      if (await this.appearedMeanwhile(server)) return false;
      const { problems } = await this.backend.savePolicy(server, text);
      if (problems.length) {
        this.gatewayProblems = problems;
        this.message = { kind: 'error', text: 'The gateway refused the policy; nothing was written.' };
        return false;
      }
      this.savedText = text;
      this.exists = true;
      this.starter = null;
      this.message = { kind: 'ok', text: 'Saved; the gateway uses it now.' };
      return true;
    } catch (e) {
      this.message = { kind: 'error', text: errorText(e) };
      return false;
    } finally {
      this.saving = false;
    }
  }
}
