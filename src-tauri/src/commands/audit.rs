//! `query_audit`, `save_audit_export`, `audit_histogram`: reads of the audit database, on a
//! blocking thread (SQLite) so the async runtime never waits on the disk; `suggest_export_path`.

use std::sync::Arc;

use portcullis_audit::{AuditFilter, AuditRow, AuditStore, Decision, HistogramBucket, Method};
use serde::Deserialize;
use tauri::State;

use crate::export::{self, Format, Saved};
use crate::host::Host;
use crate::ipc::{IpcError, IpcResult};

/// Largest page the viewer may ask for.
const MAX_PAGE: usize = 1000;
/// Rows read per query while exporting, and the most exported.
const EXPORT_PAGE: usize = 5000;
const EXPORT_MAX: usize = 500_000;

/// The UI's `AuditFilter`; `before` is the keyset cursor `[time_ms, id]`.
#[derive(Debug, Clone, Default, Deserialize, ts_rs::TS)]
#[serde(deny_unknown_fields)]
#[ts(rename = "AuditFilter", optional_fields)]
pub struct FilterArg {
    /// Which kind of request (`tools/call`, `resources/read`, …); every kind when absent.
    method: Option<Method>,
    server: Option<String>,
    tool: Option<String>,
    decision: Option<Decision>,
    since_ms: Option<i64>,
    until_ms: Option<i64>,
    text: Option<String>,
    /// Only requests whose answer had findings; every request when absent or false.
    #[serde(default)]
    // `with_findings?: boolean`: the UI leaves it out unless it is set (`nullable` keeps the
    // type as it is, here `bool`, rather than asking for an `Option`).
    #[ts(optional = nullable)]
    with_findings: bool,
    before: Option<(i64, i64)>,
}

impl From<FilterArg> for AuditFilter {
    fn from(f: FilterArg) -> Self {
        let nonempty = |s: Option<String>| s.filter(|s| !s.trim().is_empty());
        AuditFilter {
            method: f.method,
            server: nonempty(f.server),
            tool: nonempty(f.tool),
            decision: f.decision,
            since_ms: f.since_ms,
            until_ms: f.until_ms,
            text: nonempty(f.text),
            with_findings: f.with_findings,
            before: f.before,
        }
    }
}

async fn store(host: &Host) -> IpcResult<Arc<AuditStore>> {
    Ok(host.running().await?.audit.clone())
}

async fn blocking<T: Send + 'static>(f: impl FnOnce() -> IpcResult<T> + Send + 'static) -> IpcResult<T> {
    tauri::async_runtime::spawn_blocking(f)
        .await
        .map_err(|e| IpcError::internal("the audit read stopped", &e))?
}

#[tauri::command(rename_all = "snake_case")]
pub async fn query_audit(host: State<'_, Arc<Host>>, filter: FilterArg, limit: usize) -> IpcResult<Vec<AuditRow>> {
    let store = store(&host).await?;
    let filter = AuditFilter::from(filter);
    blocking(move || Ok(store.query(&filter, limit.clamp(1, MAX_PAGE))?)).await
}

/// Where the export dialog proposes to save.
#[tauri::command(rename_all = "snake_case")]
pub fn suggest_export_path(format: Format) -> String {
    let now = portcullis_gate::clock::now_ms();
    export::suggested_path(format, now, export::default_folder())
        .display()
        .to_string()
}

/// Saves every row the filter matches to `path` (see `export.rs` for what is refused).
#[tauri::command(rename_all = "snake_case")]
pub async fn save_audit_export(
    host: State<'_, Arc<Host>>,
    filter: FilterArg,
    format: Format,
    path: String,
    replace: bool,
) -> IpcResult<Saved> {
    let store = store(&host).await?;
    let filter = AuditFilter::from(filter);
    blocking(move || {
        let rows = export_rows(&store, filter)?;
        export::save(&path, &export::render(&rows, format), rows.len(), replace)
    })
    .await
}

/// Every row the filter matches, newest first, at most [`EXPORT_MAX`].
fn export_rows(store: &AuditStore, mut filter: AuditFilter) -> IpcResult<Vec<AuditRow>> {
    let mut rows = Vec::new();
    while rows.len() < EXPORT_MAX {
        let page = store.query(&filter, EXPORT_PAGE)?;
        let Some(last) = page.last() else { break };
        filter.before = Some(last.cursor());
        let full = page.len() == EXPORT_PAGE;
        rows.extend(page);
        if !full {
            break;
        }
    }
    rows.truncate(EXPORT_MAX);
    Ok(rows)
}

#[tauri::command(rename_all = "snake_case")]
pub async fn audit_histogram(
    host: State<'_, Arc<Host>>,
    filter: FilterArg,
    bucket_ms: i64,
) -> IpcResult<Vec<HistogramBucket>> {
    let store = store(&host).await?;
    let filter = AuditFilter::from(filter);
    let now = portcullis_gate::clock::now_ms();
    blocking(move || Ok(store.histogram(&filter, bucket_ms, now)?)).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ui_filter_parses_with_its_cursor() {
        let f: FilterArg = serde_json::from_value(serde_json::json!({
            "server": "fs", "decision": "rate_limited", "since_ms": 5, "text": " ", "before": [10, 3]
        }))
        .unwrap();
        let f = AuditFilter::from(f);
        assert_eq!(f.server.as_deref(), Some("fs"));
        assert_eq!(f.decision, Some(Decision::RateLimited));
        assert_eq!(f.text, None, "blank text is no filter");
        assert_eq!(f.before, Some((10, 3)));
        assert!(serde_json::from_value::<FilterArg>(serde_json::json!({"decision": "allow"})).is_err());
    }

    #[test]
    fn the_ui_filter_reaches_the_store_by_kind() {
        let f: FilterArg = serde_json::from_value(serde_json::json!({"method": "resources/read"})).unwrap();
        assert_eq!(AuditFilter::from(f).method, Some(Method::ResourcesRead));
        let all: FilterArg = serde_json::from_value(serde_json::json!({})).unwrap();
        assert_eq!(AuditFilter::from(all).method, None, "no kind is every kind");
        assert!(
            serde_json::from_value::<FilterArg>(serde_json::json!({"method": "resources"})).is_err(),
            "a kind is one of the audit's methods"
        );
    }

    #[test]
    fn the_ui_filter_asks_for_answers_with_findings() {
        let f: FilterArg = serde_json::from_value(serde_json::json!({"with_findings": true})).unwrap();
        assert!(AuditFilter::from(f).with_findings);
        let all: FilterArg = serde_json::from_value(serde_json::json!({"server": "fs"})).unwrap();
        assert!(!AuditFilter::from(all).with_findings, "absent is every request");
        assert!(serde_json::from_value::<FilterArg>(serde_json::json!({"with_findings": "yes"})).is_err());
    }
}
