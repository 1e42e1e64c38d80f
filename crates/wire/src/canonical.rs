//! Canonical JSON and the argument digest.
//!
//! Approval grants and audit rows identify "the same arguments" by a digest of their canonical
//! form: object keys sorted by code point, no whitespace. serde_json's map keeps insertion order in
//! this workspace (`preserve_order`, so forwarded bytes keep their key order), hence the explicit sort.

use serde_json::Value;
use sha2::{Digest, Sha256};

/// The canonical text of a JSON value.
pub fn canonical_json(value: &Value) -> String {
    let mut out = String::new();
    write(value, &mut out);
    out
}

fn write(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<_> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (i, (key, value)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                write(value, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write(item, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

/// `sha256:<hex>` of the canonical form.
pub fn digest(value: &Value) -> String {
    let hash = Sha256::digest(canonical_json(value).as_bytes());
    format!("sha256:{}", hex::encode(hash))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn key_order_does_not_change_the_digest() {
        let a: Value = serde_json::from_str(r#"{"b":1,"a":{"y":[1,{"q":2,"p":3}],"x":null}}"#).unwrap();
        let b: Value = serde_json::from_str(r#"{"a":{"x":null,"y":[1,{"p":3,"q":2}]},"b":1}"#).unwrap();
        assert_eq!(canonical_json(&a), r#"{"a":{"x":null,"y":[1,{"p":3,"q":2}]},"b":1}"#);
        assert_eq!(digest(&a), digest(&b));
    }

    #[test]
    fn different_values_differ() {
        assert_ne!(digest(&json!({"a": 1})), digest(&json!({"a": "1"})));
        assert!(digest(&json!(null)).starts_with("sha256:"));
    }
}
