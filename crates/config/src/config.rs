//! `portcullis.json`: where to listen, where the policies are, and the `mcpServers` block users
//! already write for their MCP clients.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use serde::Deserialize;

pub mod edit;
mod limits;
pub use limits::{Limits, DEFAULT_STREAM_BUFFER_BYTES};

/// Default wait for a person's decision: below the 60 s most clients give a request.
pub const DEFAULT_APPROVAL_TIMEOUT_SECS: u64 = 45;

/// Default bound on a forwarded `tools/call` with no answer. Long enough for real long-running
/// tools (builds, test runs, browsing, queries) that clients with generous timeouts let run for
/// minutes; short enough that a hung server does not hold a call, its audit row and its memory
/// forever when the client never gives up. Set per server for tools known to take longer.
pub const DEFAULT_CALL_TIMEOUT_SECS: u64 = 300;
/// `approval.max_hold_secs`: ten minutes of "Extend" at most.
pub const DEFAULT_MAX_HOLD_SECS: u64 = 600;

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read config {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{path}: {json_path}: {message}")]
    Invalid {
        path: PathBuf,
        json_path: String,
        message: String,
    },
}

/// The config file as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    /// Address of the Streamable HTTP endpoint. Loopback only unless `allow_remote` is true.
    #[serde(default = "default_listen")]
    listen: String,
    /// Directory of per-server policy files, relative to the config file.
    #[serde(default = "default_policies")]
    policies: PathBuf,
    #[serde(default)]
    approval: RawApproval,
    #[serde(default)]
    upstream: RawUpstream,
    #[serde(default)]
    limits: limits::RawLimits,
    /// Bind a non-loopback address. Off by default: the gateway holds every agent's tools.
    #[serde(default)]
    allow_remote: bool,
    #[serde(rename = "mcpServers", default)]
    mcp_servers: BTreeMap<String, RawServer>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawApproval {
    timeout_secs: Option<u64>,
    /// The longest a call may be held, extensions included, counted from when it was held.
    max_hold_secs: Option<u64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawUpstream {
    /// Seconds a forwarded `tools/call` may go unanswered before it is failed and cancelled.
    call_timeout_secs: Option<u64>,
}

/// One `mcpServers` entry. Unknown keys other clients put here (`disabled`, `autoApprove`, …) are
/// tolerated so a config copied from a client loads.
#[derive(Debug, Deserialize)]
struct RawServer {
    #[serde(rename = "type")]
    kind: Option<String>,
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    cwd: Option<PathBuf>,
    url: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    /// This server's own `upstream.call_timeout_secs`.
    call_timeout_secs: Option<u64>,
}

fn default_listen() -> String {
    "127.0.0.1:7470".into()
}

fn default_policies() -> PathBuf {
    PathBuf::from("policies")
}

#[derive(Debug, Clone)]
pub struct Config {
    /// The file this was read from (a keeper names it in gateway.json for its data planes).
    pub file: PathBuf,
    pub listen: SocketAddr,
    pub policies_dir: PathBuf,
    pub approval_timeout_secs: u64,
    /// `approval.max_hold_secs`: how far a person may extend a held call's deadline.
    pub max_hold_secs: u64,
    /// `upstream.call_timeout_secs`, for servers without their own.
    pub call_timeout_secs: u64,
    /// Per-server `call_timeout_secs` overrides.
    pub call_timeouts: BTreeMap<String, u64>,
    pub servers: BTreeMap<String, ServerConfig>,
    /// The `limits` object: sessions, connections, header time, stream buffers.
    pub limits: Limits,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ServerConfig {
    Stdio {
        command: String,
        args: Vec<String>,
        env: BTreeMap<String, String>,
        cwd: Option<PathBuf>,
    },
    /// Streamable HTTP (both eras).
    Http {
        url: String,
        headers: BTreeMap<String, String>,
    },
    /// Deprecated HTTP+SSE: `GET` the URL for an `endpoint` event, POST messages there.
    Sse {
        url: String,
        headers: BTreeMap<String, String>,
    },
}

impl ServerConfig {
    pub fn transport(&self) -> &'static str {
        match self {
            Self::Stdio { .. } => "stdio",
            Self::Http { .. } => "http",
            Self::Sse { .. } => "sse",
        }
    }
}

impl Config {
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_owned(),
            source,
        })?;
        Self::from_str(&text, path)
    }

    pub fn from_str(text: &str, path: &Path) -> Result<Self, ConfigError> {
        let invalid = |json_path: String, message: String| ConfigError::Invalid {
            path: path.to_owned(),
            json_path,
            message,
        };
        let de = &mut serde_json::Deserializer::from_str(text);
        let raw: RawConfig = serde_path_to_error::deserialize(de).map_err(|e| {
            let inner = e.inner().to_string();
            invalid(format!("$.{}", e.path()), inner)
        })?;
        let listen: SocketAddr = raw.listen.parse().map_err(|_| {
            invalid(
                "$.listen".into(),
                format!("expected an address like 127.0.0.1:7470, found {:?}", raw.listen),
            )
        })?;
        if !listen.ip().is_loopback() && !raw.allow_remote {
            return Err(invalid(
                "$.listen".into(),
                format!("{listen} is not a loopback address; set \"allow_remote\": true to expose the gateway"),
            ));
        }
        let base = path.parent().unwrap_or(Path::new("."));
        let policies_dir = if raw.policies.is_absolute() {
            raw.policies
        } else {
            base.join(raw.policies)
        };
        let max_hold_secs = raw.approval.max_hold_secs.unwrap_or(DEFAULT_MAX_HOLD_SECS);
        check_call_timeout(max_hold_secs).map_err(|m| invalid("$.approval.max_hold_secs".into(), m))?;
        let call_timeout_secs = raw.upstream.call_timeout_secs.unwrap_or(DEFAULT_CALL_TIMEOUT_SECS);
        check_call_timeout(call_timeout_secs).map_err(|m| invalid("$.upstream.call_timeout_secs".into(), m))?;
        let limits = raw
            .limits
            .resolve()
            .map_err(|(key, m)| invalid(format!("$.limits.{key}"), m))?;
        let mut servers = BTreeMap::new();
        let mut call_timeouts = BTreeMap::new();
        for (name, server) in raw.mcp_servers {
            let json_path = format!("$.mcpServers[{name:?}]");
            if !valid_server_name(&name) {
                return Err(invalid(
                    json_path,
                    "server names may use letters, digits, '-', '_' and '.'".into(),
                ));
            }
            if let Some(secs) = server.call_timeout_secs {
                check_call_timeout(secs).map_err(|m| invalid(format!("{json_path}.call_timeout_secs"), m))?;
                call_timeouts.insert(name.clone(), secs);
            }
            let mut server = server_config(server).map_err(|m| invalid(json_path, m))?;
            // A relative working directory is relative to the config file, like `policies`.
            if let ServerConfig::Stdio { cwd: Some(cwd), .. } = &mut server {
                if cwd.is_relative() {
                    *cwd = base.join(&*cwd);
                }
            }
            servers.insert(name, server);
        }
        Ok(Self {
            file: std::path::absolute(path).unwrap_or_else(|_| path.to_owned()),
            listen,
            policies_dir,
            approval_timeout_secs: raw.approval.timeout_secs.unwrap_or(DEFAULT_APPROVAL_TIMEOUT_SECS),
            max_hold_secs,
            call_timeout_secs,
            call_timeouts,
            servers,
            limits,
        })
    }

    /// How long a forwarded `tools/call` to `server` may go unanswered.
    pub fn call_timeout(&self, server: &str) -> std::time::Duration {
        let secs = self
            .call_timeouts
            .get(server)
            .copied()
            .unwrap_or(self.call_timeout_secs);
        std::time::Duration::from_secs(secs)
    }

    /// The policy file of `server`.
    pub fn policy_path(&self, server: &str) -> PathBuf {
        self.policies_dir.join(format!("{server}.json"))
    }
}

/// Zero would fail every call; "never" is not offered, since a hung server would then hold a
/// call forever. A day is the ceiling (and keeps `Instant` arithmetic far from overflow).
fn check_call_timeout(secs: u64) -> Result<(), String> {
    if (1..=86_400).contains(&secs) {
        Ok(())
    } else {
        Err(format!("must be between 1 and 86400 seconds, found {secs}"))
    }
}

/// Server names become URL path segments and file names.
fn valid_server_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

fn server_config(raw: RawServer) -> Result<ServerConfig, String> {
    let kind = match (raw.kind.as_deref(), &raw.command, &raw.url) {
        (Some("stdio"), ..) | (None, Some(_), None) => "stdio",
        (Some("http" | "streamable-http" | "streamableHttp"), ..) | (None, None, Some(_)) => "http",
        (Some("sse"), ..) => "sse",
        (Some(other), ..) => {
            return Err(format!(
                "unknown type {other:?}, expected \"stdio\", \"http\" or \"sse\""
            ))
        }
        (None, Some(_), Some(_)) => return Err("has both \"command\" and \"url\"; set \"type\"".into()),
        (None, None, None) => return Err("needs \"command\" (stdio) or \"url\" (http)".into()),
    };
    if kind == "stdio" {
        let command = raw.command.ok_or("a stdio server needs \"command\"")?;
        Ok(ServerConfig::Stdio {
            command,
            args: raw.args,
            env: raw.env,
            cwd: raw.cwd,
        })
    } else {
        let url = raw.url.ok_or("an http or sse server needs \"url\"")?;
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(format!("url must start with http:// or https://, found {url:?}"));
        }
        Ok(if kind == "sse" {
            ServerConfig::Sse {
                url,
                headers: raw.headers,
            }
        } else {
            ServerConfig::Http {
                url,
                headers: raw.headers,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(text: &str) -> Result<Config, ConfigError> {
        Config::from_str(text, Path::new("/etc/p/portcullis.json"))
    }

    #[test]
    fn the_design_example_loads() {
        let cfg = load(
            r#"{ "listen": "127.0.0.1:7470", "policies": "policies", "approval": { "timeout_secs": 30 },
                 "mcpServers": {
                   "everything": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"], "env": {} },
                   "remote": { "url": "https://example.com/mcp", "headers": { "Authorization": "Bearer x" } },
                   "old": { "type": "sse", "url": "http://127.0.0.1:9/sse" } } }"#,
        )
        .unwrap();
        assert_eq!(cfg.policies_dir, PathBuf::from("/etc/p/policies"));
        assert_eq!(cfg.approval_timeout_secs, 30);
        assert_eq!(cfg.max_hold_secs, DEFAULT_MAX_HOLD_SECS);
        assert_eq!(cfg.servers["everything"].transport(), "stdio");
        assert_eq!(cfg.servers["remote"].transport(), "http");
        assert_eq!(cfg.servers["old"].transport(), "sse");
    }

    #[test]
    fn max_hold_is_read_and_bounded() {
        let cfg = load(r#"{"approval": {"timeout_secs": 5, "max_hold_secs": 90}}"#).unwrap();
        assert_eq!(cfg.max_hold_secs, 90);
        let err = load(r#"{"approval": {"max_hold_secs": 0}}"#).unwrap_err().to_string();
        assert!(
            err.contains("$.approval.max_hold_secs") && err.contains("between 1 and"),
            "{err}"
        );
    }

    #[test]
    fn relative_cwd_is_relative_to_the_config_file() {
        let cfg = load(r#"{"mcpServers": {"a": {"command": "node", "cwd": "demo"}}}"#).unwrap();
        let ServerConfig::Stdio { cwd, .. } = &cfg.servers["a"] else {
            panic!("stdio")
        };
        assert_eq!(cwd.as_deref(), Some(Path::new("/etc/p/demo")));
    }

    #[test]
    fn errors_name_the_json_path() {
        let err = load(r#"{"mcpServers": {"a": {"type": "ws", "url": "x"}}}"#)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("$.mcpServers[\"a\"]") && err.contains("unknown type"),
            "{err}"
        );
        let err = load(r#"{"listen": 7470}"#).unwrap_err().to_string();
        assert!(err.contains("$.listen"), "{err}");
        let err = load(r#"{"lisen": "x"}"#).unwrap_err().to_string();
        assert!(err.contains("unknown field"), "{err}");
    }

    #[test]
    fn non_loopback_needs_explicit_consent() {
        let err = load(r#"{"listen": "0.0.0.0:7470"}"#).unwrap_err().to_string();
        assert!(err.contains("allow_remote"), "{err}");
        assert!(load(r#"{"listen": "0.0.0.0:7470", "allow_remote": true}"#).is_ok());
    }

    #[test]
    fn call_timeout_has_a_default_a_global_setting_and_per_server_overrides() {
        let cfg = load(r#"{"mcpServers": {"a": {"command": "x"}}}"#).unwrap();
        assert_eq!(cfg.call_timeout("a").as_secs(), DEFAULT_CALL_TIMEOUT_SECS);
        let cfg = load(
            r#"{"upstream": {"call_timeout_secs": 120},
                "mcpServers": {"a": {"command": "x"}, "b": {"url": "http://h/mcp", "call_timeout_secs": 7}}}"#,
        )
        .unwrap();
        assert_eq!(cfg.call_timeout("a").as_secs(), 120);
        assert_eq!(cfg.call_timeout("b").as_secs(), 7);
    }

    #[test]
    fn call_timeout_out_of_range_names_its_path() {
        let err = load(r#"{"upstream": {"call_timeout_secs": 0}}"#)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("$.upstream.call_timeout_secs") && err.contains("between 1 and"),
            "{err}"
        );
        let err = load(r#"{"mcpServers": {"a": {"command": "x", "call_timeout_secs": 100000}}}"#)
            .unwrap_err()
            .to_string();
        assert!(err.contains("$.mcpServers[\"a\"].call_timeout_secs"), "{err}");
        let err = load(r#"{"upstream": {"call_timeout": 5}}"#).unwrap_err().to_string();
        assert!(err.contains("unknown field"), "{err}");
        let err = load(r#"{"mcpServers": {"a": {"command": "x", "call_timeout_secs": "5"}}}"#)
            .unwrap_err()
            .to_string();
        assert!(err.contains("call_timeout_secs"), "{err}");
    }

    #[test]
    fn limits_have_defaults_settings_and_named_errors() {
        let cfg = load("{}").unwrap();
        assert_eq!(cfg.limits, Limits::default());
        assert_eq!(cfg.limits.max_sessions_per_server, 32);
        let cfg = load(
            r#"{"limits": {"max_sessions_per_server": 2, "header_read_timeout_secs": 1,
                                      "stream_buffer_bytes": 20000000}}"#,
        )
        .unwrap();
        assert_eq!(cfg.limits.max_sessions_per_server, 2);
        assert_eq!(cfg.limits.header_read_timeout_secs, 1);
        assert_eq!(cfg.limits.stream_buffer_bytes, 20_000_000);
        assert_eq!(cfg.limits.max_sessions, 256, "unset keys keep their defaults");
        let err = load(r#"{"limits": {"max_sessions": 0}}"#).unwrap_err().to_string();
        assert!(
            err.contains("$.limits.max_sessions") && err.contains("between 1"),
            "{err}"
        );
        let err = load(r#"{"limits": {"stream_buffer_bytes": 1000}}"#)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("$.limits.stream_buffer_bytes") && err.contains("largest message"),
            "{err}"
        );
        let err = load(r#"{"limits": {"max_session": 3}}"#).unwrap_err().to_string();
        assert!(err.contains("unknown field"), "{err}");
        assert_eq!(
            cfg.limits.answer_excerpt_bytes, 4096,
            "a few KiB of each answer by default"
        );
        let none = load(r#"{"limits": {"answer_excerpt_bytes": 0}}"#).unwrap();
        assert_eq!(none.limits.answer_excerpt_bytes, 0, "only the findings");
        let err = load(r#"{"limits": {"answer_excerpt_bytes": 1000000}}"#)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("$.limits.answer_excerpt_bytes") && err.contains("between 0 and 65536"),
            "{err}"
        );
    }

    #[test]
    fn server_names_must_be_path_safe() {
        assert!(load(r#"{"mcpServers": {"../x": {"command": "a"}}}"#).is_err());
    }
}
