//! The notification's words for one and for several held requests.

use super::*;

fn approval(tool: &str, client: &str, arguments: serde_json::Value) -> PendingApproval {
    PendingApproval {
        server: "filesystem".into(),
        title: Some("Write file".into()),
        ..crate::test_support::pending_approval(tool, client, arguments)
    }
}

#[test]
fn the_title_names_tool_and_server() {
    let a = approval("write_file", "cursor", serde_json::json!({"path": "x".repeat(300)}));
    let t = text(&a);
    assert_eq!(t.summary, "Approve write_file on filesystem?");
    assert!(
        t.body.starts_with("cursor wants to call write_file (Write file)."),
        "{}",
        t.body
    );
    assert!(
        t.body.ends_with('…') && t.body.len() < 250,
        "long arguments are cut: {}",
        t.body
    );
}

#[test]
fn markup_and_controls_from_the_agent_are_escaped() {
    let a = approval(
        "<b>rm</b>\u{202e}",
        "evil & <a href=\"https://x\">co</a>",
        serde_json::json!({"q": "<img src=x>\u{1b}[2J"}),
    );
    let t = text(&a);
    assert_eq!(t.summary, r"Approve <b>rm</b>\u{202e} on filesystem?");
    assert!(
        t.body.starts_with(
            r"evil &amp; &lt;a href=&quot;https://x&quot;&gt;co&lt;/a&gt; wants to call &lt;b&gt;rm&lt;/b&gt;\u{202e} (Write file)."
        ),
        "{}",
        t.body
    );
    assert!(t.body.contains(r"&lt;img src=x&gt;\u001b[2J"), "{}", t.body);
    assert!(!t.body.contains(['<', '>', '\u{1b}', '\u{202e}']), "{}", t.body);
}

/// `a` held at another door, worded as the gate words it.
fn at(mut a: PendingApproval, method: Method, tool: &str, arguments: serde_json::Value) -> PendingApproval {
    a.method = method;
    a.tool = tool.into();
    a.asks = portcullis_gate::held_calls::asks(method, &a.server, tool, a.client.name.as_deref(), &arguments);
    a.arguments = arguments;
    a
}

#[test]
fn a_request_at_another_door_is_worded_as_the_prompt_words_it() {
    let base = || approval("write_file", "cursor", serde_json::json!({}));
    let read = at(
        base(),
        Method::ResourcesRead,
        "file:///home/u/.ssh/id_ed25519",
        serde_json::json!({"uri": "file:///home/u/.ssh/id_ed25519"}),
    );
    assert_eq!(
        text(&read),
        Text {
            summary: "Allow reading a resource from filesystem?".into(),
            body: "cursor wants to read file:///home/u/.ssh/id_ed25519 from filesystem".into(),
        }
    );
    let sampling = at(
        base(),
        Method::SamplingCreateMessage,
        "sampling",
        serde_json::json!({"messages": [{"role": "user", "content": {"type": "text", "text": "<b>Hi</b>\u{1b}[2J"}}]}),
    );
    assert_eq!(
        text(&sampling),
        Text {
            summary: "Let filesystem use your model?".into(),
            body: r"filesystem wants your model to answer this prompt: &quot;&lt;b&gt;Hi&lt;/b&gt;\u{1b}[2J&quot;"
                .into(),
        },
        "the server's prompt is shown, its markup escaped and its controls visible"
    );
    let url = at(
        base(),
        Method::ElicitationCreate,
        "elicitation",
        serde_json::json!({"mode": "url", "url": "https://bank.example@evil.example/x", "message": "Sign in"}),
    );
    let t = text(&url);
    assert_eq!(
        t.summary, "evil.example: open a link for filesystem?",
        "the host comes first"
    );
    assert!(
        t.body.starts_with("evil.example — filesystem asks you to open"),
        "{}",
        t.body
    );
    let form = at(
        base(),
        Method::ElicitationCreate,
        "elicitation",
        serde_json::json!({"message": "Your name?", "requestedSchema": {"properties": {"name": {}}}}),
    );
    assert_eq!(text(&form).summary, "filesystem asks you something");
    assert_eq!(text(&form).body, "filesystem asks you for: Your name? (field: name)");
    let roots = at(base(), Method::RootsList, "roots", serde_json::json!({}));
    assert_eq!(text(&roots).summary, "Let filesystem see your folders?");
    let prompt = at(base(), Method::PromptsGet, "complex_prompt", serde_json::json!({}));
    assert_eq!(text(&prompt).summary, "Allow fetching a prompt from filesystem?");
    let watch = at(base(), Method::ResourcesSubscribe, "file:///x", serde_json::json!({}));
    assert_eq!(text(&watch).summary, "Allow watching a resource on filesystem?");
}

#[test]
fn a_request_from_a_peer_without_words_is_worded_here() {
    let mut a = approval(
        "file:///etc/passwd",
        "cursor",
        serde_json::json!({"uri": "file:///etc/passwd"}),
    );
    a.method = Method::ResourcesRead;
    assert!(a.asks.text.is_empty());
    assert_eq!(text(&a).body, "cursor wants to read file:///etc/passwd from filesystem");
}

#[test]
fn several_requests_of_other_kinds_are_listed_by_their_words() {
    let mut a = approval("write_file", "cursor", serde_json::json!({}));
    a.id = "1".into();
    let mut b = at(
        approval("x", "cursor", serde_json::json!({})),
        Method::RootsList,
        "roots",
        serde_json::json!({}),
    );
    b.id = "2".into();
    b.requested_at_ms = 1;
    let two = shown(&[a, b]).unwrap();
    assert_eq!(two.text.summary, "2 requests wait for your decision");
    assert_eq!(
        two.text.body,
        "write_file on filesystem\nfilesystem wants to know your folders (roots)"
    );
}

#[test]
fn one_notification_names_one_call_and_counts_several() {
    assert_eq!(shown(&[]), None);
    let mut a = approval("write_file", "cursor", serde_json::json!({"path": "/x"}));
    a.expires_at_ms = 10;
    let one = shown(std::slice::from_ref(&a)).unwrap();
    assert!(one.decide, "a single call can be decided from the notification");
    assert_eq!(one.text, text(&a));
    let mut calls = vec![a];
    for (i, tool) in ["read_file", "<b>x</b>", "move_file"].iter().enumerate() {
        let mut b = approval(tool, "cursor", serde_json::json!({}));
        b.id = format!("{}", i + 2);
        b.requested_at_ms = i64::try_from(i).unwrap() + 1;
        b.expires_at_ms = 50;
        calls.push(b);
    }
    let four = shown(&calls).unwrap();
    assert!(
        !four.decide,
        "with several waiting, only Open: which call would Approve decide?"
    );
    assert_eq!(four.id, "1", "Open shows the oldest call");
    assert_eq!(four.expires_at_ms, 50, "kept until the last deadline");
    assert_eq!(four.text.summary, "4 tool calls wait for your decision");
    assert_eq!(
        four.text.body,
        "write_file on filesystem\nread_file on filesystem\n&lt;b&gt;x&lt;/b&gt; on filesystem\nand 1 more"
    );
}
