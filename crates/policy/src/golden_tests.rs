//! The answers the UI's mock backend gives for `validate_policy` and `save_policy`
//! (`ui/src/lib/__fixtures__/policy-validate.json`): each case's text checked by
//! [`Policy::from_json_str`], its problems as the desktop command hands them on (path and message;
//! the file is the command's to name). So the editor's tests show the gateway's own words, and no
//! copy of the policy's rules lives in TypeScript for the mock.
//!
//! Add a case (its `text`), then `PORTCULLIS_BLESS=1 cargo test -p portcullis-policy --lib golden`.
//! Without the variable the test fails when the committed file differs.

use serde_json::{json, Value};

use crate::Policy;

/// From the workspace root.
const GOLDEN_PATH: &str = "ui/src/lib/__fixtures__/policy-validate.json";

const ABOUT: &str = "Answers of validate_policy and save_policy for the UI's mock backend, written by \
    crates/policy/src/golden_tests.rs. Add a case with its text, then: \
    PORTCULLIS_BLESS=1 cargo test -p portcullis-policy --lib golden";

fn problems(text: &str) -> Value {
    match Policy::from_json_str(text, "policy.json") {
        Ok(_) => json!([]),
        Err(e) => json!(e
            .problems
            .iter()
            .map(|p| json!({ "path": p.path, "message": p.message }))
            .collect::<Vec<_>>()),
    }
}

fn render_golden(have: &str) -> String {
    let file: Value = serde_json::from_str(have).expect("the golden file is JSON");
    let mut seen = std::collections::HashSet::new();
    let cases: Vec<Value> = file["cases"]
        .as_array()
        .expect("the golden file has cases")
        .iter()
        .map(|c| c["text"].as_str().expect("a case has text").to_owned())
        .filter(|text| seen.insert(text.clone()))
        .map(|text| json!({ "text": text, "problems": problems(&text) }))
        .collect();
    serde_json::to_string_pretty(&json!({ "about": ABOUT, "cases": cases })).unwrap() + "\n"
}

#[test]
fn golden_validations_match_the_committed_file() {
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(GOLDEN_PATH);
    let have = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let want = render_golden(&have);
    if std::env::var_os("PORTCULLIS_BLESS").is_some() {
        std::fs::write(&path, &want).unwrap();
        return;
    }
    assert!(
        have == want,
        "{GOLDEN_PATH} is out of date with the policy crate; regenerate it with \
         `PORTCULLIS_BLESS=1 cargo test -p portcullis-policy --lib golden` and commit it"
    );
}
