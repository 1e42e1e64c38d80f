//! Changing a policy file's text: what "always allow" and "deny always" write.

use serde_json::{Map, Value};

use crate::load::parse_document;
use crate::{Policy, PolicyError, Problem};

/// Source name used in problems about the text passed to [`add_tool_entry`].
const EDITED_SOURCE: &str = "policy";

/// Returns `policy_text` with `tools[key]` set to `entry`: an existing entry of that key is
/// replaced in place, a new one goes last; every other key keeps its value and order. The
/// text is pretty-printed (2-space indent) with a trailing newline.
///
/// The result is validated before it is returned, so a caller never writes a file the
/// gateway would refuse: a text that was already invalid, or an `entry` that is not a valid
/// entry, gives the problems instead.
pub fn add_tool_entry(policy_text: &str, key: &str, entry: Value) -> Result<String, PolicyError> {
    let fail = |path: &str, message: String| PolicyError {
        problems: vec![Problem {
            file: EDITED_SOURCE.to_owned(),
            path: path.to_owned(),
            message,
        }],
    };
    let mut document = parse_document(policy_text).map_err(|err| fail("$", format!("invalid JSON: {err}")))?;
    let Value::Object(root) = &mut document else {
        return Err(fail("$", "expected a policy object".to_owned()));
    };
    let tools = root.entry("tools").or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(tools) = tools else {
        return Err(fail("$.tools", "expected an object of tool entries".to_owned()));
    };
    // With serde_json's `preserve_order`, inserting an existing key keeps its position.
    tools.insert(key.to_owned(), entry);

    let mut text =
        serde_json::to_string_pretty(&document).map_err(|err| fail("$", format!("cannot write the policy: {err}")))?;
    text.push('\n');
    Policy::from_json_str(&text, EDITED_SOURCE)?;
    Ok(text)
}
