//! Where a server resolves the paths it is given: its roots (the working directory it was
//! started in, and the directories its configured arguments name) and its home directory.
//!
//! The policy reads a `path_under` condition against these ([`portcullis_policy::Places`]): a
//! relative path is resolved against every root and must be inside an allowed directory from
//! each, or is denied if any lands in a denied one. Where nothing is known (an HTTP server on
//! another machine), a relative path is decided strictly.

use std::path::Path;

use portcullis_config::config::ServerConfig;
use portcullis_policy::Places;

/// The places of a configured server.
pub(crate) fn of_server(server: &ServerConfig) -> Places {
    match server {
        ServerConfig::Stdio { args, env, cwd, .. } => {
            // Where the child starts: its own cwd, else the caller's when the AppImage moved
            // ours (see `upstream/child_process.rs`), else ours.
            let cwd = cwd
                .clone()
                .or_else(|| portcullis_config::host_env::HostEnv::current().cwd)
                .or_else(|| std::env::current_dir().ok());
            let mut roots: Vec<String> = cwd.iter().filter_map(|dir| dir.to_str().map(str::to_owned)).collect();
            roots.extend(args.iter().filter_map(|arg| directory_in(arg)));
            roots.dedup();
            let home = env.get("HOME").cloned().or_else(|| std::env::var("HOME").ok());
            Places { roots, home }
        }
        // A remote server's working directory and home are its own.
        ServerConfig::Http { .. } | ServerConfig::Sse { .. } => Places::UNKNOWN,
    }
}

/// The absolute directory an argument names (`/srv/data`, or `--root=/srv/data`), if it names
/// one that exists: server-filesystem and its kind resolve relative paths against these.
fn directory_in(arg: &str) -> Option<String> {
    let value = arg.rsplit_once('=').map_or(arg, |(_, value)| value);
    let path = Path::new(value);
    (path.is_absolute() && path.is_dir()).then(|| value.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;
    use std::path::PathBuf;

    #[test]
    fn a_stdio_servers_roots_are_its_cwd_and_the_directories_its_arguments_name() {
        let dir = tempfile::tempdir().unwrap();
        let shown = dir.path().to_str().unwrap().to_owned();
        let server = ServerConfig::Stdio {
            command: "npx".into(),
            args: vec![
                "-y".into(),
                "server-filesystem".into(),
                shown.clone(),
                "/no/such/dir".into(),
                format!("--root={shown}"),
            ],
            env: BTreeMap::from([("HOME".to_owned(), "/home/agent".to_owned())]),
            cwd: Some(PathBuf::from("/work")),
        };
        let places = of_server(&server);
        assert_eq!(places.roots, vec!["/work".to_owned(), shown]);
        assert_eq!(places.home.as_deref(), Some("/home/agent"));
    }

    #[test]
    fn an_http_server_is_unknown() {
        let server = ServerConfig::Http {
            url: "http://127.0.0.1:1/mcp".into(),
            headers: BTreeMap::new(),
        };
        assert_eq!(of_server(&server), Places::UNKNOWN);
    }
}
