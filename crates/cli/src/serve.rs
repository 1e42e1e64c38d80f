//! `portcullis serve`: the headless gateway; with `--install-autostart` / `--uninstall-autostart`
//! it sets up (or undoes) its start at login instead ([`autostart`]).

mod autostart;

use std::net::SocketAddr;
use std::path::Path;

use portcullis_config::config::Config;
use portcullis_config::gateway_file::GatewayFile;
use portcullis_keeper::Keeper;

use crate::exit::{Failure, Outcome};

#[derive(clap::Args)]
pub(crate) struct Args {
    /// Listen on this loopback address instead of the config's `listen` (port 0: any free
    /// port; the one chosen is in gateway.json and the ready line)
    #[arg(long, value_name = "ADDR")]
    listen: Option<SocketAddr>,
    /// Start `portcullis serve` at login (XDG autostart on Linux), with this config and data dir, then exit
    #[arg(long, conflicts_with = "uninstall_autostart")]
    install_autostart: bool,
    /// Stop starting Portcullis at login, then exit
    #[arg(long)]
    uninstall_autostart: bool,
}

pub(crate) fn run(config_path: &Path, data_dir: &Path, args: &Args) -> Outcome {
    if args.install_autostart {
        return autostart::install(config_path, data_dir);
    }
    if args.uninstall_autostart {
        return autostart::uninstall();
    }
    init_logging();
    let mut config = Config::load(config_path).map_err(Failure::user)?;
    if let Some(addr) = args.listen {
        config.listen = loopback_only(addr)?;
    }
    let runtime = tokio::runtime::Runtime::new().map_err(Failure::user)?;
    runtime.block_on(async {
        let gateway = Keeper::open(config, data_dir).map_err(Failure::user)?;
        let (listener, file) = gateway.bind(data_dir).await.map_err(Failure::user)?;
        let servers: Vec<String> = gateway.config().servers.keys().cloned().collect();
        eprintln!(
            "portcullis: ready on {} (servers: {}; data: {})",
            file.url,
            if servers.is_empty() {
                "none".to_owned()
            } else {
                servers.join(", ")
            },
            data_dir.display()
        );
        let served = gateway.serve(listener, shutdown_signal()).await;
        GatewayFile::remove_if_ours(data_dir);
        served.map_err(Failure::user)
    })
}

/// `--listen` never exposes the gateway: a remote address needs `"allow_remote": true` in the
/// config, where the choice is written down.
fn loopback_only(addr: SocketAddr) -> Result<SocketAddr, Failure> {
    if addr.ip().is_loopback() {
        Ok(addr)
    } else {
        Err(Failure::user(format!(
            "--listen {addr}: not a loopback address; put it in the config's \"listen\" with \"allow_remote\": true to expose the gateway"
        )))
    }
}

async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = ctrl_c => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = ctrl_c.await;
            }
        }
    }
    #[cfg(not(unix))]
    let _ = ctrl_c.await;
    tracing::info!("shutting down");
}

fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("PORTCULLIS_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        // Its fallback for a failed write is `eprintln!`, which panics: a launcher that closed our
        // stderr would turn every log line into a panic of the task that logged it.
        .log_internal_errors(false)
        .try_init();
}
