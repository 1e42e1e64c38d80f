//! The policy loader (`portcullis_policy::Policy::from_json_str`).
//!
//! Checks, for any text:
//! - loading returns a policy or problems, never panics; every problem names the source, a JSON
//!   path starting at `$` and a one-line message, and the error displays one line per problem;
//! - a loaded policy also deserializes into the serde model (`RawPolicy`: the loader and the
//!   schema agree), and re-serialized (compact and pretty) it loads again and decides every call
//!   the same way.
#![no_main]

use libfuzzer_sys::fuzz_target;
use portcullis_policy::model::RawPolicy;
use portcullis_policy::Policy;
use serde_json::{json, Value};

const SOURCE: &str = "fuzz.json";

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    match Policy::from_json_str(text, SOURCE) {
        Ok(policy) => check_loaded(text, &policy),
        Err(err) => {
            assert!(!err.problems.is_empty(), "an error names at least one problem");
            for problem in &err.problems {
                assert_eq!(problem.file, SOURCE);
                assert!(problem.path.starts_with('$'), "path {:?}", problem.path);
                assert!(!problem.message.is_empty());
                assert!(!problem.message.contains('\n'), "one line: {:?}", problem.message);
                assert!(!problem.path.contains('\n'), "one line: {:?}", problem.path);
            }
            assert_eq!(err.to_string().lines().count(), err.problems.len());
        }
    }
});

fn check_loaded(text: &str, policy: &Policy) {
    if let Err(err) = serde_json::from_str::<RawPolicy>(text) {
        panic!("loaded, but the serde model refuses it: {err}");
    }
    let value: Value = serde_json::from_str(text).expect("a loaded policy is JSON");
    let names = tool_names(&value);
    for again in [
        value.to_string(),
        serde_json::to_string_pretty(&value).expect("serializes"),
    ] {
        let reloaded = match Policy::from_json_str(&again, SOURCE) {
            Ok(p) => p,
            Err(err) => panic!("re-serialized policy does not load: {err}\n{again}"),
        };
        for name in &names {
            for arguments in [Value::Null, json!({}), json!({"a": 1, "path": "/etc", "n": [1, "x"]})] {
                let first = policy.evaluate(name, &arguments);
                assert_eq!(first, policy.evaluate(name, &arguments), "deterministic");
                assert_eq!(first, reloaded.evaluate(name, &arguments), "{name:?} after reloading");
                assert_eq!(policy.is_hidden(name), reloaded.is_hidden(name));
            }
        }
    }
}

/// Names worth asking about: every key and hide pattern as a name, and a few others.
fn tool_names(value: &Value) -> Vec<String> {
    let mut names: Vec<String> = ["", "a", "read_file", "vm_delete", "*", "x{a,b}"]
        .map(str::to_owned)
        .to_vec();
    if let Some(tools) = value.get("tools").and_then(Value::as_object) {
        names.extend(tools.keys().cloned());
    }
    if let Some(hide) = value.get("hide").and_then(Value::as_array) {
        names.extend(hide.iter().filter_map(Value::as_str).map(str::to_owned));
    }
    names.truncate(40);
    names
}
