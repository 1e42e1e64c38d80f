//! Redaction of secret-looking values in tool arguments before they are stored.
//!
//! The audit database is meant to be browsed and exported, so secrets an agent passes to a tool
//! (API keys, passwords, PINs, cookies) must not land in it. Two things are redacted:
//!
//! - the value under a secret-looking **key**, whole subtree and all (the rule is on
//!   [`is_secret_key`]);
//! - **credentials inside URLs** in any string value: the password of `scheme://user:password@host`
//!   and the value of every query or fragment parameter whose name is a secret-looking key
//!   (`?token=…`, `&api_key=…`, `#access_token=…`).
//!
//! Both are replaced with [`REDACTED`]. The arguments digest is computed by the gateway before
//! redaction, keyed, so it identifies a call without giving its values back.

use std::borrow::Cow;

use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::{Map, Value};

/// The text that replaces a redacted value.
pub const REDACTED: &str = "[redacted]";

/// Words that make a key secret wherever they stand as a whole token (`db_password`, `userPin`,
/// `X-Session-Cookie`). Matched as whole tokens, so `pin` does not catch `spinner` or `pinned`.
pub const SECRET_WORDS: &[&str] = &[
    "password",
    "passwd",
    "passphrase",
    "passcode",
    "pwd",
    "pin",
    "otp",
    "totp",
    "cvv",
    "cvc",
    "secret",
    "secrets",
    "credential",
    "credentials",
    "creds",
    "cookie",
    "cookies",
    "jwt",
    "bearer",
    "authorization",
];

/// Words long enough to be recognised at the end of a run-together token too (`dbpassword`,
/// `clientsecret`, `PROXYAUTHORIZATION`). Short words (`pin`, `pwd`) are not: `spin`, `cwd`.
const SUFFIX_WORDS: &[&str] = &[
    "password",
    "passwd",
    "passphrase",
    "passcode",
    "secret",
    "credential",
    "credentials",
    "cookie",
    "authorization",
];

/// Words that are secret only as the last token: `access_token`, `refreshToken`, `GITHUB_PAT`,
/// `db_pass`, `basic_auth` — while `token_count`, `pass_through` and `auth_type` describe
/// something else. (`max_tokens` ends in `tokens`, another word.)
const LAST_WORDS: &[&str] = &["token", "pat", "pass", "auth"];

/// Qualifiers that make the next `key` (or `keys`) secret: `api_key`, `privateKey`, `SSH-KEY`,
/// `aws_access_key_id`; also run together (`apikey`, `privkey`). `key` alone, `public_key`,
/// `primary_key` and `sort_key` stay visible.
const KEY_QUALIFIERS: &[&str] = &[
    "api",
    "access",
    "private",
    "priv",
    "secret",
    "session",
    "ssh",
    "signing",
    "encryption",
    "master",
    "client",
    "deploy",
    "license",
    "gpg",
    "pgp",
    "hmac",
    "shared",
    "auth",
];

/// After `session`: `session_id`, `sessionToken`, `session-cookie` (`session` alone is kept).
const SESSION_PARTS: &[&str] = &["id", "key", "token", "cookie", "secret"];

/// A last token that describes a secret instead of holding it: `password_length`, `pin_count`,
/// `cookie_name`, `token_type`, `authorization_url`. The value under such a key is kept.
const DESCRIPTIVE: &[&str] = &[
    "count", "length", "len", "size", "type", "kind", "format", "policy", "required", "enabled", "name", "expiry",
    "expires", "ttl", "url", "uri", "endpoint",
];

/// Returns a copy of `arguments` with the value of every secret-looking key, and every
/// credential inside a URL, replaced by [`REDACTED`], at any depth of objects and arrays.
/// `extra_keys` are additional whole key names (from the server's policy), compared ignoring
/// case, `-` and `_`: `"X-Tenant"` hides `x_tenant` and `X-TENANT`, but not `x_tenant_id`.
///
/// Known gaps, by design of a key-based rule: a secret under an innocent key (`{"value": "sk-…"}`),
/// in a positional array (`["Authorization", "Bearer …"]`), inside a string that is not a URL
/// (`"curl -H 'Authorization: …'"`, JSON text in a string), or a URL's user name alone
/// (`https://ghp_…@github.com`) is kept. A server's policy can add the first kind (`extra_keys`).
pub fn redact(arguments: &Value, extra_keys: &[String]) -> Value {
    let extra: Vec<String> = extra_keys.iter().map(|k| normalize(k)).collect();
    redact_value(arguments, &extra)
}

fn redact_value(value: &Value, extra: &[String]) -> Value {
    match value {
        Value::Object(map) => {
            let mut out = Map::with_capacity(map.len());
            for (key, child) in map {
                let child = if is_secret(key, extra) {
                    Value::String(REDACTED.to_owned())
                } else {
                    redact_value(child, extra)
                };
                out.insert(key.clone(), child);
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(|v| redact_value(v, extra)).collect()),
        Value::String(text) => Value::String(redact_urls(text, extra).into_owned()),
        scalar => scalar.clone(),
    }
}

/// The JSON text of [`redact`]`(arguments, extra_keys)`, written in one pass with no redacted
/// copy of the value in between (a large call's arguments are not held twice). The same text
/// `serde_json::to_string(&redact(..))` gives.
pub fn redacted_json(arguments: &Value, extra_keys: &[String]) -> serde_json::Result<String> {
    let extra: Vec<String> = extra_keys.iter().map(|k| normalize(k)).collect();
    serde_json::to_string(&Redacting {
        value: arguments,
        extra: &extra,
    })
}

/// Whether [`redact`] would change anything in `arguments`. Reads without copying, so arguments
/// with nothing to hide can be stored as the text they came in.
pub fn needs_redaction(arguments: &Value, extra_keys: &[String]) -> bool {
    let extra: Vec<String> = extra_keys.iter().map(|k| normalize(k)).collect();
    has_secret(arguments, &extra)
}

fn has_secret(value: &Value, extra: &[String]) -> bool {
    match value {
        Value::Object(map) => map
            .iter()
            .any(|(key, child)| is_secret(key, extra) || has_secret(child, extra)),
        Value::Array(items) => items.iter().any(|item| has_secret(item, extra)),
        Value::String(text) => matches!(redact_urls(text, extra), Cow::Owned(_)),
        _ => false,
    }
}

/// A value serialized as its redaction (see [`redacted_json`]).
struct Redacting<'a> {
    value: &'a Value,
    extra: &'a [String],
}

impl Serialize for Redacting<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let extra = self.extra;
        match self.value {
            Value::Object(map) => {
                let mut out = s.serialize_map(Some(map.len()))?;
                for (key, child) in map {
                    if is_secret(key, extra) {
                        out.serialize_entry(key, REDACTED)?;
                    } else {
                        out.serialize_entry(key, &Redacting { value: child, extra })?;
                    }
                }
                out.end()
            }
            Value::Array(items) => {
                let mut out = s.serialize_seq(Some(items.len()))?;
                for item in items {
                    out.serialize_element(&Redacting { value: item, extra })?;
                }
                out.end()
            }
            Value::String(text) => s.serialize_str(&redact_urls(text, extra)),
            scalar => scalar.serialize(s),
        }
    }
}

fn is_secret(key: &str, extra: &[String]) -> bool {
    is_secret_key(key) || extra.contains(&normalize(key))
}

/// Whether the built-in rule calls `key` secret.
///
/// # Matching rule
///
/// The key is split into lowercase **tokens** at `_`, `-`, `.`, any other character that is not
/// a letter or digit, and camelCase boundaries: `X-Api-Key` → `x api key`, `refreshToken` →
/// `refresh token`, `APIKey` → `api key`, `GITHUB_PAT` → `github pat`. It is secret when
///
/// * any token is one of [`SECRET_WORDS`] (`password`, `passphrase`, `pwd`, `pin`, `secret`,
///   `cookie`, `jwt`, `authorization`, …), or a long one of them ends a token (`dbpassword`);
/// * the **last** token is `token`, `pat`, `pass` or `auth`, or ends in `token` (`accesstoken`);
/// * a qualifier (`api`, `private`, `ssh`, `access`, `session`, `client`, …) is followed by `key`
///   or `keys`, or run together with it (`apikey`, `privkey`);
/// * `session` is followed by `id`, `key`, `token`, `cookie` or `secret` (`sessionId`,
///   `session_cookie`), or the token is `sessionid` / `sessid`;
///
/// unless the key has more than one token and the last one only describes the secret (`length`,
/// `count`, `type`, `name`, `url`, … — `password_min_length`, `cookie_name`). Whole tokens are
/// what keeps `spinner`, `pinned`, `shipping`, `author`, `max_tokens`, `monkey` and `passage`
/// visible.
pub fn is_secret_key(key: &str) -> bool {
    let tokens = tokens(key);
    let Some(last) = tokens.last() else { return false };
    if tokens.len() > 1 && DESCRIPTIVE.contains(&last.as_str()) {
        return false;
    }
    if LAST_WORDS.contains(&last.as_str()) || last.ends_with("token") {
        return true;
    }
    tokens.iter().enumerate().any(|(i, token)| {
        let token = token.as_str();
        let next = tokens.get(i + 1).map(String::as_str);
        SECRET_WORDS.contains(&token)
            || SUFFIX_WORDS.iter().any(|w| token.ends_with(w))
            || (KEY_QUALIFIERS.contains(&token) && matches!(next, Some("key" | "keys")))
            || KEY_QUALIFIERS.iter().any(|q| {
                token
                    .strip_prefix(q)
                    .is_some_and(|rest| rest == "key" || rest == "keys")
            })
            || (token == "session" && next.is_some_and(|n| SESSION_PARTS.contains(&n)))
            || token == "sessionid"
            || token == "sessid"
    })
}

/// Lowercase tokens of a key, split at non-alphanumerics and camelCase boundaries. A capital
/// starts a token after a lowercase letter or digit (`apiKey`), and the last capital of a run
/// starts one when a lowercase letter follows (`APIKey` → `api`, `key`).
fn tokens(key: &str) -> Vec<String> {
    let chars: Vec<char> = key.chars().collect();
    let mut out = Vec::new();
    let mut current = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_alphanumeric() {
            if !current.is_empty() {
                out.push(std::mem::take(&mut current));
            }
            continue;
        }
        if c.is_uppercase() && !current.is_empty() {
            let prev = chars[i - 1];
            let next_is_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
            if prev.is_lowercase() || prev.is_numeric() || (prev.is_uppercase() && next_is_lower) {
                out.push(std::mem::take(&mut current));
            }
        }
        current.extend(c.to_lowercase());
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// How policy `redact` keys are compared: lowercase, `-` and `_` removed.
fn normalize(key: &str) -> String {
    key.chars()
        .filter(|c| *c != '-' && *c != '_')
        .flat_map(char::to_lowercase)
        .collect()
}

/// Redacts credentials in every URL inside `text`: a URL is `scheme://` (a letter, then letters,
/// digits, `+`, `-`, `.`) up to the next whitespace, quote, `<`, `>` or backtick.
/// Borrowed when nothing in `text` is redacted.
fn redact_urls<'t>(text: &'t str, extra: &[String]) -> Cow<'t, str> {
    if !text.contains("://") {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        let scheme_len = rest[..at]
            .chars()
            .rev()
            .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
            .count();
        let start = at - scheme_len;
        let scheme_ok = rest[start..at].starts_with(|c: char| c.is_ascii_alphabetic());
        let end = rest[at + 3..]
            .find(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '<' | '>' | '`'))
            .map_or(rest.len(), |n| at + 3 + n);
        out.push_str(&rest[..start]);
        if scheme_ok {
            out.push_str(&rest[start..at + 3]);
            out.push_str(&redact_url_rest(&rest[at + 3..end], extra));
        } else {
            out.push_str(&rest[start..end]);
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    if out == text {
        Cow::Borrowed(text)
    } else {
        Cow::Owned(out)
    }
}

/// `rest` is a URL after `scheme://`: authority, then path, query and fragment.
fn redact_url_rest(rest: &str, extra: &[String]) -> String {
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let mut out = String::with_capacity(rest.len());
    match authority.rfind('@') {
        Some(at) => {
            let userinfo = &authority[..at];
            match userinfo.find(':') {
                Some(colon) => {
                    out.push_str(&userinfo[..=colon]);
                    out.push_str(REDACTED);
                }
                None => out.push_str(userinfo),
            }
            out.push_str(&authority[at..]);
        }
        None => out.push_str(authority),
    }
    // Query (`?`) and fragment (`#`, where OAuth's implicit flow puts `access_token`) are both
    // `name=value` lists; a secret-looking name loses its value.
    let mut params = false;
    let mut piece = String::new();
    let flush = |piece: &mut String, out: &mut String, params: bool| {
        out.push_str(&if params {
            redact_param(piece, extra)
        } else {
            piece.clone()
        });
        piece.clear();
    };
    for c in tail.chars() {
        if matches!(c, '?' | '#') || (params && matches!(c, '&' | ';')) {
            flush(&mut piece, &mut out, params);
            out.push(c);
            params = true;
        } else {
            piece.push(c);
        }
    }
    flush(&mut piece, &mut out, params);
    out
}

fn redact_param(param: &str, extra: &[String]) -> String {
    match param.split_once('=') {
        Some((name, value)) if !value.is_empty() && is_secret(&percent_decoded(name), extra) => {
            format!("{name}={REDACTED}")
        }
        _ => param.to_owned(),
    }
}

/// Enough percent-decoding for a parameter name (`api%5Fkey`); bytes that do not form UTF-8 are
/// left as they were.
fn percent_decoded(name: &str) -> String {
    let bytes = name.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| char::from(b).to_digit(16);
        match (
            bytes[i],
            bytes.get(i + 1).copied().and_then(hex),
            bytes.get(i + 2).copied().and_then(hex),
        ) {
            (b'%', Some(hi), Some(lo)) => {
                out.push(u8::try_from(hi * 16 + lo).unwrap_or(b'?'));
                i += 3;
            }
            (b'+', _, _) => {
                out.push(b' ');
                i += 1;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).unwrap_or_else(|_| name.to_owned())
}

#[cfg(test)]
mod tests {
    use rstest::rstest;
    use serde_json::json;

    /// The one-pass encoding is the encoding of the redacted value, and the check agrees with it.
    #[rstest]
    #[case(json!({"a": 1, "b": [true, null, 1.5, "x"], "c": {"d": "e"}}), false)]
    #[case(json!({"user": "me", "api_key": "k", "nested": [{"Password": "p"}]}), true)]
    #[case(json!({"link": "see https://h.example/p?access_token=abc&page=2 now"}), true)]
    #[case(json!({"link": "see https://h.example/p?page=2 now"}), false)]
    #[case(json!({"x-tenant": "acme"}), true)]
    #[case(json!(["https://u:pw@h.example", 7]), true)]
    fn redacted_json_is_the_redaction_encoded_and_needs_redaction_agrees(#[case] value: Value, #[case] hides: bool) {
        let extra = vec!["X_Tenant".to_owned()];
        let redacted = redact(&value, &extra);
        assert_eq!(
            redacted_json(&value, &extra).unwrap(),
            serde_json::to_string(&redacted).unwrap()
        );
        assert_eq!(needs_redaction(&value, &extra), hides, "{value}");
        assert_eq!(redacted != value, hides, "{value}");
    }

    use super::*;

    #[rstest]
    // Passwords and PINs, whole tokens in any spelling.
    #[case::password("password")]
    #[case::passwd("passwd")]
    #[case::db_password("DB_PASSWORD")]
    #[case::run_together_password("dbpassword")]
    #[case::passphrase("passphrase")]
    #[case::key_passphrase("keyPassphrase")]
    #[case::passcode("passcode")]
    #[case::pwd("pwd")]
    #[case::user_pwd("user.pwd")]
    #[case::pin("pin")]
    #[case::card_pin("cardPin")]
    #[case::pin_code("PIN_CODE")]
    #[case::otp("otp")]
    #[case::db_pass("db_pass")]
    // Secrets, tokens, keys.
    #[case::secret("secret")]
    #[case::client_secret("client_secret")]
    #[case::client_secret_run_together("clientsecret")]
    #[case::token("token")]
    #[case::access_token("access_token")]
    #[case::refresh_token_camel("refreshToken")]
    #[case::refresh_token_dotted("oauth.refresh.token")]
    #[case::auth_token_header("X-Auth-Token")]
    #[case::accesstoken_run_together("ACCESSTOKEN")]
    #[case::personal_access_token("personal_access_token")]
    #[case::github_pat("GITHUB_PAT")]
    #[case::gitlab_pat("gitlabPat")]
    #[case::jwt("jwt")]
    #[case::id_jwt("id_jwt")]
    #[case::api_key("api_key")]
    #[case::api_key_header("X-Api-Key")]
    #[case::api_key_camel("apiKey")]
    #[case::api_key_caps_camel("APIKey")]
    #[case::apikey_run_together("apikey")]
    #[case::private_key("private_key")]
    #[case::private_key_pem("privateKeyPem")]
    #[case::privkey("privkey")]
    #[case::ssh_key("ssh_key")]
    #[case::ssh_private_key("SSH_PRIVATE_KEY")]
    #[case::aws_access_key("aws_access_key_id")]
    #[case::signing_keys("signing-keys")]
    // Sessions and cookies.
    #[case::session_key("sessionKey")]
    #[case::session_id("session_id")]
    #[case::session_id_caps("sessionID")]
    #[case::sessionid("SESSIONID")]
    #[case::session_token("session-token")]
    #[case::cookie("cookie")]
    #[case::set_cookie("Set-Cookie")]
    #[case::cookies("cookies")]
    // Headers and credentials.
    #[case::authorization("Authorization")]
    #[case::proxy_authorization("Proxy-Authorization")]
    #[case::auth_whole("auth")]
    #[case::auth_upper("AUTH")]
    #[case::basic_auth("basic_auth")]
    #[case::credentials("credentials")]
    #[case::aws_credentials("awsCredentials")]
    #[case::creds("creds")]
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
    // Near misses of `pin`, `pwd`, `pass`.
    #[case::spinner("spinner")]
    #[case::pinned("pinned")]
    #[case::pinned_camel("isPinned")]
    #[case::shipping("shipping")]
    #[case::shipping_address("shipping_address")]
    #[case::spin("spin")]
    #[case::cwd("cwd")]
    #[case::passage("passage")]
    #[case::pass_through("pass_through")]
    #[case::bypass("bypass")]
    #[case::compass("compass")]
    // Near misses of `token`, `auth`, `key`, `secret`, `session`.
    #[case::max_tokens("max_tokens")]
    #[case::token_count("token_count")]
    #[case::tokens_count("tokens_count")]
    #[case::token_type("token_type")]
    #[case::tokenizer("tokenizer")]
    #[case::author("author")]
    #[case::authors("authors")]
    #[case::authority("authority")]
    #[case::auth_type("auth_type")]
    #[case::oauth_provider("oauthProvider")]
    #[case::key("key")]
    #[case::keys("keys")]
    #[case::keyboard("keyboard")]
    #[case::monkey("monkey")]
    #[case::public_key("public_key")]
    #[case::primary_key("primaryKey")]
    #[case::sort_key("sort_key")]
    #[case::secretary("secretary")]
    #[case::session("session")]
    #[case::session_name("session_name")]
    #[case::private("private")]
    #[case::access("access")]
    // A last token that only describes the secret.
    #[case::password_min_length("password_min_length")]
    #[case::pin_length("pinLength")]
    #[case::cookie_name("cookie_name")]
    #[case::authorization_url("authorization_url")]
    // Plain keys.
    #[case::path("path")]
    #[case::query("query")]
    #[case::patch("patch")]
    #[case::path_pattern("path_pattern")]
    fn ordinary_keys_stay_visible(#[case] key: &str) {
        let args = json!({ key: 42 });
        assert_eq!(
            redact(&args, &[]),
            args,
            "`{key}` is not a secret and must stay visible"
        );
    }

    #[test]
    fn every_secret_word_is_redacted_as_a_whole_key() {
        for word in SECRET_WORDS {
            let args = json!({ *word: "v" });
            assert_eq!(redact(&args, &[]), json!({ *word: REDACTED }), "secret word `{word}`");
        }
    }

    #[test]
    fn tokens_split_at_separators_and_camel_case() {
        assert_eq!(tokens("X-Api-Key"), ["x", "api", "key"]);
        assert_eq!(tokens("APIKey"), ["api", "key"]);
        assert_eq!(tokens("oauth2Token"), ["oauth2", "token"]);
        assert_eq!(tokens("a.b_c-d e"), ["a", "b", "c", "d", "e"]);
        assert_eq!(tokens("sessionID"), ["session", "id"]);
        assert_eq!(tokens("__"), Vec::<String>::new());
    }

    #[rstest]
    #[case::password_in_url(
        "https://bob:hunter2@example.com/repo.git",
        "https://bob:[redacted]@example.com/repo.git"
    )]
    #[case::url_inside_a_command(
        "git clone https://x-access-token:ghp_abc@github.com/o/r && ls",
        "git clone https://x-access-token:[redacted]@github.com/o/r && ls"
    )]
    #[case::two_urls(
        "a postgres://u:p@db/x b redis://:pw@cache:6379",
        "a postgres://u:[redacted]@db/x b redis://:[redacted]@cache:6379"
    )]
    #[case::query_token(
        "https://api.example.com/v1?token=abc&page=2",
        "https://api.example.com/v1?token=[redacted]&page=2"
    )]
    #[case::query_access_token_and_api_key(
        "https://x/y?access_token=a1&q=cats&api_key=k2",
        "https://x/y?access_token=[redacted]&q=cats&api_key=[redacted]"
    )]
    #[case::percent_encoded_name("https://x/?api%5Fkey=k", "https://x/?api%5Fkey=[redacted]")]
    #[case::fragment_token(
        "https://app/cb#access_token=t0k&state=s",
        "https://app/cb#access_token=[redacted]&state=s"
    )]
    #[case::quoted_url_ends_at_the_quote(
        "curl 'https://h/?password=pw' -o out",
        "curl 'https://h/?password=[redacted]' -o out"
    )]
    // Near misses: nothing to redact.
    #[case::user_without_password("ssh://git@github.com/o/r", "ssh://git@github.com/o/r")]
    #[case::at_in_the_path("https://h/users/@bob:x", "https://h/users/@bob:x")]
    #[case::innocent_params("https://h/s?q=token&max_tokens=5", "https://h/s?q=token&max_tokens=5")]
    #[case::empty_value("https://h/?token=", "https://h/?token=")]
    #[case::not_a_url("token=abc&x=1", "token=abc&x=1")]
    #[case::no_scheme("://u:p@h", "://u:p@h")]
    #[case::port_not_password("http://localhost:8080/x", "http://localhost:8080/x")]
    fn credentials_in_urls_are_redacted_in_any_string(#[case] text: &str, #[case] expected: &str) {
        let args = json!({ "command": text, "list": [text] });
        assert_eq!(redact(&args, &[]), json!({ "command": expected, "list": [expected] }));
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
    fn extra_keys_also_name_url_parameters() {
        let args = json!({ "u": "https://h/?tenant=acme&sig=1" });
        let extra = vec!["tenant".to_owned()];
        assert_eq!(
            redact(&args, &extra),
            json!({ "u": "https://h/?tenant=[redacted]&sig=1" })
        );
        assert_eq!(redact(&args, &[]), args, "without the policy's key it stays");
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
