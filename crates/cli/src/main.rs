//! `portcullis`: the command line of the Portcullis gateway. Parses arguments and calls the
//! libraries; each subcommand lives in its own module.

mod approvals;
mod audit;
mod clients;
mod connect;
mod control;
mod exit;
mod policy;
mod serve;
mod table;
mod text;
mod tools;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "portcullis",
    version,
    about = "A local gate for MCP tool calls: policy, approval and audit"
)]
struct Cli {
    /// Config file (default: $PORTCULLIS_CONFIG, else ~/.config/portcullis/portcullis.json)
    #[arg(long, global = true, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Data directory for audit.db and gateway.json (default: $PORTCULLIS_HOME, else the platform data dir)
    #[arg(long, global = true, value_name = "DIR")]
    data_dir: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the gateway headless; prints a ready line on stderr
    Serve(serve::Args),
    /// Relay stdio to the running gateway, for clients that launch a command
    Connect {
        /// Server name from the config's mcpServers
        server: String,
    },
    /// List, approve and deny calls held for approval, or decide them as they arrive
    #[command(subcommand)]
    Approvals(approvals::Command),
    /// Show recorded decisions, newest first
    Audit(audit::Args),
    /// Route an MCP client's servers (Claude Desktop, Cursor, Claude Code, VS Code) through Portcullis, or undo it
    #[command(subcommand)]
    Clients(clients::Command),
    /// Validate policy files, write a starter policy from a server's tools, or print the JSON Schema
    #[command(subcommand)]
    Policy(policy::Command),
    /// Pinned tool definitions: list them, show what a server changed, accept a change
    #[command(subcommand)]
    Tools(tools::Command),
}

fn main() -> ExitCode {
    portcullis_gate::allocator::tune();
    let cli = Cli::parse();
    let env = portcullis_config::paths::ProcessEnv;
    let config_chosen = cli.config.is_some()
        || portcullis_config::paths::Environment::var(&env, portcullis_config::paths::CONFIG_ENV).is_some();
    let config = portcullis_config::paths::config_file(cli.config, &env);
    let data_dir_chosen = cli.data_dir.is_some()
        || portcullis_config::paths::Environment::var(&env, portcullis_config::paths::HOME_ENV).is_some();
    let data_dir = portcullis_config::paths::data_dir(cli.data_dir, &env);
    let result = match cli.command {
        Command::Serve(args) => serve::run(&config, &data_dir, &args),
        Command::Connect { server } => connect::run(
            &connect::config_of(config, config_chosen, &data_dir),
            &data_dir,
            &server,
        ),
        Command::Approvals(command) => approvals::run(&data_dir, &command),
        Command::Audit(args) => audit::run(&data_dir, &args),
        Command::Clients(command) => {
            let paths = clients::Paths {
                config: &config,
                data_dir: &data_dir,
                data_dir_chosen,
                config_chosen,
            };
            clients::run(&paths, &command)
        }
        Command::Policy(command) => policy::run(&config, &data_dir, &command),
        Command::Tools(command) => tools::run(&data_dir, &command),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => e.report(),
    }
}
