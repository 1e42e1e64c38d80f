//! Held calls as tasks: the tasks the gateway mints itself (DESIGN §5, MCP.md "Tasks").
//!
//! A `tools/call` that waits for a person, from a client that takes tasks (2025-11-25: a `task`
//! param; 2026-07-28: the `io.modelcontextprotocol/tasks` extension in the request's
//! capabilities), is answered at once with a task of the gateway's own. The person then has up
//! to `approval.max_hold_secs` instead of the client's request timeout; `tasks/get` says the call
//! waits for a person; the decision completes the task with the upstream's real result or the
//! `[portcullis]` refusal, and `tasks/cancel` withdraws the approval.
//!
//! Only tasks on this board are answered here: every other `tasks/*` request (tasks the upstream
//! created) passes through untouched. Task ids are 128 random bits, so they neither collide with
//! another session's nor can be guessed by it — on a shared stateless upstream the id is the only
//! scope a task has (SEP-2663).
//!
//! On approval:
//! - 2025-11-25: the call goes upstream as the client sent it, `task` included. A server without
//!   tasks ignores it and answers with the result; one with tasks (a tool whose `taskSupport` is
//!   `required` would refuse the call without it) answers with its own task, which the gateway
//!   then follows with `tasks/result` upstream — the client's task completes with that result.
//! - 2026-07-28: the call goes upstream without the extension in its capabilities, so the server
//!   answers with the result itself (SEP-2663: never a task to a client that did not declare the
//!   extension); the gateway does not drive a second task on the client's behalf.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use portcullis_wire::message::TaskAsk;
use portcullis_wire::{error_code, method, Message, RequestId};
use serde_json::{json, Map, Value};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::clock::{now_ms, rfc3339};

/// Tasks one board keeps at once; beyond it a held call waits the ordinary way.
const MAX_TASKS: usize = 1024;
/// How often a client should poll a task: a person's decision shows up within this.
const POLL_INTERVAL_MS: u64 = 500;
/// How long a finished task's result stays readable.
const KEEP_FINISHED: Duration = Duration::from_secs(300);

/// Where a gateway task stands.
#[derive(Debug, Clone)]
pub(super) enum TaskState {
    /// Waiting for a person.
    Held,
    /// Approved; the call is running upstream.
    Running,
    /// The call's result: the upstream's, or the gateway's refusal (`isError`).
    Completed(Value),
    /// The upstream answered with a JSON-RPC error (this `error` object).
    Failed(Value),
    Cancelled(String),
}

impl TaskState {
    fn is_terminal(&self) -> bool {
        matches!(self, Self::Completed(_) | Self::Failed(_) | Self::Cancelled(_))
    }

    fn status(&self) -> &'static str {
        match self {
            Self::Held | Self::Running => "working",
            Self::Completed(_) => "completed",
            Self::Failed(_) => "failed",
            Self::Cancelled(_) => "cancelled",
        }
    }
}

/// One task the gateway minted for a held call.
pub(super) struct GatewayTask {
    pub(super) id: String,
    ask: TaskAsk,
    /// `server/tool`, for the status message.
    label: String,
    /// The approval this task waits on (for its deadline, which a person may extend).
    approval: String,
    created_ms: i64,
    ttl_ms: u64,
    /// The state and when it last changed (ms since the epoch).
    state: watch::Sender<(TaskState, i64)>,
    /// Fires on `tasks/cancel`: the hold is withdrawn, or the running call given up.
    pub(super) cancel: CancellationToken,
}

/// The tasks a session minted.
#[derive(Default)]
pub(super) struct TaskBoard {
    map: Mutex<HashMap<String, Arc<GatewayTask>>>,
}

/// A fresh task id: 128 random bits, so it is unguessable from another session.
fn fresh_id() -> String {
    format!("portcullis-{:032x}", rand::random::<u128>())
}

impl TaskBoard {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<GatewayTask>>> {
        self.map.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A new task in `state`, alive for `lifetime` (plus the time a result stays readable);
    /// `None` when the board is full.
    pub(super) fn mint(
        &self,
        ask: TaskAsk,
        label: String,
        approval: String,
        lifetime: Duration,
        state: TaskState,
    ) -> Option<Arc<GatewayTask>> {
        let now = now_ms();
        let mut map = self.lock();
        map.retain(|_, t| !t.expired(now));
        if map.len() >= MAX_TASKS {
            tracing::warn!(
                "{MAX_TASKS} gateway tasks already open on this session; the held call waits without a task"
            );
            return None;
        }
        let ttl = lifetime.saturating_add(KEEP_FINISHED);
        let task = Arc::new(GatewayTask {
            id: fresh_id(),
            ask,
            label,
            approval,
            created_ms: now,
            ttl_ms: u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX),
            state: watch::channel((state, now)).0,
            cancel: CancellationToken::new(),
        });
        map.insert(task.id.clone(), task.clone());
        Some(task)
    }

    /// The task a `tasks/*` request names, if it is one of this board's.
    pub(super) fn named_by(&self, msg: &Message) -> Option<Arc<GatewayTask>> {
        let params = msg.params::<Value>().ok()?;
        let id = params.get("taskId")?.as_str()?;
        self.lock().get(id).cloned()
    }
}

/// Whether the gateway answers this method for its own tasks.
pub(super) fn is_task_method(name: &str) -> bool {
    matches!(
        name,
        method::TASKS_GET | method::TASKS_RESULT | method::TASKS_CANCEL | method::TASKS_UPDATE
    )
}

impl GatewayTask {
    fn expired(&self, now: i64) -> bool {
        let age = u64::try_from(now.saturating_sub(self.created_ms)).unwrap_or(0);
        age > self.ttl_ms
    }

    pub(super) fn set(&self, state: TaskState) {
        self.state.send_if_modified(|(current, at)| {
            if current.is_terminal() {
                return false;
            }
            *current = state;
            *at = now_ms();
            true
        });
    }

    /// Completes the task from the upstream's response (or the gateway's own error answer).
    pub(super) fn finish_with(&self, response: &Message) {
        let value = response.to_value().unwrap_or(Value::Null);
        match (value.get("result"), value.get("error")) {
            (Some(result), _) => self.set(TaskState::Completed(result.clone())),
            (None, Some(error)) => self.set(TaskState::Failed(error.clone())),
            (None, None) => self.set(TaskState::Failed(json!({
                "code": error_code::INTERNAL_ERROR,
                "message": "[portcullis] the upstream's answer was not a response",
            }))),
        }
    }

    fn status_message(&self, state: &TaskState, expires_ms: Option<i64>) -> String {
        match state {
            TaskState::Held => {
                let left = expires_ms.map(|e| (e - now_ms()).max(0) / 1000);
                match left {
                    Some(left) => format!(
                        "waiting for the user's approval in Portcullis: {} ({left} s left)",
                        self.label
                    ),
                    None => format!("waiting for the user's approval in Portcullis: {}", self.label),
                }
            }
            TaskState::Running => format!("approved in Portcullis; {} is running", self.label),
            TaskState::Completed(_) => format!("{} finished", self.label),
            TaskState::Failed(_) => format!("{} failed upstream", self.label),
            TaskState::Cancelled(why) => why.clone(),
        }
    }

    /// The task as the client's era spells it, with the result or error inline when `detailed`
    /// (2026-07-28 `tasks/get`).
    fn to_json(
        &self,
        state: &TaskState,
        updated_ms: i64,
        expires_ms: Option<i64>,
        detailed: bool,
    ) -> Map<String, Value> {
        let mut task = Map::new();
        task.insert("taskId".into(), json!(self.id));
        task.insert("status".into(), json!(state.status()));
        task.insert("statusMessage".into(), json!(self.status_message(state, expires_ms)));
        task.insert("createdAt".into(), json!(rfc3339(self.created_ms)));
        task.insert("lastUpdatedAt".into(), json!(rfc3339(updated_ms)));
        let (ttl, poll) = match self.ask {
            TaskAsk::Legacy => ("ttl", "pollInterval"),
            TaskAsk::Extension => ("ttlMs", "pollIntervalMs"),
        };
        task.insert(ttl.into(), json!(self.ttl_ms));
        task.insert(poll.into(), json!(POLL_INTERVAL_MS));
        if detailed {
            match state {
                TaskState::Completed(result) => {
                    task.insert("result".into(), result.clone());
                }
                TaskState::Failed(error) => {
                    task.insert("error".into(), error.clone());
                }
                _ => {}
            }
        }
        task
    }

    /// The task now; `expires_ms` is the hold's deadline while it waits for a person.
    fn snapshot(&self, expires_ms: Option<i64>, detailed: bool) -> Map<String, Value> {
        let (state, at) = self.state.borrow().clone();
        self.to_json(&state, at, expires_ms, detailed)
    }

    /// The answer to the `tools/call` that created the task.
    pub(super) fn created(&self, expires_ms: Option<i64>) -> Value {
        match self.ask {
            TaskAsk::Legacy => json!({ "task": self.snapshot(expires_ms, false) }),
            TaskAsk::Extension => {
                let mut result = self.snapshot(expires_ms, false);
                result.insert("resultType".into(), json!("task"));
                Value::Object(result)
            }
        }
    }

    /// `notifications/tasks/status` with the task as it is now (2025-11-25 sessions).
    pub(super) fn status_note(&self) -> Option<Message> {
        (self.ask == TaskAsk::Legacy)
            .then(|| Message::notification(method::TASK_STATUS, &Value::Object(self.snapshot(None, false))))
    }

    /// Answers a `tasks/*` request about this task. `tasks/result` waits for the end, unless
    /// `given_up` fires first (its sender cancelled it): then no answer.
    pub(super) async fn answer(
        &self,
        request: &str,
        id: &RequestId,
        expires_ms: Option<i64>,
        given_up: CancellationToken,
    ) -> Option<Message> {
        let modern = self.ask == TaskAsk::Extension;
        let complete = |mut result: Map<String, Value>| {
            if modern {
                result.insert("resultType".into(), json!("complete"));
            }
            Message::response(id, &Value::Object(result))
        };
        match request {
            method::TASKS_GET => Some(complete(self.snapshot(expires_ms, modern))),
            method::TASKS_CANCEL => Some(self.cancel_answer(id, modern)),
            method::TASKS_RESULT => self.result(id, given_up).await,
            // 2026 `tasks/update`: a held call asks the client for nothing, so there is nothing
            // to take; acknowledged as the extension says.
            _ => Some(complete(Map::new())),
        }
    }

    fn cancel_answer(&self, id: &RequestId, modern: bool) -> Message {
        let (state, _) = self.state.borrow().clone();
        if state.is_terminal() {
            if modern {
                return Message::response(id, &json!({"resultType": "complete"}));
            }
            let text = format!(
                "[portcullis] cannot cancel task {}: it already ended ({})",
                self.id,
                state.status()
            );
            return Message::error_response(Some(id), error_code::INVALID_PARAMS, &text);
        }
        self.cancel.cancel();
        self.set(TaskState::Cancelled(
            "cancelled by the client; the approval was withdrawn".into(),
        ));
        if modern {
            return Message::response(id, &json!({"resultType": "complete"}));
        }
        Message::response(id, &Value::Object(self.snapshot(None, false)))
    }

    /// 2025-11-25 `tasks/result`: the call's own result once the task ends.
    async fn result(&self, id: &RequestId, given_up: CancellationToken) -> Option<Message> {
        let mut state = self.state.subscribe();
        let ended = tokio::select! {
            biased;
            () = given_up.cancelled() => return None,
            ended = state.wait_for(|(s, _)| s.is_terminal()) => ended.map(|s| s.0.clone()),
        };
        let related = json!({ "taskId": self.id });
        Some(match ended {
            Ok(TaskState::Completed(mut result)) => {
                if let Some(map) = result.as_object_mut() {
                    let meta = map.entry("_meta").or_insert_with(|| json!({}));
                    if let Some(meta) = meta.as_object_mut() {
                        meta.insert(method::META_RELATED_TASK.into(), related);
                    }
                }
                Message::response(id, &result)
            }
            Ok(TaskState::Failed(error)) => {
                let mut value = json!({"jsonrpc": "2.0", "id": id.to_value(), "error": error});
                value["error"]["data"] = json!({ "_meta": { method::META_RELATED_TASK: related } });
                Message::from_value(&value).unwrap_or_else(|_| {
                    Message::error_response(Some(id), error_code::INTERNAL_ERROR, "[portcullis] the task failed")
                })
            }
            Ok(TaskState::Cancelled(why)) => {
                let text = format!("[portcullis] task {} was cancelled: {why}", self.id);
                Message::error_response(Some(id), error_code::INVALID_PARAMS, &text)
            }
            _ => Message::error_response(
                Some(id),
                error_code::INTERNAL_ERROR,
                "[portcullis] the task ended without a result",
            ),
        })
    }

    /// The id the approved call goes upstream under: the client's own request was answered with
    /// the task, and its id may be reused by the client from then on.
    pub(super) fn wire_id(&self) -> RequestId {
        RequestId::from_value(&json!(self.id)).unwrap_or_else(|| RequestId::number(0))
    }

    pub(super) fn approval(&self) -> &str {
        &self.approval
    }

    pub(super) fn ask(&self) -> TaskAsk {
        self.ask
    }
}

/// The upstream's own task id, when it answered a 2025-11-25 call with a task (`{task: {taskId}}`).
pub(super) fn upstream_task(response: &Message) -> Option<String> {
    let value = response.to_value().ok()?;
    let id = value.get("result")?.get("task")?.get("taskId")?.as_str()?;
    Some(id.to_owned())
}

/// `tasks/result` for the upstream's task `upstream_id`, under an id of the gateway's own.
pub(super) fn result_request(id: &RequestId, upstream_id: &str) -> Option<Message> {
    let value = json!({"jsonrpc": "2.0", "id": id.to_value(), "method": method::TASKS_RESULT,
                       "params": {"taskId": upstream_id}});
    Message::from_value(&value).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn board_task(ask: TaskAsk) -> (TaskBoard, Arc<GatewayTask>) {
        let board = TaskBoard::default();
        let task = board
            .mint(
                ask,
                "s/echo".into(),
                "1".into(),
                Duration::from_secs(60),
                TaskState::Held,
            )
            .unwrap();
        (board, task)
    }

    #[test]
    fn ids_are_unique_and_unguessable() {
        let a = fresh_id();
        let b = fresh_id();
        assert_ne!(a, b);
        assert_eq!(a.len(), "portcullis-".len() + 32);
    }

    #[test]
    fn a_held_task_reports_working_with_a_message_about_the_person() {
        let (_, task) = board_task(TaskAsk::Extension);
        let created = task.created(Some(now_ms() + 30_000));
        assert_eq!(created["resultType"], "task");
        assert_eq!(created["status"], "working");
        assert!(created["statusMessage"]
            .as_str()
            .unwrap()
            .contains("waiting for the user's approval"));
        assert!(created.get("ttlMs").is_some() && created.get("pollIntervalMs").is_some());
        let (_, legacy) = board_task(TaskAsk::Legacy);
        let created = legacy.created(None);
        assert_eq!(created["task"]["status"], "working");
        assert!(created["task"].get("ttl").is_some());
    }

    #[tokio::test]
    async fn a_finished_task_is_final_and_its_result_is_inline_in_2026() {
        let (_, task) = board_task(TaskAsk::Extension);
        task.set(TaskState::Completed(json!({"content": [], "isError": false})));
        task.set(TaskState::Cancelled("late".into()));
        let got = task
            .answer(method::TASKS_GET, &RequestId::number(3), None, CancellationToken::new())
            .await
            .unwrap()
            .to_value()
            .unwrap();
        assert_eq!(got["result"]["status"], "completed", "terminal states do not change");
        assert_eq!(got["result"]["result"]["isError"], false);
        assert_eq!(got["result"]["resultType"], "complete");
    }

    #[tokio::test]
    async fn tasks_result_waits_for_the_end_and_a_cancelled_wait_gets_no_answer() {
        let (_, task) = board_task(TaskAsk::Legacy);
        let given_up = CancellationToken::new();
        given_up.cancel();
        assert!(task
            .answer(method::TASKS_RESULT, &RequestId::number(1), None, given_up)
            .await
            .is_none());
        let waiter = {
            let task = task.clone();
            tokio::spawn(async move {
                task.answer(
                    method::TASKS_RESULT,
                    &RequestId::number(2),
                    None,
                    CancellationToken::new(),
                )
                .await
            })
        };
        task.set(TaskState::Completed(
            json!({"content": [{"type": "text", "text": "hi"}]}),
        ));
        let got = waiter.await.unwrap().unwrap().to_value().unwrap();
        assert_eq!(got["result"]["content"][0]["text"], "hi");
        assert_eq!(
            got["result"]["_meta"][method::META_RELATED_TASK]["taskId"],
            json!(task.id)
        );
    }

    #[test]
    fn only_the_boards_own_tasks_are_named() {
        let (board, task) = board_task(TaskAsk::Legacy);
        let ask = |id: &str| {
            Message::parse(format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{{"taskId":"{id}"}}}}"#
            ))
            .unwrap()
        };
        assert!(board.named_by(&ask(&task.id)).is_some());
        assert!(board.named_by(&ask("upstream-task-1")).is_none());
    }
}
