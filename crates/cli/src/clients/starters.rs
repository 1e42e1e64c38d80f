//! The policy half of `clients install`: each routed server without a policy file gets the
//! starter policy `portcullis policy init` would write (the same code: `policy::init`), shown in
//! the preview tool by tool and written after the client is routed. A server that cannot be
//! started to list its tools is named; it has no policy file, so every call to it asks a person.

use std::path::{Path, PathBuf};
use std::time::Duration;

use portcullis_clients::install::{Plan, PolicyTarget};
use portcullis_policy::starter::StarterPolicy;

use crate::exit::Failure;
use crate::policy::init::{self, NotGenerated};

/// What install does about one routed server's policy.
enum Step {
    /// The file exists: left as it is.
    Kept,
    /// `--no-policy`.
    Skipped,
    Write(StarterPolicy),
    /// The server could not be started or listed.
    Failed(NotGenerated),
}

/// The policies install writes, worked out before anything is written.
pub(super) struct Policies {
    dir: PathBuf,
    dir_exists: bool,
    steps: Vec<(PolicyTarget, Step)>,
}

/// Lists the tools of every routed server that has no policy file (all at once, each bounded by
/// `timeout`), unless `skip`.
pub(super) fn prepare(plan: &Plan, skip: bool, timeout: Duration) -> Result<Policies, Failure> {
    let dir = plan.policies_dir().map_err(Failure::user)?;
    let targets = plan.policy_targets().map_err(Failure::user)?;
    let to_list: Vec<&PolicyTarget> = targets.iter().filter(|t| !t.exists && !skip).collect();
    if !to_list.is_empty() {
        let names: Vec<&str> = to_list.iter().map(|t| t.server.as_str()).collect();
        eprintln!(
            "portcullis: starting {} to list its tools for a starter policy…",
            names.join(", ")
        );
    }
    let runtime = crate::exit::runtime()?;
    let mut made = runtime
        .block_on(futures::future::join_all(
            to_list.iter().map(|t| init::generate(&t.server, &t.config, timeout)),
        ))
        .into_iter();
    let steps = targets
        .into_iter()
        .map(|t| {
            let step = match (t.exists, skip) {
                (true, _) => Step::Kept,
                (false, true) => Step::Skipped,
                (false, false) => match made.next() {
                    Some(Ok(starter)) => Step::Write(starter),
                    Some(Err(e)) => Step::Failed(e),
                    None => unreachable!("one listing per server without a policy"),
                },
            };
            (t, step)
        })
        .collect();
    Ok(Policies {
        dir_exists: dir.is_dir(),
        dir,
        steps,
    })
}

fn indent(text: &str) -> String {
    let line = |l: &str| {
        if l.is_empty() {
            String::new()
        } else {
            format!("    {l}")
        }
    };
    text.lines().map(line).collect::<Vec<_>>().join("\n")
}

/// What a server without a policy file does until it has one.
fn asks_until(server: &str) -> String {
    format!(
        "    until it has a policy file, every call to {server} asks you; `portcullis policy init {server}` writes one once it starts"
    )
}

impl Policies {
    /// The policy part of the preview: the directory, then each server's file and, for a starter
    /// policy, every tool with its class, risk and rule.
    pub(super) fn preview(&self) -> String {
        let mut out = vec![format!(
            "\npolicies: {}{}",
            self.dir.display(),
            if self.dir_exists { "" } else { " (to be created)" }
        )];
        for (target, step) in &self.steps {
            let path = target.path.display();
            match step {
                Step::Kept => out.push(format!("  = {path}: exists, kept as it is")),
                Step::Skipped => {
                    out.push(format!("  ! {path}: not written (--no-policy)"));
                    out.push(asks_until(&target.server));
                }
                Step::Write(starter) => {
                    out.push(format!("  + {path}: starter policy, {} tools", starter.tools.len()));
                    out.push(indent(&init::summary(starter)));
                }
                Step::Failed(e) => {
                    out.push(format!(
                        "  ! {path}: not written: cannot start {:?} to list its tools: {}",
                        target.server, e.message
                    ));
                    out.extend(e.stderr_tail.iter().map(|l| format!("    server stderr: {l}")));
                    out.push(asks_until(&target.server));
                }
            }
        }
        out.join("\n")
    }

    /// Whether [`Self::write`] writes any policy file.
    pub(super) fn writes_any(&self) -> bool {
        self.steps.iter().any(|(_, s)| matches!(s, Step::Write(_)))
    }

    /// Servers with no policy file after [`Self::write`].
    pub(super) fn unwritten(&self) -> Vec<&str> {
        self.steps
            .iter()
            .filter(|(_, s)| matches!(s, Step::Skipped | Step::Failed(_)))
            .map(|(t, _)| t.server.as_str())
            .collect()
    }

    /// Creates the directory and writes each starter policy (never over a file that appeared
    /// since the preview). Returns the files written.
    pub(super) fn write(&self) -> Result<Vec<&Path>, Failure> {
        std::fs::create_dir_all(&self.dir)
            .map_err(|e| Failure::user(format!("cannot create {}: {e}", self.dir.display())))?;
        let mut written = Vec::new();
        for (target, step) in &self.steps {
            if let Step::Write(starter) = step {
                init::write_policy(&target.path, &starter.text, false)?;
                written.push(target.path.as_path());
            }
        }
        Ok(written)
    }
}
