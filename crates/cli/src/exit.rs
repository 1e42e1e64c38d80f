//! Exit codes of the CLI contract: 0 ok, 1 user error, 2 gateway not running or unreachable.

use std::process::ExitCode;

#[derive(Debug)]
pub(crate) enum Failure {
    /// Bad input or a refused operation: one line, exit 1.
    User(String),
    /// Several lines already formatted (e.g. policy problems), exit 1.
    Report(Vec<String>),
    /// No gateway to talk to: exit 2.
    NoGateway(String),
}

impl Failure {
    pub(crate) fn user(message: impl std::fmt::Display) -> Self {
        Self::User(message.to_string())
    }

    pub(crate) fn report(self) -> ExitCode {
        match self {
            Self::User(message) => {
                eprintln!("portcullis: {message}");
                ExitCode::from(1)
            }
            Self::Report(lines) => {
                for line in lines {
                    eprintln!("{line}");
                }
                ExitCode::from(1)
            }
            Self::NoGateway(message) => {
                eprintln!("portcullis: {message}");
                ExitCode::from(2)
            }
        }
    }
}

pub(crate) type Outcome = Result<(), Failure>;

/// The one-thread runtime a subcommand runs its async work on.
pub(crate) fn runtime() -> Result<tokio::runtime::Runtime, Failure> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::user(format!("cannot start the async runtime: {e}")))
}
