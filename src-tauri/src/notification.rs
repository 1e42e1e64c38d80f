//! OS notifications for held calls, behind one small interface with one implementation per
//! platform: D-Bus notifications with Approve / Deny actions on Linux ([`linux`]); a plain
//! notification elsewhere ([`other`]; the tray and the prompt do the rest). Showing never blocks
//! the caller, and a call decided anywhere closes its notification.

#[cfg(target_os = "linux")]
mod linux;
#[cfg(not(target_os = "linux"))]
mod other;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use portcullis_gateway::approval::PendingApproval;

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

/// Open notifications by approval id; dropping the sender closes the notification.
#[derive(Default)]
pub struct Notifier {
    open: Mutex<HashMap<String, platform::Closer>>,
}

impl Notifier {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, platform::Closer>> {
        self.open.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Shows a notification for a held call, on its own thread.
    pub fn show(self: &Arc<Self>, approval: &PendingApproval, on_action: OnAction) {
        let id = approval.id.clone();
        let notifier = Arc::downgrade(self);
        let done = move |id: &str| {
            if let Some(n) = notifier.upgrade() {
                n.lock().remove(id);
            }
        };
        let closer = platform::show(approval, text(approval), on_action, Box::new(done));
        self.lock().insert(id, closer);
    }

    /// The call was decided (anywhere): its notification goes.
    pub fn close(&self, id: &str) {
        self.lock().remove(id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use portcullis_gateway::approval::ClientInfo;
    use portcullis_gateway::risk::Risk;

    fn approval(tool: &str, client: &str, arguments: serde_json::Value) -> PendingApproval {
        PendingApproval {
            id: "1".into(),
            server: "filesystem".into(),
            tool: tool.into(),
            title: Some("Write file".into()),
            description: None,
            annotations: None,
            risk: Risk::Write,
            risk_level: portcullis_gateway::approval::RiskLevel::Medium,
            risk_basis: portcullis_gateway::approval::RiskBasis::Guessed,
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
            rule: "default".into(),
            requested_at: String::new(),
            requested_at_ms: 0,
            expires_at: String::new(),
            expires_at_ms: 0,
            request_id: "1".into(),
            pin_change: None,
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
}
