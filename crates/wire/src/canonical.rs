//! Canonical JSON and the two digests built on it.
//!
//! Approval grants and audit rows identify "the same arguments" by a digest of their canonical
//! form: object keys sorted by code point, no whitespace. serde_json's map keeps insertion order in
//! this workspace (`preserve_order`, so forwarded bytes keep their key order), hence the explicit sort.
//!
//! - [`ArgumentDigester`] digests **tool arguments**: `hmac-sha256:<hex>`, keyed with a per-install
//!   secret. Arguments hold values the audit log redacts (a PIN, a password); an unkeyed hash of
//!   them would give those values back to anyone who hashes guesses, so the key is what stands
//!   between a stored digest and the redacted value.
//! - [`digest`] is the unkeyed `sha256:<hex>`, for **public** data only: tool definitions (pins),
//!   which every client of the server can list anyway, and whose digest must be the same on every
//!   install so a pinned definition can be checked by hand.

use hmac::{Hmac, Mac};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// Marks a keyed argument digest; an unkeyed one starts with `sha256:`.
pub const ARGUMENTS_DIGEST_PREFIX: &str = "hmac-sha256:";

/// Length of the per-install key, in bytes (the SHA-256 block is 64; 32 is the output size, the
/// usual choice for an HMAC-SHA256 key).
pub const ARGUMENTS_KEY_LEN: usize = 32;

/// The canonical text of a JSON value.
pub fn canonical_json(value: &Value) -> String {
    let mut out = Vec::new();
    write_canonical(value, &mut out);
    // Only serde_json's own output goes in: JSON text, valid UTF-8.
    String::from_utf8(out).unwrap_or_default()
}

/// Writes the canonical text of `value` into `out` piece by piece, so a digest is computed as
/// the text is made and no copy of a large value is built. Writing into a `Vec` or a hasher
/// cannot fail, and a value's strings and numbers always encode.
fn write_canonical(value: &Value, out: &mut impl Sink) {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<_> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            out.put(b"{");
            for (i, (key, value)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.put(b",");
                }
                out.encode(key);
                out.put(b":");
                write_canonical(value, out);
            }
            out.put(b"}");
        }
        Value::Array(items) => {
            out.put(b"[");
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.put(b",");
                }
                write_canonical(item, out);
            }
            out.put(b"]");
        }
        scalar => out.encode(scalar),
    }
}

/// Where canonical text goes: a buffer, or a hash fed as it is written.
trait Sink: std::io::Write + Sized {
    fn put(&mut self, bytes: &[u8]) {
        let _ = self.write_all(bytes);
    }
    /// The JSON text of a string or a scalar, escaped as `serde_json::to_string` escapes it.
    fn encode<T: serde::Serialize + ?Sized>(&mut self, value: &T) {
        let _ = serde_json::to_writer(self, value);
    }
}

impl Sink for Vec<u8> {}

/// A hash as an `io::Write`: every piece of canonical text goes straight into it.
struct Hashing<D>(D);

impl<D: sha2::digest::Update> std::io::Write for Hashing<D> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.update(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<D: sha2::digest::Update> Sink for Hashing<D> {}

/// `sha256:<hex>` of the canonical form, unkeyed: for public data such as tool definitions only.
/// Tool arguments go through [`ArgumentDigester`].
pub fn digest(value: &Value) -> String {
    let mut hashing = Hashing(Sha256::new());
    write_canonical(value, &mut hashing);
    let hash = hashing.0.finalize();
    format!("sha256:{}", hex::encode(hash))
}

/// Digests tool arguments with the install's key: `hmac-sha256:<hex>` of the canonical form.
///
/// Two installs give different digests for the same arguments, and a digest read from an audit
/// export cannot be checked against guesses without the key file.
#[derive(Clone)]
pub struct ArgumentDigester {
    key: [u8; ARGUMENTS_KEY_LEN],
}

impl ArgumentDigester {
    pub fn new(key: [u8; ARGUMENTS_KEY_LEN]) -> Self {
        Self { key }
    }

    /// `hmac-sha256:<hex>` of `arguments` in canonical form.
    pub fn digest(&self, arguments: &Value) -> String {
        // A 32-byte key is always accepted (any length is); the error branch cannot happen.
        let mac =
            Hmac::<Sha256>::new_from_slice(&self.key).unwrap_or_else(|_| unreachable!("HMAC takes any key length"));
        let mut hashing = Hashing(mac);
        write_canonical(arguments, &mut hashing);
        format!(
            "{ARGUMENTS_DIGEST_PREFIX}{}",
            hex::encode(hashing.0.finalize().into_bytes())
        )
    }
}

/// Never prints the key, so a `{:?}` in a log line cannot leak it.
impl std::fmt::Debug for ArgumentDigester {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ArgumentDigester { key: <hidden> }")
    }
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
    fn keyed_digest_is_hmac_sha256_of_the_canonical_form() {
        // Expected value from Python's hmac module: hmac.new(b"\x0b" * 32, b'{"a":1,"b":[1,2]}', sha256).
        let d = ArgumentDigester::new([0x0b; 32]);
        let shuffled: Value = serde_json::from_str(r#"{"b":[1,2],"a":1}"#).unwrap();
        assert_eq!(
            d.digest(&shuffled),
            "hmac-sha256:f87f5c2ca3900cb3aefb016be3e47f6674c70948a8ee37ad6267ef459b78f4ab"
        );
    }

    #[test]
    fn two_keys_give_two_digests_for_the_same_arguments() {
        let args = json!({"pin": "4821", "account": "main"});
        let one = ArgumentDigester::new([1; 32]).digest(&args);
        let other = ArgumentDigester::new([2; 32]).digest(&args);
        assert_ne!(one, other);
        assert_eq!(
            one,
            ArgumentDigester::new([1; 32]).digest(&args),
            "same key, same digest"
        );
    }

    #[test]
    fn guessing_a_redacted_pin_without_the_key_finds_nothing() {
        let stored = ArgumentDigester::new([0x5a; 32]).digest(&json!({"pin": "4821"}));
        let hex = &stored[ARGUMENTS_DIGEST_PREFIX.len()..];
        // What recovered the PIN before: hash every guess, unkeyed, and compare.
        let unkeyed = (0..10_000).find(|n| digest(&json!({"pin": format!("{n:04}")}))["sha256:".len()..] == *hex);
        assert_eq!(unkeyed, None);
        // With a wrong key (an attacker's own install) it fails the same way.
        let wrong = ArgumentDigester::new([0x5b; 32]);
        let keyed = (0..10_000).find(|n| wrong.digest(&json!({"pin": format!("{n:04}")})) == stored);
        assert_eq!(keyed, None);
    }

    #[test]
    fn debug_does_not_show_the_key() {
        let text = format!("{:?}", ArgumentDigester::new([0xab; 32]));
        assert!(!text.contains("171") && !text.to_lowercase().contains("ab, "), "{text}");
    }

    #[test]
    fn different_values_differ() {
        assert_ne!(digest(&json!({"a": 1})), digest(&json!({"a": "1"})));
        assert!(digest(&json!(null)).starts_with("sha256:"));
    }
}
