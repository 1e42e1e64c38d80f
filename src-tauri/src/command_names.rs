// The app's Tauri commands, by name. Included by build.rs (which declares them in the app
// manifest, so each gets its own `allow-…` permission) and by the crate's tests (which check
// the capabilities grant exactly these, one by one). Plain Rust, no `use`: build.rs includes it.

/// Every command the web views may invoke.
pub const COMMANDS: &[&str] = &[
    "list_approvals",
    "decide_approval",
    "extend_approval",
    "dry_run_approval",
    "undo_policy_write",
    "query_audit",
    "export_audit",
    "audit_histogram",
    "list_servers",
    "restart_server",
    "list_tools",
    "read_server",
    "save_server",
    "read_policy",
    "validate_policy",
    "save_policy",
    "get_settings",
    "set_settings",
    "get_paused",
    "set_paused",
    "list_changed_tools",
    "accept_tool",
    "generate_policy",
    "prompt_painted",
    "list_clients",
    "preview_client_install",
    "install_client",
    "preview_client_uninstall",
    "uninstall_client",
];
