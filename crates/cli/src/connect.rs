//! `portcullis connect SERVER`: the gate for one stdio client, in this process (one hop:
//! client → connect → server). stdout is protocol only.
//!
//! It loads the config and the server's policy, starts the server itself, and runs the same
//! gate as the keeper's HTTP entry (`portcullis_keeper`): the strict reader, the policy with hot
//! reload, rate limits, pins, the audit row committed before the call goes on. Allow, deny, hide
//! and rate limits need nobody else. A call the policy holds for a person is asked of the keeper
//! (the desktop app or `portcullis serve`) over its local socket ([`keeper`]), which is started
//! in the background when none runs, so the keeper's restart never touches this server.

mod keeper;
mod start;
mod stdio;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use portcullis_config::config::Config;
use portcullis_config::gateway_file::GatewayFile;
use portcullis_gate::held_calls::remote::RemoteHeldCalls;
use portcullis_gate::Plane;

use crate::exit::{Failure, Outcome};

pub(crate) fn run(config_path: &Path, data_dir: &Path, server: &str) -> Outcome {
    let filter = tracing_subscriber::EnvFilter::try_from_env("PORTCULLIS_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .log_internal_errors(false) // a closed stderr must not make a log line panic (see serve.rs)
        .try_init();
    let config = only(Config::load(config_path).map_err(Failure::user)?, server, config_path)?;
    // One thread: one client, and a second thread would only add hops.
    let runtime = crate::exit::runtime()?;
    runtime.block_on(async {
        let starter = Arc::new(start::Starter {
            config: config_path.to_owned(),
            data_dir: data_dir.to_owned(),
        });
        // The keeper is only needed for held calls and the person's side: started now, in the
        // background, so that it is there by the first held call and no allowed call waits.
        keeper::start_in_background(starter.clone());
        let connector = keeper::connector(data_dir.to_owned(), starter);
        let finder = keeper::finder(data_dir.to_owned());
        let held = Arc::new(RemoteHeldCalls::with_finder(connector, Some(finder)));
        let events = portcullis_gate::event_channel();
        let plane = Plane::open(config, data_dir, events, held).map_err(Failure::user)?;
        portcullis_gate::local_conn::serve_stdio(plane.clone(), server.to_owned(), stdio::stdin(), stdio::stdout())
            .await;
        plane.stop().await;
        Ok(())
    })
}

/// The config file a data plane reads: the one chosen (`--config`, `$PORTCULLIS_CONFIG`), else
/// the one the keeper of `data_dir` runs with (gateway.json names it), else the default.
pub(crate) fn config_of(default: PathBuf, chosen: bool, data_dir: &Path) -> PathBuf {
    if chosen {
        return default;
    }
    GatewayFile::read(data_dir)
        .ok()
        .and_then(|f| f.config)
        .unwrap_or(default)
}

/// The config with `server` alone: a data plane starts and watches nothing else.
fn only(mut config: Config, server: &str, path: &Path) -> Result<Config, Failure> {
    if !config.servers.contains_key(server) {
        let known: Vec<&str> = config.servers.keys().map(String::as_str).collect();
        return Err(Failure::user(format!(
            "no server named {server:?} in {} (it has: {})",
            path.display(),
            if known.is_empty() {
                "none".to_owned()
            } else {
                known.join(", ")
            }
        )));
    }
    config.servers.retain(|name, _| name == server);
    Ok(config)
}
