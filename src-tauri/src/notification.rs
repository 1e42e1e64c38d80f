//! OS notifications for held calls, behind one small interface with one implementation per
//! platform: D-Bus notifications on Linux ([`linux`]); a plain notification elsewhere
//! ([`other`]; the tray and the prompt do the rest). Showing never blocks the caller.
//!
//! There is **one** notification, whatever the number of held calls: it names the call when one
//! waits (with Approve / Deny actions for it), and counts them when several do (its action opens
//! the prompt). Each change replaces it in place; when nothing waits, it goes.

#[cfg(target_os = "linux")]
mod linux;
#[cfg(not(target_os = "linux"))]
mod other;

use std::sync::{Arc, Mutex};

use portcullis_gate::held_calls::pending::PendingApproval;

#[cfg(target_os = "linux")]
use linux as platform;
#[cfg(not(target_os = "linux"))]
use other as platform;

/// What the person did with a notification.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Approve,
    Deny,
    /// Clicked the notification itself: open the prompt.
    Open,
}

pub type OnAction = Arc<dyn Fn(&str, Action) + Send + Sync>;

/// The text of a held call's notification.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Text {
    pub summary: String,
    pub body: String,
}

/// Tool, server, title, client name and arguments are the agent's or the server's choice. The
/// body is markup to notification daemons (a subset of HTML), so every piece of it is escaped
/// ([`neutralize::markup`]); the summary is plain text by the spec, so it only gets its control
/// and bidi characters made visible.
pub fn text(a: &PendingApproval) -> Text {
    use portcullis_audit::neutralize;
    let agent = a.client.name.as_deref().unwrap_or("An agent");
    let what = a.title.as_deref().map(|t| format!(" ({t})")).unwrap_or_default();
    let mut args = a.arguments.to_string();
    // Cut before escaping, so an entity or an escape is never cut in half.
    if args.chars().count() > 120 {
        args = args.chars().take(119).collect::<String>() + "…";
    }
    let m = neutralize::markup;
    Text {
        summary: format!(
            "Approve {} on {}?",
            neutralize::terminal(&a.tool),
            neutralize::terminal(&a.server)
        ),
        body: format!(
            "{} wants to call {}{}.\nArguments: {}",
            m(agent),
            m(&a.tool),
            m(&what),
            m(&args)
        ),
    }
}

/// The notification for several held calls: how many, and the first few by tool and server.
pub fn count_text(pending: &[PendingApproval]) -> Text {
    use portcullis_audit::neutralize;
    const LISTED: usize = 3;
    let mut lines: Vec<String> = pending
        .iter()
        .take(LISTED)
        .map(|a| format!("{} on {}", neutralize::markup(&a.tool), neutralize::markup(&a.server)))
        .collect();
    if pending.len() > LISTED {
        lines.push(format!("and {} more", pending.len() - LISTED));
    }
    Text {
        summary: format!("{} tool calls wait for your decision", pending.len()),
        body: lines.join("\n"),
    }
}

/// What the one notification shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shown {
    pub text: Text,
    /// The call its Approve / Deny / Open actions act on (the first when several wait).
    pub id: String,
    /// Approve and Deny are offered only when exactly one call waits.
    pub decide: bool,
    /// Until when the daemon keeps it (the latest deadline), epoch ms.
    pub expires_at_ms: i64,
}

/// The notification for the held calls `pending` (`None`: nothing waits).
pub fn shown(pending: &[PendingApproval]) -> Option<Shown> {
    let first = pending.iter().min_by_key(|a| (a.requested_at_ms, a.id.clone()))?;
    let expires_at_ms = pending
        .iter()
        .map(|a| a.expires_at_ms)
        .max()
        .unwrap_or(first.expires_at_ms);
    let (text, decide) = if pending.len() == 1 {
        (text(first), true)
    } else {
        (count_text(pending), false)
    };
    Some(Shown {
        text,
        id: first.id.clone(),
        decide,
        expires_at_ms,
    })
}

/// The one notification: the state it should show, followed by the platform's worker thread.
#[derive(Default)]
pub struct Notifier {
    wanted: Mutex<Option<tokio::sync::watch::Sender<Option<Shown>>>>,
}

impl Notifier {
    /// Makes the notification match the held calls `pending` (shown, replaced in place, or
    /// closed); nothing happens when it already does. Starts the worker on first use.
    pub fn refresh(&self, pending: &[PendingApproval], on_action: OnAction) {
        let want = shown(pending);
        let mut wanted = self.wanted.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let tx = wanted.get_or_insert_with(|| {
            let (tx, rx) = tokio::sync::watch::channel(None);
            platform::run(rx, on_action);
            tx
        });
        tx.send_if_modified(|current| {
            let changed = *current != want;
            *current = want;
            changed
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use portcullis_gate::held_calls::pending::ClientInfo;
    use portcullis_policy::{Risk, RuleRef, ToolClass};

    fn approval(tool: &str, client: &str, arguments: serde_json::Value) -> PendingApproval {
        PendingApproval {
            id: "1".into(),
            server: "filesystem".into(),
            tool: tool.into(),
            title: Some("Write file".into()),
            description: None,
            annotations: None,
            risk: ToolClass::Write,
            risk_level: Risk::Medium,
            risk_basis: portcullis_gate::held_calls::pending::RiskBasis::Guessed,
            reason: None,
            asked_by: "the default of fs.json (no entry names write_file)".into(),
            input_schema: None,
            arguments_json: arguments.to_string(),
            arguments,
            session: "s".into(),
            client: ClientInfo {
                name: Some(client.into()),
                version: None,
            },
            rule: portcullis_gate::held_calls::pending::HeldBy::Policy(RuleRef::Default),
            requested_at: String::new(),
            requested_at_ms: 0,
            expires_at: String::new(),
            expires_at_ms: 0,
            request_id: "1".into(),
            pin_change: None,
            asked_before: false,
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
}
