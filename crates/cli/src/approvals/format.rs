//! Text for people: the pending-approvals table, the watch card, expiry countdowns and one-line
//! outcomes. Pure functions of their inputs (the clock is passed in).
//!
//! Everything shown comes from an agent or an MCP server, so it is untrusted: control characters,
//! bidirectional overrides and zero-width characters are shown as `\u{..}` escapes. A description
//! must not be able to move the cursor, recolour the card or hide part of the arguments.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use portcullis_audit::Method;
use serde_json::Value;

use crate::control::{Approval, Client, Resolved};
use crate::text::{clean, clean_block, columns, wrap};

/// Column where card values start.
const LABEL_WIDTH: usize = 13;

/// When the gateway will refuse the call if no one decides.
pub(super) fn expiry(approval: &Approval) -> Option<SystemTime> {
    if let Some(at) = approval
        .expires_at
        .as_deref()
        .and_then(|t| humantime::parse_rfc3339_weak(t).ok())
    {
        return Some(at);
    }
    // Only trust the millisecond field if it is a wall-clock time (after 2001).
    approval
        .expires_at_ms
        .filter(|ms| *ms > 1_000_000_000_000)
        .map(|ms| UNIX_EPOCH + Duration::from_millis(ms))
}

/// Time left, rounded up to whole seconds: `43s`, `2m05s`, `1h02m`, `expired`, or `-` if unknown.
pub(super) fn time_left(now: SystemTime, at: Option<SystemTime>) -> String {
    let Some(at) = at else { return "-".to_owned() };
    let left = match at.duration_since(now) {
        Ok(left) if !left.is_zero() => left,
        _ => return "expired".to_owned(),
    };
    let secs = left.as_millis().div_ceil(1000);
    match secs {
        0..=59 => format!("{secs}s"),
        60..=3599 => format!("{}m{:02}s", secs / 60, secs % 60),
        _ => format!("{}h{:02}m", secs / 3600, secs % 3600 / 60),
    }
}

/// `expires in 43s`, or `expired` once the deadline has passed (the gateway's word is awaited).
pub(super) fn countdown(now: SystemTime, approval: &Approval) -> String {
    match time_left(now, expiry(approval)).as_str() {
        "-" => "no deadline given".to_owned(),
        "expired" => "expired".to_owned(),
        left => format!("expires in {left}"),
    }
}

pub(super) fn client_text(client: &Client) -> String {
    match (client.name.as_deref(), client.version.as_deref()) {
        (Some(name), Some(version)) => clean(&format!("{name} {version}")),
        (Some(name), None) => clean(name),
        (None, Some(version)) => clean(&format!("unknown client {version}")),
        (None, None) => "unknown client".to_owned(),
    }
}

/// Which kind of request is held: a tool call when the gateway did not say; the gateway's text
/// when this build does not know the kind.
fn method(approval: &Approval) -> Result<Method, &str> {
    match approval.method.as_deref() {
        None => Ok(Method::ToolsCall),
        Some(text) => text.parse().map_err(|_| text),
    }
}

/// What a held request asks, in the gateway's words (worded here for a gateway that predates
/// them).
pub(super) fn asks(approval: &Approval) -> String {
    if !approval.asks.text.is_empty() {
        // Neutralized by the gateway already; cleaning again changes nothing but a stray control.
        return clean(&approval.asks.text);
    }
    match method(approval) {
        Ok(m) => {
            portcullis_gate::held_calls::asks(
                m,
                &approval.server,
                &approval.tool,
                approval.client.name.as_deref(),
                &approval.arguments,
            )
            .text
        }
        Err(m) => format!("{} on {}: {}", clean(m), clean(&approval.server), clean(&approval.tool)),
    }
}

/// The request in a few words, where a tool call shows its tool: `write_file`, `read
/// file:///etc/passwd`, `prompt summarize`, `sampling`, `open evil.example`, `roots`.
pub(super) fn target(approval: &Approval) -> String {
    let tool = clean(&approval.tool);
    match method(approval) {
        Ok(Method::ToolsCall) => tool,
        Ok(Method::ResourcesRead) => format!("read {tool}"),
        Ok(Method::ResourcesSubscribe) => format!("watch {tool}"),
        Ok(Method::PromptsGet) => format!("prompt {tool}"),
        Ok(Method::SamplingCreateMessage) => "sampling".to_owned(),
        Ok(Method::ElicitationCreate) => match &approval.asks.host {
            Some(host) => format!("open {}", clean(host)),
            None => "elicitation".to_owned(),
        },
        Ok(Method::RootsList) => "roots".to_owned(),
        Err(other) => format!("{} {tool}", clean(other)),
    }
}

/// `portcullis approvals list` without `--json`.
pub(super) fn table(approvals: &[Approval], now: SystemTime) -> String {
    if approvals.is_empty() {
        return "no pending approvals".to_owned();
    }
    let mut rows = vec![["ID", "SERVER", "TOOL", "RISK", "CLIENT", "EXPIRES IN"].map(str::to_owned)];
    for a in approvals {
        rows.push([
            clean(&a.id),
            clean(&a.server),
            match (&a.pin_change, &a.answer) {
                // Held because the server changed the tool since it was pinned.
                (Some(_), _) => format!("{} (CHANGED)", target(a)),
                // Held for what its answer holds: the call already ran.
                (_, Some(_)) => format!("{} (ANSWER)", target(a)),
                (None, None) => target(a),
            },
            clean(a.risk.as_deref().unwrap_or("unknown")),
            if a.client == Client::default() {
                "-".to_owned()
            } else {
                client_text(&a.client)
            },
            time_left(now, expiry(a)),
        ]);
    }
    let mut text = crate::table::render(&rows);
    // A request at another door is said in words under the table: a URI or a prompt's text does
    // not fit a column, and "sampling" alone does not say what the model would be asked.
    for a in approvals
        .iter()
        .filter(|a| method(a) != Ok(Method::ToolsCall) || a.answer.is_some())
    {
        text.push_str(&format!("\n{}: {}", clean(&a.id), asks(a)));
    }
    text
}

fn risk_text(risk: Option<&str>) -> String {
    match risk {
        Some("read") => "read (looks at data)".to_owned(),
        Some("write") => "write (changes data)".to_owned(),
        Some("execute") => "execute (runs commands or code)".to_owned(),
        Some("delete") => "delete (removes data)".to_owned(),
        Some("unknown") | None => "unknown (the server does not say)".to_owned(),
        Some(other) => clean(other),
    }
}

/// The card for one held call, `width` columns wide. `waiting` is how many more are queued.
pub(super) fn card(approval: &Approval, now: SystemTime, width: usize, waiting: usize) -> String {
    let width = width.max(LABEL_WIDTH + 20);
    let mut out = Vec::new();
    let head = format!("---- approval {} ", clean(&approval.id));
    let tail = if waiting > 0 {
        format!(" {waiting} more waiting ----")
    } else {
        String::new()
    };
    let fill = width.saturating_sub(columns(&head) + columns(&tail));
    out.push(format!("{head}{}{tail}", "-".repeat(fill)));
    let mut field = |label: &str, value: &str| {
        let mut lines = wrap(value, width - LABEL_WIDTH).into_iter();
        out.push(
            format!("  {label:<w$}{}", lines.next().unwrap_or_default(), w = LABEL_WIDTH - 2)
                .trim_end()
                .to_owned(),
        );
        out.extend(lines.map(|l| format!("{}{l}", " ".repeat(LABEL_WIDTH))));
    };
    let kind = method(approval);
    if kind != Ok(Method::ToolsCall) || approval.answer.is_some() {
        field("asks", &asks(approval));
    }
    field("server", &clean(&approval.server));
    let tool = match approval.title.as_deref() {
        Some(title) if !title.is_empty() && title != approval.tool => {
            format!("{} ({})", clean(&approval.tool), clean(title))
        }
        _ => clean(&approval.tool),
    };
    match kind {
        Ok(Method::ToolsCall) => field("tool", &tool),
        Ok(Method::ResourcesRead | Method::ResourcesSubscribe) => field("uri", &tool),
        Ok(Method::PromptsGet) => field("prompt", &tool),
        // The server's own requests: `tool` only repeats the kind.
        Ok(_) => {}
        Err(other) => field(&clean(other), &tool),
    }
    if let Some(description) = approval.description.as_deref().filter(|d| !d.trim().is_empty()) {
        field("about", &clean_block(description.trim()));
    }
    field("risk", &risk_text(approval.risk.as_deref()));
    field("agent", &client_text(&approval.client));
    field("session", &clean(approval.session.as_deref().unwrap_or("-")));
    field("rule", &clean(approval.rule.as_deref().unwrap_or("-")));
    if let Some(change) = &approval.pin_change {
        let fields = clean(&change.fields.join(", "));
        field(
            "CHANGED",
            &format!("the server changed this tool since it was pinned: {fields}"),
        );
        if let Some(before) = change.old.get("description").and_then(Value::as_str) {
            if change.fields.iter().any(|f| f == "description") {
                field("before", &clean_block(before.trim()));
            }
        }
        let hint = format!(
            "`portcullis tools show|accept {} {}`",
            clean(&approval.server),
            clean(&approval.tool)
        );
        field("see", &hint);
    }
    let expires = match time_left(now, expiry(approval)).as_str() {
        "-" => "no deadline given".to_owned(),
        "expired" => "expired; the gateway refuses it any moment".to_owned(),
        left => format!("in {left}, then it is refused"),
    };
    field("expires", &expires);
    match kind {
        Ok(Method::SamplingCreateMessage) => sampling_fields(&approval.arguments, &mut field),
        Ok(Method::ElicitationCreate) => elicitation_fields(approval, &mut field),
        _ => {}
    }
    let label = match kind {
        // A resource's only argument is its URI, shown above.
        Ok(Method::ResourcesRead | Method::ResourcesSubscribe) => None,
        Ok(Method::ToolsCall | Method::PromptsGet) | Err(_) => Some("arguments"),
        Ok(_) => Some("params"),
    };
    if let Some(label) = label {
        out.push(format!("  {label}"));
        out.extend(arguments_text(&approval.arguments).lines().map(|l| format!("    {l}")));
    }
    if let Some(answer) = &approval.answer {
        out.extend(answer_lines(answer));
    }
    out.join("\n")
}

/// What came back, for a held answer: each finding (what, where, and what the policy does with
/// it), then the excerpt the audit keeps, each line indented. The excerpt is already neutralized
/// by the gateway (hidden characters written out, secrets redacted); cleaned again all the same.
fn answer_lines(answer: &portcullis_audit::AnswerRecord) -> Vec<String> {
    let mut out = vec![format!("  what came back ({} bytes); found in it", answer.bytes)];
    for f in &answer.findings {
        let action = match f.action.as_str() {
            "hold" => "HOLDS IT",
            "strip" => "stripped",
            "redact" => "redacted",
            "flag" => "flagged",
            other => other,
        };
        out.push(format!(
            "    {} at {} +{}: {} — {action}",
            clean(&f.what),
            clean(&f.location.path),
            f.location.offset,
            clean(&f.excerpt),
        ));
    }
    out.push("  the answer, as kept".to_owned());
    out.extend(clean_block(&answer.excerpt).lines().map(|l| format!("    {l}")));
    out
}

/// A sampling request as text: the system prompt, each message by role, the token limit.
fn sampling_fields(params: &Value, field: &mut impl FnMut(&str, &str)) {
    if let Some(system) = params.get("systemPrompt").and_then(Value::as_str) {
        field("system", &clean_block(system.trim()));
    }
    for message in params.get("messages").and_then(Value::as_array).into_iter().flatten() {
        let role = message.get("role").and_then(Value::as_str).unwrap_or("?");
        field(&clean(role), &clean_block(content_text(message.get("content")).trim()));
    }
    if let Some(max) = params.get("maxTokens").and_then(Value::as_u64) {
        field("max tokens", &max.to_string());
    }
}

/// A message's content as text: its text blocks, and the kind of any other block.
fn content_text(content: Option<&Value>) -> String {
    let block = |b: &Value| match b.get("type").and_then(Value::as_str) {
        Some("text") => b.get("text").and_then(Value::as_str).unwrap_or("").to_owned(),
        Some(other) => format!("[{other}]"),
        None => "[?]".to_owned(),
    };
    match content {
        Some(Value::Array(blocks)) => blocks.iter().map(block).collect::<Vec<_>>().join("\n"),
        Some(b) => block(b),
        None => String::new(),
    }
}

/// An elicitation as text: the message, then the URL and its host, or the fields asked for.
fn elicitation_fields(approval: &Approval, field: &mut impl FnMut(&str, &str)) {
    let params = &approval.arguments;
    if let Some(message) = params.get("message").and_then(Value::as_str) {
        field("message", &clean_block(message.trim()));
    }
    if params.get("mode").and_then(Value::as_str) == Some("url") {
        field("host", &clean(approval.asks.host.as_deref().unwrap_or("(none)")));
        if let Some(url) = params.get("url").and_then(Value::as_str) {
            field("url", &clean(url));
        }
        return;
    }
    let required: Vec<&str> = params
        .pointer("/requestedSchema/required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let properties = params.pointer("/requestedSchema/properties").and_then(Value::as_object);
    for (name, schema) in properties.into_iter().flatten() {
        let kind = schema.get("type").and_then(Value::as_str).unwrap_or("any");
        let mut about = clean(kind);
        if required.contains(&name.as_str()) {
            about.push_str(", required");
        }
        if let Some(title) = schema
            .get("description")
            .or(schema.get("title"))
            .and_then(Value::as_str)
        {
            about.push_str(&format!(": {}", clean(title)));
        }
        field("field", &format!("{} ({about})", clean(name)));
    }
}

/// The arguments in full, pretty-printed.
fn arguments_text(arguments: &Value) -> String {
    match arguments {
        Value::Null => "(none)".to_owned(),
        Value::Object(map) if map.is_empty() => "{}".to_owned(),
        other => clean_block(&serde_json::to_string_pretty(other).unwrap_or_else(|_| other.to_string())),
    }
}

/// The prompt line under a card, kept short so it fits one terminal row.
pub(super) fn prompt(approval: &Approval, now: SystemTime, waiting: usize) -> String {
    let more = if waiting > 0 {
        format!(", {waiting} more waiting")
    } else {
        String::new()
    };
    format!("[a/s/A/d/D/r/q] {}{more} > ", countdown(now, approval))
}

/// `fs write_file`, for one-line messages.
pub(super) fn call_text(approval: &Approval) -> String {
    format!("{} {}", clean(&approval.server), target(approval))
}

/// The line printed after this CLI decided a call.
pub(super) fn approved_line(id: &str, scope: &str, call: Option<&Approval>) -> String {
    let mut line = format!("approved {} ({scope})", clean(id));
    if let Some(call) = call {
        line.push_str(&format!(": {}", call_text(call)));
    }
    line
}

pub(super) fn rejected_line(id: &str, always: bool, reason: Option<&str>, call: Option<&Approval>) -> String {
    let mut line = format!("rejected {}", clean(id));
    if always {
        line.push_str(" (always)");
    }
    if let Some(call) = call {
        line.push_str(&format!(": {}", call_text(call)));
    }
    if let Some(reason) = reason {
        line.push_str(&format!(" (reason: {})", clean(reason)));
    }
    line
}

/// What to say when a call left the queue without this CLI deciding it.
pub(super) fn resolved_line(resolved: &Resolved, call: Option<&Approval>) -> String {
    let what = match call {
        Some(call) => format!("{} ({})", clean(&resolved.id), call_text(call)),
        None => clean(&resolved.id),
    };
    let by = resolved.decided_by.as_deref();
    match (resolved.decision.as_str(), by) {
        ("approved", _) => match resolved.scope.as_deref() {
            Some(scope) => format!("{what} was approved elsewhere ({})", clean(scope)),
            None => format!("{what} was approved elsewhere"),
        },
        ("rejected", _) => format!("{what} was rejected elsewhere"),
        ("timed_out", _) => format!("{what} timed out and was refused"),
        ("cancelled", Some("client")) => format!("{what} was cancelled by the agent"),
        ("cancelled", _) => format!("{what} was withdrawn by the gateway"),
        (decision, Some(by)) => format!("{what} was {} (by {})", clean(decision), clean(by)),
        (decision, None) => format!("{what} was {}", clean(decision)),
    }
}

#[cfg(test)]
mod tests {
    use rstest::rstest;
    use serde_json::json;

    use super::*;

    fn at(text: &str) -> SystemTime {
        humantime::parse_rfc3339(text).unwrap()
    }

    fn approval() -> Approval {
        serde_json::from_value(json!({
            "id": "17", "server": "fs", "tool": "write_file", "title": "Write File",
            "description": "Create a new file or completely overwrite an existing file with new content.",
            "risk": "write", "arguments": {"path": "/tmp/notes.txt", "content": "hello"},
            "session": "3f2a9c", "client": {"name": "claude-code", "version": "1.0"},
            "rule": "tools.write_file", "requested_at": "2026-11-30T01:02:03Z",
            "expires_at": "2026-11-30T01:02:48Z", "expires_at_ms": 1_796_000_568_000_u64
        }))
        .unwrap()
    }

    #[rstest]
    #[case::seconds("2026-11-30T01:02:05Z", "43s")]
    #[case::rounds_up("2026-11-30T01:02:47.200Z", "1s")]
    #[case::at_deadline("2026-11-30T01:02:48Z", "expired")]
    #[case::past("2026-11-30T01:05:00Z", "expired")]
    #[case::minutes("2026-11-30T01:00:43Z", "2m05s")]
    #[case::hours("2026-11-29T23:00:00Z", "2h02m")]
    fn time_left_is_short_and_rounds_up(#[case] now: &str, #[case] expected: &str) {
        assert_eq!(time_left(at(now), expiry(&approval())), expected);
    }

    #[test]
    fn expiry_falls_back_to_wall_clock_millis_only() {
        let mut a = approval();
        a.expires_at = None;
        assert_eq!(expiry(&a), Some(UNIX_EPOCH + Duration::from_secs(1796000568)));
        a.expires_at_ms = Some(456);
        assert_eq!(expiry(&a), None, "a small number is not a wall-clock time");
        assert_eq!(time_left(SystemTime::now(), None), "-");
    }

    #[test]
    fn card_shows_every_field_and_the_full_arguments() {
        let text = card(&approval(), at("2026-11-30T01:02:05Z"), 60, 2);
        let expected = r#"---- approval 17 ----------------------- 2 more waiting ----
  server     fs
  tool       write_file (Write File)
  about      Create a new file or completely overwrite an
             existing file with new content.
  risk       write (changes data)
  agent      claude-code 1.0
  session    3f2a9c
  rule       tools.write_file
  expires    in 43s, then it is refused
  arguments
    {
      "path": "/tmp/notes.txt",
      "content": "hello"
    }"#;
        assert_eq!(text, expected);
    }

    #[test]
    fn card_without_optional_fields() {
        let a: Approval =
            serde_json::from_value(json!({"id": "3", "server": "gh", "tool": "merge", "arguments": {}})).unwrap();
        let text = card(&a, SystemTime::now(), 40, 0);
        let expected = "---- approval 3 ------------------------
  server     gh
  tool       merge
  risk       unknown (the server does
             not say)
  agent      unknown client
  session    -
  rule       -
  expires    no deadline given
  arguments
    {}";
        assert_eq!(text, expected);
    }

    #[test]
    fn card_of_a_changed_tool_says_what_changed() {
        let mut a = approval();
        a.rule = Some("pin:changed".into());
        a.pin_change = Some(
            serde_json::from_value(
                json!({"fields": ["description"], "old": {"description": "Writes a file."},
                "new": {"description": "Writes a file. Also mail it out."}, "diff": []}),
            )
            .unwrap(),
        );
        let text = card(&a, at("2026-11-30T01:02:05Z"), 100, 0);
        let changed = text
            .lines()
            .skip_while(|l| !l.trim_start().starts_with("rule"))
            .take(4)
            .collect::<Vec<_>>()
            .join("\n");
        let expected = "  rule       pin:changed
  CHANGED    the server changed this tool since it was pinned: description
  before     Writes a file.
  see        `portcullis tools show|accept fs write_file`";
        assert_eq!(changed, expected);
    }

    #[test]
    fn card_of_a_held_answer_shows_what_came_back_and_what_holds_it() {
        let mut a = approval();
        a.rule = Some("results:hold".into());
        a.asks.text = "The answer of write_file from fs holds AWS access key: pass it to claude-code?".into();
        a.answer = Some(
            serde_json::from_value(json!({"bytes": 120, "excerpt": "deploy with [redacted] to\\u{200B} prod",
                "findings": [
                    {"kind": "secret", "action": "hold", "location": {"path": "/content/0/text", "offset": 12, "len": 20},
                     "what": "AWS access key", "excerpt": "deploy with [redacted]"},
                    {"kind": "invisible", "action": "strip", "location": {"path": "/content/0/text", "offset": 35, "len": 3},
                     "what": "zero-width space", "excerpt": "to\\u{200B} prod"}]}))
            .unwrap(),
        );
        let text = card(&a, at("2026-11-30T01:02:05Z"), 100, 0);
        assert!(
            text.contains("  asks       The answer of write_file from fs holds AWS access key"),
            "{text}"
        );
        let tail = text
            .lines()
            .skip_while(|l| !l.starts_with("  what came back"))
            .collect::<Vec<_>>()
            .join("\n");
        let expected = "  what came back (120 bytes); found in it
    AWS access key at /content/0/text +12: deploy with [redacted] — HOLDS IT
    zero-width space at /content/0/text +35: to\\u{200B} prod — stripped
  the answer, as kept
    deploy with [redacted] to\\u{200B} prod";
        assert_eq!(tail, expected);
        let listed = table(&[a], at("2026-11-30T01:02:05Z"));
        assert!(
            listed.contains("write_file (ANSWER)") && listed.contains("17: The answer of write_file"),
            "{listed}"
        );
    }

    #[test]
    fn card_makes_terminal_controls_visible() {
        let mut a = approval();
        a.description = Some("fine\u{1b}[2K\rrisk read\u{202e}txt.exe".into());
        a.arguments = json!({"cmd": "rm -rf /\u{9b}31m\u{7f}"});
        let text = card(&a, at("2026-11-30T01:02:05Z"), 80, 0);
        assert!(
            !text.contains('\u{1b}') && !text.contains('\r') && !text.contains('\u{202e}'),
            "{text}"
        );
        assert!(
            !text.contains('\u{9b}') && !text.contains('\u{7f}'),
            "C1 controls and DEL must be escaped: {text}"
        );
        assert!(text.contains(r"fine\u{1b}[2K\u{d}risk read\u{202e}txt.exe"), "{text}");
    }

    #[test]
    fn card_fields_keep_within_the_width_with_wide_characters_and_controls() {
        let mut a = approval();
        a.description = Some("日本語の説明文はとても長いので折り返す必要があります\u{1b}[2K。 ok".into());
        let text = card(&a, at("2026-11-30T01:02:05Z"), 40, 0);
        let fields = text.lines().take_while(|l| *l != "  arguments");
        for line in fields {
            assert!(columns(line) <= 40, "{line:?} is {} columns wide", columns(line));
        }
        assert!(
            !text.contains('\u{1b}'),
            "the control is neutralized before wrapping: {text}"
        );
    }

    #[test]
    fn table_lists_calls_with_time_left() {
        let mut other = approval();
        other.id = "18".into();
        other.server = "github".into();
        other.tool = "merge_pull_request".into();
        other.risk = None;
        other.client = Client::default();
        other.expires_at = Some("2026-11-30T01:04:00Z".into());
        let text = table(&[approval(), other], at("2026-11-30T01:02:05Z"));
        let expected = "\
ID  SERVER  TOOL                RISK     CLIENT           EXPIRES IN
17  fs      write_file          write    claude-code 1.0  43s
18  github  merge_pull_request  unknown  -                1m55s";
        assert_eq!(text, expected);
    }

    #[test]
    fn table_marks_calls_held_for_a_changed_tool() {
        let mut a = approval();
        a.pin_change = Some(serde_json::from_value(json!({"fields": ["description"]})).unwrap());
        let text = table(&[a], at("2026-11-30T01:02:05Z"));
        let expected = "\
ID  SERVER  TOOL                  RISK   CLIENT           EXPIRES IN
17  fs      write_file (CHANGED)  write  claude-code 1.0  43s";
        assert_eq!(text, expected);
    }

    /// A request at another door as the gateway sends it, with the gateway's words.
    fn held(method: Method, tool: &str, arguments: Value) -> Approval {
        let asks = portcullis_gate::held_calls::asks(method, "everything", tool, Some("cursor"), &arguments);
        serde_json::from_value(json!({
            "id": "21", "server": "everything", "method": method.as_str(), "tool": tool, "asks": asks,
            "arguments": arguments, "client": {"name": "cursor"}, "expires_at": "2026-11-30T01:02:48Z"
        }))
        .unwrap()
    }

    #[test]
    fn table_names_the_kind_and_says_the_words_of_other_requests() {
        let read = held(
            Method::ResourcesRead,
            "file:///home/u/.ssh/id_ed25519",
            json!({"uri": "file:///home/u/.ssh/id_ed25519"}),
        );
        let mut sampling = held(
            Method::SamplingCreateMessage,
            "sampling",
            json!({"messages": [{"role": "user", "content": {"type": "text", "text": "Say\nhi\u{1b}[2J"}}]}),
        );
        sampling.id = "22".into();
        let text = table(&[approval(), read, sampling], at("2026-11-30T01:02:05Z"));
        let expected = "\
ID  SERVER      TOOL                                 RISK     CLIENT           EXPIRES IN
17  fs          write_file                           write    claude-code 1.0  43s
21  everything  read file:///home/u/.ssh/id_ed25519  unknown  cursor           43s
22  everything  sampling                             unknown  cursor           43s
21: cursor wants to read file:///home/u/.ssh/id_ed25519 from everything
22: everything wants your model to answer this prompt: \"Say hi\\u{1b}[2J\"";
        assert_eq!(text, expected);
        assert!(
            !text.contains('\u{1b}'),
            "the server's prompt cannot steer the terminal"
        );
    }

    #[test]
    fn a_gateway_without_words_gets_them_worded_here() {
        let a: Approval = serde_json::from_value(json!({
            "id": "3", "server": "gh", "method": "prompts/get", "tool": "review", "arguments": {}
        }))
        .unwrap();
        assert_eq!(asks(&a), "An agent wants to fetch the prompt review from gh");
        assert_eq!(call_text(&a), "gh prompt review");
        let newer: Approval = serde_json::from_value(json!({
            "id": "4", "server": "gh", "method": "tasks/run", "tool": "t1", "arguments": {}
        }))
        .unwrap();
        assert_eq!(
            call_text(&newer),
            "gh tasks/run t1",
            "a kind this build does not know still shows"
        );
    }

    #[test]
    fn card_of_a_resource_read_shows_the_uri_not_an_arguments_block() {
        let a = held(
            Method::ResourcesRead,
            "file:///etc/passwd",
            json!({"uri": "file:///etc/passwd"}),
        );
        let text = card(&a, at("2026-11-30T01:02:05Z"), 80, 0);
        let expected = "---- approval 21 ---------------------------------------------------------------
  asks       cursor wants to read file:///etc/passwd from everything
  server     everything
  uri        file:///etc/passwd
  risk       unknown (the server does not say)
  agent      cursor
  session    -
  rule       -
  expires    in 43s, then it is refused";
        assert_eq!(text, expected);
    }

    #[test]
    fn card_of_sampling_shows_the_prompt_as_text() {
        let a = held(
            Method::SamplingCreateMessage,
            "sampling",
            json!({
                "systemPrompt": "You are terse.",
                "messages": [
                    {"role": "user", "content": {"type": "text", "text": "Summarize\nthis \u{202e}file"}},
                    {"role": "assistant", "content": [{"type": "image", "data": "AA"}]}
                ],
                "maxTokens": 200
            }),
        );
        let text = card(&a, at("2026-11-30T01:02:05Z"), 100, 0);
        let part: Vec<&str> = text
            .lines()
            .skip_while(|l| !l.trim_start().starts_with("expires"))
            .skip(1)
            .take(6)
            .collect();
        assert_eq!(
            part,
            [
                "  system     You are terse.",
                "  user       Summarize",
                "             this \\u{202e}file",
                "  assistant  [image]",
                "  max tokens 200",
                "  params",
            ]
        );
        assert!(text
            .lines()
            .nth(1)
            .unwrap()
            .starts_with("  asks       everything wants your model"));
        assert!(!text.contains("\n  tool"), "sampling has no tool: {text}");
    }

    #[test]
    fn card_of_an_elicitation_shows_the_host_or_the_fields() {
        let url = held(
            Method::ElicitationCreate,
            "elicitation",
            json!({"mode": "url", "url": "https://bank.example@evil.example/x", "message": "Sign in", "elicitationId": "e"}),
        );
        let text = card(&url, at("2026-11-30T01:02:05Z"), 120, 0);
        assert!(
            text.lines()
                .nth(1)
                .unwrap()
                .starts_with("  asks       evil.example — everything asks you to open"),
            "{text}"
        );
        assert!(
            text.contains(
                "\n  message    Sign in\n  host       evil.example\n  url        https://bank.example@evil.example/x\n"
            ),
            "{text}"
        );
        let form = held(
            Method::ElicitationCreate,
            "elicitation",
            json!({"message": "Who are you?", "requestedSchema": {"type": "object", "required": ["name"],
                "properties": {"name": {"type": "string", "description": "Your name"}, "age": {"type": "integer"}}}}),
        );
        let text = card(&form, at("2026-11-30T01:02:05Z"), 120, 0);
        assert!(
            text.contains("\n  message    Who are you?\n  field      name (string, required: Your name)\n  field      age (integer)\n  params\n"),
            "{text}"
        );
        assert_eq!(call_text(&url), "everything open evil.example");
    }

    #[test]
    fn empty_table_says_so() {
        assert_eq!(table(&[], SystemTime::now()), "no pending approvals");
    }

    #[test]
    fn prompt_counts_down_and_counts_the_queue() {
        assert_eq!(
            prompt(&approval(), at("2026-11-30T01:02:05Z"), 0),
            "[a/s/A/d/D/r/q] expires in 43s > "
        );
        assert_eq!(
            prompt(&approval(), at("2026-11-30T01:02:05Z"), 3),
            "[a/s/A/d/D/r/q] expires in 43s, 3 more waiting > "
        );
    }

    #[rstest]
    #[case::approved_elsewhere(
        "approved",
        Some("user"),
        Some("session"),
        "17 (fs write_file) was approved elsewhere (session)"
    )]
    #[case::rejected_elsewhere("rejected", Some("user"), None, "17 (fs write_file) was rejected elsewhere")]
    #[case::timed_out("timed_out", Some("timeout"), None, "17 (fs write_file) timed out and was refused")]
    #[case::client_cancel("cancelled", Some("client"), None, "17 (fs write_file) was cancelled by the agent")]
    #[case::gateway_cancel(
        "cancelled",
        Some("gateway"),
        None,
        "17 (fs write_file) was withdrawn by the gateway"
    )]
    #[case::future_decision("escalated", Some("policy"), None, "17 (fs write_file) was escalated (by policy)")]
    fn resolved_lines(
        #[case] decision: &str,
        #[case] by: Option<&str>,
        #[case] scope: Option<&str>,
        #[case] expected: &str,
    ) {
        let resolved = Resolved {
            id: "17".into(),
            decision: decision.into(),
            decided_by: by.map(Into::into),
            scope: scope.map(Into::into),
        };
        assert_eq!(resolved_line(&resolved, Some(&approval())), expected);
    }

    #[test]
    fn decision_lines() {
        assert_eq!(
            approved_line("17", "once", Some(&approval())),
            "approved 17 (once): fs write_file"
        );
        assert_eq!(approved_line("17", "always", None), "approved 17 (always)");
        assert_eq!(
            rejected_line("17", false, None, Some(&approval())),
            "rejected 17: fs write_file"
        );
        assert_eq!(
            rejected_line("17", true, Some("not on prod"), Some(&approval())),
            "rejected 17 (always): fs write_file (reason: not on prod)"
        );
    }
}
