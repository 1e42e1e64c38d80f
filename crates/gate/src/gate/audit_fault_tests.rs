//! The gate fails closed when the audit cannot be written, tells the agent why, and forwards again
//! once the database can be written, with the same gate (no restart).
//!
//! The faults here are real: the database's directory does not exist when the gateway starts, so
//! the writer cannot open it (creating the directory is the fix; no privileges needed), and a
//! filesystem with no room left (a small tmpfs, filled; needs root for `mount`, as CI has: without
//! it the test fails under CI and is skipped with its reason elsewhere, `test_env.rs`). The
//! full-disk case runs through the decision commit on the caller's thread (the writer is idle
//! between these sequential calls), so it also shows that the attempt there fails closed. (The
//! lock and read-only cases are in `portcullis-audit`'s `fault_tests.rs` and the e2e suite.)

use std::sync::Arc;
use std::time::{Duration, Instant};

use portcullis_audit::AuditWriter;
use portcullis_wire::RequestId;
use serde_json::json;

use super::{Call, Caller, Gate, Verdict};
use crate::audit_log::health_json;

fn gate(dir: &tempfile::TempDir, writer: AuditWriter) -> Arc<Gate> {
    super::test_gate::gate_with(dir, r#"{"version": "1", "default": "allow"}"#, writer)
}

fn call() -> Call {
    Call {
        server: "srv".into(),
        method: portcullis_audit::Method::ToolsCall,
        tool: "echo".into(),
        arguments: json!({"message": "hi"}),
        arguments_text: None,
        original_arguments: None,
        request_id: RequestId::from_value(&json!(1)).unwrap(),
        modern: false,
        request_state: None,
        digest: None,
    }
}

#[tokio::test]
async fn calls_are_refused_while_the_audit_cannot_be_written_and_forwarded_once_it_can() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let writer = AuditWriter::open_fail_closed(&data.join("audit.db")).unwrap();
    let gate = gate(&dir, writer.clone());

    let caller = Caller::default();
    match gate.decide(call(), &caller).await {
        Verdict::Refuse(result) => {
            assert_eq!(result["isError"], json!(true));
            let text = result["content"][0]["text"].as_str().unwrap_or_default();
            assert!(
                text.starts_with("[portcullis] call refused: the audit log cannot be written ("),
                "{text}"
            );
            assert!(text.contains("audit.db"), "the message names the file: {text}");
            assert!(text.ends_with("nothing is forwarded until it can"), "{text}");
        }
        _ => panic!("a call whose decision cannot be recorded must not be forwarded"),
    }
    let status = health_json(gate.audit.fault().as_ref());
    assert_eq!(status["ok"], json!(false), "{status}");
    assert!(
        status["error"].as_str().is_some_and(|e| e.contains("audit.db")),
        "{status}"
    );

    std::fs::create_dir(&data).unwrap();
    // The writer retries by itself about every second; bounded wait for it to notice.
    let deadline = Instant::now() + Duration::from_secs(15);
    while writer.fault().is_some() {
        assert!(
            Instant::now() < deadline,
            "the writer never recovered: {:?}",
            writer.fault()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(health_json(gate.audit.fault().as_ref()), json!({"ok": true}));
    match gate.decide(call(), &caller).await {
        Verdict::Forward(forwarded) => drop(forwarded),
        _ => panic!("once the audit can be written the call must be forwarded"),
    }
    let rows = writer.store().unwrap().count(&Default::default()).unwrap();
    assert_eq!(rows, 1, "only the forwarded call has a row");
}

/// A tmpfs mounted for one test and unmounted when it ends. Linux only: the full disk is made
/// with a mount, which the Windows build (run under Wine) has no equivalent of.
#[cfg(target_os = "linux")]
struct Tmpfs(std::path::PathBuf);

#[cfg(target_os = "linux")]
impl Tmpfs {
    fn mount(at: &std::path::Path, size: &str) -> Option<Tmpfs> {
        let ok = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size},mode=0700"), "tmpfs"])
            .arg(at)
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        ok.then(|| Tmpfs(at.to_owned()))
    }
}

#[cfg(target_os = "linux")]
impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

/// Writes until the filesystem refuses: ENOSPC, for real.
#[cfg(target_os = "linux")]
fn fill(path: &std::path::Path) {
    use std::io::Write as _;
    let mut file = std::fs::File::create(path).unwrap();
    let chunk = vec![0x5a_u8; 16 * 1024];
    while file.write_all(&chunk).is_ok() {}
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn on_a_full_disk_no_call_is_forwarded_without_its_row_and_forwarding_resumes_once_freed() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let Some(_mount) = Tmpfs::mount(&data, "4m") else {
        return crate::test_env::unmet("cannot mount a tmpfs here (needs root)");
    };
    let writer = AuditWriter::open(&data.join("audit.db")).unwrap();
    let gate = gate(&dir, writer.clone());
    let caller = Caller::default();
    fill(&data.join("filler"));

    // Calls whose rows still fit in log space SQLite owns are forwarded; the first that does not
    // fit is refused. Bounded: the log is far smaller than this many rows.
    let mut forwarded = 0_u64;
    let text = loop {
        match gate.decide(call(), &caller).await {
            Verdict::Forward(call) => {
                forwarded += 1;
                drop(call);
            }
            Verdict::Refuse(result) => break result["content"][0]["text"].as_str().unwrap_or_default().to_owned(),
            Verdict::Hold(_) => panic!("the policy allows every call"),
        }
        assert!(forwarded < 5_000, "the full disk never refused a call");
    };
    assert!(
        text.starts_with("[portcullis] call refused: the audit log cannot be written (disk full: "),
        "the agent is told why: {text}"
    );
    assert_eq!(
        writer.fault().map(|f| f.kind),
        Some(portcullis_audit::FaultKind::Full),
        "the person is told why (the health the app and `/control/status` show)"
    );
    assert!(matches!(gate.decide(call(), &caller).await, Verdict::Refuse(_)));
    let rows = writer.store().unwrap().count(&Default::default()).unwrap();
    assert_eq!(
        rows, forwarded,
        "every forwarded call has its row, and no refused call has one"
    );

    std::fs::remove_file(data.join("filler")).unwrap();
    match gate.decide(call(), &caller).await {
        Verdict::Forward(forwarded) => drop(forwarded),
        _ => panic!("once there is room the call must be forwarded"),
    }
    assert!(writer.fault().is_none(), "the record that fits ends the fault");
}
