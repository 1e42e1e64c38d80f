//! Precedence of a changed tool against the policy, and what a person's choice does to it.

use portcullis_wire::RequestId;
use serde_json::{json, Value};

use crate::choose::Choice;
use portcullis_gate::gate::{Call, Caller, Gate, Verdict};
use portcullis_gate::held_calls::pending::Scope;
use portcullis_gate::pins::PIN_RULE;

const POLICY: &str = r#"{"version": "1", "default": "allow", "tools": {
    "ok": {}, "no": {"action": "deny", "reason": "never"}, "ask": {"action": "require_approval"},
    "few": {"rate_limit": {"max": 1, "window": 60}}}}"#;

fn tools(version: &str) -> Vec<Value> {
    ["ok", "no", "ask", "few"]
        .iter()
        .map(
            |name| json!({"name": name, "description": format!("{name} {version}"), "inputSchema": {"type": "object"}}),
        )
        .collect()
}

/// A `tools/list` answer passing through: its tools remembered for the prompt and compared
/// with their pins, as `tools_filter.rs` does for a real page.
fn list(gate: &Gate, server: &str, tools: &[Value]) {
    gate.learn_server_tools(server, tools);
    gate.observe_tools(server, tools);
}

fn gate(dir: &tempfile::TempDir) -> super::hold_tests::Kept {
    super::hold_tests::gate_with_policy(dir, POLICY, 600)
}

fn call(tool: &str) -> Call {
    Call::made("srv", tool, json!({}), RequestId::from_value(&json!(1)).unwrap())
}

fn caller(session: &str) -> Caller {
    Caller {
        session: session.into(),
        ..Caller::default()
    }
}

/// The text of a refusal, or what else the verdict was.
fn refusal(verdict: Verdict) -> String {
    match verdict {
        Verdict::Refuse(result) => result["content"][0]["text"].as_str().unwrap_or_default().to_owned(),
        Verdict::Forward(_) => "forwarded".into(),
        Verdict::Hold(_) => "held".into(),
    }
}

#[tokio::test]
async fn a_changed_tool_is_held_unless_the_policy_refuses_it() {
    let dir = tempfile::tempdir().unwrap();
    let gate = gate(&dir);
    list(&gate, "srv", &tools("v1"));
    assert_eq!(
        refusal(gate.decide(call("ok"), &caller("a")).await),
        "forwarded",
        "unchanged: policy only"
    );
    list(&gate, "srv", &tools("v2"));

    // No approver attached: a hold is refused at once, saying why.
    let ok = refusal(gate.decide(call("ok"), &caller("a")).await);
    assert!(
        ok.contains("changed the tool") && ok.contains("portcullis tools accept srv ok"),
        "{ok}"
    );
    let ask = refusal(gate.decide(call("ask"), &caller("a")).await);
    assert!(
        ask.contains("changed the tool"),
        "require_approval + change is a pin hold: {ask}"
    );
    let no = refusal(gate.decide(call("no"), &caller("a")).await);
    assert!(
        no.contains("denied by policy") && no.contains("never"),
        "deny wins: {no}"
    );
    let first = refusal(gate.decide(call("few"), &caller("a")).await);
    assert!(first.contains("changed the tool"), "{first}");
    let second = refusal(gate.decide(call("few"), &caller("a")).await);
    assert!(
        second.contains("rate limit"),
        "a rate limit refuses before a person is asked: {second}"
    );

    let _approver = gate.person.broker().attach_approver();
    assert_eq!(refusal(gate.decide(call("ok"), &caller("a")).await), "held");
    let pending = gate.person.broker().pending();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].rule.to_string(), PIN_RULE);
    let change = pending[0].pin_change.as_ref().expect("the approval says what changed");
    assert_eq!(change.fields, vec!["description"]);
    assert_eq!(change.old["description"], "ok v1");
}

#[tokio::test]
async fn approving_a_changed_tool_for_the_session_or_always() {
    let dir = tempfile::tempdir().unwrap();
    let gate = gate(&dir);
    list(&gate, "srv", &tools("v1"));
    // A session grant from before the change does not cover the changed tool.
    gate.person
        .broker()
        .grants
        .grant_session(portcullis_audit::Method::ToolsCall, "srv", "ask", "a");
    list(&gate, "srv", &tools("v2"));
    let _approver = gate.person.broker().attach_approver();

    assert_eq!(refusal(gate.decide(call("ask"), &caller("a")).await), "held");
    let id = gate.person.broker().pending()[0].id.clone();
    gate.person.choose(&id, Choice::Approve(Scope::Session)).unwrap();
    assert_eq!(
        refusal(gate.decide(call("ask"), &caller("a")).await),
        "forwarded",
        "this session"
    );
    assert_eq!(
        refusal(gate.decide(call("ask"), &caller("b")).await),
        "held",
        "not another"
    );
    assert!(
        gate.changed_tools().iter().any(|p| p.tool == "ask"),
        "a session approval does not accept the change"
    );

    assert_eq!(refusal(gate.decide(call("ok"), &caller("b")).await), "held");
    let id = gate
        .person
        .broker()
        .pending()
        .into_iter()
        .find(|p| p.tool == "ok")
        .map(|p| p.id)
        .unwrap();
    gate.person.choose(&id, Choice::Approve(Scope::Always)).unwrap();
    assert!(
        !gate.changed_tools().iter().any(|p| p.tool == "ok"),
        "always accepts the new definition"
    );
    assert_eq!(refusal(gate.decide(call("ok"), &caller("c")).await), "forwarded");
    let policy = std::fs::read_to_string(dir.path().join("policies/srv.json")).unwrap();
    assert_eq!(policy, POLICY, "accepting a change leaves the policy file alone");
}

/// The prompt's risk for a changed tool is not the name guess: a definition that changed since
/// it was pinned is high risk whatever it says of itself.
#[tokio::test]
async fn a_changed_tool_is_high_risk_and_an_unchanged_one_says_which_entry_asked() {
    use portcullis_gate::held_calls::pending::RiskBasis;
    use portcullis_policy::Risk;
    let dir = tempfile::tempdir().unwrap();
    let gate = gate(&dir);
    list(&gate, "srv", &tools("v1"));
    let _approver = gate.person.broker().attach_approver();
    assert_eq!(refusal(gate.decide(call("ask"), &caller("a")).await), "held");
    let asked = gate.person.broker().pending().pop().unwrap();
    assert_eq!(asked.asked_by, "the policy entry for ask in srv.json");
    assert_eq!(asked.risk_basis, RiskBasis::Guessed);
    assert_eq!(asked.input_schema, Some(json!({"type": "object"})));
    assert_eq!(asked.description.as_deref(), Some("ask v1"));

    list(&gate, "srv", &tools("v2"));
    assert_eq!(refusal(gate.decide(call("ok"), &caller("a")).await), "held");
    let changed = gate
        .person
        .broker()
        .pending()
        .into_iter()
        .find(|p| p.tool == "ok")
        .unwrap();
    assert_eq!(changed.risk_basis, RiskBasis::DefinitionChanged);
    assert!(changed.risk_level >= Risk::High, "{:?}", changed.risk_level);
    assert_eq!(changed.asked_by, "the tool's definition changed since it was pinned");
}
