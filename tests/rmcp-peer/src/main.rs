//! rmcp, the official Rust MCP SDK, on either side of the gateway (tests/e2e/mcp2/test_rmcp_mcp2.py).
//!
//! - `rmcp-peer client [--lifecycle auto|initialize] -- CMD ARG...`: an rmcp client that launches
//!   CMD over stdio (as Claude Desktop or Cursor launch `portcullis connect`), then takes one JSON
//!   command per line on its stdin and answers each with one JSON line on its stdout ([`client`]).
//! - `rmcp-peer server`: an rmcp stdio server with a read-only and a destructive tool ([`server`]).
//!
//! stdout carries only those JSON lines; errors go to stderr with a non-zero exit.

mod client;
mod server;

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => return fail(&anyhow::anyhow!("tokio runtime: {e}")),
    };
    let done = match args.first().map(String::as_str) {
        Some("client") => runtime.block_on(client::run(&args[1..])),
        Some("server") => runtime.block_on(server::run()),
        _ => Err(anyhow::anyhow!(
            "usage: rmcp-peer client [--lifecycle auto|initialize] -- CMD ARG... | rmcp-peer server"
        )),
    };
    match done {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => fail(&e),
    }
}

fn fail(e: &anyhow::Error) -> ExitCode {
    eprintln!("rmcp-peer: {e:#}");
    ExitCode::FAILURE
}
