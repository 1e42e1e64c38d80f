// An in-memory backend: the component tests run against it, and `?mock` in a plain browser shows
// the UI with demo data. It keeps a log of every command with the arguments the Tauri backend
// would send, so tests can assert on the IPC contract.

import { BackendError, COMMANDS, type Backend, type Unlisten } from './backend';
import { parseJson } from './json-doc';
import { setToolState, type PolicyDoc } from './policy-model';
import { stringifyPretty } from './json-doc';
import { goldenExplain } from './golden-explain';
import { goldenValidate } from './golden-validate';
import { GoldenAudit } from './golden-audit';
import { fitsHeldAnswer, isHeldAnswer } from './held-answer';
import type {
  ApprovalChoice,
  DecisionAnswer,
  PolicyWrite,
  SavedExport,
  StandingGrant,
  AuditFilter,
  AuditRow,
  ChangedTool,
  ClientState,
  Decision,
  DryRunResult,
  EventMap,
  EventName,
  ExportFormat,
  GettingStarted,
  ExtendResult,
  HistogramBucket,
  InstallPreview,
  PendingApproval,
  PolicyExplanation,
  PolicyFile,
  EntryProblem,
  ServerEntry,
  ServerStatus,
  Settings,
  StarterPolicyText,
  ServerTool,
  UninstallReport,
  ValidationResult,
} from './types';

export interface MockData {
  approvals: PendingApproval[];
  /** The recorded audit data set (__fixtures__/audit.json) the audit reads answer from; absent: none is recorded. */
  audit?: string;
  /**
   * What came back for rows of the recorded data set, by row id, laid over the rows the store
   * reads (the recorded data sets keep no answers). The `with_findings` filter keeps the rows
   * whose findings are not empty.
   */
  answers?: Record<number, RowAnswer>;
  servers: ServerStatus[];
  tools: Record<string, ServerTool[]>;
  /** Policy text per server; null or absent means no policy file. */
  policies: Record<string, string | null>;
  settings: Settings;
  /** `mcpServers` entries as the form edits them, by server. */
  entries: Record<string, ServerEntry>;
  /** Tools whose definition changed since they were pinned. */
  changedTools?: ChangedTool[];
  /** What `generate_policy` answers, by server (absent: a list_tools_failed error). */
  starters?: Record<string, StarterPolicyText>;
  /** The MCP clients and, by client id, what install would route (absent: nothing to route). */
  clients?: ClientState[];
  installs?: Record<string, InstallPreview>;
  /** What the first screen shows; `tryCall` is the call "Try a held call" holds (with demo_server set). */
  gettingStarted?: GettingStarted;
  tryCall?: PendingApproval;
  /** The standing grants in force. */
  grants?: StandingGrant[];
}

/** What came back for one request: the answer fields of an `AuditRow`. */
export type RowAnswer = Pick<AuditRow, 'answer' | 'findings' | 'answer_bytes'>;

export interface MockOptions {
  now?: () => number;
  /** Resolve held calls as timed out when they expire (demo mode). */
  autoExpire?: boolean;
  /** The gateway's `approval.max_hold_secs`, in ms (default 10 minutes). */
  maxHoldMs?: number;
}

export interface RecordedCall {
  command: string;
  args: Record<string, unknown>;
}

/** Deep copy of JSON data (works on Svelte state proxies too, unlike structuredClone). */
const clone = <T>(v: T): T => (v === undefined ? v : (JSON.parse(JSON.stringify(v)) as T));

/** The filter without `with_findings`, which the recorded answers do not know (their data sets keep no answers). */
function withoutFindings(filter: AuditFilter): AuditFilter {
  const rest = { ...filter };
  delete rest.with_findings;
  return rest;
}

const hasFindings = (r: AuditRow) => (r.findings?.length ?? 0) > 0;

export class MockBackend implements Backend {
  readonly calls: RecordedCall[] = [];
  paused = false;
  autostart = false;
  private data: MockData;
  private handlers = new Map<EventName, Set<(payload: never) => void>>();
  private now: () => number;
  private expiryTimer: ReturnType<typeof setInterval> | null = null;
  private audit: GoldenAudit | null;
  /** Rows of the calls decided in this session of the mock, newest first. */
  private decided: AuditRow[] = [];
  private nextAuditId = 1_000_000;
  private maxHoldMs: number;

  constructor(data: Partial<MockData> = {}, options: MockOptions = {}) {
    this.data = {
      approvals: [],
      servers: [],
      tools: {},
      policies: {},
      settings: { approval_timeout_secs: 45, notifications: true, theme: 'system' },
      entries: {},
      ...clone(data),
    };
    this.now = options.now ?? (() => Date.now());
    this.maxHoldMs = options.maxHoldMs ?? 600_000;
    this.audit = this.data.audit ? new GoldenAudit(this.data.audit) : null;
    if (options.autoExpire) this.expiryTimer = setInterval(() => this.expire(), 500);
  }

  dispose(): void {
    if (this.expiryTimer) clearInterval(this.expiryTimer);
  }

  private record(command: string, args: Record<string, unknown> = {}): void {
    this.calls.push({ command, args: clone(args) });
  }

  /** Calls of one command, newest last. */
  callsOf(command: string): Record<string, unknown>[] {
    return this.calls.filter((c) => c.command === command).map((c) => c.args);
  }

  /** Delivers an event to every subscriber, as the Rust side would. */
  emit<E extends EventName>(event: E, payload: EventMap[E]): void {
    for (const h of this.handlers.get(event) ?? []) (h as (p: EventMap[E]) => void)(clone(payload));
  }

  /** A new held call (what the gateway does when a policy says require_approval). */
  hold(approval: PendingApproval): void {
    this.data.approvals.push(clone(approval));
    this.emit('ApprovalRequested', { approval });
  }

  /** A call resolved somewhere else (CLI, timeout, client cancel). */
  resolveElsewhere(id: string, decision: Decision = 'approved', decidedBy: AuditRow['decided_by'] = 'user'): void {
    const a = this.take(id);
    if (!a) return;
    this.emit('ApprovalResolved', { id, decision, decided_by: decidedBy, scope: decision === 'approved' ? 'once' : null });
    this.appendAudit(a, decision, decidedBy === 'timeout' ? 'timeout' : decidedBy === 'client' ? 'client' : 'user', null);
  }

  /** Drops a held call without any event, as if the window missed the announcement. */
  forget(id: string): void {
    this.take(id);
  }

  /** Records the audit data set's next later row and announces it, as the gateway's writer would. */
  appendLater(): AuditRow {
    const row = this.audit?.appendLater();
    if (!row) throw new Error(`the audit data set ${JSON.stringify(this.data.audit)} has no later row left`);
    this.emit('AuditAppended', { id: row.id, server: row.server, tool: row.tool, decision: row.decision, method: row.method });
    return row;
  }

  /** The recorded audit store; without one, asking it is an error that says how to name one. */
  private auditStore(): GoldenAudit {
    if (!this.audit) throw new Error('this MockBackend has no audit data set: pass { audit: "<name>" } (see __fixtures__/audit.json)');
    return this.audit;
  }

  policyText(server: string): string | null {
    return this.data.policies[server] ?? null;
  }

  private take(id: string): PendingApproval | undefined {
    const i = this.data.approvals.findIndex((a) => a.id === id);
    if (i === -1) return undefined;
    return this.data.approvals.splice(i, 1)[0];
  }

  private expire(): void {
    const now = this.now();
    for (const a of [...this.data.approvals]) {
      if (a.expires_at_ms <= now) this.resolveElsewhere(a.id, 'timed_out', 'timeout');
    }
  }

  private appendAudit(a: PendingApproval, decision: Decision, decidedBy: AuditRow['decided_by'], reason: string | null) {
    const now = this.now();
    const row: AuditRow = {
      id: this.nextAuditId++,
      time_ms: now,
      session: a.session,
      client_name: a.client.name,
      client_version: a.client.version,
      server: a.server,
      method: 'tools/call',
      tool: a.tool,
      arguments: a.arguments,
      arguments_digest: `sha256:${a.id.padStart(8, '0')}`,
      decision,
      decided_by: decidedBy,
      rule: a.rule,
      reason,
      wait_ms: Math.max(0, now - a.requested_at_ms),
      outcome: decision === 'approved' ? 'ok' : null,
      upstream_ms: decision === 'approved' ? 42 : null,
      request_id: a.request_id,
    };
    this.decided.unshift(row);
    this.emit('AuditAppended', { id: row.id, server: row.server, tool: row.tool, decision: row.decision, method: row.method });
  }

  private writePolicy(server: string, change: (p: PolicyDoc) => PolicyDoc): void {
    const text = this.data.policies[server];
    const parsed = text ? parseJson(text) : null;
    const doc = parsed && parsed.ok ? (parsed.value as PolicyDoc) : { version: '1' };
    this.data.policies[server] = stringifyPretty(change(doc));
    this.emit('PolicyReloaded', { server });
  }

  async listApprovals(): Promise<PendingApproval[]> {
    this.record(COMMANDS.listApprovals);
    return clone(this.data.approvals).sort((a, b) => a.requested_at_ms - b.requested_at_ms);
  }

  async decideApproval(id: string, choice: ApprovalChoice): Promise<DecisionAnswer> {
    this.record(COMMANDS.decideApproval, { id, choice });
    // As the keeper: a held answer is passed once or refused, nothing else.
    const held = this.data.approvals.find((x) => x.id === id);
    if (isHeldAnswer(held) && !fitsHeldAnswer(choice)) {
      throw new BackendError('invalid_choice', `this is the answer of ${held.tool} from ${held.server}, held for what it holds: it can only be passed once or refused`);
    }
    const a = this.take(id);
    if (!a) throw new BackendError('unknown_approval', `no pending approval ${id}`);
    if ('approve' in choice) {
      if (choice.approve === 'always') this.writePolicy(a.server, (p) => setToolState(p, a.tool, { kind: 'allow' }));
      this.emit('ApprovalResolved', { id, decision: 'approved', decided_by: 'user', scope: choice.approve });
      this.appendAudit(a, 'approved', 'user', null);
      return { also_settled: choice.approve === 'once' ? [] : this.settleLike(a, choice.approve === 'session', true), grant: null, policy_write: null };
    }
    if ('edit' in choice) {
      this.emit('ApprovalResolved', { id, decision: 'approved', decided_by: 'user', scope: 'once' });
      this.appendAudit({ ...a, arguments: JSON.parse(choice.edit.arguments_json) }, 'approved', 'user', null);
      return { also_settled: [], grant: null, policy_write: null };
    }
    if ('grant' in choice) {
      const g = choice.grant;
      this.emit('ApprovalResolved', { id, decision: g.allow ? 'approved' : 'rejected', decided_by: 'user', scope: null });
      this.appendAudit(a, g.allow ? 'approved' : 'rejected', 'user', g.reason);
      return { also_settled: g.exact || g.when ? [] : this.settleLike(a, !g.every_session, g.allow), grant: `g${id}`, policy_write: null };
    }
    if ('rule' in choice) {
      const r = choice.rule;
      this.emit('ApprovalResolved', { id, decision: r.allow ? 'approved' : 'rejected', decided_by: 'user', scope: null });
      this.appendAudit(a, r.allow ? 'approved' : 'rejected', 'user', r.reason);
      return { also_settled: [], grant: null, policy_write: null };
    }
    const { reason, always } = choice.deny;
    if (always) this.writePolicy(a.server, (p) => setToolState(p, a.tool, { kind: 'deny', reason }));
    this.emit('ApprovalResolved', { id, decision: 'rejected', decided_by: 'user', scope: null });
    this.appendAudit(a, 'rejected', 'user', reason);
    return { also_settled: always ? this.settleLike(a, false, false) : [], grant: null, policy_write: null };
  }

  /** Decides the other held calls of the same tool (of the same session when `sameSession`). */
  private settleLike(a: PendingApproval, sameSession: boolean, allow: boolean): string[] {
    const like = this.data.approvals.filter(
      // A held answer settles no other request, and none settles it.
      (o) => o.server === a.server && o.tool === a.tool && (!sameSession || o.session === a.session) && !isHeldAnswer(o) && !isHeldAnswer(a),
    );
    for (const o of like) this.resolveElsewhere(o.id, allow ? 'approved' : 'rejected');
    return like.map((o) => o.id);
  }

  async extendApproval(id: string, bySecs: number): Promise<ExtendResult> {
    this.record(COMMANDS.extendApproval, { id, by_secs: bySecs });
    const a = this.data.approvals.find((x) => x.id === id);
    if (!a) throw new BackendError('unknown_approval', `no pending approval ${id}`);
    const limit = a.requested_at_ms + this.maxHoldMs;
    const wanted = a.expires_at_ms + bySecs * 1000;
    a.expires_at_ms = Math.max(a.expires_at_ms, Math.min(wanted, limit));
    a.expires_at = new Date(a.expires_at_ms).toISOString();
    this.emit('ApprovalExtended', { approval: a });
    return { approval: clone(a), clamped: wanted > limit };
  }

  async dryRunApproval(id: string, choice: ApprovalChoice): Promise<DryRunResult> {
    this.record(COMMANDS.dryRunApproval, { id, choice });
    const a = this.data.approvals.find((x) => x.id === id);
    if (!a) throw new BackendError('unknown_approval', `no pending approval ${id}`);
    // Which past calls a decision would have matched is the gateway's to say; the mock has no
    // history of calls to compare with, so it compares none.
    const rows: AuditRow[] = [];
    const allow = 'approve' in choice || ('grant' in choice && choice.grant.allow) || ('rule' in choice && choice.rule.allow);
    if ('rule' in choice) {
      const rule = { when: choice.rule.when, action: allow ? 'allow' : 'deny' };
      const name = `tools.${a.tool}.rules[0]`;
      const entry = { action: 'require_approval', rules: [rule] };
      return { decision: allow ? 'approve' : 'deny', writes: 'policy', grant: null, rule: { key: a.tool, entry, name, rule },
        matched: 0, compared: rows.length, limit: 1000, redacted: 0 };
    }
    const writesPolicy = ('approve' in choice && choice.approve === 'always') || ('deny' in choice && choice.deny.always);
    return {
      decision: allow ? 'approve' : 'deny',
      writes: writesPolicy ? 'policy' : 'grant' in choice ? 'grant' : 'nothing',
      grant: 'grant' in choice ? { ...choice.grant } : null,
      rule: writesPolicy ? { key: a.tool, entry: allow ? {} : { action: 'deny' } } : null,
      matched: rows.length,
      compared: rows.length,
      limit: 1000,
      redacted: 0,
    };
  }

  async listGrants(): Promise<StandingGrant[]> {
    this.record(COMMANDS.listGrants);
    const now = this.now();
    return clone((this.data.grants ?? []).filter((g) => g.expires_at_ms === null || g.expires_at_ms > now));
  }

  async revokeGrant(id: string): Promise<void> {
    this.record(COMMANDS.revokeGrant, { id });
    const before = this.data.grants?.length ?? 0;
    this.data.grants = (this.data.grants ?? []).filter((g) => g.id !== id);
    if (this.data.grants.length === before) throw new BackendError('unknown_grant', `no grant ${id} is in force`);
  }

  async undoPolicyWrite(writeId: string): Promise<PolicyWrite> {
    this.record(COMMANDS.undoPolicyWrite, { write_id: writeId });
    throw new BackendError('unknown_write', `no policy write ${writeId} to undo`);
  }


  /**
   * The recorded answer; the calls decided in this session of the mock are put on top only of
   * an unfiltered first page (`{}`), which needs no filtering to know they belong there.
   */
  async queryAudit(filter: AuditFilter, limit: number): Promise<AuditRow[]> {
    this.record(COMMANDS.queryAudit, { filter, limit });
    // `with_findings` is answered here, over the page the store gives without it: the rows
    // whose answer had findings (`answers` lays them over the recorded rows).
    const every = withoutFindings(filter);
    const recorded = this.audit ? this.audit.query(every, limit).map((r) => this.withAnswer(r)) : [];
    const unfiltered = Object.values(every).every((v) => v === undefined);
    const rows = unfiltered ? [...this.decided, ...recorded].slice(0, limit) : recorded;
    return clone(filter.with_findings ? rows.filter(hasFindings) : rows);
  }

  /** A recorded row with what came back for it, when `answers` has it. */
  private withAnswer(row: AuditRow): AuditRow {
    const answer = this.data.answers?.[row.id];
    return answer ? { ...row, ...answer } : row;
  }

  /** Paths saved to, with the rows each save wrote (the mock writes no file). */
  readonly savedExports = new Map<string, number>();

  async suggestExportPath(format: ExportFormat): Promise<string> {
    this.record(COMMANDS.suggestExportPath, { format });
    return `/home/user/Downloads/portcullis-audit.${format}`;
  }

  async saveAuditExport(filter: AuditFilter, format: ExportFormat, path: string, replace: boolean): Promise<SavedExport> {
    this.record(COMMANDS.saveAuditExport, { filter, format, path, replace });
    if (!path.startsWith('/')) throw new BackendError('export_path_not_absolute', `${JSON.stringify(path)} is not a full path`);
    if (this.savedExports.has(path) && !replace) throw new BackendError('export_exists', `${path} already exists`);
    // The recorded data sets keep no answers: an export of the answers with findings counts every request.
    const { rows, bytes } = this.auditStore().exported({ ...withoutFindings(filter), before: undefined }, format);
    this.savedExports.set(path, rows);
    return { path, rows, bytes };
  }


  async auditHistogram(filter: AuditFilter, bucketMs: number): Promise<HistogramBucket[]> {
    this.record(COMMANDS.auditHistogram, { filter, bucket_ms: bucketMs });
    // As for the export, the chart of the answers with findings counts every request.
    return this.auditStore().histogram({ ...withoutFindings(filter), before: undefined }, bucketMs);
  }

  async listServers(): Promise<ServerStatus[]> {
    this.record(COMMANDS.listServers);
    return clone(this.data.servers);
  }

  async restartServer(server: string): Promise<void> {
    this.record(COMMANDS.restartServer, { server });
    const s = this.data.servers.find((x) => x.name === server);
    if (!s) throw new BackendError('unknown_server', `no server ${server}`);
    s.state = 'running';
    s.tool_count = this.data.tools[server]?.length ?? 0;
    s.stderr_tail = [...s.stderr_tail, `[portcullis] restarted ${server}`].slice(-20);
  }

  async listTools(server: string): Promise<ServerTool[]> {
    this.record(COMMANDS.listTools, { server });
    const s = this.data.servers.find((x) => x.name === server);
    if (s && s.state !== 'running') throw new BackendError('server_not_running', `${server} is not running`);
    return clone(this.data.tools[server] ?? []);
  }

  async readServer(server: string): Promise<ServerEntry | null> {
    this.record(COMMANDS.readServer, { server });
    return clone(this.data.entries[server] ?? null);
  }

  /** Like the gateway: a valid entry is stored and its server listed (not connected yet). */
  async saveServer(name: string, entry: ServerEntry): Promise<EntryProblem[]> {
    this.record(COMMANDS.saveServer, { name, entry });
    if (entry.transport === 'stdio' && !entry.command.trim()) {
      return [{ field: 'command', message: 'the command to start the server is required' }];
    }
    this.data.entries[name] = clone(entry);
    const status: ServerStatus = {
      name,
      transport: entry.transport,
      state: 'stopped',
      tool_count: null,
      stderr_tail: [],
      policy: { state: this.data.policies[name] ? 'ok' : 'missing', problems: [] },
      sessions: [],
    };
    const i = this.data.servers.findIndex((s) => s.name === name);
    if (i === -1) this.data.servers.push(status);
    else this.data.servers[i] = status;
    return [];
  }

  async readPolicy(server: string): Promise<PolicyFile> {
    this.record(COMMANDS.readPolicy, { server });
    return { text: this.data.policies[server] ?? null, path: `~/.config/portcullis/policies/${server}.json` };
  }

  async validatePolicy(server: string, text: string): Promise<ValidationResult> {
    this.record(COMMANDS.validatePolicy, { server, text });
    return { problems: goldenValidate(text) };
  }

  async explainPolicy(server: string, text: string, tools: string[]): Promise<PolicyExplanation> {
    this.record(COMMANDS.explainPolicy, { server, text, tools });
    return goldenExplain(text, tools);
  }

  async savePolicy(server: string, text: string): Promise<ValidationResult> {
    this.record(COMMANDS.savePolicy, { server, text });
    const problems = goldenValidate(text);
    if (problems.length) return { problems };
    this.data.policies[server] = text;
    const s = this.data.servers.find((x) => x.name === server);
    if (s) s.policy = { state: 'ok', problems: [] };
    this.emit('PolicyReloaded', { server });
    return { problems: [] };
  }

  async getSettings(): Promise<Settings> {
    this.record(COMMANDS.getSettings);
    return clone(this.data.settings);
  }

  async setSettings(settings: Settings): Promise<void> {
    this.record(COMMANDS.setSettings, { settings });
    this.data.settings = clone(settings);
    this.emit('SettingsChanged', clone(settings));
  }

  async getPaused(): Promise<boolean> {
    this.record(COMMANDS.getPaused);
    return this.paused;
  }

  async getAutostart(): Promise<boolean> {
    this.record(COMMANDS.getAutostart);
    return this.autostart;
  }

  async setAutostart(enabled: boolean): Promise<void> {
    this.record(COMMANDS.setAutostart, { enabled });
    this.autostart = enabled;
  }

  async setPaused(paused: boolean): Promise<void> {
    this.record(COMMANDS.setPaused, { paused });
    if (this.paused !== paused) this.emit('PauseChanged', { paused });
    this.paused = paused;
  }

  async listChangedTools(): Promise<ChangedTool[]> {
    this.record(COMMANDS.listChangedTools);
    return clone(this.data.changedTools ?? []);
  }

  /** Like the gateway's pin store: only the change the person saw is trusted. */
  async acceptTool(server: string, tool: string, digest: string): Promise<void> {
    this.record(COMMANDS.acceptTool, { server, tool, digest });
    const list = this.data.changedTools ?? [];
    const i = list.findIndex((c) => c.server === server && c.tool === tool);
    if (i === -1) throw new BackendError('tool_not_changed', `tool "${tool}" of server "${server}" has not changed since it was pinned`);
    if (list[i].change.new_digest !== digest) {
      throw new BackendError('tool_changed_again', `tool "${tool}" of server "${server}" changed again; review the new change first`);
    }
    list.splice(i, 1);
  }

  async generatePolicy(server: string): Promise<StarterPolicyText> {
    this.record(COMMANDS.generatePolicy, { server });
    if (this.data.policies[server]) {
      throw new BackendError('policy_exists', `~/.config/portcullis/policies/${server}.json already exists`);
    }
    const starter = this.data.starters?.[server];
    if (!starter) throw new BackendError('list_tools_failed', `cannot list the tools of "${server}"`);
    return clone(starter);
  }

  private clientOf(id: string): ClientState {
    const c = (this.data.clients ?? []).find((x) => x.id === id);
    if (!c) throw new BackendError('unknown_client', `unknown client "${id}"`);
    return c;
  }

  async listClients(): Promise<ClientState[]> {
    this.record(COMMANDS.listClients);
    return clone(this.data.clients ?? []);
  }

  async previewClientInstall(client: string): Promise<InstallPreview> {
    this.record(COMMANDS.previewClientInstall, { client });
    const c = this.clientOf(client);
    if (c.installed) throw new BackendError('client_refused', `${c.name} was already routed through Portcullis`);
    return clone(this.data.installs?.[client] ?? { preview: '', routed: [], imports: [], skipped: [], policies: [] });
  }

  /** Like the gateway: applies only the plan whose preview the person saw. */
  async installClient(client: string, preview: string): Promise<InstallPreview> {
    this.record(COMMANDS.installClient, { client, preview });
    const c = this.clientOf(client);
    const plan = this.data.installs?.[client];
    if (!plan || plan.preview !== preview) {
      throw new BackendError('preview_stale', "the client's file changed since the preview; review the change again");
    }
    c.installed = true;
    c.routed += plan.routed.length;
    return clone(plan);
  }

  async previewClientUninstall(client: string): Promise<UninstallReport> {
    this.record(COMMANDS.previewClientUninstall, { client });
    return this.uninstallReport(client);
  }

  private uninstallReport(client: string): UninstallReport {
    const c = this.clientOf(client);
    if (!c.installed) throw new BackendError('client_refused', `${c.name} is not routed through Portcullis`);
    return { description: `${c.config_path} is put back from its backup, byte for byte.` };
  }

  async uninstallClient(client: string): Promise<UninstallReport> {
    this.record(COMMANDS.uninstallClient, { client });
    const report = this.uninstallReport(client);
    const c = this.clientOf(client);
    c.installed = false;
    c.routed = 0;
    return report;
  }

  async gettingStarted(): Promise<GettingStarted> {
    this.record(COMMANDS.gettingStarted);
    return clone(
      this.data.gettingStarted ?? {
        install_command: 'portcullis clients install claude-code',
        suggested_client: 'claude-code',
        clients: [
          {
            id: 'claude-code',
            name: 'Claude Code',
            line: 'Claude Code: not routed (1 server)',
            found: true,
            routed: [],
            without_policy: [],
            can_route: true,
          },
        ],
        policies_dir: '~/.config/portcullis/policies',
        connect_command: 'portcullis connect SERVER',
        demo_server: null,
      },
    );
  }

  /** Like the app: holds the demo call and answers once it was decided. */
  async tryHeldCall(): Promise<string> {
    this.record(COMMANDS.tryHeldCall);
    const call = this.data.tryCall;
    if (!this.data.gettingStarted?.demo_server || !call) throw new BackendError('unknown_server', 'no demo server');
    const answer = new Promise<string>((resolve) => {
      void this.on('ApprovalResolved', (r) => {
        if (r.id !== call.id) return;
        resolve(r.decision === 'approved' ? 'wrote notes/first-held-call.txt' : '[portcullis] denied by you');
      });
    });
    this.hold(call);
    return answer;
  }

  async on<E extends EventName>(event: E, handler: (payload: EventMap[E]) => void): Promise<Unlisten> {
    let set = this.handlers.get(event);
    if (!set) this.handlers.set(event, (set = new Set()));
    const h = handler as (payload: never) => void;
    set.add(h);
    return () => set!.delete(h);
  }
}
