//! `results`: the file's fields under each entry's, field by field, the defaults under both; every
//! wrong value reported with its path.

use portcullis_policy::{Door, Policy, ResultActions, Treatment};
use serde_json::json;

fn policy(text: serde_json::Value) -> Policy {
    Policy::from_json_str(&text.to_string(), "test.json").expect("a valid policy")
}

#[test]
fn a_file_without_results_gets_the_defaults_strip_hidden_flag_the_rest() {
    let p = policy(json!({"version": "1", "default": "allow", "tools": {"echo": {}}}));
    let d = p.results_for(Door::Tools, "echo");
    assert_eq!(d, ResultActions::default());
    assert_eq!(
        (d.invisible, d.escapes, d.secrets, d.instructions),
        (Treatment::Strip, Treatment::Strip, Treatment::Flag, Treatment::Flag)
    );
    assert_eq!(
        Policy::require_approval_for_all().results_for(Door::Tools, "any"),
        ResultActions::default()
    );
}

#[test]
fn an_entry_wins_field_by_field_over_the_file_and_the_file_over_the_defaults() {
    // The entry comes before the file's `results` in the text: order does not matter.
    let p = policy(json!({
        "version": "1",
        "default": "allow",
        "tools": {"fetch": {"results": {"secrets": "hold"}}, "echo": {}},
        "results": {"secrets": "redact", "invisible": "flag"},
        "resources": {"file:///*": {"results": {"instructions": "hold"}}},
    }));
    let fetch = p.results_for(Door::Tools, "fetch");
    assert_eq!(
        (fetch.secrets, fetch.invisible, fetch.escapes),
        (Treatment::Hold, Treatment::Flag, Treatment::Strip)
    );
    let echo = p.results_for(Door::Tools, "echo");
    assert_eq!((echo.secrets, echo.invisible), (Treatment::Redact, Treatment::Flag));
    let unlisted = p.results_for(Door::Tools, "other");
    assert_eq!(
        unlisted.secrets,
        Treatment::Redact,
        "the default decision takes the file's results"
    );
    let read = p.results_for(Door::Resources, "FILE:///etc/./hosts");
    assert_eq!((read.instructions, read.secrets), (Treatment::Hold, Treatment::Redact));
    assert!(read.may_hold() && !echo.may_hold());
}

#[test]
fn each_field_takes_only_its_own_choices_and_every_mistake_is_named() {
    let text = json!({
        "version": "1",
        "results": {"secrets": "strip", "instructions": "strip", "invisible": "redact", "colour": "red"},
        "tools": {"echo": {"results": "strip"}},
    })
    .to_string();
    let problems = Policy::from_json_str(&text, "bad.json").unwrap_err().to_string();
    for expected in [
        r#"$.results.secrets: expected one of "redact", "flag", "hold", found "strip""#,
        r#"$.results.instructions: expected one of "flag", "hold", found "strip""#,
        r#"$.results.invisible: expected one of "strip", "flag", "hold", found "redact""#,
        r#"$.results.colour: unknown field "colour""#,
        r#"$.tools["echo"].results: expected an object like {"secrets": "redact"}"#,
    ] {
        assert!(problems.contains(expected), "missing {expected:?} in:\n{problems}");
    }
}
