// IPC shapes shared with the Rust side (Tauri commands and events).
//
// Hand-written mirror for now: this one file is meant to be replaced by types generated from the
// Rust structs (tauri-specta or ts-rs with a drift check). Keep every IPC type here and nothing else.

export type Risk = 'read' | 'write' | 'execute' | 'delete' | 'unknown';

export interface ClientInfo {
  name: string | null;
  version: string | null;
}

/** A call held for a person's decision. */
export interface PendingApproval {
  id: string;
  server: string;
  tool: string;
  title: string | null;
  description: string | null;
  annotations: Record<string, unknown> | null;
  risk: Risk;
  arguments: unknown;
  session: string;
  client: ClientInfo;
  rule: string;
  requested_at: string;
  requested_at_ms: number;
  expires_at: string;
  expires_at_ms: number;
  request_id: string;
}

export type ApproveScope = 'once' | 'session' | 'always';

export type ApprovalChoice =
  | { approve: ApproveScope }
  | { deny: { reason: string | null; always: boolean } };

export const DECISIONS = [
  'allowed',
  'denied',
  'hidden',
  'rate_limited',
  'approved',
  'rejected',
  'timed_out',
  'cancelled',
  'failed',
] as const;
export type Decision = (typeof DECISIONS)[number];

export type DecidedBy = 'policy' | 'user' | 'timeout' | 'client' | 'gateway';
export type Outcome = 'ok' | 'tool_error' | 'failure' | 'cancelled';

/** One row of the audit log. */
export interface AuditRow {
  id: number;
  time_ms: number;
  session: string;
  client_name: string | null;
  client_version: string | null;
  server: string;
  tool: string;
  arguments: unknown;
  arguments_digest: string;
  decision: Decision;
  decided_by: DecidedBy;
  rule: string | null;
  reason: string | null;
  wait_ms: number | null;
  outcome: Outcome | null;
  upstream_ms: number | null;
}

/** Audit query. Every field narrows; `before` is the keyset cursor (time_ms, id) of the last row seen. */
export interface AuditFilter {
  server?: string;
  tool?: string;
  decision?: Decision;
  since_ms?: number;
  until_ms?: number;
  text?: string;
  before?: [number, number];
}

export type ExportFormat = 'csv' | 'jsonl';

export interface HistogramBucket {
  start_ms: number;
  counts: Partial<Record<Decision, number>>;
}

export type Transport = 'stdio' | 'http' | 'sse';

export interface ServerStatus {
  name: string;
  transport: Transport;
  state: 'running' | 'stopped' | 'error';
  tool_count: number | null;
  stderr_tail: string[];
  policy: { state: 'ok' | 'missing' | 'invalid'; problems: string[] };
}

export interface ToolInfo {
  name: string;
  title: string | null;
  description: string | null;
  annotations: Record<string, unknown> | null;
  risk: Risk;
}

export interface PolicyFile {
  /** The file's text, or null when the server has no policy file yet. */
  text: string | null;
  path: string;
}

export interface PolicyProblem {
  /** JSON path such as `tools.vm_start.approval_timeout` ("" for the whole file). */
  path: string;
  message: string;
}

export interface ValidationResult {
  problems: PolicyProblem[];
}

export type Theme = 'system' | 'light' | 'dark';

export interface Settings {
  approval_timeout_secs: number;
  notifications: boolean;
  theme: Theme;
}

// Events (Tauri `listen` names are the type names).

export interface ApprovalRequested {
  approval: PendingApproval;
}

export interface ApprovalResolved {
  id: string;
  decision: string;
  decided_by: string;
  scope: ApproveScope | null;
}

export interface AuditAppended {
  id: number;
  server: string;
  tool: string;
  decision: Decision;
}

export interface PolicyReloaded {
  server: string;
}

export interface PolicyRejected {
  server: string;
  problems: string[];
}

export interface EventMap {
  ApprovalRequested: ApprovalRequested;
  ApprovalResolved: ApprovalResolved;
  AuditAppended: AuditAppended;
  PolicyReloaded: PolicyReloaded;
  PolicyRejected: PolicyRejected;
}

export type EventName = keyof EventMap;
