//! The JSON Schema of the policy format, generated from [`crate::model::RawPolicy`].
//!
//! Committed as `policies/policy.schema.json` for editors and other tools; the test
//! `schema_file_is_up_to_date` fails when the committed file drifts from the types.

use schemars::generate::SchemaSettings;
use serde_json::Value;

use crate::model::RawPolicy;

/// The JSON Schema (draft 2020-12) of a policy file.
pub fn json_schema() -> Value {
    let generator = SchemaSettings::draft2020_12().into_generator();
    let mut schema = generator.into_root_schema_for::<RawPolicy>().to_value();
    forbid_null(&mut schema);
    schema
}

/// Removes the `null` alternative (and `null` default) schemars adds for every `Option` field. The loader refuses
/// `"action": null` rather than reading it as "absent" — an author who wrote a null meant
/// something, and guessing "allow" for it would fail open — so the schema must refuse it too.
fn forbid_null(schema: &mut Value) {
    match schema {
        Value::Object(map) => {
            // `"default": null` is what schemars writes for an absent `Option`.
            if map.get("default") == Some(&Value::Null) {
                map.remove("default");
            }
            if let Some(Value::Array(types)) = map.get_mut("type") {
                types.retain(|t| t != "null");
                if let [only] = types.as_slice() {
                    let only = only.clone();
                    map.insert("type".to_owned(), only);
                }
            }
            if let Some(Value::Array(alternatives)) = map.get_mut("anyOf") {
                alternatives.retain(|alt| alt.get("type").is_none_or(|t| t != "null"));
                if alternatives.len() == 1 {
                    if let Some(Value::Object(only)) = alternatives.pop() {
                        map.remove("anyOf");
                        for (key, value) in only {
                            map.entry(key).or_insert(value);
                        }
                    }
                }
            }
            map.values_mut().for_each(forbid_null);
        }
        Value::Array(items) => items.iter_mut().for_each(forbid_null),
        _ => {}
    }
}
