//! The decision on one `tools/call`: policy → rate limit → approval → audit row, committed
//! before anything is forwarded or answered.

mod asked;
mod continuations;
pub mod door;
pub mod held_answer;
pub(crate) mod hold;
mod parts;
mod pin_check;
mod read;
mod typed;

#[cfg(test)]
mod audit_fault_tests;
#[cfg(test)]
mod forwarded_tests;
#[cfg(test)]
mod test_gate;

use std::sync::Arc;
use std::time::Instant;

use portcullis_audit::{DecidedBy, Decision, Method, NewDecision, Outcome};
use portcullis_policy::{Action, Evaluation, Places};
use portcullis_wire::{canonical, gate_result, Message, RequestId};
use serde_json::Value;
use tokio::sync::broadcast;

use crate::audit_log::AuditLog;
use crate::clock::now_ms;
use crate::events::GatewayEvent;
use crate::held_calls::pending::{HeldBy, PendingApproval};
use crate::pins::PinStore;
use crate::policy_store::{InForce, PolicyStore};
use crate::rate_limit::RateLimits;
use crate::tool_catalog::ToolCatalog;

use crate::held_calls::HeldCalls;
use continuations::{ContinuationKey, Continuations};
pub use held_answer::{treat_unasked, AnswerVerdict, HeldAnswer, Inspected};
pub use hold::{Hold, HoldEnd, ProgressSink};
// The read-once tests' counters (Unix only, as those tests are; `crates/keeper`).
#[cfg(feature = "test-support")]
#[cfg(unix)]
pub use read::counts as read_counts;
pub use read::Digester;

/// Who is calling: the agent session and what the client says it is.
#[derive(Debug, Clone, Default)]
pub struct Caller {
    /// The agent session rate limits and session grants are counted by (see docs/decisions.md, "Sessions").
    pub session: String,
    pub client_name: Option<String>,
    pub client_version: Option<String>,
}

impl Caller {
    /// What a policy may read of this caller's call with `arguments` to a server at `places`.
    pub fn facts<'a>(&'a self, arguments: &'a Value, places: &'a Places) -> portcullis_policy::CallFacts<'a> {
        portcullis_policy::CallFacts {
            arguments,
            client_name: self.client_name.as_deref(),
            client_version: self.client_version.as_deref(),
            places,
        }
    }
}

/// One call as the gate sees it: read once from the client's message ([`Call::read`]).
#[derive(Debug, Clone)]
pub struct Call {
    pub server: String,
    /// Which kind of request this is: a `tools/call`, or a request at another door
    /// (`gate/door.rs`) whose name rides in `tool`.
    pub method: Method,
    /// The tool's name; for the other methods the resource URI (in normal form), the prompt's
    /// name, or the server request's kind (`sampling`, `elicitation`, `roots`).
    pub tool: String,
    pub arguments: Value,
    /// The text `arguments` was read from, exactly as the client wrote it (a slice of the
    /// message, not a copy): the audit row stores it when nothing in it is redacted, and a held
    /// call shows it when a `Value` would round a number. `None` for arguments the gateway made
    /// (an edit) and for a call without arguments.
    pub arguments_text: Option<bytes::Bytes>,
    /// The arguments as the agent sent them, when a person approved the call with edits
    /// (`arguments` is then what runs); recorded beside them in the audit row.
    pub original_arguments: Option<Value>,
    pub request_id: RequestId,
    /// 2026-07-28 request: refusals carry `resultType`.
    pub modern: bool,
    /// MRTR: the opaque state a retry carries, as JSON text.
    pub request_state: Option<String>,
    /// The keyed digest of `arguments`, computed once when the call was read; `None` for a call
    /// made here. Read through [`Call::arguments_digest`], which knows when it no longer holds.
    digest: Option<String>,
}

impl Call {
    /// The arguments as a person reads them: the client's own text when a `Value` would round
    /// one of its numbers (the person must see the digits the server will get), else encoded.
    pub(crate) fn arguments_json(&self) -> String {
        match &self.arguments_text {
            Some(text) if has_float(&self.arguments) => String::from_utf8_lossy(text).into_owned(),
            _ => self.arguments.to_string(),
        }
    }

    fn continuation_key(&self, caller: &Caller, digester: &Digester) -> ContinuationKey {
        ContinuationKey {
            server: self.server.clone(),
            tool: self.tool.clone(),
            session: caller.session.clone(),
            digest: self.arguments_digest(digester).into_owned(),
        }
    }
}

pub enum Verdict {
    /// Forward the call; complete the audit row with [`Forwarded::finish`] when it returns.
    Forward(Forwarded),
    /// Answer the client with this result instead of forwarding.
    Refuse(Value),
    /// Wait for a person: [`Hold::wait`] ends in a forward or a refusal.
    Hold(Box<Hold>),
}

impl From<Result<Forwarded, Value>> for Verdict {
    fn from(settled: Result<Forwarded, Value>) -> Self {
        settled.map_or_else(Verdict::Refuse, Verdict::Forward)
    }
}

/// The token a forwarded `tools/call` carries until its answer: it completes the call's decision
/// row exactly once — [`Forwarded::finish`] with the upstream's outcome, or, when it is dropped
/// unanswered (the client hung up and its request's future was dropped, the task carrying it
/// ended), as `cancelled`.
pub struct Forwarded {
    audit: AuditLog,
    row_id: i64,
    started: Instant,
    /// Set for approved calls: an `input_required` answer lets the retry through (MRTR).
    continuation: Option<(Arc<Continuations>, ContinuationKey)>,
    /// `finish` recorded the outcome: nothing left for `Drop`.
    finished: bool,
    /// Who made a 2026-era tool call: its answer may carry MRTR `inputRequests`, which the gate
    /// decides for that caller (`session/input_requests.rs`). `None` in the legacy era.
    asker: Option<Box<Caller>>,
    /// What was forwarded: the form a refusal of its answer takes.
    method: Method,
    /// How its answer is inspected before the agent reads it; `None` for a request whose answer
    /// is no text for the model (a subscribe, a server's request).
    answer_check: Option<crate::answers::AnswerCheck>,
    /// What a person is shown should the answer hold; made only when the policy can hold it.
    answer_question: Option<Box<PendingApproval>>,
    /// What the audit keeps of an answer inspected ahead of [`Self::finish_answer`]
    /// ([`Self::inspect`]).
    inspected: Option<portcullis_audit::AnswerRecord>,
}

impl Forwarded {
    /// Records the upstream's answer on the decision row.
    pub fn finish(self, response: &Message) {
        self.conclude(response, None);
    }

    /// The outcome (and what came back, if kept) on the row, and an `input_required` answer's
    /// continuation granted: every answer ends here, inspected or not.
    fn conclude(mut self, response: &Message, answer: Option<portcullis_audit::AnswerRecord>) {
        self.finished = true;
        let outcome = outcome_of(response);
        match answer {
            Some(answer) => self
                .audit
                .complete_with_answer(self.row_id, outcome, elapsed_ms(self.started), answer),
            None => self.audit.complete(self.row_id, outcome, elapsed_ms(self.started)),
        }
        if let Some((continuations, key)) = self.continuation.take() {
            if let Some(state) = input_required_state(response) {
                continuations.grant(key, state);
            }
        }
    }

    /// Records the upstream's answer on the decision row, inspected ([`crate::answers`]): here,
    /// unless [`Self::inspect`] did it first (where a held answer is waited for). What the agent
    /// gets back is the answer as treated, and the audit keeps what came.
    pub fn finish_answer(mut self, response: Message) -> Message {
        let message = match self.inspect(response) {
            held_answer::Inspected::Ready(message) => message,
            // Only a caller that can wait asks a person (`session/reply.rs`); here it cannot.
            held_answer::Inspected::Held(held) => {
                let why = AnswerVerdict::Refused("it could not be asked about here".into());
                self.settle_held(held, &why)
            }
        };
        let answer = self.inspected.take();
        self.conclude(&message, answer);
        message
    }

    /// How the answer is inspected, until it is ([`Self::inspect`]).
    pub fn answer_check(&self) -> Option<crate::answers::AnswerCheck> {
        self.answer_check
    }

    /// The decision row this token completes.
    pub fn row_id(&self) -> i64 {
        self.row_id
    }

    /// Who made the call, when its answer may carry MRTR `inputRequests` to decide.
    pub fn asker(&self) -> Option<(&Caller, Method)> {
        Some((self.asker.as_deref()?, self.method))
    }

    /// The client went away before the answer: recorded as `cancelled`, as any drop of an
    /// unfinished token is; named where the gateway gives a call up on purpose.
    pub fn abandon(self) {
        drop(self);
    }
}

impl Drop for Forwarded {
    /// Safe in any context, async included: `complete` only queues the update for the audit
    /// writer (a push under a short lock, no I/O; at most it wakes an idle writer), and the writer's update touches
    /// a row only while its `outcome` is still NULL, so a real outcome is never overwritten.
    fn drop(&mut self) {
        if !self.finished {
            self.audit
                .complete(self.row_id, Outcome::Cancelled, elapsed_ms(self.started));
        }
    }
}

/// The decision point. Its parts are its own: the rest of the gateway asks it for what it does
/// (`gate/parts.rs`). What a person decides is not here: the gate asks ([`HeldCalls`]) and
/// waits; the keeper (`crates/keeper/src/choose.rs`) answers.
pub struct Gate {
    policies: Arc<PolicyStore>,
    rate_limits: RateLimits,
    audit: AuditLog,
    /// Where this gate asks about the calls it holds ([`crate::held_calls`]): the keeper's
    /// broker in-process, or the keeper over its link.
    held: Arc<dyn HeldCalls>,
    /// Retries of calls already approved (MRTR), which are not asked again.
    continuations: Arc<Continuations>,
    /// The rows this gate announced lately, so the keeper's audit follower does not announce
    /// them twice (`gateway/audit_follow.rs`).
    announced: std::sync::Mutex<std::collections::VecDeque<i64>>,
    catalog: ToolCatalog,
    /// Tool definitions as first seen; a changed tool's calls are held (see `gate/pin_check.rs`).
    pins: PinStore,
    events: broadcast::Sender<GatewayEvent>,
    /// The config's approval timeout, used when the policy sets none.
    approval_timeout_secs: u64,
    /// `approval.max_hold_secs`: no extension takes a hold past this, from when it was held.
    max_hold_secs: u64,
    /// Keyed digests of call arguments, for audit rows and continuation grants (`digest_key.rs`).
    digester: Digester,
    /// Where each server resolves paths ([`crate::places`]); unknown for a server not set.
    places: std::sync::RwLock<std::collections::HashMap<String, Arc<Places>>>,
    /// How much of each answer the audit keeps, in bytes.
    answer_excerpt_bytes: usize,
}

/// Where a gate asks about the calls a person must decide, and how long it holds them.
pub struct Holding {
    /// The keeper's broker in-process, or the keeper over its link ([`crate::held_calls`]).
    pub held: Arc<dyn HeldCalls>,
    /// The config's approval timeout, used when the policy sets none.
    pub approval_timeout_secs: u64,
    /// `approval.max_hold_secs`: no extension takes a hold past this, from when it was held.
    pub max_hold_secs: u64,
}

impl Gate {
    pub fn new(
        policies: Arc<PolicyStore>,
        audit: AuditLog,
        pins: PinStore,
        digester: canonical::ArgumentDigester,
        events: broadcast::Sender<GatewayEvent>,
        holding: Holding,
    ) -> Self {
        let Holding {
            held,
            approval_timeout_secs,
            max_hold_secs,
        } = holding;
        Self {
            policies,
            rate_limits: RateLimits::default(),
            audit,
            held,
            continuations: Arc::default(),
            announced: std::sync::Mutex::default(),
            catalog: ToolCatalog::default(),
            pins,
            events,
            approval_timeout_secs,
            max_hold_secs,
            digester: digester.into(),
            places: std::sync::RwLock::default(),
            answer_excerpt_bytes: crate::answers::EXCERPT_BYTES,
        }
    }

    /// How much of each answer the audit keeps (the config's `limits.answer_excerpt_bytes`).
    #[must_use]
    pub fn with_answer_excerpt(mut self, bytes: usize) -> Self {
        self.answer_excerpt_bytes = bytes;
        self
    }
}

/// How many of its own announced rows a gate remembers: more than the keeper's follower reads per
/// poll (`gateway/audit_follow.rs`).
const ANNOUNCED_KEPT: usize = 4096;

/// What the gate does with a call ([`Gate::step`]).
enum Step {
    /// Record the ruling, then forward the call or answer with the refusal.
    Settle(Ruling),
    /// A person decides (unless a grant, the pause or a retry of an approved call does).
    Ask {
        rule: HeldBy,
        timeout_secs: Option<u64>,
        /// Boxed: a changed tool is rare, and its definitions are large.
        change: Option<Box<crate::pins::PinChange>>,
    },
}

/// A decision before it is recorded.
struct Ruling {
    decision: Decision,
    decided_by: DecidedBy,
    rule: Option<String>,
    reason: Option<String>,
    /// What the agent reads when the call is not forwarded.
    message: Option<String>,
}

impl Gate {
    /// Decides `call`: the ruling first ([`Gate::step`], nothing recorded yet), then one of two
    /// ends — recorded and forwarded or refused ([`Gate::settle`]), or asked of a person
    /// ([`Gate::ask`]). The call's arguments and their digest, read once, ride in `call`.
    pub async fn decide(self: &Arc<Self>, call: Call, caller: &Caller) -> Verdict {
        match self.step(&call, caller) {
            Step::Settle(ruling) => self.settle(call, caller, ruling, None).await.into(),
            Step::Ask {
                rule,
                timeout_secs,
                change,
            } => self.ask(call, caller, rule, timeout_secs, change.map(|c| *c)).await,
        }
    }

    /// [`Gate::decide`], waiting out a hold: for a server's request, which nobody can withdraw
    /// but its deadline (the server waits for the answer anyway). `Ok`: forward it; `Err`: the
    /// refusal.
    pub async fn decide_to_the_end(self: &Arc<Self>, call: Call, caller: &Caller) -> Result<Forwarded, Value> {
        match self.decide(call, caller).await {
            Verdict::Forward(f) => Ok(f),
            Verdict::Refuse(refusal) => Err(refusal),
            Verdict::Hold(hold) => hold.wait(None, std::future::pending()).await.settled,
        }
    }

    /// What becomes of `call`, in the order of precedence: the policy in force (none, or broken:
    /// refused) → an argument of a type the tool does not take → a changed tool (`gate/pin_check.rs`)
    /// → `require_approval` → the policy's allow, deny or hide, with its rate limit.
    fn step(&self, call: &Call, caller: &Caller) -> Step {
        let policy = match self.policies.get(&call.server) {
            Some(InForce::Policy(policy)) => policy,
            Some(InForce::Broken(why)) => {
                let why = why.to_string();
                return Step::Settle(refused(Decision::Denied, DecidedBy::Gateway, None, why.clone(), why));
            }
            None => {
                let why = format!("server {:?} is not configured", call.server);
                return Step::Settle(refused(Decision::Denied, DecidedBy::Gateway, None, why.clone(), why));
            }
        };
        let places = self.places(&call.server);
        let eval = door::evaluate(&policy, call, caller, &places);
        // Types and pins are a tool's: the other doors have no schema or definition to check.
        if call.method == Method::ToolsCall {
            if let Some(ruling) = self.mistyped(&policy, call, &eval) {
                return Step::Settle(ruling);
            }
            if let Some(change) = self.pending_change(call, &eval) {
                return self.changed_step(call, caller, eval, change);
            }
        }
        if eval.action == Action::RequireApproval {
            return Step::Ask {
                timeout_secs: eval.approval_timeout_secs,
                rule: HeldBy::Policy(eval.rule),
                change: None,
            };
        }
        Step::Settle(self.rule(call, caller, &eval))
    }

    fn rule(&self, call: &Call, caller: &Caller, eval: &Evaluation) -> Ruling {
        let rule = eval.rule.to_string();
        match eval.action {
            Action::Hide => {
                let text = match call.method {
                    Method::ToolsCall => format!(
                        "tool {:?} is hidden by policy (rule {rule}) and cannot be called",
                        call.tool
                    ),
                    _ => format!("{} refused: it is hidden by policy (rule {rule})", door::subject(call)),
                };
                refused(
                    Decision::Hidden,
                    DecidedBy::Policy,
                    Some(rule.clone()),
                    "hidden by policy".into(),
                    text,
                )
            }
            Action::Deny => {
                let reason = eval.reason.clone().unwrap_or_else(|| "denied by policy".into());
                let text = format!("{} denied by policy rule {rule}: {reason}", door::subject(call));
                refused(Decision::Denied, DecidedBy::Policy, Some(rule), reason, text)
            }
            // RequireApproval never gets here: `decide` routes it to `require_approval`.
            Action::Allow | Action::RequireApproval => match (eval.rate_limit, eval.entry()) {
                (Some(limit), Some(entry)) => {
                    let quota = (door::door_of(call.method), entry);
                    match self.rate_limits.check(&call.server, quota, limit, &caller.session) {
                        Ok(()) => allowed(rule),
                        Err(wait) => {
                            let retry = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
                            let reason = format!(
                                "rate limit of {} calls per {} s reached for this session",
                                limit.max, limit.window_secs
                            );
                            let subject = door::subject(call);
                            let text = format!("{subject} refused: {reason} (rule {rule}); retry in {retry} s");
                            refused(Decision::RateLimited, DecidedBy::Policy, Some(rule), reason, text)
                        }
                    }
                }
                _ => allowed(rule),
            },
        }
    }

    /// Every call a person must decide comes here: a retry of a call already approved goes on;
    /// anything else is asked ([`crate::held_calls`]) and held, or decided at once.
    async fn ask(
        self: &Arc<Self>,
        call: Call,
        caller: &Caller,
        rule: HeldBy,
        timeout_secs: Option<u64>,
        change: Option<crate::pins::PinChange>,
    ) -> Verdict {
        let key = call.continuation_key(caller, &self.digester);
        if self.continuations.take(&key, call.request_state.as_deref()) {
            let ruling = Ruling {
                decision: Decision::Approved,
                decided_by: DecidedBy::User,
                rule: Some(rule.to_string()),
                reason: Some("retry of a call already approved".into()),
                message: None,
            };
            return self.settle(call, caller, ruling, None).await.into();
        }
        let timeout = crate::held_calls::timeout(timeout_secs, self.approval_timeout_secs);
        match Hold::ask(self.clone(), call, caller.clone(), rule, timeout, change).await {
            Ok(hold) => Verdict::Hold(Box::new(hold)),
            Err((call, ruling)) => self.settle(call, caller, ruling, None).await.into(),
        }
    }

    /// Records the ruling (committed), then: `Ok` forward, `Err(result)` answer with `result`.
    /// Takes the call: its arguments move into the audit row, not a copy of them.
    async fn settle(
        &self,
        call: Call,
        caller: &Caller,
        ruling: Ruling,
        wait_ms: Option<i64>,
    ) -> Result<Forwarded, Value> {
        let (server, tool, modern, method) = (call.server.clone(), call.tool.clone(), call.modern, call.method);
        let answer_check = ruling
            .message
            .is_none()
            .then(|| self.answer_check(method, &server, &tool))
            .flatten();
        // Made while the call is at hand, and only when the policy can hold what comes back.
        let answer_question = answer_check
            .filter(|check| check.results.may_hold())
            .map(|_| self.answer_question(&call, caller));
        let row = self.row(call, caller, &ruling, wait_ms);
        let continuation = (ruling.decision == Decision::Approved).then(|| ContinuationKey {
            server: server.clone(),
            tool: tool.clone(),
            session: caller.session.clone(),
            digest: row.arguments_digest.clone(),
        });
        // Server and tool are the request's span's (`Session::request`); so is the decision from here.
        tracing::Span::current().record("decision", tracing::field::display(ruling.decision));
        tracing::info!(rule = ?ruling.rule, "{method} decided");
        let recorded = if ruling.message.is_none() {
            self.audit.record_forward(row).await
        } else {
            self.audit.record(row).await
        };
        let row_id = match recorded {
            Ok(id) => id,
            Err(e) => {
                // The writer logs the fault once when it starts and once when it clears; a line
                // per refused call would bury them.
                tracing::debug!(error = %e, "audit write failed; refusing the call");
                return Err(gate_result::refusal(&crate::audit_log::refusal_text(&e), modern));
            }
        };
        self.note_announced(row_id);
        let _ = self.events.send(GatewayEvent::AuditAppended {
            id: row_id,
            server,
            tool,
            method,
            decision: ruling.decision,
        });
        match ruling.message {
            Some(text) => Err(gate_result::refusal(&text, modern)),
            None => {
                let continuation = continuation.map(|key| (self.continuations.clone(), key));
                Ok(Forwarded {
                    audit: self.audit.clone(),
                    row_id,
                    started: Instant::now(),
                    continuation,
                    finished: false,
                    asker: (modern && door::client_door_or_call(method)).then(|| Box::new(caller.clone())),
                    method,
                    answer_check,
                    answer_question,
                    inspected: None,
                })
            }
        }
    }

    /// How the answer to a forwarded request is inspected: for a tool call, a resource read and
    /// a prompt fetch, as the policy in force says (the defaults without one).
    fn answer_check(&self, method: Method, server: &str, name: &str) -> Option<crate::answers::AnswerCheck> {
        if !matches!(method, Method::ToolsCall | Method::ResourcesRead | Method::PromptsGet) {
            return None;
        }
        let results = match self.policies.get(server) {
            Some(InForce::Policy(policy)) => policy.results_for(door::door_of(method), name),
            _ => portcullis_policy::ResultActions::default(),
        };
        Some(crate::answers::AnswerCheck {
            results,
            excerpt_bytes: self.answer_excerpt_bytes,
        })
    }

    fn note_announced(&self, id: i64) {
        let mut announced = self.announced.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if announced.len() == ANNOUNCED_KEPT {
            announced.pop_front();
        }
        announced.push_back(id);
    }

    /// Records a held call whose gate went away without an answer (a data plane killed while the
    /// keeper held its call): `cancelled`, as the gate itself would have recorded it.
    pub async fn record_withdrawn(&self, p: PendingApproval, why: String) {
        if p.rule == HeldBy::Answer {
            // Its call was decided and recorded before it ran: the row is the data plane's.
            return;
        }
        let redact = match self.policies.get(&p.server) {
            Some(InForce::Policy(policy)) => policy.redact_keys().to_vec(),
            _ => Vec::new(),
        };
        let now = now_ms();
        let row = NewDecision {
            method: portcullis_audit::Method::ToolsCall,
            time_ms: now,
            session: p.session,
            client_name: p.client.name,
            client_version: p.client.version,
            arguments_digest: self.digester.digest(&p.arguments),
            request_id: Some(p.request_id),
            server: p.server,
            tool: p.tool,
            arguments: p.arguments,
            arguments_text: Some(bytes::Bytes::from(p.arguments_json)),
            decision: Decision::Cancelled,
            decided_by: DecidedBy::Client,
            rule: Some(p.rule.to_string()),
            reason: Some(why),
            wait_ms: Some(now.saturating_sub(p.requested_at_ms)),
            original_arguments: None,
            extra_redact_keys: redact,
        };
        if let Err(e) = self.audit.record(row).await {
            tracing::warn!(error = %e, "a withdrawn held call could not be recorded");
        }
    }

    fn row(&self, mut call: Call, caller: &Caller, ruling: &Ruling, wait_ms: Option<i64>) -> NewDecision {
        let redact = match self.policies.get(&call.server) {
            Some(InForce::Policy(p)) => p.redact_keys().to_vec(),
            _ => Vec::new(),
        };
        NewDecision {
            method: call.method,
            time_ms: now_ms(),
            session: caller.session.clone(),
            client_name: caller.client_name.clone(),
            client_version: caller.client_version.clone(),
            arguments_digest: call.take_digest(&self.digester),
            request_id: Some(call.request_id.as_json().to_owned()),
            server: call.server,
            tool: call.tool,
            arguments: call.arguments,
            arguments_text: call.arguments_text,
            decision: ruling.decision,
            decided_by: ruling.decided_by,
            rule: ruling.rule.clone(),
            reason: ruling.reason.clone(),
            wait_ms,
            original_arguments: call.original_arguments,
            extra_redact_keys: redact,
        }
    }
}

fn allowed(rule: String) -> Ruling {
    Ruling {
        decision: Decision::Allowed,
        decided_by: DecidedBy::Policy,
        rule: Some(rule),
        reason: None,
        message: None,
    }
}

fn refused(decision: Decision, decided_by: DecidedBy, rule: Option<String>, reason: String, message: String) -> Ruling {
    Ruling {
        decision,
        decided_by,
        rule,
        reason: Some(reason),
        message: Some(message),
    }
}

#[derive(serde::Deserialize)]
struct ResultHead {
    result: Option<ResultFlags>,
}

#[derive(serde::Deserialize)]
struct ResultFlags {
    #[serde(rename = "isError", default)]
    is_error: bool,
    #[serde(rename = "resultType", default)]
    result_type: Option<String>,
    #[serde(rename = "requestState", default)]
    request_state: Option<Box<serde_json::value::RawValue>>,
}

/// ok / tool error / failure, from the upstream's response.
/// The answer in place of one whose findings the policy holds for a person, which was not
/// passed to the agent: `why` says what happened (the person refused it, nobody decided, …).
fn withheld(treated: &crate::answers::Treated, method: Method, modern: bool, why: &str) -> Message {
    let kinds: Vec<&str> = treated
        .record
        .findings
        .iter()
        .filter(|f| matches!(f.action.as_str(), "hold" | "refused"))
        .map(|f| f.kind.as_str())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let text = format!(
        "[portcullis] the answer was withheld: it holds {} that the policy keeps for a person \
         (results: hold), and {why}",
        kinds.join(", ")
    );
    let id = treated.message.id().cloned().unwrap_or_else(|| RequestId::number(0));
    door::refusal_answer(method, &id, &gate_result::refusal(&text, modern))
}

fn outcome_of(response: &Message) -> Outcome {
    if matches!(response.kind(), portcullis_wire::Kind::Response { is_error: true, .. }) {
        return Outcome::Failure;
    }
    match serde_json::from_slice::<ResultHead>(response.bytes()) {
        Ok(ResultHead {
            result: Some(ResultFlags { is_error: true, .. }),
        }) => Outcome::ToolError,
        Ok(_) => Outcome::Ok,
        Err(_) => Outcome::Failure,
    }
}

/// `Some(requestState)` when an MRTR server asks for input before completing the call.
fn input_required_state(response: &Message) -> Option<Option<String>> {
    let head = serde_json::from_slice::<ResultHead>(response.bytes()).ok()?;
    let flags = head.result?;
    (flags.result_type.as_deref() == Some("input_required")).then(|| flags.request_state.map(|s| s.get().to_owned()))
}

/// Whether a number in `value` is a float: the only kind a `Value` may have rounded (an integer
/// past 64 bits is read as one).
fn has_float(value: &Value) -> bool {
    match value {
        Value::Number(n) => n.is_f64(),
        Value::Array(items) => items.iter().any(has_float),
        Value::Object(map) => map.values().any(has_float),
        _ => false,
    }
}

fn elapsed_ms(since: Instant) -> i64 {
    i64::try_from(since.elapsed().as_millis()).unwrap_or(i64::MAX)
}
