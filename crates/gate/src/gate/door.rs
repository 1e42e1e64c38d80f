//! The other doors: a client's `resources/read`, `resources/subscribe` and `prompts/get`, and the
//! server's own `sampling/createMessage`, `elicitation/create` and `roots/list`, each read into a
//! [`Call`] so that one decision path — policy, rate limit, the person, the audit row committed
//! before anything moves — serves every kind of request.
//!
//! What a [`Call`] holds for each ([`Call::method`] says which):
//!
//! | method | `tool` | `arguments` |
//! |---|---|---|
//! | `resources/read`, `resources/subscribe` | the URI in normal form (as sent when it has none) | `{"uri": <as sent>}` |
//! | `prompts/get` | the prompt's name | the prompt's `arguments` |
//! | `sampling/createMessage`, `elicitation/create`, `roots/list` | `sampling`, `elicitation`, `roots` | the request's `params` |
//!
//! The request itself is forwarded as it came: the normal form is what the policy compares, and
//! every server reads the URI it was sent as that same resource (`portcullis_policy::normalize_uri`
//! refuses a URI where they could disagree).

use portcullis_audit::Method;
use portcullis_policy::{normalize_uri, CallFacts, Door, Evaluation, Places, Policy, RequestFacts, ToolClass};
use portcullis_wire::message::DoorRead;
use portcullis_wire::{error_code, gate_result, method, Message, ParseError, RequestId};
use serde_json::{Map, Value};

use super::{Call, Caller, Gate};

/// The policy section that decides `method`.
pub fn door_of(method: Method) -> Door {
    match method {
        Method::ToolsCall => Door::Tools,
        Method::ResourcesRead | Method::ResourcesSubscribe => Door::Resources,
        Method::PromptsGet => Door::Prompts,
        Method::SamplingCreateMessage => Door::Sampling,
        Method::ElicitationCreate => Door::Elicitation,
        Method::RootsList => Door::Roots,
    }
}

/// The decided method a client's request is, if the gate decides it beside `tools/call`.
pub fn client_door(name: &str) -> Option<Method> {
    match name {
        method::RESOURCES_READ => Some(Method::ResourcesRead),
        method::RESOURCES_SUBSCRIBE => Some(Method::ResourcesSubscribe),
        method::PROMPTS_GET => Some(Method::PromptsGet),
        _ => None,
    }
}

/// Whether `method` is a client's request (a tool call, a read, a prompt): a 2026-era answer to
/// one may carry MRTR input requests.
pub fn client_door_or_call(method: Method) -> bool {
    matches!(
        method,
        Method::ToolsCall | Method::ResourcesRead | Method::ResourcesSubscribe | Method::PromptsGet
    )
}

/// The decided method a server's request is, if the gate decides it.
pub fn server_door(name: &str) -> Option<Method> {
    match name {
        method::SAMPLING_CREATE_MESSAGE => Some(Method::SamplingCreateMessage),
        method::ELICITATION_CREATE => Some(Method::ElicitationCreate),
        method::ROOTS_LIST => Some(Method::RootsList),
        _ => None,
    }
}

impl Call {
    /// A client's `resources/read`, `resources/subscribe` or `prompts/get` to `server`, read once
    /// (the strict parse checked its shape).
    pub fn read_door(
        server: &str,
        method: Method,
        msg: &Message,
        id: &RequestId,
        digester: &super::Digester,
    ) -> Result<(Self, DoorRead), ParseError> {
        let read = msg.door_request()?;
        let (tool, arguments, arguments_text) = match method {
            Method::PromptsGet => {
                let arguments = match &read.arguments {
                    Some(text) => serde_json::from_slice(text).map_err(|e| ParseError::Json(e.to_string()))?,
                    None => Value::Object(Map::new()),
                };
                (read.subject.clone(), arguments, read.arguments.clone())
            }
            _ => {
                let mut uri = Map::new();
                uri.insert("uri".into(), Value::String(read.subject.clone()));
                let normal =
                    normalize_uri(&read.subject).map_or_else(|_| read.subject.clone(), |u| u.as_str().to_owned());
                (normal, Value::Object(uri), None)
            }
        };
        let mut call = Self::asked(server, method, tool, arguments, arguments_text, id, digester);
        call.modern = read.is_modern();
        Ok((call, read))
    }

    /// A server's `sampling/createMessage`, `elicitation/create` or `roots/list` to the client of
    /// a session of `server`: its `params` are what is decided and recorded.
    pub fn read_server_request(
        server: &str,
        method: Method,
        msg: &Message,
        id: &RequestId,
        digester: &super::Digester,
    ) -> Result<Self, ParseError> {
        // `roots/list` often comes without params.
        let params = match msg.params::<Option<Value>>()? {
            None | Some(Value::Null) => Value::Object(Map::new()),
            Some(params) => params,
        };
        Ok(Self::server_asks(server, method, params, id, digester))
    }

    /// What a server asks of the client (`params` of its request, or of an MRTR input request
    /// riding in the answer to the call `id`), as a call to decide.
    pub fn server_asks(
        server: &str,
        method: Method,
        params: Value,
        id: &RequestId,
        digester: &super::Digester,
    ) -> Self {
        let tool = door_of(method).server_request().unwrap_or("server request").to_owned();
        Self::asked(server, method, tool, params, None, id, digester)
    }

    fn asked(
        server: &str,
        method: Method,
        tool: String,
        arguments: Value,
        arguments_text: Option<bytes::Bytes>,
        id: &RequestId,
        digester: &super::Digester,
    ) -> Self {
        Self {
            server: server.to_owned(),
            method,
            tool,
            digest: Some(digester.digest(&arguments)),
            arguments,
            arguments_text,
            original_arguments: None,
            request_id: id.clone(),
            modern: false,
            request_state: None,
        }
    }
}

impl Gate {
    /// A client's request at another door, read once ([`Call::read_door`]).
    pub(crate) fn read_door(
        &self,
        server: &str,
        method: Method,
        msg: &Message,
        id: &RequestId,
    ) -> Result<(Call, DoorRead), ParseError> {
        Call::read_door(server, method, msg, id, &self.digester)
    }

    /// An MRTR input request in the answer to the call `id` ([`Call::server_asks`]).
    pub(crate) fn input_request(&self, server: &str, method: Method, params: Value, id: &RequestId) -> Call {
        Call::server_asks(server, method, params, id, &self.digester)
    }

    /// A server's request to its client, read once ([`Call::read_server_request`]).
    pub(crate) fn read_server_request(
        &self,
        server: &str,
        method: Method,
        msg: &Message,
        id: &RequestId,
    ) -> Result<Call, ParseError> {
        Call::read_server_request(server, method, msg, id, &self.digester)
    }
}

/// What `policy` decides of `call`, read at its door with the facts that door's rules read.
pub(super) fn evaluate(policy: &Policy, call: &Call, caller: &Caller, places: &Places) -> Evaluation {
    evaluate_at(policy, call.method, &call.tool, caller.facts(&call.arguments, places))
}

/// What `policy` decides of a request of `method` named `name` (a [`Call`]'s `tool`) whose
/// arguments are in `facts`: the one decision of every door, for the gate and for the keeper
/// re-deciding a held call once a person changed the policy.
pub fn evaluate_at(policy: &Policy, method: Method, name: &str, facts: CallFacts<'_>) -> Evaluation {
    match door_of(method) {
        Door::Tools => policy.evaluate_call(name, &facts),
        door => policy.evaluate_request(door, name, &request_facts(method, facts)),
    }
}

/// What the rules of `method`'s door read of a request with `facts.arguments`: the URI of a
/// resource request (none when it cannot be normalized: the policy refuses it then), a sampling
/// or elicitation request's facts.
pub fn request_facts(method: Method, facts: CallFacts<'_>) -> RequestFacts<'_> {
    let arguments = facts.arguments;
    match door_of(method) {
        Door::Resources => match arguments.get("uri").and_then(Value::as_str).map(normalize_uri) {
            Some(Ok(uri)) => RequestFacts::resource(&uri, facts),
            _ => RequestFacts::new(facts),
        },
        Door::Sampling => RequestFacts::sampling(arguments, facts),
        Door::Elicitation => RequestFacts::elicitation(arguments, facts),
        Door::Tools | Door::Prompts | Door::Roots => RequestFacts::new(facts),
    }
}

/// The class a request of another door is, when its entry sets none: reading a resource or a
/// prompt, or telling the folders, reads; spending the user's model runs something; asking the
/// person for data is a read of them (its risk is the policy's to raise).
pub(super) fn class_of(method: Method) -> ToolClass {
    match method {
        Method::SamplingCreateMessage => ToolClass::Execute,
        Method::ToolsCall => ToolClass::Unknown,
        _ => ToolClass::Read,
    }
}

/// How a refusal names the request, for the agent and the log: `call to "write_file"`, `reading
/// "file:///…"`, `the server's sampling request`.
pub(super) fn subject(call: &Call) -> String {
    let name = &call.tool;
    match call.method {
        Method::ToolsCall => format!("call to {name:?}"),
        Method::ResourcesRead => format!("reading {name:?}"),
        Method::ResourcesSubscribe => format!("subscribing to {name:?}"),
        Method::PromptsGet => format!("prompt {name:?}"),
        Method::SamplingCreateMessage => "the server's sampling request (its prompt to your model)".to_owned(),
        Method::ElicitationCreate => "the server's elicitation request".to_owned(),
        Method::RootsList => "the server's request for your roots (folders)".to_owned(),
    }
}

/// A refusal as the answer to a request that has no `isError` result (every method but
/// `tools/call`): a JSON-RPC error whose message is the refusal's text, `[portcullis]` first.
pub fn refusal_error(id: &RequestId, refusal: &Value) -> Message {
    Message::error_response(Some(id), error_code::REFUSED, &refusal_text(refusal))
}

/// The text of a refusal result ([`gate_result::refusal`]), `[portcullis]` first.
pub fn refusal_text(refusal: &Value) -> String {
    refusal
        .pointer("/content/0/text")
        .and_then(Value::as_str)
        .map_or_else(|| format!("{} refused", gate_result::PREFIX), str::to_owned)
}

/// The answer to a refused request of `method`: the refusal result for a tool call, else
/// [`refusal_error`].
pub fn refusal_answer(method: Method, id: &RequestId, refusal: &Value) -> Message {
    match method {
        Method::ToolsCall => Message::response(id, refusal),
        _ => refusal_error(id, refusal),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_refusal_becomes_an_error_with_its_text() {
        let id = RequestId::number(4);
        let answer = refusal_error(&id, &gate_result::refusal("reading \"x\" denied", false));
        let value: Value = serde_json::from_slice(answer.bytes()).unwrap();
        assert_eq!(value["id"], json!(4));
        assert_eq!(value["error"]["code"], json!(error_code::REFUSED));
        assert_eq!(value["error"]["message"], json!("[portcullis] reading \"x\" denied"));
        let tool = refusal_answer(Method::ToolsCall, &id, &gate_result::refusal("no", false));
        let value: Value = serde_json::from_slice(tool.bytes()).unwrap();
        assert_eq!(value["result"]["isError"], json!(true));
    }

    #[test]
    fn a_resource_read_is_named_by_its_normal_form_and_keeps_the_uri_as_sent() {
        let digester = super::super::Digester::from(portcullis_wire::canonical::ArgumentDigester::new([7; 32]));
        let msg = Message::parse(
            r#"{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"FILE:///tmp/%61/../b"}}"#,
        )
        .unwrap();
        let id = RequestId::number(1);
        let (call, _) = Call::read_door("fs", Method::ResourcesRead, &msg, &id, &digester).unwrap();
        assert_eq!(call.tool, normalize_uri("FILE:///tmp/%61/../b").unwrap().as_str());
        assert_eq!(call.arguments, json!({ "uri": "FILE:///tmp/%61/../b" }));
        let msg = Message::parse(
            r#"{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"p","arguments":{"a":"1"}}}"#,
        )
        .unwrap();
        let (call, _) = Call::read_door("fs", Method::PromptsGet, &msg, &id, &digester).unwrap();
        assert_eq!((call.tool.as_str(), &call.arguments), ("p", &json!({ "a": "1" })));
    }
}
