// Generated from the Rust types by src-tauri/src/bindings.rs (ts-rs). Do not edit:
// PORTCULLIS_BLESS=1 cargo test -p portcullis-desktop --lib bindings

/**
 * What a tool does, recorded with each call. Does not affect decisions.
 */
export type ToolClass = "read" | "write" | "execute" | "delete" | "unknown";

/**
 * How far an approval reaches.
 */
export type Scope = "once" | "session" | "always";

/**
 * How much harm a call to the tool could do, recorded with each call. Does not affect decisions.
 */
export type Risk = "low" | "medium" | "high" | "critical";

/**
 * Where a held call's risk level comes from.
 */
export type RiskBasis = "policy" | "never_listed" | "definition_changed" | "guessed";

export type ClientInfo = { name: string | null, version: string | null, };

/**
 * What a held request asks, in plain words.
 */
export type Asks = { 
/**
 * One line: "cursor wants to call write_file on filesystem", "everything asks you to open
 * …". Every untrusted piece is neutralized for a terminal.
 */
text: string, 
/**
 * For a URL the person is asked to open: its host as a browser would visit it (neutralized),
 * which `text` starts with. `None` for every other request, and for a URL without a host.
 */
host: string | null, };

/**
 * What a person is shown for a held call (and what `approvals list --json` prints).
 */
export type PendingApproval = { id: string, server: string, 
/**
 * What is asked: a `tools/call`, a resource read, a prompt fetch, or one of the server's own
 * requests (sampling, elicitation, roots). A peer that predates it sent only tool calls.
 */
method: Method, 
/**
 * The tool; for the other methods the resource URI, the prompt name, or the server
 * request's kind (`sampling`, `elicitation`, `roots`).
 */
tool: string, 
/**
 * What is asked, in plain words, the same in the app, the notification and the CLI
 * ([`crate::held_calls::asks`]). Empty from a peer that predates it.
 */
asks: Asks, title: string | null, description: string | null, annotations: Record<string, unknown> | null, 
/**
 * The tool's class (read, write, execute, delete, unknown): the policy entry's `class`
 * when it sets one, else guessed from the name, description and annotations.
 */
risk: ToolClass, 
/**
 * How much harm the call could do: the entry's `risk` when the policy sets one, else the
 * class's level; at least `high` for a tool never listed or changed since pinned.
 */
risk_level: Risk, 
/**
 * Why `risk_level` is what it is.
 */
risk_basis: RiskBasis, 
/**
 * The policy's own reason for asking (the deciding rule's or entry's `reason`), if any.
 */
reason: string | null, 
/**
 * Which part of the policy asked, in plain words: "the policy entry for write_file in
 * fs.json", "argument rule 1 of the policy entry for write_file in fs.json: arguments.path
 * path_under \"/etc\"", "the default of fs.json (no entry names write_file)", "no policy
 * file …", "the tool's definition changed since it was pinned". `rule` keeps the stable name.
 */
asked_by: string, 
/**
 * The tool's `inputSchema` as the server listed it (the prompt checks edits against it);
 * `None` when the server never listed the tool.
 */
input_schema: Record<string, unknown> | null, 
/**
 * In full: redaction applies to the audit log, not to the person deciding.
 */
arguments: unknown, 
/**
 * `arguments` as JSON text. The desktop prompt renders from this, with a parse that keeps
 * integers as their digits: JavaScript's own parse rounds those beyond 2^53, and the person
 * would approve `12345678901234567000` while `12345678901234567890` is forwarded.
 */
arguments_json: string, session: string, client: ClientInfo, 
/**
 * What held the call; its text is the audit's `rule` (`tools.write_file`, `pin:changed`).
 */
rule: string, requested_at: string, requested_at_ms: number, expires_at: string, expires_at_ms: number, 
/**
 * The JSON-RPC id of the held request, as JSON text.
 */
request_id: string, 
/**
 * Set when the call is held because the server changed the tool since it was pinned
 * (rule `pin:changed`): what changed, old and new definitions.
 */
pin_change: PinChange | null, 
/**
 * Held before by a keeper that stopped, and asked again of this one (`held_calls/remote.rs`):
 * the person already saw its prompt, so none is raised again; it waits in the lists.
 */
asked_before: boolean, 
/**
 * Set when what is held is the call's answer, not the call (rule `results:hold`): what came
 * back, as the audit keeps it, with the findings that hold it marked. The call itself was
 * already decided and ran; the person passes this answer to the agent or refuses it, once.
 */
answer?: AnswerRecord, };

/**
 * One client session on one server, as its gate announced it.
 */
export type LiveSession = { session: string, server: string, 
/**
 * What the client said it is at `initialize` (nothing for a 2026 stateless session).
 */
client: ClientInfo, 
/**
 * `connect` (a data plane of its own) or `http` (the keeper's HTTP entry).
 */
via: string, 
/**
 * The process that runs its gate.
 */
pid: number, since_ms: number, };

/**
 * What a grant answers.
 */
export type Effect = "allow" | "deny";

/**
 * A grant as it is listed (control API, CLI, app).
 */
export type StandingGrant = { id: string, server: string, tool: string, effect: Effect, reason: string | null, 
/**
 * `None`: every session.
 */
session: string | null, 
/**
 * `"exact"`, `"when"` or `"any"`.
 */
which: "exact" | "when" | "any", when: Record<string, unknown> | null, digest: string | null, 
/**
 * `None`: until the gateway restarts (or the session ends).
 */
expires_at_ms: number | null, created_at_ms: number, };

/**
 * A pinned tool the server now describes differently.
 */
export type PinChange = { 
/**
 * Top-level fields that differ: `description`, `inputSchema`, `annotations`, `title`.
 */
fields: Array<string>, old_digest: string, new_digest: string, 
/**
 * The pinned definition.
 */
old: unknown, 
/**
 * The definition the server presents now.
 */
new: unknown, diff: Array<DiffEntry>, pinned_at: string, seen_at: string, };

/**
 * One difference: `path` is dotted (`inputSchema.properties.cmd`), with `["..."]` for keys that
 * are not plain words.
 */
export type DiffEntry = { path: string, change: DiffKind, old: unknown, new: unknown, };

export type DiffKind = "added" | "removed" | "changed";

export type GatewayEvent = { "type": "ApprovalRequested", approval: PendingApproval, } | { "type": "ApprovalExtended", approval: PendingApproval, } | { "type": "ApprovalResolved", id: string, decision: Decision, decided_by: DecidedBy, scope: Scope | null, } | { "type": "PolicyReloaded", server: string, } | { "type": "PolicyRejected", server: string, problems: Array<string>, } | { "type": "PauseChanged", paused: boolean, } | { "type": "AuditAppended", id: number, server: string, tool: string, decision: Decision, 
/**
 * Which kind of request the row records (the viewer's kind filter).
 */
method: Method, } | { "type": "AuditHealth", ok: boolean, condition: FaultKind | null, error: string | null, };

/**
 * One server's health as people see it.
 */
export type ServerReport = { name: string, transport: 'stdio' | 'http' | 'sse', 
/**
 * `running`, `stopped` (not connected yet) or `error`.
 */
state: 'running' | 'stopped' | 'error', tool_count: number | null, 
/**
 * The server's last stderr lines, then what went wrong (`[portcullis] ...`), if anything.
 */
stderr_tail: Array<string>, };

/**
 * What happened to a `tools/call` (the `decision` column; DESIGN §5).
 */
export type Decision = "allowed" | "denied" | "hidden" | "rate_limited" | "approved" | "rejected" | "timed_out" | "cancelled" | "failed";

/**
 * Who made the decision (the `decided_by` column).
 */
export type DecidedBy = "policy" | "user" | "timeout" | "client" | "gateway";

/**
 * Which kind of request was decided (the `method` column): the JSON-RPC method, a client's
 * request or the server's own. Rows written before the column existed read `tools/call`.
 */
export type Method = "tools/call" | "resources/read" | "resources/subscribe" | "prompts/get" | "sampling/createMessage" | "elicitation/create" | "roots/list";

/**
 * How a forwarded call ended upstream (the `outcome` column, filled by `complete`).
 */
export type Outcome = "ok" | "tool_error" | "failure" | "cancelled";

/**
 * What kind of trouble the database is in, for a short human description and for callers that
 * want to tell the cases apart without reading message text.
 * Serialized as [`FaultKind::as_str`] (the `condition` of the gateway's `AuditHealth` event).
 */
export type FaultKind = "locked" | "full" | "read_only" | "error";

/**
 * One row of the `decisions` table as read back. Field names are the column names, so the serde
 * form is the `audit --format jsonl` contract (DESIGN §7).
 */
export type AuditRow = { id: number, time_ms: number, session: string, client_name: string | null, client_version: string | null, server: string, tool: string, 
/**
 * The redacted arguments as stored.
 */
arguments: unknown, arguments_digest: string, decision: Decision, decided_by: DecidedBy, rule: string | null, reason: string | null, wait_ms: number | null, 
/**
 * `None` until the forwarded call returns (and always `None` for calls that were not forwarded).
 */
outcome: Outcome | null, upstream_ms: number | null, request_id: string | null, 
/**
 * Redacted; set only for a call approved with edited arguments (`arguments` is what ran).
 */
original_arguments?: unknown, 
/**
 * The kind of request (`tools/call` for every row written before the column existed). After
 * the older columns, so the CSV's earlier columns keep their places.
 */
method: Method, 
/**
 * What came back, redacted and cut short; `None` for a request whose answer was not
 * recorded (not forwarded, no answer yet, written before answers were kept).
 */
answer?: string, 
/**
 * What the gate found in the answer and what it did; `None` as for `answer`.
 */
findings?: Array<AnswerFinding>, 
/**
 * The answer's size in bytes as the server sent it.
 */
answer_bytes?: number, };

/**
 * What the gate kept of one answer. Everything in it is already redacted: the gate builds it
 * from the inspected answer, and nothing of an answer is written before that.
 */
export type AnswerRecord = { 
/**
 * The size of the answer as the server sent it, in bytes.
 */
bytes: number, 
/**
 * The first texts of the answer, secrets replaced by `[redacted]`, hidden characters and
 * escapes written out (`\u{200B}`), cut at the configured size.
 */
excerpt: string, 
/**
 * Each finding, in the order of the answer.
 */
findings: Array<AnswerFinding>, };

/**
 * One thing found in an answer, and what was done with it.
 */
export type AnswerFinding = { 
/**
 * `invisible`, `escape`, `secret` or `instruction`.
 */
kind: string, 
/**
 * `strip`, `redact`, `flag` or `hold` (what the policy said), or, for a held answer, what
 * the person chose: `passed` or `refused`.
 */
action: string, location: FindingLocation, 
/**
 * The rule that fired: "tag characters", "bidi override", "AWS access key", …
 */
what: string, 
/**
 * The text around it, neutralized and redacted.
 */
excerpt: string, 
/**
 * Where it sits in [`AnswerRecord::excerpt`] (byte offset and length), when it is within it.
 */
mark?: [number, number], };

/**
 * Where in the answer: the JSON pointer of the text (`/content/0/text`), and the byte range in
 * that text as the server sent it (what a strip took out).
 */
export type FindingLocation = { path: string, offset: number, len: number, };

export type IpcError = { code: string, message: string, };

/**
 * `{approve: "once" | "session" | "always"}`, `{deny: {reason, always}}`,
 * `{edit: {arguments_json}}`, `{grant: {...}}` or `{rule: {allow, reason, when}}`.
 */
export type ApprovalChoice = { "approve": Scope } | { "deny": { reason: string | null, always: boolean, } } | { "edit": { arguments_json: string, } } | { "grant": GrantArg } | { "rule": RuleArg };

/**
 * A standing grant cut from the held call.
 */
export type GrantArg = { 
/**
 * Approve (`true`) or deny the calls it covers.
 */
allow: boolean, 
/**
 * Told to the agent when the grant denies.
 */
reason: string | null, 
/**
 * Every agent session, not only the held call's.
 */
every_session: boolean, 
/**
 * How long; `null`: until the gateway restarts (a session's grant ends with the session).
 */
duration_secs: number | null, 
/**
 * Only calls whose arguments satisfy this policy `when` object.
 */
when: Record<string, unknown> | null, 
/**
 * Only this exact call (same arguments).
 */
exact: boolean, };

/**
 * An argument rule cut from the held call, for every session, written into the policy file.
 */
export type RuleArg = { 
/**
 * Allow (`true`) or deny the calls it covers.
 */
allow: boolean, 
/**
 * Told to the agent when the rule denies.
 */
reason: string | null, 
/**
 * The policy `when` object the rule decides.
 */
when: Record<string, unknown>, };

/**
 * What a decision did besides deciding the call: the other held calls it settled, the grant it
 * made, and the policy write an "always" made (offer its undo while `undo_until_ms` lasts).
 */
export type DecisionAnswer = { also_settled: Array<string>, grant: string | null, policy_write: PolicyWrite | null, };

/**
 * A policy write a decision made, as the decision's answer names it (control API, app, CLI).
 */
export type PolicyWrite = { 
/**
 * Pass to `POST /control/policy/undo` (or `undo_policy_write`, `approvals undo`).
 */
write_id: string, server: string, 
/**
 * The policy file written.
 */
path: string, 
/**
 * The `tools` key written (the tool's exact name, escaped where it looks like a pattern).
 */
key: string, 
/**
 * The entry as written: `"key": { … }`, what a person reads in the undo offer.
 */
rule_text: string, 
/**
 * Until when (ms since the epoch) it can be undone.
 */
undo_until_ms: number, };

/**
 * A held call's new deadline.
 */
export type ExtendResult = { approval: PendingApproval, 
/**
 * The gateway's `approval.max_hold_secs` cut the extension short: no more time can be had.
 */
clamped: boolean, };

/**
 * What a choice would write and how many earlier audited calls it would have matched.
 */
export type DryRunResult = { 
/**
 * `approve` or `deny`.
 */
decision: string, 
/**
 * `grant` (in memory), `policy` (a rule in the server's policy file), `pin` or `nothing`.
 */
writes: string, grant: Record<string, unknown> | null, 
/**
 * The `tools` key and entry to be written, when `writes` is `policy`.
 */
rule: Record<string, unknown> | null, matched: number, compared: number, limit: number, 
/**
 * Compared rows whose value the rule reads was redacted in the audit.
 */
redacted: number, };

/**
 * The UI's `AuditFilter`; `before` is the keyset cursor `[time_ms, id]`.
 */
export type AuditFilter = { 
/**
 * Which kind of request (`tools/call`, `resources/read`, …); every kind when absent.
 */
method?: Method, server?: string, tool?: string, decision?: Decision, since_ms?: number, until_ms?: number, text?: string, 
/**
 * Only requests whose answer had findings; every request when absent or false.
 */
with_findings?: boolean, before?: [number, number], };

export type ExportFormat = "csv" | "jsonl";

/**
 * What a save wrote, for the confirmation the person reads.
 */
export type SavedExport = { path: string, rows: number, bytes: number, };

export type HistogramBucket = { start_ms: number, counts: { [key in Decision]?: number }, };

/**
 * A server's health (the gateway's report) and its policy's.
 */
export type ServerStatus = { policy: PolicyHealth, 
/**
 * The clients connected to it now, oldest first: through `portcullis connect` (each a
 * process of its own, announced over its keeper link) or this app's HTTP entry.
 */
sessions: Array<LiveSession>, name: string, transport: 'stdio' | 'http' | 'sse', 
/**
 * `running`, `stopped` (not connected yet) or `error`.
 */
state: 'running' | 'stopped' | 'error', tool_count: number | null, 
/**
 * The server's last stderr lines, then what went wrong (`[portcullis] ...`), if anything.
 */
stderr_tail: Array<string>, };

export type PolicyHealth = { 
/**
 * `ok`, `missing` (every call asks a person) or `invalid`.
 */
state: 'ok' | 'missing' | 'invalid', problems: Array<string>, };

/**
 * What the form edits. Fields of the entry it does not show (`cwd`, a `type` of `sse`, keys
 * other tools added) are kept when the transport stays the same.
 */
export type ServerEntry = { "transport": "stdio", command: string, args: Array<string>, env: { [key in string]: string }, } | { "transport": "http", url: string, headers: { [key in string]: string }, };

/**
 * Why an entry was not saved, for the form: the field (`name`, `command`, `url`, or a JSON path
 * into the file) and what is wrong.
 */
export type EntryProblem = { field: string, message: string, };

/**
 * One tool as its server lists it, with the class Portcullis guesses: a row of the Policies view.
 */
export type ServerTool = { name: string, title: string | null, description: string | null, annotations: Record<string, unknown> | null, 
/**
 * The tool's `inputSchema` as listed (the policy editor offers its properties as the
 * arguments a rule's condition can read).
 */
input_schema: Record<string, unknown> | null, risk: ToolClass, };

export type PolicyFile = { 
/**
 * `None`: the server has no policy file (every call asks a person).
 */
text: string | null, path: string, };

export type PolicyProblem = { 
/**
 * JSON path in the gateway's syntax (`$`, `$.tools["vm_start"].action`).
 */
path: string, message: string, };

export type ValidationResult = { problems: Array<PolicyProblem>, };

/**
 * Which part of the policy decides a tool.
 */
export type Decider = { "kind": "entry", key: string, } | { "kind": "glob", key: string, } | { "kind": "default" } | { "kind": "hide", pattern: string, };

/**
 * The action a tool gets from its deciding part, for a call without arguments.
 */
export type DecidedAction = "allow" | "deny" | "require_approval" | "hide";

/**
 * How the policy decides one tool.
 */
export type ToolDecision = { tool: string, decider: Decider, 
/**
 * The deciding entry's own action (its argument rules are not tried: the editor shows the
 * tool's state, not one call's), the default's, or `hide`.
 */
action: DecidedAction, 
/**
 * The decision's stable rule name for a call without arguments (`tools.<key>`, …).
 */
rule: string, 
/**
 * `portcullis policy explain`'s lines for a call without arguments.
 */
lines: Array<string>, };

/**
 * The answer of `explain_policy`: the text's problems, or how it decides each tool asked about.
 */
export type PolicyExplanation = { 
/**
 * Non-empty: the text is not a valid policy and `tools` is empty.
 */
problems: Array<PolicyProblem>, tools: Array<ToolDecision>, };

/**
 * A pinned tool the server now describes differently.
 */
export type ChangedTool = { server: string, tool: string, 
/**
 * The pinned digest (the definition calls were allowed under).
 */
digest: string, pinned_at: string, change: PinChange, };

/**
 * One tool as the starter policy classified it.
 */
export type StarterTool = { name: string, 
/**
 * `read`, `write`, `execute`, `delete` or `unknown`.
 */
class: string, 
/**
 * `low`, `medium`, `high` or `critical`.
 */
risk: string, 
/**
 * What the policy does with it: `allow`, `allow, 10/60s`, `require_approval`.
 */
rule: string, };

/**
 * A generated policy, not yet written.
 */
export type StarterPolicyText = { text: string, tools: Array<StarterTool>, 
/**
 * Tools left out (no name, listed twice), with why.
 */
skipped: Array<string>, };

/**
 * One MCP client and the state of its config file.
 */
export type ClientState = { 
/**
 * `claude-desktop`, `cursor`, `claude-code` or `vscode`.
 */
id: string, name: string, config_path: string, 
/**
 * Server entries in its file; `None`: no config file.
 */
servers: number | null, 
/**
 * Entries that already launch `portcullis connect`.
 */
routed: number, 
/**
 * Why the file cannot be read, if it cannot.
 */
problem: string | null, 
/**
 * Routed by an install that can be undone.
 */
installed: boolean, };

/**
 * A routed server's policy file, as install leaves it.
 */
export type InstallPolicy = { server: string, path: string, 
/**
 * The file exists: install keeps it as it is.
 */
exists: boolean, 
/**
 * The starter policy install writes there; `None` when it writes none.
 */
starter: StarterPolicyText | null, 
/**
 * Why it writes none: the file exists (kept as it is), or the server could not be listed
 * (then every call to it asks until it has a policy).
 */
not_written: string | null, };

/**
 * What install would change, as shown before it is applied.
 */
export type InstallPreview = { 
/**
 * Diff-like text (env and header values hidden); `install_client` takes it back.
 */
preview: string, 
/**
 * Entries that would launch `portcullis connect`.
 */
routed: Array<string>, 
/**
 * Servers added to `portcullis.json`.
 */
imports: Array<string>, 
/**
 * Entries left alone: `[entry, why]`.
 */
skipped: Array<[string, string]>, 
/**
 * Each routed server's policy file, as install leaves it.
 */
policies: Array<InstallPolicy>, };

/**
 * What uninstall does (preview) or did.
 */
export type UninstallReport = { description: string, };

/**
 * One client, as the first screen and the tray say it.
 */
export type ClientSetup = { id: string, name: string, 
/**
 * E.g. "Claude Code: routed, 1 server, policy written", "Claude Desktop: not routed (2 servers)".
 */
line: string, 
/**
 * It has a config file (readable or not).
 */
found: boolean, 
/**
 * `portcullis.json` servers its routed entries reach.
 */
routed: Array<string>, 
/**
 * Routed servers with no policy file: every call to them asks.
 */
without_policy: Array<string>, 
/**
 * `clients install` has servers of it to route.
 */
can_route: boolean, };

/**
 * What the first screen shows.
 */
export type GettingStarted = { 
/**
 * Routes a client's servers through Portcullis: for `suggested_client` when there is one,
 * else with `CLIENT` as a placeholder.
 */
install_command: string, 
/**
 * The first client found with servers not routed yet; `None` when every client found is
 * routed, or none was found.
 */
suggested_client: string | null, 
/**
 * Every client Portcullis knows, found or not.
 */
clients: Array<ClientSetup>, 
/**
 * Where the policy files are.
 */
policies_dir: string, 
/**
 * What a client launches for one server (`SERVER` is a placeholder).
 */
connect_command: string, 
/**
 * The demo server to try a held call on, when the config has it.
 */
demo_server: string | null, };

export type Theme = "system" | "light" | "dark";

/**
 * The settings as the UI sees them (`get_settings` / `set_settings`).
 */
export type Settings = { approval_timeout_secs: number, notifications: boolean, theme: Theme, };

/**
 * The app's own event to the prompt (beside the gateway's): show this queued call.
 */
export type ShowApproval = { id: string, };
