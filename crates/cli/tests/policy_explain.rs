//! `portcullis policy explain`: the real binary, offline, on a config and its policies dir.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_portcullis");

fn setup(dir: &Path) -> PathBuf {
    let config = dir.join("portcullis.json");
    std::fs::write(
        &config,
        json!({"mcpServers": {"fs": {"command": "true"}, "bare": {"command": "true"}}}).to_string(),
    )
    .expect("config");
    std::fs::create_dir_all(dir.join("policies")).expect("policies dir");
    let policy = json!({
        "version": "1",
        "default": "deny",
        "tools": {
            "read_*": {},
            "read_secret_*": { "action": "require_approval" },
            "write_file": {
                "action": "require_approval",
                "rules": [ { "when": { "arguments.path": { "path_under": "/tmp" } }, "action": "allow" } ]
            }
        }
    });
    std::fs::write(dir.join("policies/fs.json"), policy.to_string()).expect("policy");
    config
}

fn explain(config: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .args(["policy", "explain", "--config"])
        .arg(config)
        .args(args)
        .env_remove("PORTCULLIS_HOME")
        .env_remove("PORTCULLIS_CONFIG")
        .stdin(Stdio::null())
        .output()
        .expect("run portcullis")
}

fn stdout(out: &Output) -> String {
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout.clone()).expect("UTF-8")
}

#[test]
fn a_rule_that_holds_is_named_with_its_index_and_condition() {
    let dir = tempfile::tempdir().expect("temp dir");
    let config = setup(dir.path());
    let text = stdout(&explain(
        &config,
        &["fs", "write_file", "--arguments", r#"{"path":"/tmp/a"}"#],
    ));
    assert!(
        text.contains("write_file: allow (by tools.write_file.rules[0])"),
        "{text}"
    );
    assert!(
        text.contains(
            r#"rule 0 (tools.write_file.rules[0]): when {"arguments.path":{"path_under":"/tmp"}} -> allow: holds"#
        ),
        "{text}"
    );

    let text = stdout(&explain(
        &config,
        &["fs", "write_file", "--arguments", r#"{"path":"/etc/x"}"#],
    ));
    assert!(
        text.contains("write_file: require_approval (by tools.write_file)"),
        "{text}"
    );
    assert!(text.contains("does not hold"), "{text}");
    assert!(
        text.contains("no rule holds: the entry's own action decides (require_approval)"),
        "{text}"
    );
}

#[test]
fn the_winning_glob_and_the_ones_it_beat_are_shown() {
    let dir = tempfile::tempdir().expect("temp dir");
    let config = setup(dir.path());
    let text = stdout(&explain(&config, &["fs", "read_secret_key"]));
    assert!(
        text.contains(r#"entry: tools["read_secret_*"], the most specific matching glob"#),
        "{text}"
    );
    assert!(
        text.contains(r#"also matched, less specific: tools["read_*"]"#),
        "{text}"
    );
    let text = stdout(&explain(&config, &["fs", "list"]));
    assert!(text.contains("list: deny (by default)"), "{text}");
    let text = stdout(&explain(&config, &["bare", "anything"]));
    assert!(text.contains("require_approval (by no policy file)"), "{text}");
    assert!(text.contains("(no such file)"), "{text}");
}

#[test]
fn json_output_carries_the_evaluation() {
    let dir = tempfile::tempdir().expect("temp dir");
    let config = setup(dir.path());
    let out = stdout(&explain(&config, &["fs", "read_x", "--json"]));
    let v: Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(v["evaluation"]["action"], "allow");
    assert_eq!(v["matched"]["kind"], "glob");
    assert_eq!(v["matched"]["key"]["key"], "read_*");
    assert_eq!(v["server"], "fs");
}

#[test]
fn an_unknown_server_or_bad_arguments_exit_1_with_a_message() {
    let dir = tempfile::tempdir().expect("temp dir");
    let config = setup(dir.path());
    for (args, message) in [
        (vec!["nope", "x"], "no server \"nope\""),
        (vec!["fs", "x", "--arguments", "{not json"], "--arguments is not JSON"),
        (
            vec!["fs", "x", "--arguments", "[1]"],
            "--arguments must be a JSON object",
        ),
    ] {
        let out = explain(&config, &args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(message), "{args:?}: {err}");
    }
    std::fs::write(dir.path().join("policies/fs.json"), r#"{"version": "2"}"#).expect("write");
    let out = explain(&config, &["fs", "x"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("fs.json"));
}
