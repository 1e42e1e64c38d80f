// IPC shapes shared with the Rust side (Tauri commands and events).
//
// Every type that crosses the IPC is generated from the Rust types into `ipc.ts` (ts-rs; a Rust
// test fails when that file is stale). This module re-exports them under the names the UI uses
// and adds only what TypeScript alone can say: the decision list as a value, and the event map.

import type { Decision, GatewayEvent, Scope, ServerStatus, Settings, ShowApproval } from './ipc';

export type {
  AnswerFinding,
  AnswerRecord,
  ApprovalChoice,
  Asks,
  AuditFilter,
  AuditRow,
  ChangedTool,
  ClientInfo,
  ClientState,
  DiffEntry,
  DryRunResult,
  DiffKind,
  DecidedAction,
  DecidedBy,
  Decider,
  DecisionAnswer,
  Decision,
  EntryProblem,
  ExportFormat,
  ExtendResult,
  GatewayEvent,
  GettingStarted,
  GrantArg,
  HistogramBucket,
  InstallPreview,
  IpcError,
  LiveSession,
  Method,
  Outcome,
  PendingApproval,
  PinChange,
  PolicyExplanation,
  PolicyFile,
  PolicyHealth,
  PolicyProblem,
  PolicyWrite,
  StandingGrant,
  Risk,
  RiskBasis,
  SavedExport,
  ServerEntry,
  ServerReport,
  ServerStatus,
  Settings,
  ShowApproval,
  StarterPolicyText,
  StarterTool,
  Theme,
  ToolClass,
  ToolDecision,
  ServerTool,
  UninstallReport,
  ValidationResult,
} from './ipc';

export type ApproveScope = Scope;
export type Transport = ServerStatus['transport'];

/** Every decision, in the audit crate's order (the compiler checks it lists each one). */
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
] as const satisfies readonly Decision[];
type Unlisted = Exclude<Decision, (typeof DECISIONS)[number]>;
const everyDecisionListed: [Unlisted] extends [never] ? true : Unlisted = true;
void everyDecisionListed;

/** A gateway event's payload, as the app forwards it: the event without its `type` tag. */
type Payload<K extends GatewayEvent['type']> = Omit<Extract<GatewayEvent, { type: K }>, 'type'>;

export type AuditHealth = Payload<'AuditHealth'>;
export type ApprovalRequested = Payload<'ApprovalRequested'>;
export type ApprovalResolved = Payload<'ApprovalResolved'>;
export type ApprovalExtended = Payload<'ApprovalExtended'>;
export type AuditAppended = Payload<'AuditAppended'>;
export type PolicyReloaded = Payload<'PolicyReloaded'>;
export type PolicyRejected = Payload<'PolicyRejected'>;
export type PauseChanged = Payload<'PauseChanged'>;

/** Tauri `listen` names: the gateway's event types, and the app's own `ShowApproval` and `SettingsChanged`. */
export type EventMap = { [K in GatewayEvent['type']]: Payload<K> } & { ShowApproval: ShowApproval; SettingsChanged: Settings };

export type EventName = keyof EventMap;
