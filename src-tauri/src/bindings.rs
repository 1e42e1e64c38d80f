//! The TypeScript of every type that crosses the app's IPC — command arguments and results, and
//! the gateway's event payloads — generated from the Rust types with ts-rs into one committed
//! file, `ui/src/lib/ipc.ts`. The web views import only from it (through `ui/src/lib/types.ts`),
//! so a Rust change that the UI has not followed fails `npm run check`, and a generated file that
//! has not followed the Rust fails the drift test below.
//!
//! Regenerate: `PORTCULLIS_BLESS=1 cargo test -p portcullis-desktop --lib bindings`.

use portcullis_audit::{
    AnswerFinding, AnswerRecord, AuditRow, DecidedBy, Decision, FaultKind, FindingLocation, HistogramBucket, Method,
    Outcome,
};
use portcullis_gate::events::GatewayEvent;
use portcullis_gate::held_calls::pending::{ClientInfo, PendingApproval, RiskBasis, Scope};
use portcullis_gate::held_calls::{Asks, LiveSession};
use portcullis_gate::pins::{DiffEntry, DiffKind, PinChange};
use portcullis_gate::policy_store::PolicyWrite;
use portcullis_gate::upstream::monitor::ServerReport;
use portcullis_keeper::standing::{Effect, Listed as StandingGrant};
use portcullis_policy::{Risk, ToolClass};
use ts_rs::{Config, TS};

use crate::commands::approvals::{DecisionAnswer, DryRunView, Extended};
use crate::commands::audit::FilterArg;
use crate::commands::choice::{ChoiceArg, GrantArg, RuleArg};
use crate::commands::clients::{ClientState, InstallPolicy, InstallPreview, UninstallReport};
use crate::commands::first_run::{ClientSetup, GettingStarted};
use crate::commands::pins::ChangedTool;
use crate::commands::policy::{Decider, ExplainAnswer, PolicyFile, Problem, ToolAction, ToolDecision, Validation};
use crate::commands::servers::{PolicyHealth, ServerStatus, ServerTool};
use crate::commands::starter::{StarterPolicyText, StarterTool};
use crate::export::{Format, Saved};
use crate::ipc::IpcError;
use crate::settings::{Settings, Theme};
use crate::windows::ShowApproval;
use portcullis_config::config::edit::{EntryProblem, ServerEntry};

/// Where the bindings live, from the workspace root.
pub const PATH: &str = "ui/src/lib/ipc.ts";

const HEADER: &str = "// Generated from the Rust types by src-tauri/src/bindings.rs (ts-rs). Do not edit:\n\
// PORTCULLIS_BLESS=1 cargo test -p portcullis-desktop --lib bindings\n";

fn decl<T: TS>(cfg: &Config) -> String {
    format!("\n{}export {}\n", T::docs().unwrap_or_default(), T::decl(cfg))
}

/// The whole file. JSON numbers are JavaScript numbers: 64-bit integers map to `number`.
pub fn render() -> String {
    let cfg = Config::new().with_large_int("number");
    let decls = [
        // The policy's and the gateway's vocabulary, and the gateway's events.
        decl::<ToolClass>(&cfg),
        decl::<Scope>(&cfg),
        decl::<Risk>(&cfg),
        decl::<RiskBasis>(&cfg),
        decl::<ClientInfo>(&cfg),
        decl::<Asks>(&cfg),
        decl::<PendingApproval>(&cfg),
        decl::<LiveSession>(&cfg),
        decl::<Effect>(&cfg),
        decl::<StandingGrant>(&cfg),
        decl::<PinChange>(&cfg),
        decl::<DiffEntry>(&cfg),
        decl::<DiffKind>(&cfg),
        decl::<GatewayEvent>(&cfg),
        decl::<ServerReport>(&cfg),
        // The audit log.
        decl::<Decision>(&cfg),
        decl::<DecidedBy>(&cfg),
        decl::<Method>(&cfg),
        decl::<Outcome>(&cfg),
        decl::<FaultKind>(&cfg),
        decl::<AuditRow>(&cfg),
        decl::<AnswerRecord>(&cfg),
        decl::<AnswerFinding>(&cfg),
        decl::<FindingLocation>(&cfg),
        // The commands' own arguments and results.
        decl::<IpcError>(&cfg),
        decl::<ChoiceArg>(&cfg),
        decl::<GrantArg>(&cfg),
        decl::<RuleArg>(&cfg),
        decl::<DecisionAnswer>(&cfg),
        decl::<PolicyWrite>(&cfg),
        decl::<Extended>(&cfg),
        decl::<DryRunView>(&cfg),
        decl::<FilterArg>(&cfg),
        decl::<Format>(&cfg),
        decl::<Saved>(&cfg),
        decl::<HistogramBucket>(&cfg),
        decl::<ServerStatus>(&cfg),
        decl::<PolicyHealth>(&cfg),
        decl::<ServerEntry>(&cfg),
        decl::<EntryProblem>(&cfg),
        decl::<ServerTool>(&cfg),
        decl::<PolicyFile>(&cfg),
        decl::<Problem>(&cfg),
        decl::<Validation>(&cfg),
        decl::<Decider>(&cfg),
        decl::<ToolAction>(&cfg),
        decl::<ToolDecision>(&cfg),
        decl::<ExplainAnswer>(&cfg),
        decl::<ChangedTool>(&cfg),
        decl::<StarterTool>(&cfg),
        decl::<StarterPolicyText>(&cfg),
        decl::<ClientState>(&cfg),
        decl::<InstallPolicy>(&cfg),
        decl::<InstallPreview>(&cfg),
        decl::<UninstallReport>(&cfg),
        decl::<ClientSetup>(&cfg),
        decl::<GettingStarted>(&cfg),
        decl::<Theme>(&cfg),
        decl::<Settings>(&cfg),
        // The app's own events.
        decl::<ShowApproval>(&cfg),
    ];
    let mut out = HEADER.to_owned();
    out.extend(decls);
    out
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    #[test]
    fn bindings_match_the_committed_file() {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..").join(PATH);
        let want = render();
        if std::env::var_os("PORTCULLIS_BLESS").is_some() {
            std::fs::write(&path, &want).unwrap();
            return;
        }
        let have = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            have == want,
            "{PATH} is out of date with the Rust IPC types; regenerate it with \
             `PORTCULLIS_BLESS=1 cargo test -p portcullis-desktop --lib bindings` and commit it"
        );
    }
}
