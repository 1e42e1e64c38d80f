//! Evaluation speed with a large policy. Timing depends on the machine and the build profile,
//! so this is not part of the normal run:
//! `cargo test -p portcullis-policy --release --test speed -- --ignored --nocapture`.

use std::time::{Duration, Instant};

use portcullis_policy::{Action, Policy};
use serde_json::{json, Map, Value};

/// 1,000 entries: 900 exact names (some with rules), 100 globs; 10 hide globs.
fn large_policy() -> Policy {
    let mut tools = Map::new();
    for i in 0..900 {
        let entry = if i % 10 == 0 {
            json!({ "action": "require_approval", "rules": [
                { "when": { "arguments.query": { "regex": "^\\s*SELECT\\b" } }, "action": "allow" }
            ] })
        } else {
            json!({ "rate_limit": { "max": 10, "window": 60 } })
        };
        tools.insert(format!("tool_{i}"), entry);
    }
    for i in 0..100 {
        tools.insert(
            format!("svc{i}_get_*_status"),
            json!({ "action": "deny", "reason": "r" }),
        );
    }
    let hide: Vec<String> = (0..10).map(|i| format!("hidden{i}_*")).collect();
    let document = json!({ "version": "1", "default": "deny", "hide": hide, "tools": tools });
    Policy::from_json_str(&document.to_string(), "large.json").expect("the large policy loads")
}

fn p50(policy: &Policy, tool: &str, arguments: &Value) -> Duration {
    const RUNS: usize = 20_000;
    let mut times = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let start = Instant::now();
        let decision = policy.evaluate(tool, arguments);
        times.push(start.elapsed());
        std::hint::black_box(decision);
    }
    times.sort();
    times[RUNS / 2]
}

#[test]
#[ignore = "timing; run with --release -- --ignored"]
fn evaluate_p50_is_within_two_microseconds() {
    let policy = large_policy();
    let arguments = json!({ "query": "SELECT 1", "vmid": 100 });
    let cases = [
        ("exact", "tool_123", Action::Allow),
        ("exact with rule", "tool_120", Action::Allow),
        ("glob", "svc57_get_node_status", Action::Deny),
        ("default", "unknown_tool", Action::Deny),
        ("hidden", "hidden3_x", Action::Hide),
    ];
    for (label, tool, action) in cases {
        assert_eq!(policy.evaluate(tool, &arguments).action, action, "{label}");
        let median = p50(&policy, tool, &arguments);
        eprintln!("{label:16} p50 = {median:?}");
        assert!(
            cfg!(debug_assertions) || median <= Duration::from_micros(2),
            "{label}: p50 {median:?} exceeds the 2 µs budget"
        );
    }
}
