//! Policy evaluation on a 1,000-entry policy with globs and argument conditions.
//!
//! Target (issue 5): p50 of one `Policy::evaluate` ≤ 2 µs. Criterion reports the median of its
//! samples (each sample is the mean of many back-to-back calls); `scripts/bench.sh` reads the
//! median from `target/criterion/*/new/estimates.json`.
//!
//! The policy (built in code, deterministic):
//! - 600 exact keys `tool_0000` … `tool_0599`; every third has 3 rules (regex, `in`, `lt`/`eq`
//!   conditions on nested argument paths), every fifth a rate limit, every seventh is
//!   `require_approval`;
//! - 400 glob keys of four shapes (`svc123_*_status`, `ns123/*`, `q123_??`, `[a-c]x123*`),
//!   half of them with a rule;
//! - 16 `hide` patterns.
//!
//! Cases: an exact key whose last rule decides (the worst rule walk), the same call with values
//! that have other readings (a number spelled as a string, JSON held in a string), an exact key
//! without rules, a glob key (one `GlobSet` match over 400 globs, most specific wins), a glob key with a
//! rule, a miss that falls to `default` (every glob tried), a hidden tool. Loading
//! (`from_json_str`: parse, validate, compile 1,000 globs/regexes) is measured too, as it is
//! the cost of a hot reload.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use portcullis_policy::{Action, Policy};
use serde_json::{json, Map, Value};

const EXACT: usize = 600;
const GLOBS: usize = 400;

fn policy_json() -> String {
    let mut tools = Map::new();
    for i in 0..EXACT {
        let mut entry = Map::new();
        if i % 7 == 0 {
            entry.insert("action".into(), json!("require_approval"));
        }
        if i % 5 == 0 {
            entry.insert("rate_limit".into(), json!({ "max": 100, "window": 60 }));
        }
        if i % 3 == 0 {
            entry.insert(
                "rules".into(),
                json!([
                    { "when": { "arguments.path": { "regex": "^/etc/" } }, "action": "deny", "reason": "system files" },
                    { "when": { "arguments.method": { "in": ["DELETE", "PUT", "PATCH"] },
                                "arguments.opts.force": { "eq": true } }, "action": "require_approval" },
                    { "when": { "arguments.path": { "regex": "^/tmp/[a-z]+\\.txt$" },
                                "arguments.size": { "lt": 1048576 },
                                "arguments.user": { "not_in": ["root", "admin"] } }, "action": "allow" }
                ]),
            );
            entry.insert("action".into(), json!("deny"));
            entry.insert("reason".into(), json!("no rule matched"));
        }
        tools.insert(format!("tool_{i:04}"), Value::Object(entry));
    }
    for i in 0..GLOBS {
        let key = match i % 4 {
            0 => format!("svc{i}_*_status"),
            1 => format!("ns{i}/*"),
            2 => format!("q{i}_??"),
            _ => format!("[a-c]x{i}*"),
        };
        let entry = if (i / 4) % 2 == 0 {
            json!({ "rules": [ { "when": { "arguments.query": { "regex": "^\\s*SELECT\\b" } }, "action": "allow" } ],
                    "action": "require_approval" })
        } else {
            json!({ "action": "allow", "rate_limit": { "max": 10, "window": 60 } })
        };
        tools.insert(key, entry);
    }
    let hide: Vec<String> = (0..16).map(|i| format!("secret{i}_*")).collect();
    serde_json::to_string(&json!({
        "version": "1",
        "default": "deny",
        "hide": hide,
        "approval_timeout": 45,
        "tools": tools,
    }))
    .expect("serializable")
}

fn bench(c: &mut Criterion) {
    let text = policy_json();
    let policy = Policy::from_json_str(&text, "bench.json").expect("valid policy");

    // (name, tool, arguments, expected action) — checked once so a wrong policy fails loudly.
    let rule_args = json!({ "path": "/tmp/notes.txt", "size": 512, "user": "alice",
                            "method": "GET", "opts": { "force": false } });
    let glob_rule_args = json!({ "query": "  SELECT * FROM t" });
    // The same call with values that have other readings (issue 28): a number spelled as a
    // string, an object held in a string; the allow rule does not hold, the entry denies.
    let spelled_args = json!({ "path": "/tmp/notes.txt", "size": " 5e2 ", "user": "alice",
                               "method": "GET", "opts": "{\"force\": false}" });
    let cases: Vec<(&str, &str, Value, Action)> = vec![
        ("exact_last_rule", "tool_0300", rule_args.clone(), Action::Allow),
        ("exact_no_rules", "tool_0302", Value::Null, Action::Allow),
        ("exact_spelled_values", "tool_0300", spelled_args, Action::Deny),
        ("glob_status", "svc204_vm_status", json!({}), Action::Allow),
        ("glob_rule", "svc200_x_status", glob_rule_args, Action::Allow),
        ("glob_class", "bx399_anything", json!({ "k": 1 }), Action::Allow),
        ("default_miss", "no_such_tool", json!({ "k": 1 }), Action::Deny),
        ("hidden", "secret7_token", json!({}), Action::Hide),
    ];
    for (name, tool, args, want) in &cases {
        let got = policy.evaluate(tool, args).action;
        assert_eq!(got, *want, "{name}: {tool}");
    }

    let mut group = c.benchmark_group("policy_1000");
    group.throughput(Throughput::Elements(1));
    for (name, tool, args, _) in &cases {
        group.bench_function(*name, |b| {
            b.iter(|| black_box(policy.evaluate(black_box(tool), black_box(args))));
        });
    }
    group.finish();

    let mut load = c.benchmark_group("policy_load");
    load.sample_size(20);
    load.bench_function("from_json_str_1000", |b| {
        b.iter(|| Policy::from_json_str(black_box(&text), "bench.json").expect("valid"));
    });
    load.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
