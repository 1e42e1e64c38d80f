//! The arguments digest in audit rows is keyed with the install's `digest.key`: the gateway makes
//! the key on first open, two installs disagree on the digest of the same call, and a key file
//! others could read stops the gateway instead of being used.

#![allow(clippy::unwrap_used)] // test helpers: a failed setup should panic

use std::path::Path;
use std::sync::Arc;

use portcullis_audit::{AuditFilter, AuditStore};
use portcullis_config::config::Config;
use portcullis_gate::digest_key;
use portcullis_keeper::{Keeper, StartError};
use portcullis_wire::canonical;
use serde_json::json;

use crate::common::post_json;

fn open(dir: &Path) -> Result<Arc<Keeper>, StartError> {
    std::fs::create_dir_all(dir.join("policies")).unwrap();
    // Denied by policy: the row is written and nothing is forwarded, so no upstream is needed.
    std::fs::write(dir.join("policies/up.json"), r#"{"version":"1","default":"deny"}"#).unwrap();
    let text = json!({ "listen": "127.0.0.1:0", "mcpServers": { "up": { "url": "http://127.0.0.1:9/mcp" } } });
    let config = Config::from_str(&text.to_string(), &dir.join("portcullis.json")).unwrap();
    Keeper::open(config, &dir.join("data"))
}

/// Sends one call whose PIN the audit log redacts through the gateway's HTTP endpoint, and
/// returns the stored row's digest.
async fn recorded_digest(gateway: Arc<Keeper>, dir: &Path) -> String {
    let data = dir.join("data");
    let (listener, file) = gateway.bind(&data).await.unwrap();
    tokio::spawn(gateway.serve(listener, std::future::pending()));
    let call = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "transfer", "arguments": { "pin": "4821", "to": "savings" },
        "_meta": { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {} } } });
    let reply = post_json(&file.server_url("up"), &file.token, &call).await;
    assert_eq!(reply["result"]["isError"], true, "denied by the policy: {reply}");
    let store = AuditStore::open(&data.join(portcullis_keeper::AUDIT_FILE)).unwrap();
    let rows = store.query(&AuditFilter::default(), 10).unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].arguments["pin"], json!("[redacted]"));
    rows[0].arguments_digest.clone()
}

#[tokio::test]
async fn audit_rows_carry_a_digest_keyed_per_install() {
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let in_a = recorded_digest(open(a.path()).unwrap(), a.path()).await;
    let in_b = recorded_digest(open(b.path()).unwrap(), b.path()).await;
    assert!(in_a.starts_with(canonical::ARGUMENTS_DIGEST_PREFIX), "{in_a}");
    assert_ne!(in_a, in_b, "the same call digests differently on two installs");

    // With the key file, the digest is reproducible; without it, the old attack (hash every
    // 4-digit guess) finds nothing.
    let key = digest_key::load_or_create(&a.path().join("data")).unwrap();
    assert_eq!(key.digest(&json!({ "to": "savings", "pin": "4821" })), in_a);
    let hex = &in_a[canonical::ARGUMENTS_DIGEST_PREFIX.len()..];
    let found = (0..10_000).find(|n| {
        let guess = canonical::digest(&json!({ "pin": format!("{n:04}"), "to": "savings" }));
        guess.ends_with(hex)
    });
    assert_eq!(found, None);

    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let meta = std::fs::metadata(a.path().join("data").join(digest_key::DIGEST_KEY_FILE)).unwrap();
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    }
}

#[cfg(unix)]
#[tokio::test]
async fn a_readable_key_file_stops_the_gateway() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    drop(open(dir.path()).unwrap());
    let key = dir.path().join("data").join(digest_key::DIGEST_KEY_FILE);
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o640)).unwrap();
    let err = open(dir.path()).err().expect("a group-readable key must be refused");
    assert!(
        matches!(err, StartError::Plane(portcullis_gate::StartError::DigestKey(_))),
        "{err}"
    );
    assert!(err.to_string().contains("digest.key"), "{err}");
}
