//! `portcullis connect SERVER`: stdio relay to the running gateway. stdout is protocol only.

use std::path::Path;

use portcullis_gateway::gateway_file::{GatewayFile, GatewayFileError};
use portcullis_gateway::relay::{self, RelayError};

use crate::exit::{Failure, Outcome};

pub fn run(data_dir: &Path, server: &str) -> Outcome {
    let filter = tracing_subscriber::EnvFilter::try_from_env("PORTCULLIS_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .try_init();
    let file = GatewayFile::read(data_dir).map_err(|e| match e {
        GatewayFileError::Missing(_) => Failure::NoGateway(e.to_string()),
        other => Failure::user(other),
    })?;
    let runtime = tokio::runtime::Runtime::new().map_err(Failure::user)?;
    runtime
        .block_on(relay::run(&file, server, tokio::io::stdin(), tokio::io::stdout()))
        .map_err(|e| match e {
            RelayError::Unreachable { .. } => Failure::NoGateway(e.to_string()),
            other => Failure::user(other),
        })
}
