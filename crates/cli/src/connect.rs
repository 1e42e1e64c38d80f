//! `portcullis connect SERVER`: stdio relay to the user's gateway. stdout is protocol only.
//!
//! Over the gateway's local socket when gateway.json names one ([`socket`]: survives gateway
//! restarts, starts a gateway when none runs — [`start`]), else over HTTP ([`http`], the
//! fallback for platforms without the socket). No policy lives here: the gateway decides.

mod http;
mod sniff;
mod socket;
mod start;
mod stdio;

use std::path::Path;
use std::sync::Arc;

use portcullis_config::gateway_file::GatewayFile;

use crate::exit::{Failure, Outcome};

pub(crate) fn run(config: &Path, data_dir: &Path, server: &str) -> Outcome {
    let filter = tracing_subscriber::EnvFilter::try_from_env("PORTCULLIS_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .log_internal_errors(false) // a closed stderr must not make a log line panic (see serve.rs)
        .try_init();
    // One thread: the relay is one task, and a second thread would only add hops.
    let runtime = crate::exit::runtime()?;
    runtime.block_on(async {
        let starter = Arc::new(start::Starter {
            config: config.to_owned(),
            data_dir: data_dir.to_owned(),
        });
        let opts = socket::Options {
            data_dir: data_dir.to_owned(),
            server: server.to_owned(),
            start: Some(Box::new(move || {
                // The wait polls files and sockets: blocking, and rare.
                let starter = starter.clone();
                std::thread::spawn(move || starter.start())
                    .join()
                    .unwrap_or_else(|_| Err("the start thread failed".into()))
            })),
        };
        match socket::run(opts, stdio::stdin(), stdio::stdout()).await {
            socket::Outcome::Done => Ok(()),
            socket::Outcome::Refused(why) => Err(Failure::user(why)),
            socket::Outcome::NoSocket(file) => relay_http(&file, server).await,
        }
    })
}

async fn relay_http(file: &GatewayFile, server: &str) -> Outcome {
    http::run(file, server, tokio::io::stdin(), tokio::io::stdout())
        .await
        .map_err(|e| match e {
            http::RelayError::Unreachable { .. } => Failure::NoGateway(e.to_string()),
            other => Failure::user(other),
        })
}
