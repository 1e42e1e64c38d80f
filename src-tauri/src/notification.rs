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

use portcullis_audit::Method;
use portcullis_gate::held_calls::pending::PendingApproval;
use portcullis_gate::held_calls::{asks_of, Asks};

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
///
/// A request at another door than `tools/call` is worded by [`asks_of`] (the words the prompt and
/// the CLI show, already neutralized for a terminal): the summary asks the question of its kind,
/// the body says what exactly is asked.
pub fn text(a: &PendingApproval) -> Text {
    use portcullis_audit::neutralize;
    if a.method != Method::ToolsCall {
        let asks = asks_of(a);
        return Text {
            summary: question(a, &asks),
            body: neutralize::markup(&asks.text),
        };
    }
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

/// The summary of a request at another door: its kind as a question. A URL to open leads with
/// its host, as the words do.
fn question(a: &PendingApproval, asks: &Asks) -> String {
    let server = portcullis_audit::neutralize::terminal(&a.server);
    match a.method {
        Method::ToolsCall => format!(
            "Approve {} on {server}?",
            portcullis_audit::neutralize::terminal(&a.tool)
        ),
        Method::ResourcesRead => format!("Allow reading a resource from {server}?"),
        Method::ResourcesSubscribe => format!("Allow watching a resource on {server}?"),
        Method::PromptsGet => format!("Allow fetching a prompt from {server}?"),
        Method::SamplingCreateMessage => format!("Let {server} use your model?"),
        Method::ElicitationCreate => match &asks.host {
            Some(host) => format!("{host}: open a link for {server}?"),
            None => format!("{server} asks you something"),
        },
        Method::RootsList => format!("Let {server} see your folders?"),
    }
}

/// One line of the several-calls notification: the tool and server for a tool call, the words
/// (cut) for any other request.
fn listed(a: &PendingApproval) -> String {
    use portcullis_audit::neutralize::markup;
    if a.method == Method::ToolsCall {
        return format!("{} on {}", markup(&a.tool), markup(&a.server));
    }
    let mut words = asks_of(a).text;
    if words.chars().count() > 100 {
        words = words.chars().take(99).collect::<String>() + "…";
    }
    markup(&words)
}

/// The notification for several held calls: how many, and the first few by tool and server.
pub fn count_text(pending: &[PendingApproval]) -> Text {
    const LISTED: usize = 3;
    let mut lines: Vec<String> = pending.iter().take(LISTED).map(listed).collect();
    if pending.len() > LISTED {
        lines.push(format!("and {} more", pending.len() - LISTED));
    }
    let what = if pending.iter().all(|a| a.method == Method::ToolsCall) {
        "tool calls"
    } else {
        "requests"
    };
    Text {
        summary: format!("{} {what} wait for your decision", pending.len()),
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
mod tests;
