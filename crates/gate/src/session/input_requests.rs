//! What a 2026-era server asks of the client inside its answer: MRTR. A `tools/call` is answered
//! with `resultType: "input_required"`, `inputRequests` (key → `{method, params}`: sampling,
//! elicitation, roots) and an opaque `requestState`; the client fulfils them and retries the
//! call under a new id with `inputResponses` and the same state. Each input request is decided at
//! its door like the legacy request it replaces ([`Session::screen_answer`]):
//!
//! - **allowed** (or approved): it stays in the answer, and its row is recorded as passed on;
//! - **refused**, elicitation or roots: it leaves the answer, and the retry that carries the
//!   same `requestState` gets the answer a client saying no would give — `{"action":"decline"}`,
//!   `{"roots":[]}` — put into its `inputResponses` ([`Session::with_refused_inputs`]), so the
//!   server reads the "no" and the call goes on;
//! - **refused sampling**: a sampling answer is the model's own words and has no "no" form, so
//!   the request itself is refused (a tool call with an `isError` result that says why, a read or
//!   a prompt with a JSON-RPC error), rather than hand the server words no model wrote.
//!
//! A 2026-era `resources/read` or `prompts/get` may be answered with input requests too: the same
//! applies to them.
//!
//! An answer with nothing refused goes on as the bytes came.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use portcullis_audit::Method;
use portcullis_wire::{gate_result, Message};
use serde_json::{json, Map, Value};

use super::Session;
use crate::gate::{door, Caller};

/// How many refused answers wait for their retry; the oldest go first (a client that never
/// retries must not grow this).
const KEPT: usize = 1024;

/// Answers to put into retries, by (caller, `requestState`).
#[derive(Default)]
pub(super) struct RefusedInputs {
    inner: Mutex<Kept>,
}

#[derive(Default)]
struct Kept {
    by_state: HashMap<(String, String), Map<String, Value>>,
    order: VecDeque<(String, String)>,
}

impl RefusedInputs {
    fn lock(&self) -> std::sync::MutexGuard<'_, Kept> {
        self.inner.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn keep(&self, key: (String, String), answers: Map<String, Value>) {
        let mut kept = self.lock();
        if kept.order.len() >= KEPT {
            if let Some(old) = kept.order.pop_front() {
                kept.by_state.remove(&old);
            }
        }
        kept.order.push_back(key.clone());
        kept.by_state.insert(key, answers);
    }

    fn take(&self, key: &(String, String)) -> Option<Map<String, Value>> {
        let mut kept = self.lock();
        let answers = kept.by_state.remove(key)?;
        kept.order.retain(|k| k != key);
        Some(answers)
    }

    fn is_empty(&self) -> bool {
        self.lock().by_state.is_empty()
    }
}

/// The answer a client saying no gives to an input request, where there is one.
fn refused_input(method: Method) -> Option<Value> {
    match method {
        Method::ElicitationCreate => Some(json!({ "action": "decline" })),
        Method::RootsList => Some(json!({ "roots": [] })),
        _ => None,
    }
}

/// The input requests of an `input_required` answer, and its state.
struct Asked {
    requests: Map<String, Value>,
    state: Option<String>,
}

/// `Some` when `answer` is an `input_required` result with input requests.
fn asked(answer: &Message) -> Option<Asked> {
    #[derive(serde::Deserialize)]
    struct Head {
        result: Option<Body>,
    }
    #[derive(serde::Deserialize)]
    struct Body {
        #[serde(rename = "resultType")]
        result_type: Option<String>,
        #[serde(rename = "inputRequests")]
        input_requests: Option<Map<String, Value>>,
        #[serde(rename = "requestState")]
        request_state: Option<String>,
    }
    if !may_ask(answer.bytes()) {
        return None;
    }
    let body = serde_json::from_slice::<Head>(answer.bytes()).ok()?.result?;
    if body.result_type.as_deref() != Some("input_required") {
        return None;
    }
    Some(Asked {
        requests: body.input_requests.filter(|r| !r.is_empty())?,
        state: body.request_state,
    })
}

/// Whether `answer` could be an `input_required` result, from one SIMD scan rather than a second
/// parse of every answer (a 15 MiB one included): without a `\u` escape anywhere, a reader can
/// only find `input_required` where its bytes are written out, so their absence settles it.
fn may_ask(answer: &[u8]) -> bool {
    memchr::memmem::find(answer, b"input_required").is_some() || memchr::memmem::find(answer, b"\\u").is_some()
}

impl Session {
    /// The answer to a 2026-era call by `caller`, with its input requests decided: as it came
    /// when every one may go on, else without the refused ones (or the call refused, see the
    /// module doc).
    pub(super) async fn screen_answer(self: &Arc<Self>, answer: Message, caller: &Caller, asked_by: Method) -> Message {
        let Some(id) = answer.id().cloned() else {
            return answer;
        };
        let Some(asked) = asked(&answer) else {
            return answer;
        };
        let mut refused = Map::new();
        for (key, request) in &asked.requests {
            let Some(method) = request
                .get("method")
                .and_then(Value::as_str)
                .and_then(door::server_door)
            else {
                continue;
            };
            let params = request.get("params").cloned().unwrap_or_else(|| json!({}));
            let call = self.gate.input_request(&self.server, method, params, &id);
            let settled = self.gate.decide_to_the_end(call, caller).await;
            match (settled, refused_input(method)) {
                // Passed on with the answer: the client fulfils it, its row says so.
                (Ok(forwarded), _) => forwarded.finish(&answer),
                (Err(_), Some(no)) => {
                    refused.insert(key.clone(), no);
                }
                (Err(refusal), None) => {
                    let text = format!("{}; the request cannot go on without it", door::refusal_text(&refusal));
                    return door::refusal_answer(asked_by, &id, &gate_result::refusal(&text, true));
                }
            }
        }
        if refused.is_empty() {
            return answer;
        }
        let Some(state) = asked.state else {
            let text = "[portcullis] the server asked for input the policy refuses, and gave no requestState \
                        to carry the refusal back; the request was refused";
            return door::refusal_answer(asked_by, &id, &gate_result::refusal(text, true));
        };
        let without = without_inputs(&answer, &refused);
        self.refused_inputs.keep((caller.session.clone(), state), refused);
        without.unwrap_or(answer)
    }

    /// A 2026-era retry (`tools/call` with `requestState`) with the answers to the input requests
    /// the gate refused put into its `inputResponses`; as it came when there are none.
    pub(super) fn with_refused_inputs(&self, msg: Message, request_state: Option<&Value>, caller: &Caller) -> Message {
        if self.refused_inputs.is_empty() {
            return msg;
        }
        let Some(Value::String(state)) = request_state else {
            return msg;
        };
        let Some(answers) = self.refused_inputs.take(&(caller.session.clone(), state.clone())) else {
            return msg;
        };
        let Ok(mut value) = msg.to_value() else {
            return msg;
        };
        let Some(params) = value.get_mut("params").and_then(Value::as_object_mut) else {
            return msg;
        };
        let responses = params
            .entry("inputResponses")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Some(responses) = responses.as_object_mut() {
            for (key, answer) in answers {
                responses.entry(key).or_insert(answer);
            }
        }
        Message::from_value(&value).unwrap_or(msg)
    }
}

/// `answer` without the input requests in `refused`.
fn without_inputs(answer: &Message, refused: &Map<String, Value>) -> Option<Message> {
    let mut value = answer.to_value().ok()?;
    let requests = value.pointer_mut("/result/inputRequests")?.as_object_mut()?;
    requests.retain(|key, _| !refused.contains_key(key));
    Message::from_value(&value).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_input_required_answer_with_requests_is_screened() {
        let answer = |result: &str| Message::parse(format!(r#"{{"jsonrpc":"2.0","id":2,"result":{result}}}"#)).unwrap();
        let a = asked(&answer(
            r#"{"resultType":"input_required","inputRequests":{"n":{"method":"elicitation/create","params":{}}},"requestState":"s1"}"#,
        ))
        .unwrap();
        assert_eq!(a.state.as_deref(), Some("s1"));
        assert!(a.requests.contains_key("n"));
        assert!(asked(&answer(r#"{"resultType":"complete","content":[]}"#)).is_none());
        assert!(asked(&answer(r#"{"resultType":"input_required","requestState":"s"}"#)).is_none());
        // Written with an escape, it is still what every reader reads: the scan does not skip it.
        let escaped = asked(&answer(
            r#"{"resultType":"input\u005frequired","inputRequests":{"n":{"method":"roots/list"}},"requestState":"s"}"#,
        ));
        assert!(escaped.is_some_and(|a| a.requests.contains_key("n")));
    }

    #[test]
    fn refused_inputs_are_kept_bounded_and_taken_once() {
        let kept = RefusedInputs::default();
        for i in 0..KEPT + 5 {
            kept.keep(("c".into(), i.to_string()), Map::new());
        }
        assert!(kept.take(&("c".into(), "0".into())).is_none(), "the oldest went");
        assert!(kept.take(&("c".into(), (KEPT + 4).to_string())).is_some());
        assert!(kept.take(&("c".into(), (KEPT + 4).to_string())).is_none(), "taken once");
        assert!(
            kept.take(&("other".into(), "5".into())).is_none(),
            "another caller's state is not theirs"
        );
    }

    #[test]
    fn a_refused_input_leaves_the_answer() {
        let answer = Message::parse(
            r#"{"jsonrpc":"2.0","id":2,"result":{"resultType":"input_required","inputRequests":{"a":{"method":"roots/list"},"b":{"method":"elicitation/create","params":{}}},"requestState":"s"}}"#,
        )
        .unwrap();
        let mut refused = Map::new();
        refused.insert("a".into(), json!({"roots": []}));
        let out = without_inputs(&answer, &refused).unwrap();
        let value: Value = serde_json::from_slice(out.bytes()).unwrap();
        assert_eq!(
            value["result"]["inputRequests"],
            json!({"b": {"method": "elicitation/create", "params": {}}})
        );
        assert_eq!(value["result"]["requestState"], "s");
    }
}
