//! Redaction of secret-looking values in tool arguments before they are stored.
//!
//! The audit database is meant to be browsed and exported, so secrets an agent passes to a tool
//! (API keys, passwords, cookies) must not land in it. Redaction is by key name: the value under a
//! secret-looking key is replaced, whole subtree and all, with [`REDACTED`].
//!
//! The rule is documented on [`redact()`].

use serde_json::{Map, Value};

/// The text that replaces a redacted value.
pub const REDACTED: &str = "[redacted]";

/// The built-in secret key fragments, matched against normalized keys as described on
/// [`redact()`]: `token` matches as a suffix, `auth` only as the whole key, every
/// other entry as a substring.
pub const DEFAULT_REDACT_KEYS: &[&str] = &[
    "password",
    "passwd",
    "secret",
    "token",
    "apikey",
    "authorization",
    "auth",
    "cookie",
    "credential",
    "privatekey",
    "accesskey",
    "sessionkey",
    "clientsecret",
    "bearer",
];

/// Returns a copy of `arguments` with the value of every secret-looking key replaced by
/// [`REDACTED`], at any depth of objects and arrays. `extra_keys` are additional whole key names
/// (from the server's policy).
///
/// # Matching rule
///
/// A key is first *normalized*: lowercased, with `-` and `_` removed, so `X-Api-Key`, `api_key` and
/// `apiKey` all become `apikey`. It is secret if the normalized key
///
/// * **contains** any of `password`, `passwd`, `secret`, `apikey`, `authorization`, `cookie`,
///   `credential`, `privatekey`, `accesskey`, `sessionkey`, `clientsecret`, `bearer`;
/// * **ends with** `token` (`token`, `access_token`, `refreshToken`, `x-auth-token`), which keeps
///   counters such as `max_tokens` or `token_count` visible — they are common in LLM tool arguments
///   and hiding them makes the audit less useful while protecting nothing;
/// * **is exactly** `auth`, because as a fragment it would also hide `author`.
///
/// Extra keys from a server's policy are compared with the same normalization, as whole keys:
/// `"X-Tenant"` hides `x_tenant` and `X-TENANT`, but not `x_tenant_id`.
///
/// Known gaps, by design of a key-based rule: a secret under an innocent key (`{"value": "sk-…"}`),
/// in a positional array (`["Authorization", "Bearer …"]`) or inside a string (`"curl -H 'Authorization: …'"`)
/// is kept. A server's policy can add the first kind (`extra_keys`); the other two are not
/// caught. The digest column lets calls be matched without storing their values.
pub fn redact(arguments: &Value, extra_keys: &[String]) -> Value {
    let extra: Vec<String> = extra_keys.iter().map(|k| normalize(k)).collect();
    redact_value(arguments, &extra)
}

fn redact_value(value: &Value, extra: &[String]) -> Value {
    match value {
        Value::Object(map) => {
            let mut out = Map::with_capacity(map.len());
            for (key, child) in map {
                let child = if is_secret_key(key, extra) {
                    Value::String(REDACTED.to_owned())
                } else {
                    redact_value(child, extra)
                };
                out.insert(key.clone(), child);
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(|v| redact_value(v, extra)).collect()),
        scalar => scalar.clone(),
    }
}

/// `extra` must already be normalized.
fn is_secret_key(key: &str, extra: &[String]) -> bool {
    let key = normalize(key);
    DEFAULT_REDACT_KEYS.iter().any(|&term| match term {
        "auth" => key == term,
        "token" => key.ends_with(term),
        _ => key.contains(term),
    }) || extra.contains(&key)
}

fn normalize(key: &str) -> String {
    key.chars()
        .filter(|c| *c != '-' && *c != '_')
        .flat_map(char::to_lowercase)
        .collect()
}

#[cfg(test)]
mod tests {
    use rstest::rstest;
    use serde_json::json;

    use super::*;

    #[rstest]
    #[case::password("password")]
    #[case::passwd("passwd")]
    #[case::db_password("DB_PASSWORD")]
    #[case::secret("secret")]
    #[case::client_secret("client_secret")]
    #[case::token("token")]
    #[case::access_token("access_token")]
    #[case::refresh_token_camel("refreshToken")]
    #[case::auth_token_header("X-Auth-Token")]
    #[case::api_key("api_key")]
    #[case::api_key_header("X-Api-Key")]
    #[case::api_key_camel("apiKey")]
    #[case::authorization("Authorization")]
    #[case::proxy_authorization("Proxy-Authorization")]
    #[case::auth_whole("auth")]
    #[case::auth_upper("AUTH")]
    #[case::cookie("cookie")]
    #[case::set_cookie("Set-Cookie")]
    #[case::credentials("credentials")]
    #[case::private_key("private_key")]
    #[case::aws_access_key("aws_access_key_id")]
    #[case::session_key("sessionKey")]
    #[case::bearer("bearer")]
    fn secret_keys_are_redacted(#[case] key: &str) {
        let args = json!({ key: "s3cr3t", "path": "/tmp/x" });
        assert_eq!(
            redact(&args, &[]),
            json!({ key: REDACTED, "path": "/tmp/x" }),
            "`{key}` must be redacted and its neighbour kept"
        );
    }

    #[rstest]
    #[case::max_tokens("max_tokens")]
    #[case::token_count("token_count")]
    #[case::tokens_count("tokens_count")]
    #[case::author("author")]
    #[case::authors("authors")]
    #[case::path("path")]
    #[case::query("query")]
    #[case::key("key")]
    #[case::session("session")]
    fn ordinary_keys_stay_visible(#[case] key: &str) {
        let args = json!({ key: 42 });
        assert_eq!(
            redact(&args, &[]),
            args,
            "`{key}` is not a secret and must stay visible"
        );
    }

    #[test]
    fn every_default_term_is_redacted_as_a_whole_key() {
        for term in DEFAULT_REDACT_KEYS {
            let args = json!({ *term: "v" });
            assert_eq!(redact(&args, &[]), json!({ *term: REDACTED }), "default term `{term}`");
        }
    }

    #[test]
    fn nested_objects_and_arrays_are_walked() {
        let args = json!({
            "db": { "host": "localhost", "password": "hunter2" },
            "requests": [
                { "url": "https://x", "headers": { "Authorization": "Bearer abc", "Accept": "*/*" } },
                [ { "cookie": "a=b" }, "plain" ],
            ],
            "max_tokens": 100,
        });
        let expected = json!({
            "db": { "host": "localhost", "password": REDACTED },
            "requests": [
                { "url": "https://x", "headers": { "Authorization": REDACTED, "Accept": "*/*" } },
                [ { "cookie": REDACTED }, "plain" ],
            ],
            "max_tokens": 100,
        });
        assert_eq!(redact(&args, &[]), expected);
    }

    #[test]
    fn a_secret_key_hides_its_whole_subtree() {
        let args = json!({ "credentials": { "user": "u", "nested": [1, 2] } });
        assert_eq!(redact(&args, &[]), json!({ "credentials": REDACTED }));
    }

    #[test]
    fn extra_keys_match_whole_keys_ignoring_case_and_separators() {
        let args = json!({ "x_tenant": 1, "X-TENANT": 2, "x_tenant_id": 3, "other": { "Tenant": 4 } });
        let extra = vec!["X-Tenant".to_owned(), "tenant".to_owned()];
        assert_eq!(
            redact(&args, &extra),
            json!({ "x_tenant": REDACTED, "X-TENANT": REDACTED, "x_tenant_id": 3, "other": { "Tenant": REDACTED } })
        );
    }

    #[test]
    fn key_order_and_scalars_are_preserved() {
        let args = json!({ "z": 1, "token": "t", "a": [true, null, 1.5] });
        let out = redact(&args, &[]);
        let keys: Vec<&String> = out.as_object().unwrap().keys().collect();
        assert_eq!(
            keys,
            ["z", "token", "a"],
            "preserve_order: the stored JSON keeps the client's key order"
        );
        assert_eq!(out["a"], json!([true, null, 1.5]));
    }

    #[test]
    fn non_object_arguments_pass_through() {
        assert_eq!(redact(&json!(null), &[]), json!(null));
        assert_eq!(redact(&json!(["token", "password"]), &[]), json!(["token", "password"]));
    }
}
