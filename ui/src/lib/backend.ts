// Everything the UI asks of the gateway, behind one interface: the Tauri implementation below
// talks to the Rust side through `invoke` and `listen`; `mock-backend.ts` is an in-memory stand-in
// for tests and for `?mock` in a plain browser.

import { invoke } from '@tauri-apps/api/core';
import { listen } from '@tauri-apps/api/event';
import type {
  ApprovalChoice,
  AuditFilter,
  AuditRow,
  ChangedTool,
  ClientState,
  DecisionAnswer,
  DryRunResult,
  EntryProblem,
  EventMap,
  EventName,
  ExportFormat,
  GettingStarted,
  ExtendResult,
  HistogramBucket,
  InstallPreview,
  PendingApproval,
  PolicyFile,
  PolicyWrite,
  SavedExport,
  StandingGrant,
  ServerEntry,
  ServerStatus,
  Settings,
  StarterPolicyText,
  ServerTool,
  UninstallReport,
  PolicyExplanation,
  ValidationResult,
} from './types';

export type Unlisten = () => void;

export interface Backend {
  listApprovals(): Promise<PendingApproval[]>;
  /** Decides a held call; says which other held calls it settled and what it wrote. */
  decideApproval(id: string, choice: ApprovalChoice): Promise<DecisionAnswer>;
  /** Takes back the policy write of an "always" (`DecisionAnswer.policy_write.write_id`), within 30 s. */
  undoPolicyWrite(writeId: string): Promise<PolicyWrite>;
  /** The standing grants in force. */
  listGrants(): Promise<StandingGrant[]>;
  /** Ends a standing grant at once (`unknown_grant` when it is not in force). */
  revokeGrant(id: string): Promise<void>;
  /** More time to decide: the deadline moves `bySecs` later, bounded by the gateway's `max_hold_secs`. */
  extendApproval(id: string, bySecs: number): Promise<ExtendResult>;
  /** What `choice` would write and how many earlier audited calls it would have matched; decides nothing. */
  dryRunApproval(id: string, choice: ApprovalChoice): Promise<DryRunResult>;

  queryAudit(filter: AuditFilter, limit: number): Promise<AuditRow[]>;
  /** Where the export dialog proposes to save (the Downloads folder, a name with the time). */
  suggestExportPath(format: ExportFormat): Promise<string>;
  /** Saves every row `filter` matches to `path`; `export_exists` unless `replace`. */
  saveAuditExport(filter: AuditFilter, format: ExportFormat, path: string, replace: boolean): Promise<SavedExport>;
  auditHistogram(filter: AuditFilter, bucketMs: number): Promise<HistogramBucket[]>;

  listServers(): Promise<ServerStatus[]>;
  restartServer(server: string): Promise<void>;
  listTools(server: string): Promise<ServerTool[]>;
  /** The `mcpServers` entry as the form edits it; null when the file has none by that name. */
  readServer(server: string): Promise<ServerEntry | null>;
  /** Adds or replaces an entry (written atomically, applied at once); its problems, if it was refused. */
  saveServer(name: string, entry: ServerEntry): Promise<EntryProblem[]>;

  readPolicy(server: string): Promise<PolicyFile>;
  validatePolicy(server: string, text: string): Promise<ValidationResult>;
  /** How `text` (saved or not) decides each of `tools`: the policy crate's `explain`. */
  explainPolicy(server: string, text: string, tools: string[]): Promise<PolicyExplanation>;
  /** Writes the file atomically and reloads it; an invalid text is not written and its problems come back. */
  savePolicy(server: string, text: string): Promise<ValidationResult>;

  getSettings(): Promise<Settings>;
  setSettings(settings: Settings): Promise<void>;
  /** The gateway's pause switch: while on, every new call that needs approval is denied at once. */
  getPaused(): Promise<boolean>;
  setPaused(paused: boolean): Promise<void>;
  /** Whether Portcullis starts at login (the platform's autostart entry). */
  getAutostart(): Promise<boolean>;
  setAutostart(enabled: boolean): Promise<void>;

  /** Tools whose server changed their definition since they were pinned (their calls are held). */
  listChangedTools(): Promise<ChangedTool[]>;
  /** Trusts the reviewed new definition; `digest` is its `new_digest` (refused if it changed again). */
  acceptTool(server: string, tool: string, digest: string): Promise<void>;
  /** A starter policy from the server's live tools, for review; writes nothing, refused if a file exists. */
  generatePolicy(server: string): Promise<StarterPolicyText>;

  /** The MCP clients Portcullis can route (Claude Desktop, Cursor, Claude Code, VS Code). */
  listClients(): Promise<ClientState[]>;
  /** What install would change; nothing is written. */
  previewClientInstall(client: string): Promise<InstallPreview>;
  /** Applies the install whose `preview` text the person saw (refused as `preview_stale` if it differs). */
  installClient(client: string, preview: string): Promise<InstallPreview>;
  previewClientUninstall(client: string): Promise<UninstallReport>;
  uninstallClient(client: string): Promise<UninstallReport>;

  /** The first screen's commands (route a client, connect one server) and the demo server, if configured. */
  gettingStarted(): Promise<GettingStarted>;
  /** Calls the demo's `write_note` through the gateway; resolves with the tool's answer once the person decided. */
  tryHeldCall(): Promise<string>;

  /** Subscribes to a gateway event; resolves to the function that ends the subscription. */
  on<E extends EventName>(event: E, handler: (payload: EventMap[E]) => void): Promise<Unlisten>;
}

/** Tauri command names (verb_noun), in one place. */
export const COMMANDS = {
  listApprovals: 'list_approvals',
  decideApproval: 'decide_approval',
  undoPolicyWrite: 'undo_policy_write',
  listGrants: 'list_grants',
  revokeGrant: 'revoke_grant',
  extendApproval: 'extend_approval',
  dryRunApproval: 'dry_run_approval',
  queryAudit: 'query_audit',
  suggestExportPath: 'suggest_export_path',
  saveAuditExport: 'save_audit_export',
  auditHistogram: 'audit_histogram',
  listServers: 'list_servers',
  restartServer: 'restart_server',
  listTools: 'list_tools',
  readServer: 'read_server',
  saveServer: 'save_server',
  readPolicy: 'read_policy',
  validatePolicy: 'validate_policy',
  explainPolicy: 'explain_policy',
  savePolicy: 'save_policy',
  getSettings: 'get_settings',
  setSettings: 'set_settings',
  getPaused: 'get_paused',
  setPaused: 'set_paused',
  getAutostart: 'get_autostart',
  setAutostart: 'set_autostart',
  listChangedTools: 'list_changed_tools',
  acceptTool: 'accept_tool',
  generatePolicy: 'generate_policy',
  listClients: 'list_clients',
  previewClientInstall: 'preview_client_install',
  installClient: 'install_client',
  previewClientUninstall: 'preview_client_uninstall',
  uninstallClient: 'uninstall_client',
  gettingStarted: 'getting_started',
  tryHeldCall: 'try_held_call',
} as const;

/** An IPC error as the Rust side sends it (`{ code, message }`), or anything else it threw. */
export class BackendError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'BackendError';
  }

  static from(raw: unknown): BackendError {
    if (raw instanceof BackendError) return raw;
    if (typeof raw === 'object' && raw !== null && 'message' in raw) {
      const r = raw as { code?: unknown; message: unknown };
      return new BackendError(typeof r.code === 'string' ? r.code : 'error', String(r.message));
    }
    return new BackendError('error', typeof raw === 'string' ? raw : String(raw));
  }
}

/** A short text for a failed call, for the UI. */
export function errorText(e: unknown): string {
  return BackendError.from(e).message;
}

async function call<T>(command: string, args?: Record<string, unknown>): Promise<T> {
  try {
    return await invoke<T>(command, args);
  } catch (e) {
    throw BackendError.from(e);
  }
}

/**
 * The desktop app's backend. Argument keys are sent exactly as the commands name them
 * (snake_case, e.g. `bucket_ms`): the Rust commands take `#[tauri::command(rename_all = "snake_case")]`.
 */
export class TauriBackend implements Backend {
  listApprovals() {
    return call<PendingApproval[]>(COMMANDS.listApprovals);
  }
  decideApproval(id: string, choice: ApprovalChoice) {
    return call<DecisionAnswer>(COMMANDS.decideApproval, { id, choice });
  }
  undoPolicyWrite(writeId: string) {
    return call<PolicyWrite>(COMMANDS.undoPolicyWrite, { write_id: writeId });
  }
  listGrants() {
    return call<StandingGrant[]>(COMMANDS.listGrants);
  }
  revokeGrant(id: string) {
    return call<void>(COMMANDS.revokeGrant, { id });
  }
  extendApproval(id: string, bySecs: number) {
    return call<ExtendResult>(COMMANDS.extendApproval, { id, by_secs: bySecs });
  }
  dryRunApproval(id: string, choice: ApprovalChoice) {
    return call<DryRunResult>(COMMANDS.dryRunApproval, { id, choice });
  }
  queryAudit(filter: AuditFilter, limit: number) {
    return call<AuditRow[]>(COMMANDS.queryAudit, { filter, limit });
  }
  suggestExportPath(format: ExportFormat) {
    return call<string>(COMMANDS.suggestExportPath, { format });
  }
  saveAuditExport(filter: AuditFilter, format: ExportFormat, path: string, replace: boolean) {
    return call<SavedExport>(COMMANDS.saveAuditExport, { filter, format, path, replace });
  }
  auditHistogram(filter: AuditFilter, bucketMs: number) {
    return call<HistogramBucket[]>(COMMANDS.auditHistogram, { filter, bucket_ms: bucketMs });
  }
  listServers() {
    return call<ServerStatus[]>(COMMANDS.listServers);
  }
  restartServer(server: string) {
    return call<void>(COMMANDS.restartServer, { server });
  }
  listTools(server: string) {
    return call<ServerTool[]>(COMMANDS.listTools, { server });
  }
  readServer(server: string) {
    return call<ServerEntry | null>(COMMANDS.readServer, { server });
  }
  saveServer(name: string, entry: ServerEntry) {
    return call<EntryProblem[]>(COMMANDS.saveServer, { name, entry });
  }
  readPolicy(server: string) {
    return call<PolicyFile>(COMMANDS.readPolicy, { server });
  }
  validatePolicy(server: string, text: string) {
    return call<ValidationResult>(COMMANDS.validatePolicy, { server, text });
  }
  explainPolicy(server: string, text: string, tools: string[]) {
    return call<PolicyExplanation>(COMMANDS.explainPolicy, { server, text, tools });
  }
  savePolicy(server: string, text: string) {
    return call<ValidationResult>(COMMANDS.savePolicy, { server, text });
  }
  getSettings() {
    return call<Settings>(COMMANDS.getSettings);
  }
  setSettings(settings: Settings) {
    return call<void>(COMMANDS.setSettings, { settings });
  }
  getPaused() {
    return call<boolean>(COMMANDS.getPaused);
  }
  setPaused(paused: boolean) {
    return call<void>(COMMANDS.setPaused, { paused });
  }
  getAutostart() {
    return call<boolean>(COMMANDS.getAutostart);
  }
  setAutostart(enabled: boolean) {
    return call<void>(COMMANDS.setAutostart, { enabled });
  }
  listChangedTools() {
    return call<ChangedTool[]>(COMMANDS.listChangedTools);
  }
  acceptTool(server: string, tool: string, digest: string) {
    return call<void>(COMMANDS.acceptTool, { server, tool, digest });
  }
  generatePolicy(server: string) {
    return call<StarterPolicyText>(COMMANDS.generatePolicy, { server });
  }
  listClients() {
    return call<ClientState[]>(COMMANDS.listClients);
  }
  previewClientInstall(client: string) {
    return call<InstallPreview>(COMMANDS.previewClientInstall, { client });
  }
  installClient(client: string, preview: string) {
    return call<InstallPreview>(COMMANDS.installClient, { client, preview });
  }
  previewClientUninstall(client: string) {
    return call<UninstallReport>(COMMANDS.previewClientUninstall, { client });
  }
  uninstallClient(client: string) {
    return call<UninstallReport>(COMMANDS.uninstallClient, { client });
  }
  gettingStarted() {
    return call<GettingStarted>(COMMANDS.gettingStarted);
  }
  tryHeldCall() {
    return call<string>(COMMANDS.tryHeldCall);
  }
  async on<E extends EventName>(event: E, handler: (payload: EventMap[E]) => void): Promise<Unlisten> {
    return listen<EventMap[E]>(event, (e) => handler(e.payload));
  }
}

let instance: Backend | null = null;

/** The backend of the desktop app (Tauri IPC). */
export function getBackend(): Backend {
  instance ??= new TauriBackend();
  return instance;
}
