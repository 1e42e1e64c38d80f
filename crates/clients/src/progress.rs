//! How far setting up is: for each client, whether its servers are routed through Portcullis and
//! whether each routed server has a policy file. The app's first screen and its tray read this to
//! say what is done and what is left; it reads files only.

use std::path::{Path, PathBuf};

use portcullis_config::config::Config;

use super::{list, Client, Places};

/// One client's state, from its config file, `portcullis.json` and the policies directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Progress {
    pub client: Client,
    pub config_path: PathBuf,
    /// Server entries in the client's file; `None`: no file, or one that cannot be read.
    pub servers: Option<usize>,
    /// Why the client's file cannot be read, if it cannot.
    pub problem: Option<String>,
    /// Entries that launch `portcullis connect`.
    pub routed_entries: usize,
    /// Routed by `clients install` (a second install is refused until uninstall).
    pub installed: bool,
    /// The `portcullis.json` servers those entries reach, each once.
    pub routed: Vec<String>,
    /// Routed servers with no policy file: every call to them asks a person.
    pub without_policy: Vec<String>,
}

/// Every client's progress. `gateway_config` is `portcullis.json`; the policies directory is the
/// one it names, or `policies` beside it when it cannot be read (the gateway's default).
pub fn progress(places: &Places, data_dir: &Path, gateway_config: &Path) -> Vec<Progress> {
    let dir = policies_dir(gateway_config);
    list(places, data_dir)
        .into_iter()
        .map(|s| Progress {
            without_policy: s
                .routed_names
                .iter()
                .filter(|name| !dir.join(format!("{name}.json")).exists())
                .cloned()
                .collect(),
            client: s.client,
            config_path: s.config_path,
            servers: s.servers,
            problem: s.problem,
            routed_entries: s.routed,
            installed: s.installed,
            routed: s.routed_names,
        })
        .collect()
}

/// Where `portcullis.json` keeps the policies.
pub fn policies_dir(gateway_config: &Path) -> PathBuf {
    Config::load(gateway_config).map_or_else(
        |_| gateway_config.parent().unwrap_or(Path::new(".")).join("policies"),
        |c| c.policies_dir,
    )
}

fn servers(n: usize) -> String {
    if n == 1 {
        "1 server".to_owned()
    } else {
        format!("{n} servers")
    }
}

impl Progress {
    /// Whether `clients install` has something to do: a config file with servers not routed
    /// yet, and no install to undo first.
    pub fn can_route(&self) -> bool {
        !self.installed && self.servers.is_some_and(|n| n > self.routed_entries)
    }

    /// Whether the client has a config file at all (readable or not).
    pub fn found(&self) -> bool {
        self.servers.is_some() || self.problem.is_some()
    }

    /// One line, e.g. "Claude Code: routed, 1 server, policy written" or "Claude Desktop: not
    /// routed (2 servers)".
    pub fn line(&self) -> String {
        let name = self.client.name();
        let Some(total) = self.servers else {
            return match self.problem {
                Some(_) => format!("{name}: its config file cannot be read"),
                None => format!("{name}: no config file"),
            };
        };
        if self.routed.is_empty() {
            return if total == 0 {
                format!("{name}: no MCP servers configured")
            } else {
                format!("{name}: not routed ({})", servers(total))
            };
        }
        let mut line = format!("{name}: routed, {}, ", servers(self.routed.len()));
        line += &match self.without_policy.as_slice() {
            [] if self.routed.len() == 1 => "policy written".to_owned(),
            [] => "policies written".to_owned(),
            missing => format!("no policy for {} (every call asks)", missing.join(", ")),
        };
        let left = total.saturating_sub(self.routed_entries);
        if left > 0 {
            line += &format!("; {} not routed", servers(left));
        }
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn progress(servers: Option<usize>, routed: &[&str], without_policy: &[&str]) -> Progress {
        Progress {
            client: Client::ClaudeCode,
            config_path: PathBuf::from("/h/.claude.json"),
            servers,
            problem: None,
            routed_entries: routed.len(),
            installed: !routed.is_empty(),
            routed: routed.iter().map(|s| (*s).to_owned()).collect(),
            without_policy: without_policy.iter().map(|s| (*s).to_owned()).collect(),
        }
    }

    #[test]
    fn each_state_has_its_line() {
        assert_eq!(progress(None, &[], &[]).line(), "Claude Code: no config file");
        assert_eq!(
            progress(Some(0), &[], &[]).line(),
            "Claude Code: no MCP servers configured"
        );
        assert_eq!(
            progress(Some(2), &[], &[]).line(),
            "Claude Code: not routed (2 servers)"
        );
        assert_eq!(
            progress(Some(1), &["fs"], &[]).line(),
            "Claude Code: routed, 1 server, policy written"
        );
        assert_eq!(
            progress(Some(3), &["fs", "git"], &["git"]).line(),
            "Claude Code: routed, 2 servers, no policy for git (every call asks); 1 server not routed"
        );
    }

    #[test]
    fn only_a_client_with_unrouted_servers_is_offered_routing() {
        assert!(progress(Some(2), &[], &[]).can_route());
        let mut partly = progress(Some(2), &["a"], &[]);
        assert!(!partly.can_route(), "installed already: uninstall comes first");
        partly.installed = false;
        assert!(partly.can_route(), "routed by hand, one left");
        assert!(!progress(Some(1), &["a"], &[]).can_route());
        assert!(!progress(None, &[], &[]).can_route());
    }
}
