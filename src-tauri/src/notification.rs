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

pub fn text(a: &PendingApproval) -> Text {
    let agent = a.client.name.as_deref().unwrap_or("An agent");
    let what = a.title.as_deref().map(|t| format!(" ({t})")).unwrap_or_default();
    let mut args = a.arguments.to_string();
    if args.chars().count() > 120 {
        args = args.chars().take(119).collect::<String>() + "…";
    }
    Text {
        summary: format!("Approve {} on {}?", a.tool, a.server),
        body: format!("{agent} wants to call {}{what}.\nArguments: {args}", a.tool),
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

    #[test]
    fn the_title_names_tool_and_server() {
        let a = PendingApproval {
            id: "1".into(),
            server: "filesystem".into(),
            tool: "write_file".into(),
            title: Some("Write file".into()),
            description: None,
            annotations: None,
            risk: Risk::Write,
            arguments: serde_json::json!({"path": "x".repeat(300)}),
            session: "s".into(),
            client: ClientInfo {
                name: Some("cursor".into()),
                version: None,
            },
            rule: "default".into(),
            requested_at: String::new(),
            requested_at_ms: 0,
            expires_at: String::new(),
            expires_at_ms: 0,
            request_id: "1".into(),
            pin_change: None,
        };
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
}
