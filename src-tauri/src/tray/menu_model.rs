//! What the tray shows, as data: a pure function of the pending calls, the pause switch and the
//! gateway's state. Tests check this model; [`super::render`] only draws it.

use portcullis_gate::held_calls::pending::PendingApproval;
use portcullis_gate::policy_store::PolicyProblem;

/// Pending calls listed in the menu; the rest are summed up in one line.
pub const MAX_LISTED: usize = 8;

pub const OPEN: &str = "open";
pub const PAUSE: &str = "pause";
pub const QUIT: &str = "quit";
pub const MORE: &str = "more";
/// Prefix of a pending call's entry id; the approval id follows.
pub const APPROVAL_PREFIX: &str = "approval:";
/// Prefix of a policy file not in force; the server follows. Opens the Servers view.
pub const POLICY_PREFIX: &str = "policy:";
/// Prefix of a client's setup line (shown, not clickable); its position follows.
pub const SETUP_PREFIX: &str = "setup:";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Icon {
    Idle,
    /// Calls are waiting; the count is drawn in the badge (10 and more as "9+").
    Attention(usize),
    Paused,
    /// The gateway is not running.
    Failed,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    Item { id: String, label: String, enabled: bool },
    Check { id: String, label: String, checked: bool },
    Separator,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrayModel {
    pub icon: Icon,
    pub tooltip: String,
    pub entries: Vec<Entry>,
}

/// What the model is drawn from.
pub struct TrayInput<'a> {
    pub pending: &'a [PendingApproval],
    pub paused: bool,
    /// Why the gateway is not running, if it is not.
    pub failure: Option<&'a str>,
    /// Policy files the gateway rejected: the policy in force is not what is on disk.
    pub policies: &'a [PolicyProblem],
    /// One line per client: what is routed and what has a policy ([`setup_entries`]).
    pub setup: &'a [String],
}

fn item(id: &str, label: impl Into<String>, enabled: bool) -> Entry {
    Entry::Item {
        id: id.to_owned(),
        label: label.into(),
        enabled,
    }
}

/// The menu entry of a pending call: what is called, and by whom. The names are the agent's and
/// the server's choice, so bidi and control characters in them are shown, not obeyed.
pub fn approval_label(a: &PendingApproval) -> String {
    use portcullis_audit::neutralize::terminal as clean;
    let agent = a.client.name.as_deref().map_or_else(|| "an agent".to_owned(), clean);
    format!("{} › {} — {agent}", clean(&a.server), clean(&a.tool))
}

/// The approval id of a pending call's entry id.
pub fn approval_id(entry_id: &str) -> Option<&str> {
    entry_id.strip_prefix(APPROVAL_PREFIX)
}

/// Which parts of the tray differ between what is shown and the next model. Each part redrawn
/// costs: a new menu is a new set of GTK widgets and a D-Bus menu layout for the tray host, and
/// the host changes most often in ways the tray does not show (a prompt opened, a rule edited).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Redraw {
    pub icon: bool,
    pub tooltip: bool,
    pub menu: bool,
}

pub fn redraw(shown: &TrayModel, next: &TrayModel) -> Redraw {
    Redraw {
        icon: shown.icon != next.icon,
        tooltip: shown.tooltip != next.tooltip,
        menu: shown.entries != next.entries,
    }
}

pub fn model(input: &TrayInput<'_>) -> TrayModel {
    let n = input.pending.len();
    let icon = match (input.failure, n, input.paused) {
        (Some(_), ..) => Icon::Failed,
        (None, 0, true) => Icon::Paused,
        (None, 0, false) => Icon::Idle,
        (None, n, _) => Icon::Attention(n),
    };
    let mut tooltip = match (input.failure, n) {
        (Some(why), _) => format!("Portcullis is not running: {why}"),
        (None, 0) => "Portcullis — no calls waiting".to_owned(),
        (None, 1) => "Portcullis — 1 call waiting for approval".to_owned(),
        (None, n) => format!("Portcullis — {n} calls waiting for approval"),
    };
    if input.paused {
        tooltip.push_str(" (paused: new held calls are denied)");
    }
    if !input.policies.is_empty() {
        tooltip.push_str(" — a policy file on disk is not in force");
    }
    let mut entries = Vec::new();
    if n == 0 {
        entries.push(item(MORE, "No calls waiting", false));
    }
    for a in input.pending.iter().take(MAX_LISTED) {
        entries.push(item(&format!("{APPROVAL_PREFIX}{}", a.id), approval_label(a), true));
    }
    if n > MAX_LISTED {
        entries.push(item(MORE, format!("{} more waiting…", n - MAX_LISTED), true));
    }
    entries.push(Entry::Separator);
    entries.extend(policy_entries(input.policies));
    entries.extend(setup_entries(input.setup));
    entries.push(item(OPEN, "Open Portcullis", true));
    entries.push(Entry::Check {
        id: PAUSE.to_owned(),
        label: "Pause (deny new held calls)".to_owned(),
        checked: input.paused,
    });
    entries.push(Entry::Separator);
    entries.push(item(QUIT, "Quit Portcullis", true));
    TrayModel { icon, tooltip, entries }
}

/// One line per policy file not in force, saying what is enforced instead, then a separator.
pub fn policy_entries(problems: &[PolicyProblem]) -> Vec<Entry> {
    use portcullis_audit::neutralize::terminal as clean;
    if problems.is_empty() {
        return Vec::new();
    }
    let mut entries: Vec<Entry> = problems
        .iter()
        .map(|p| {
            let instead = if p.last_good_in_force {
                "the last valid version is enforced"
            } else {
                "every call is refused"
            };
            let label = format!("⚠ Policy of {} rejected: {instead}", clean(&p.server));
            item(&format!("{POLICY_PREFIX}{}", p.server), label, true)
        })
        .collect();
    entries.push(Entry::Separator);
    entries
}

/// The clients' setup lines, e.g. "Claude Code: routed, 1 server, policy written", then a
/// separator; nothing when there are none.
pub fn setup_entries(lines: &[String]) -> Vec<Entry> {
    if lines.is_empty() {
        return Vec::new();
    }
    let mut entries: Vec<Entry> = lines
        .iter()
        .enumerate()
        .map(|(i, line)| item(&format!("{SETUP_PREFIX}{i}"), line.clone(), false))
        .collect();
    entries.push(Entry::Separator);
    entries
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pending(id: &str, tool: &str) -> PendingApproval {
        PendingApproval {
            id: id.into(),
            ..crate::test_support::pending_approval(tool, "claude-code", serde_json::json!({}))
        }
    }

    fn ids(m: &TrayModel) -> Vec<String> {
        m.entries
            .iter()
            .map(|e| match e {
                Entry::Item { id, .. } | Entry::Check { id, .. } => id.clone(),
                Entry::Separator => "-".into(),
            })
            .collect()
    }

    #[test]
    fn only_what_changed_is_redrawn() {
        let idle = model(&TrayInput {
            pending: &[],
            paused: false,
            failure: None,
            setup: &[],
            policies: &[],
        });
        let nothing = Redraw {
            icon: false,
            tooltip: false,
            menu: false,
        };
        assert_eq!(redraw(&idle, &idle.clone()), nothing);
        let one = [pending("a1", "delete")];
        let waiting = model(&TrayInput {
            pending: &one,
            paused: false,
            failure: None,
            setup: &[],
            policies: &[],
        });
        assert_eq!(
            redraw(&idle, &waiting),
            Redraw {
                icon: true,
                tooltip: true,
                menu: true
            }
        );
        let mut relabelled = waiting.clone();
        relabelled.tooltip.push('!');
        assert_eq!(
            redraw(&waiting, &relabelled),
            Redraw {
                tooltip: true,
                ..nothing
            }
        );
    }

    #[test]
    fn a_policy_file_not_in_force_is_said_in_the_menu_and_the_tooltip() {
        let problem = |server: &str, last_good_in_force| PolicyProblem {
            server: server.into(),
            path: format!("/p/{server}.json"),
            problems: vec!["$.default: expected allow, deny or require_approval".into()],
            since_ms: 0,
            last_good_in_force,
        };
        let problems = [problem("fs", true), problem("git", false)];
        let m = model(&TrayInput {
            pending: &[],
            paused: false,
            failure: None,
            setup: &[],
            policies: &problems,
        });
        assert!(
            m.tooltip.ends_with("a policy file on disk is not in force"),
            "{}",
            m.tooltip
        );
        assert_eq!(ids(&m)[..5], ["more", "-", "policy:fs", "policy:git", "-"]);
        let labels: Vec<&str> = m
            .entries
            .iter()
            .filter_map(|e| match e {
                Entry::Item {
                    id,
                    label,
                    enabled: true,
                } if id.starts_with(POLICY_PREFIX) => Some(label.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(
            labels,
            [
                "⚠ Policy of fs rejected: the last valid version is enforced",
                "⚠ Policy of git rejected: every call is refused"
            ]
        );
    }

    #[test]
    fn idle_tray_has_the_fixed_entries() {
        let m = model(&TrayInput {
            pending: &[],
            paused: false,
            failure: None,
            setup: &[],
            policies: &[],
        });
        assert_eq!(m.icon, Icon::Idle);
        assert_eq!(m.tooltip, "Portcullis — no calls waiting");
        assert_eq!(ids(&m), ["more", "-", "open", "pause", "-", "quit"]);
        assert!(
            matches!(&m.entries[0], Entry::Item { enabled: false, .. }),
            "the placeholder is not clickable"
        );
    }

    #[test]
    fn pending_calls_raise_attention_and_are_listed_first() {
        let p = [pending("1", "write_file"), pending("2", "move_file")];
        let m = model(&TrayInput {
            pending: &p,
            paused: false,
            failure: None,
            setup: &[],
            policies: &[],
        });
        assert_eq!(m.icon, Icon::Attention(2));
        assert_eq!(m.tooltip, "Portcullis — 2 calls waiting for approval");
        assert_eq!(ids(&m)[..2], ["approval:1", "approval:2"]);
        assert_eq!(approval_id("approval:2"), Some("2"));
        let Entry::Item { label, .. } = &m.entries[0] else {
            panic!("item")
        };
        assert_eq!(label, "fs › write_file — claude-code");
    }

    #[test]
    fn a_long_queue_is_summed_up() {
        let p: Vec<_> = (0..12).map(|i| pending(&i.to_string(), "t")).collect();
        let m = model(&TrayInput {
            pending: &p,
            paused: false,
            failure: None,
            setup: &[],
            policies: &[],
        });
        assert_eq!(m.icon, Icon::Attention(12));
        let listed = ids(&m).iter().filter(|i| i.starts_with(APPROVAL_PREFIX)).count();
        assert_eq!(listed, MAX_LISTED);
        assert!(m.entries.contains(&item(MORE, "4 more waiting…", true)));
    }

    #[test]
    fn pause_shows_in_icon_tooltip_and_check() {
        let m = model(&TrayInput {
            pending: &[],
            paused: true,
            failure: None,
            setup: &[],
            policies: &[],
        });
        assert_eq!(m.icon, Icon::Paused);
        assert!(
            m.tooltip.ends_with("(paused: new held calls are denied)"),
            "{}",
            m.tooltip
        );
        assert!(m.entries.contains(&Entry::Check {
            id: PAUSE.into(),
            label: "Pause (deny new held calls)".into(),
            checked: true
        }));
        let p = [pending("1", "t")];
        let m = model(&TrayInput {
            pending: &p,
            paused: true,
            failure: None,
            setup: &[],
            policies: &[],
        });
        assert_eq!(
            m.icon,
            Icon::Attention(1),
            "calls held before the pause still need a person"
        );
    }

    #[test]
    fn a_failed_gateway_says_why() {
        let m = model(&TrayInput {
            pending: &[],
            paused: false,
            failure: Some("the config file is invalid"),
            setup: &[],
            policies: &[],
        });
        assert_eq!(m.icon, Icon::Failed);
        assert_eq!(m.tooltip, "Portcullis is not running: the config file is invalid");
    }

    #[test]
    fn each_clients_setup_is_a_line_above_open() {
        let setup = [
            "Claude Code: routed, 1 server, policy written".to_owned(),
            "Claude Desktop: not routed (2 servers)".to_owned(),
        ];
        let m = model(&TrayInput {
            pending: &[],
            paused: false,
            failure: None,
            setup: &setup,
            policies: &[],
        });
        assert_eq!(
            ids(&m),
            ["more", "-", "setup:0", "setup:1", "-", "open", "pause", "-", "quit"]
        );
        assert_eq!(
            m.entries[2],
            item("setup:0", setup[0].clone(), false),
            "shown, not clickable"
        );
        assert_eq!(m.entries[3], item("setup:1", setup[1].clone(), false));
    }
}
