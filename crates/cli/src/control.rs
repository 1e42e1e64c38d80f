//! The gateway's control API as the CLI uses it: pending approvals, decisions, pinned tools and
//! the event stream, with the types they carry. A leaf: the commands that use it
//! (`approvals`, `tools`) import it, never the other way.
//!
//! Requests that should answer at once (list, approve, deny) are bounded by [`REQUEST_TIMEOUT`];
//! the event stream has no overall timeout, only a bounded connect.

use std::time::Duration;

use bytes::Bytes;
use futures::{Stream, StreamExt};
use portcullis_config::gateway_file::{GatewayFile, GatewayFileError};
use portcullis_wire::{SseDecoder, SseEvent};
use reqwest::header::ACCEPT;
use reqwest::{Method, StatusCode, Url};
use serde::Deserialize;
use serde_json::{json, Value};

use crate::exit::Failure;

pub(crate) const REQUEST_TIMEOUT: Duration = Duration::from_secs(5);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);
/// Arguments are shown in full, so an event may be as large as a tool call.
const MAX_EVENT: usize = 16 * 1024 * 1024;

/// A held call waiting for a person, as `GET /control/approvals` and `ApprovalRequested` carry it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub(crate) struct Approval {
    #[serde(deserialize_with = "id_text")]
    pub id: String,
    pub server: String,
    /// Which kind of request is held (`tools/call`, `resources/read`, …); absent from a gateway
    /// that held only tool calls. Text, so a kind this build does not know still lists.
    #[serde(default)]
    pub method: Option<String>,
    /// The tool; for the other kinds the resource URI, the prompt name or the server request's
    /// kind.
    pub tool: String,
    /// What is asked, in the gateway's words; empty from a gateway that predates them.
    #[serde(default)]
    pub asks: portcullis_gate::held_calls::Asks,
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub risk: Option<String>,
    #[serde(default)]
    pub arguments: Value,
    #[serde(default)]
    pub session: Option<String>,
    #[serde(default)]
    pub client: Client,
    #[serde(default)]
    pub rule: Option<String>,
    #[serde(default)]
    pub expires_at: Option<String>,
    #[serde(default)]
    pub expires_at_ms: Option<u64>,
    /// Set when the call is held because its tool changed since it was pinned.
    #[serde(default)]
    pub pin_change: Option<PinChange>,
    /// Set when what is held is the call's answer (rule `results:hold`): what came back, with
    /// its findings.
    #[serde(default)]
    pub answer: Option<portcullis_audit::AnswerRecord>,
}

/// A pinned tool, as `GET /control/tools` answers.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Pin {
    pub server: String,
    pub tool: String,
    pub digest: String,
    #[serde(default)]
    pub pinned_at: Option<String>,
    #[serde(default)]
    pub change: Option<PinChange>,
}

/// What changed in a pinned tool (also carried by a held call's `pin_change`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub(crate) struct PinChange {
    #[serde(default)]
    pub fields: Vec<String>,
    #[serde(default)]
    pub new_digest: Option<String>,
    #[serde(default)]
    pub old: Value,
    #[serde(default)]
    pub new: Value,
    #[serde(default)]
    pub diff: Vec<DiffEntry>,
    #[serde(default)]
    pub seen_at: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub(crate) struct DiffEntry {
    pub path: String,
    pub change: String,
    #[serde(default)]
    pub old: Option<Value>,
    #[serde(default)]
    pub new: Option<Value>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub(crate) struct Client {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub version: Option<String>,
}

/// What came of a call that left the queue.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub(crate) struct Resolved {
    #[serde(deserialize_with = "id_text")]
    pub id: String,
    pub decision: String,
    #[serde(default)]
    pub decided_by: Option<String>,
    #[serde(default)]
    pub scope: Option<String>,
}

/// An event from `GET /control/events`; types this CLI does not use are [`ControlEvent::Other`].
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type")]
pub(crate) enum ControlEvent {
    ApprovalRequested {
        approval: Box<Approval>,
    },
    ApprovalResolved(Resolved),
    /// The audit log stopped or started accepting writes; while `ok` is false every call is refused.
    AuditHealth {
        ok: bool,
        #[serde(default)]
        error: Option<String>,
    },
    #[serde(other)]
    Other,
}

/// `once`, `session` or `always`: how far an approval reaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Scope {
    Once,
    Session,
    Always,
}

impl Scope {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Once => "once",
            Self::Session => "session",
            Self::Always => "always",
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum ApiError {
    #[error("the gateway at {url} is not answering ({reason}); is it still running?")]
    Unreachable { url: String, reason: String },
    #[error("the gateway refused the token in gateway.json (is it from another gateway?)")]
    Unauthorized,
    #[error("the gateway at {0} has no control API (is it an older version?)")]
    NoControlApi(String),
    /// 404 or 409 from a decision: the call is no longer waiting. The gateway's own words.
    #[error("{0}")]
    NotPending(String),
    #[error("the gateway answered {status}: {message}")]
    Refused { status: StatusCode, message: String },
}

impl From<ApiError> for Failure {
    fn from(e: ApiError) -> Self {
        match e {
            ApiError::Unreachable { .. } => Failure::NoGateway(e.to_string()),
            other => Failure::user(other),
        }
    }
}

pub(crate) struct ControlClient {
    http: reqwest::Client,
    base: Url,
    token: String,
}

impl ControlClient {
    /// Finds the running gateway through `gateway.json` in the data dir.
    pub(crate) fn from_data_dir(data_dir: &std::path::Path) -> Result<Self, Failure> {
        let file = GatewayFile::read(data_dir).map_err(|e| match e {
            GatewayFileError::Missing(_) => Failure::NoGateway(e.to_string()),
            other => Failure::user(other),
        })?;
        let base = Url::parse(&file.url)
            .map_err(|e| Failure::user(format!("gateway.json has an invalid url {:?}: {e}", file.url)))?;
        let http = reqwest::Client::builder()
            .no_proxy()
            .connect_timeout(CONNECT_TIMEOUT)
            .build()
            .map_err(|e| Failure::user(format!("cannot start an HTTP client: {e}")))?;
        Ok(Self {
            http,
            base,
            token: file.token,
        })
    }

    fn url(&self, segments: &[&str]) -> Url {
        let mut url = self.base.clone();
        if let Ok(mut path) = url.path_segments_mut() {
            path.pop_if_empty().extend(segments);
        }
        url
    }

    async fn send(&self, method: Method, url: Url, body: Option<Value>) -> Result<reqwest::Response, ApiError> {
        let mut request = self
            .http
            .request(method, url)
            .bearer_auth(&self.token)
            .timeout(REQUEST_TIMEOUT);
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.map_err(|e| self.unreachable(&e))?;
        if response.status().is_success() {
            return Ok(response);
        }
        let status = response.status();
        let text = response.text().await.unwrap_or_default();
        let message = serde_json::from_str::<Value>(&text)
            .ok()
            .and_then(|v| v.get("error").and_then(Value::as_str).map(str::to_owned));
        Err(match (status, message) {
            (StatusCode::UNAUTHORIZED, _) => ApiError::Unauthorized,
            (StatusCode::NOT_FOUND | StatusCode::CONFLICT, Some(message)) => ApiError::NotPending(message),
            (StatusCode::NOT_FOUND, None) => ApiError::NoControlApi(self.base.to_string()),
            (status, message) => ApiError::Refused {
                status,
                message: message.unwrap_or(text),
            },
        })
    }

    fn unreachable(&self, e: &reqwest::Error) -> ApiError {
        let reason = if e.is_timeout() {
            "timed out".to_owned()
        } else if e.is_connect() {
            "connection refused".to_owned()
        } else {
            e.to_string()
        };
        ApiError::Unreachable {
            url: self.base.to_string(),
            reason,
        }
    }

    /// The pending approvals exactly as the gateway sent them (for `--json`).
    pub(crate) async fn list_raw(&self) -> Result<Value, ApiError> {
        self.get_json(&["control", "approvals"]).await
    }

    /// What a person should know from `GET /control/status`, one line each: the audit log cannot
    /// be written (every call is refused), a policy file was rejected. Empty when all is well or
    /// the gateway does not say (older builds).
    pub(crate) async fn warnings(&self) -> Vec<String> {
        let Some(status) = self.status().await else {
            return Vec::new();
        };
        let mut warnings = Vec::new();
        if let Some(problem) = audit_problem(&status) {
            warnings.push(format!(
                "the gateway cannot write its audit log ({problem}); every tools/call is refused until it can"
            ));
        }
        let policies = status.get("policies").and_then(Value::as_array);
        for policy in policies.into_iter().flatten() {
            warnings.push(policy_warning(policy));
        }
        warnings
    }

    pub(crate) async fn status(&self) -> Option<Value> {
        let response = self
            .send(Method::GET, self.url(&["control", "status"]), None)
            .await
            .ok()?;
        response.json().await.ok()
    }

    /// The pending approvals, oldest first.
    pub(crate) async fn list(&self) -> Result<Vec<Approval>, ApiError> {
        let raw = self.list_raw().await?;
        serde_json::from_value(raw).map_err(|e| ApiError::Refused {
            status: StatusCode::OK,
            message: format!("unexpected approval list: {e}"),
        })
    }

    pub(crate) async fn approve(&self, id: &str, scope: Scope) -> Result<(), ApiError> {
        self.decide(id, "approve", &json!({ "scope": scope.as_str() }))
            .await
            .map(drop)
    }

    pub(crate) async fn deny(&self, id: &str, reason: Option<&str>, always: bool) -> Result<(), ApiError> {
        self.decide(id, "deny", &json!({ "reason": reason, "always": always }))
            .await
            .map(drop)
    }

    /// `POST /control/approvals/{id}/{verb}` with `body`; the gateway's answer (`grant`,
    /// `also_settled` …).
    pub(crate) async fn decide(&self, id: &str, verb: &str, body: &Value) -> Result<Value, ApiError> {
        check_id(id)?;
        let response = self
            .send(
                Method::POST,
                self.url(&["control", "approvals", id, verb]),
                Some(body.clone()),
            )
            .await?;
        self.json_of(response).await
    }

    /// `GET` a control endpoint below the base URL; the JSON answer.
    pub(crate) async fn get_json(&self, segments: &[&str]) -> Result<Value, ApiError> {
        let response = self.send(Method::GET, self.url(segments), None).await?;
        self.json_of(response).await
    }

    /// `POST` `body` to a control endpoint; the JSON answer.
    pub(crate) async fn post_json(&self, segments: &[&str], body: &Value) -> Result<Value, ApiError> {
        let response = self.send(Method::POST, self.url(segments), Some(body.clone())).await?;
        self.json_of(response).await
    }

    async fn json_of(&self, response: reqwest::Response) -> Result<Value, ApiError> {
        response.json::<Value>().await.map_err(|e| {
            if e.is_decode() {
                ApiError::Refused {
                    status: StatusCode::OK,
                    message: format!("not a JSON answer: {e}"),
                }
            } else {
                self.unreachable(&e)
            }
        })
    }

    /// Subscribes to the event stream. While it is open the gateway counts this CLI as an approver.
    pub(crate) async fn events(&self) -> Result<EventStream, ApiError> {
        let response = self
            .http
            .get(self.url(&["control", "events"]))
            .bearer_auth(&self.token)
            .header(ACCEPT, "text/event-stream")
            .send()
            .await
            .map_err(|e| self.unreachable(&e))?;
        let status = response.status();
        match status {
            s if s.is_success() => {}
            StatusCode::UNAUTHORIZED => return Err(ApiError::Unauthorized),
            StatusCode::NOT_FOUND => return Err(ApiError::NoControlApi(self.base.to_string())),
            _ => {
                let message = response.text().await.unwrap_or_default();
                return Err(ApiError::Refused { status, message });
            }
        }
        Ok(EventStream {
            body: Box::pin(response.bytes_stream()),
            decoder: SseDecoder::new(MAX_EVENT),
            ready: std::collections::VecDeque::new(),
        })
    }
}

/// URL path segments drop `.` and `..`; such an id could only address another endpoint.
fn check_id(id: &str) -> Result<(), ApiError> {
    match id {
        "" | "." | ".." => Err(ApiError::NotPending(format!("no pending approval {id:?}"))),
        _ => Ok(()),
    }
}

type Body = std::pin::Pin<Box<dyn Stream<Item = reqwest::Result<Bytes>> + Send>>;

/// Control events as they arrive. `next` yields `None` when the gateway closed the stream.
pub(crate) struct EventStream {
    body: Body,
    decoder: SseDecoder,
    ready: std::collections::VecDeque<SseEvent>,
}

/// One item of the stream: an event, or one the CLI could not read (shown, not fatal).
#[derive(Debug)]
pub(crate) enum StreamItem {
    Event(ControlEvent),
    Unreadable(String),
}

impl EventStream {
    /// Cancel-safe: events already decoded are kept until asked for.
    pub(crate) async fn next(&mut self) -> Option<StreamItem> {
        loop {
            if let Some(event) = self.ready.pop_front() {
                if event.data.is_empty() {
                    continue;
                }
                return Some(match serde_json::from_str::<ControlEvent>(&event.data) {
                    Ok(event) => StreamItem::Event(event),
                    Err(e) => StreamItem::Unreadable(format!("unreadable event from the gateway: {e}")),
                });
            }
            match self.body.next().await? {
                Ok(chunk) => match self.decoder.feed(&chunk) {
                    Ok(events) => self.ready.extend(events),
                    Err(e) => return Some(StreamItem::Unreadable(e.to_string())),
                },
                Err(_) => return None,
            }
        }
    }
}

/// Ids are strings in the API; a number is accepted too, in case a gateway sends one.
fn id_text<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
    match Value::deserialize(deserializer)? {
        Value::String(s) => Ok(s),
        Value::Number(n) => Ok(n.to_string()),
        other => Err(serde::de::Error::custom(format!(
            "an approval id must be a string, not {other}"
        ))),
    }
}

/// Why the audit log cannot be written, from a status document; `None` when it can.
fn audit_problem(status: &Value) -> Option<String> {
    let audit = status.get("audit")?;
    if audit.get("ok").and_then(Value::as_bool) != Some(false) {
        return None;
    }
    let error = audit.get("error").and_then(Value::as_str);
    Some(error.unwrap_or("unknown error").to_owned())
}

/// One line for a rejected policy file.
pub(crate) fn policy_warning(policy: &Value) -> String {
    let field = |k: &str| policy.get(k).and_then(Value::as_str).unwrap_or("?").to_owned();
    let first = policy
        .get("problems")
        .and_then(Value::as_array)
        .and_then(|p| p.first())
        .and_then(Value::as_str)
        .unwrap_or("invalid");
    let in_force = if policy.get("last_good_in_force").and_then(Value::as_bool) == Some(true) {
        "the last good policy stays in force"
    } else {
        "every call to it is refused"
    };
    format!(
        "the policy file of server {:?} was rejected ({first}); {in_force}",
        field("server")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Value {
        json!({"id":"17","server":"fs","tool":"write_file","title":"Write File","description":"Writes.",
            "annotations":{"destructiveHint":true},"risk":"write","arguments":{"path":"/tmp/a"},"session":"s1",
            "client":{"name":"claude-code","version":"1.0"},"rule":"tools.write_file",
            "requested_at":"2026-11-30T01:02:03Z","requested_at_ms":123,"expires_at":"2026-11-30T01:02:48Z",
            "expires_at_ms":456,"request_id":"7"})
    }

    #[test]
    fn approval_reads_the_documented_shape() {
        let approval: Approval = serde_json::from_value(sample()).unwrap();
        assert_eq!(approval.id, "17");
        assert_eq!(approval.client.name.as_deref(), Some("claude-code"));
        assert_eq!(approval.rule.as_deref(), Some("tools.write_file"));
    }

    #[test]
    fn approval_tolerates_nulls_and_numeric_ids() {
        let approval: Approval = serde_json::from_value(json!({"id":17,"server":"fs","tool":"t","title":null,
            "description":null,"client":{"name":null,"version":null},"arguments":{}}))
        .unwrap();
        assert_eq!(approval.id, "17");
        assert_eq!(approval.title, None);
    }

    #[test]
    fn events_parse_by_type_and_unknown_types_are_other() {
        let requested = json!({"type":"ApprovalRequested","approval":sample()}).to_string();
        assert!(matches!(
            serde_json::from_str::<ControlEvent>(&requested).unwrap(),
            ControlEvent::ApprovalRequested { .. }
        ));
        let resolved =
            r#"{"type":"ApprovalResolved","id":"17","decision":"timed_out","decided_by":"timeout","scope":null}"#;
        assert_eq!(
            serde_json::from_str::<ControlEvent>(resolved).unwrap(),
            ControlEvent::ApprovalResolved(Resolved {
                id: "17".into(),
                decision: "timed_out".into(),
                decided_by: Some("timeout".into()),
                scope: None
            })
        );
        let other = r#"{"type":"AuditAppended","id":3,"server":"fs","tool":"t","decision":"allowed"}"#;
        assert_eq!(
            serde_json::from_str::<ControlEvent>(other).unwrap(),
            ControlEvent::Other
        );
        let future = r#"{"type":"SomethingNew","x":1}"#;
        assert_eq!(
            serde_json::from_str::<ControlEvent>(future).unwrap(),
            ControlEvent::Other
        );
    }

    /// The gateway's own serialization, so a renamed field breaks this test and not the watch.
    #[test]
    fn audit_health_events_parse_as_the_gateway_sends_them() {
        use portcullis_gate::events::GatewayEvent;
        let failing = GatewayEvent::AuditHealth {
            ok: false,
            condition: Some(portcullis_audit::FaultKind::Full),
            error: Some("disk full: database or disk is full".into()),
        };
        assert_eq!(
            serde_json::from_str::<ControlEvent>(&serde_json::to_string(&failing).unwrap()).unwrap(),
            ControlEvent::AuditHealth {
                ok: false,
                error: Some("disk full: database or disk is full".into())
            }
        );
        let good = GatewayEvent::AuditHealth {
            ok: true,
            condition: None,
            error: None,
        };
        assert_eq!(
            serde_json::from_str::<ControlEvent>(&serde_json::to_string(&good).unwrap()).unwrap(),
            ControlEvent::AuditHealth { ok: true, error: None }
        );
    }

    #[test]
    fn decision_urls_escape_the_id() {
        let client = ControlClient {
            http: reqwest::Client::new(),
            base: Url::parse("http://127.0.0.1:7470").unwrap(),
            token: String::new(),
        };
        assert_eq!(
            client.url(&["control", "approvals", "17", "approve"]).as_str(),
            "http://127.0.0.1:7470/control/approvals/17/approve"
        );
        assert_eq!(
            client.url(&["control", "approvals", "../x?y", "deny"]).as_str(),
            "http://127.0.0.1:7470/control/approvals/..%2Fx%3Fy/deny"
        );
    }
}
