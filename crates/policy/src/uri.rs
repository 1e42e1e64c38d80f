//! Resource URIs as every server reads them: one normal form, or a refusal.
//!
//! A `resources` entry decides on the URI a server will open, not on the bytes the agent sent.
//! Two spellings of one resource (`FILE:///etc/passwd`, `file:///tmp/../etc/passwd`,
//! `file:///etc/pa%73swd`) must meet the same entry, so the URI is brought to one normal form
//! that every server agrees with (RFC 3986 §6.2.2, syntax-based normalization):
//! - the scheme and the host are lowercased, a default port (`:80` for http, `:443` for https)
//!   and an empty one are dropped;
//! - escapes of unreserved characters (`%41` → `A`, `%7E` → `~`) are decoded; the hex digits of the
//!   other escapes are uppercased (`%c3%a9` → `%C3%A9`); characters a URI cannot hold as they are
//!   (non-ASCII, space, `"<>^`{|}`) are written as their UTF-8 escapes (RFC 3987 §3.1), so
//!   `é` and `%C3%A9` are one spelling;
//! - dot segments are removed (RFC 3986 §5.2.4), `..` stopping at the root as a filesystem does;
//! - `file:` URIs are written `file:///path` (`file:/path` and `file://localhost/path` too).
//!
//! What servers could read differently is refused ([`UriProblem`]) instead: a normal form would
//! be one server's reading among several, and the entry it meets might not be the one the server
//! acts on. An encoded `/` or `\` (a server that decodes before splitting sees another path), an
//! encoded NUL, an escaped dot forming a `.`/`..` segment (decoded after the dot segments by some,
//! before by others), a raw backslash (a separator on Windows), control characters, invalid
//! escapes, escapes that do not decode to UTF-8 or to NFC text (macOS reads NFC and NFD names as
//! one file, Linux as two), userinfo (`http://user@host/`: who is `host`?), percent escapes in the
//! authority, a `file:` URI naming another host, and relative references.

use std::fmt;
use std::ops::Range;

use unicode_normalization::is_nfc;

/// A URI in the normal form every server agrees with; see [`normalize_uri`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct NormalUri {
    text: String,
    scheme: Range<usize>,
    /// The host (port excluded), when the URI has an authority.
    host: Option<Range<usize>>,
    path: Range<usize>,
    /// For a `file:` URI, its path decoded: what the server opens.
    file_path: Option<String>,
}

impl NormalUri {
    /// The whole URI in normal form.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The scheme, lowercase (`file`, `https`).
    pub fn scheme(&self) -> &str {
        &self.text[self.scheme.clone()]
    }

    /// The host, lowercase, without the port; `None` without an authority (`urn:`, `mailto:`),
    /// `Some("")` for `file:///…`.
    pub fn host(&self) -> Option<&str> {
        self.host.clone().map(|range| &self.text[range])
    }

    /// The path in normal form, escapes kept (`/a%20b`).
    pub fn path(&self) -> &str {
        &self.text[self.path.clone()]
    }

    /// For a `file:` URI, the path it names, decoded (`/a b`); `None` for other schemes.
    pub fn file_path(&self) -> Option<&str> {
        self.file_path.as_deref()
    }
}

impl fmt::Display for NormalUri {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// Why a URI is refused: servers could read it as different resources.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UriProblem {
    #[error("is not an absolute URI (a scheme such as \"file:\" or \"https:\" must come first)")]
    Relative,
    #[error("holds a control character")]
    ControlCharacter,
    #[error("holds a backslash, which Windows servers read as a path separator")]
    Backslash,
    #[error("holds an invalid percent escape {0:?} (expected % and two hex digits)")]
    InvalidEscape(String),
    #[error(
        "holds an encoded separator {0} in its path, which servers that decode before splitting read as another path"
    )]
    EncodedSeparator(&'static str),
    #[error("holds an encoded NUL (%00), where C servers stop reading")]
    EncodedNul,
    #[error("holds an escaped dot forming a \".\" or \"..\" segment ({0:?}), which servers resolve differently")]
    EncodedDotSegment(String),
    #[error("has escapes that do not decode to UTF-8 text")]
    NotUtf8,
    #[error("has decoded text that is not in Unicode NFC, which some filesystems read as another name")]
    NotNfc,
    #[error("holds userinfo before the host (\"{0}@\"), which hides which host is meant")]
    UserInfo(String),
    #[error("holds a percent escape in its authority, which servers decode differently")]
    EscapedAuthority,
    #[error("is a file: URI on host {0:?}; only an empty host or localhost names this machine")]
    FileHost(String),
    #[error("is a file: URI without an absolute path")]
    FileNotAbsolute,
}

/// Brings `raw` to its normal form, or says why servers could read it differently.
pub fn normalize_uri(raw: &str) -> Result<NormalUri, UriProblem> {
    refuse_raw_characters(raw)?;
    let (scheme, rest) = split_scheme(raw).ok_or(UriProblem::Relative)?;
    let scheme = scheme.to_ascii_lowercase();
    let (rest, fragment) = split_off(rest, '#');
    let (hier, query) = split_off(rest, '?');
    let (authority, path) = match hier.strip_prefix("//") {
        Some(after) => {
            let end = after.find('/').unwrap_or(after.len());
            (Some(&after[..end]), &after[end..])
        }
        None => (None, hier),
    };
    let authority = authority.map(|a| normal_authority(a, &scheme)).transpose()?;
    let path = normal_path(path, scheme == "file")?;
    let query = query.map(|q| normal_escapes(q, Part::Other)).transpose()?;
    let fragment = fragment.map(|f| normal_escapes(f, Part::Other)).transpose()?;
    if scheme == "file" {
        return file_uri(
            &scheme,
            authority.as_deref(),
            &path,
            query.as_deref(),
            fragment.as_deref(),
        );
    }
    let path = match (&authority, path.is_empty()) {
        // `http://host` and `http://host/` are one resource.
        (Some(_), true) => "/".to_owned(),
        _ => path,
    };
    Ok(assemble(
        &scheme,
        authority.as_deref(),
        &path,
        query.as_deref(),
        fragment.as_deref(),
    ))
}

/// Characters refused wherever they appear, before any splitting.
fn refuse_raw_characters(raw: &str) -> Result<(), UriProblem> {
    if raw.chars().any(char::is_control) {
        return Err(UriProblem::ControlCharacter);
    }
    if raw.contains('\\') {
        return Err(UriProblem::Backslash);
    }
    Ok(())
}

/// `scheme` and what follows its `:`, when `raw` starts with a valid scheme (RFC 3986 §3.1).
fn split_scheme(raw: &str) -> Option<(&str, &str)> {
    let (scheme, rest) = raw.split_once(':')?;
    let mut chars = scheme.chars();
    let valid = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    valid.then_some((scheme, rest))
}

/// `text` before the first `at`, and after it when present.
fn split_off(text: &str, at: char) -> (&str, Option<&str>) {
    match text.split_once(at) {
        Some((before, after)) => (before, Some(after)),
        None => (text, None),
    }
}

/// The authority lowercased, without userinfo (refused) and without a default or empty port.
fn normal_authority(authority: &str, scheme: &str) -> Result<String, UriProblem> {
    if let Some((userinfo, _)) = authority.rsplit_once('@') {
        return Err(UriProblem::UserInfo(userinfo.to_owned()));
    }
    if authority.contains('%') {
        return Err(UriProblem::EscapedAuthority);
    }
    let lowered = authority.to_ascii_lowercase();
    let host_end = host_end(&lowered);
    let (host, port) = lowered.split_at(host_end);
    let default_port = match scheme {
        "http" | "ws" => ":80",
        "https" | "wss" => ":443",
        _ => "",
    };
    let port = if port == ":" || (!default_port.is_empty() && port == default_port) {
        ""
    } else {
        port
    };
    Ok(format!("{host}{port}"))
}

/// Where the host of a lowercased authority ends (an IPv6 literal `[…]` may hold colons).
fn host_end(authority: &str) -> usize {
    let search_from = if authority.starts_with('[') {
        authority.find(']').map_or(authority.len(), |end| end + 1)
    } else {
        0
    };
    authority[search_from..]
        .find(':')
        .map_or(authority.len(), |colon| search_from + colon)
}

/// Which part of the URI escapes are normalized in: the path refuses more.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    Path,
    Other,
}

/// The path with escapes normalized and dot segments removed; an escaped dot forming a dot
/// segment is refused, since the escapes decoded before or after the dot segments differ.
///
/// A file path (`collapse`) also loses its empty segments first, as the filesystem does
/// (`//etc//passwd` is `/etc/passwd`), before `..` is applied: `/a//../b` is `/b` on disk, and
/// removing dot segments first would make it `/a/b`.
fn normal_path(path: &str, collapse: bool) -> Result<String, UriProblem> {
    for segment in path.split('/') {
        if segment.contains('%') && matches!(dots_only(segment).as_deref(), Some("." | "..")) {
            return Err(UriProblem::EncodedDotSegment(segment.to_owned()));
        }
    }
    let escaped = normal_escapes(path, Part::Path)?;
    if collapse {
        return Ok(remove_dot_segments(&collapse_slashes(&escaped)));
    }
    Ok(remove_dot_segments(&escaped))
}

/// Runs of `/` as one.
fn collapse_slashes(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for c in path.chars() {
        if !(c == '/' && out.ends_with('/')) {
            out.push(c);
        }
    }
    out
}

/// `segment` decoded when it holds only dots, plain or escaped.
fn dots_only(segment: &str) -> Option<String> {
    let decoded = segment.replace("%2E", ".").replace("%2e", ".");
    decoded.chars().all(|c| c == '.').then_some(decoded)
}

/// Escapes normalized: unreserved characters decoded, other escapes' hex uppercased, characters
/// a URI cannot hold escaped. The decoded text must be UTF-8 in NFC.
fn normal_escapes(text: &str, part: Part) -> Result<String, UriProblem> {
    let mut out = String::with_capacity(text.len());
    let mut decoded: Vec<u8> = Vec::with_capacity(text.len());
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let byte = escape_at(text, i)?;
            refuse_escaped(byte, part)?;
            decoded.push(byte);
            if is_unreserved(byte) {
                out.push(char::from(byte));
            } else {
                push_escape(&mut out, byte);
            }
            i += 3;
            continue;
        }
        // Not an escape: copy the character, escaped when a URI cannot hold it as it is.
        let c = text[i..].chars().next().unwrap_or_default();
        let mut utf8 = [0; 4];
        let encoded = c.encode_utf8(&mut utf8).as_bytes();
        decoded.extend_from_slice(encoded);
        if must_escape(c) {
            for &b in encoded {
                push_escape(&mut out, b);
            }
        } else {
            out.push(c);
        }
        i += c.len_utf8();
    }
    let decoded = String::from_utf8(decoded).map_err(|_| UriProblem::NotUtf8)?;
    if !is_nfc(&decoded) {
        return Err(UriProblem::NotNfc);
    }
    Ok(out)
}

/// The byte escaped at `at` (`%` then two hex digits).
fn escape_at(text: &str, at: usize) -> Result<u8, UriProblem> {
    let hex = text
        .get(at + 1..at + 3)
        .filter(|h| h.bytes().all(|b| b.is_ascii_hexdigit()));
    let bad = || UriProblem::InvalidEscape(text[at..].chars().take(3).collect());
    hex.and_then(|h| u8::from_str_radix(h, 16).ok()).ok_or_else(bad)
}

/// Escaped bytes refused: NUL anywhere, separators in the path.
fn refuse_escaped(byte: u8, part: Part) -> Result<(), UriProblem> {
    match (byte, part) {
        (0, _) => Err(UriProblem::EncodedNul),
        (b'/', Part::Path) => Err(UriProblem::EncodedSeparator("%2F")),
        (b'\\', Part::Path) => Err(UriProblem::EncodedSeparator("%5C")),
        _ => Ok(()),
    }
}

/// RFC 3986 §2.3 unreserved characters: an escape of one means the character itself.
fn is_unreserved(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~')
}

/// Characters a URI cannot hold as they are (RFC 3986 §2, RFC 3987 §3.1): written escaped.
fn must_escape(c: char) -> bool {
    !c.is_ascii() || matches!(c, ' ' | '"' | '<' | '>' | '^' | '`' | '{' | '|' | '}')
}

fn push_escape(out: &mut String, byte: u8) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    out.push('%');
    out.push(char::from(HEX[usize::from(byte >> 4)]));
    out.push(char::from(HEX[usize::from(byte & 0xF)]));
}

/// RFC 3986 §5.2.4 on a path; a relative (rootless) path such as a URN's is left as it is.
fn remove_dot_segments(path: &str) -> String {
    if !path.starts_with('/') {
        return path.to_owned();
    }
    let mut kept: Vec<&str> = Vec::new();
    let segments: Vec<&str> = path[1..].split('/').collect();
    let last = segments.len().saturating_sub(1);
    // A path ending in `.` or `..` names a directory: it keeps its trailing slash.
    let mut trailing_slash = false;
    for (i, segment) in segments.iter().enumerate() {
        match *segment {
            "." => trailing_slash = i == last,
            ".." => {
                kept.pop();
                trailing_slash = i == last;
            }
            other => {
                kept.push(other);
                trailing_slash = false;
            }
        }
    }
    let mut out = format!("/{}", kept.join("/"));
    if trailing_slash && !out.ends_with('/') {
        out.push('/');
    }
    out
}

/// A `file:` URI: on this machine, with an absolute path, written `file:///path`.
fn file_uri(
    scheme: &str,
    authority: Option<&str>,
    path: &str,
    query: Option<&str>,
    fragment: Option<&str>,
) -> Result<NormalUri, UriProblem> {
    match authority {
        None | Some("" | "localhost") => {}
        Some(host) => return Err(UriProblem::FileHost(host.to_owned())),
    }
    if !path.starts_with('/') {
        return Err(UriProblem::FileNotAbsolute);
    }
    let mut uri = assemble(scheme, Some(""), path, query, fragment);
    uri.file_path = Some(percent_decode(path));
    Ok(uri)
}

/// The text with every escape decoded; only called on text `normal_escapes` accepted, which
/// decodes to UTF-8.
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match (bytes[i], escape_at(text, i)) {
            (b'%', Ok(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn assemble(
    scheme: &str,
    authority: Option<&str>,
    path: &str,
    query: Option<&str>,
    fragment: Option<&str>,
) -> NormalUri {
    let mut text = format!("{scheme}:");
    let host = authority.map(|a| {
        text.push_str("//");
        let start = text.len();
        text.push_str(a);
        start..start + host_end(a)
    });
    let path_start = text.len();
    text.push_str(path);
    let path_range = path_start..text.len();
    if let Some(query) = query {
        text.push('?');
        text.push_str(query);
    }
    if let Some(fragment) = fragment {
        text.push('#');
        text.push_str(fragment);
    }
    NormalUri {
        scheme: 0..scheme.len(),
        host,
        path: path_range,
        file_path: None,
        text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case::plain("file:///etc/passwd", "file:///etc/passwd")]
    #[case::scheme_case("FILE:///etc/passwd", "file:///etc/passwd")]
    #[case::path_case_kept("file:///ETC/passwd", "file:///ETC/passwd")]
    #[case::localhost("file://localhost/etc/passwd", "file:///etc/passwd")]
    #[case::localhost_case("file://LocalHost/etc/passwd", "file:///etc/passwd")]
    #[case::no_authority("file:/etc/passwd", "file:///etc/passwd")]
    #[case::dot_dot("file:///tmp/a/../../etc/shadow", "file:///etc/shadow")]
    #[case::dot_dot_above_root("file:///../../etc/shadow", "file:///etc/shadow")]
    #[case::four_slashes("file:////etc/passwd", "file:///etc/passwd")]
    #[case::repeated_slashes("file:///etc//passwd", "file:///etc/passwd")]
    #[case::empty_segment_before_dot_dot("file:///etc/x//../passwd", "file:///etc/passwd")]
    #[case::http_keeps_empty_segments("https://h/a//b", "https://h/a//b")]
    #[case::dot("file:///tmp/./x", "file:///tmp/x")]
    #[case::trailing_dot_dot("file:///tmp/a/..", "file:///tmp/")]
    #[case::unreserved_escape("file:///etc/pa%73swd", "file:///etc/passwd")]
    #[case::escaped_dot_in_name("file:///a%2Etxt", "file:///a.txt")]
    #[case::escaped_tilde("file:///home/%7Eme", "file:///home/~me")]
    #[case::mixed_case_escape("file:///a%c3%A9", "file:///a%C3%A9")]
    #[case::raw_unicode("file:///home/jos\u{e9}/x", "file:///home/jos%C3%A9/x")]
    #[case::space("file:///My Documents/x", "file:///My%20Documents/x")]
    #[case::reserved_escape_kept("https://h/a%3Fb", "https://h/a%3Fb")]
    #[case::host_case("HTTPS://Example.COM/Path", "https://example.com/Path")]
    #[case::default_port("https://example.com:443/x", "https://example.com/x")]
    #[case::other_port_kept("https://example.com:8443/x", "https://example.com:8443/x")]
    #[case::empty_port("http://example.com:/x", "http://example.com/x")]
    #[case::empty_path("https://example.com", "https://example.com/")]
    #[case::query_kept("https://h/p?q=%2fetc", "https://h/p?q=%2Fetc")]
    #[case::fragment("https://h/a/../b#Top", "https://h/b#Top")]
    #[case::urn("urn:isbn:0451450523", "urn:isbn:0451450523")]
    #[case::custom_scheme("postgres://db/Users/schema", "postgres://db/Users/schema")]
    #[case::ipv6("http://[::1]:80/x", "http://[::1]/x")]
    fn normalizes(#[case] raw: &str, #[case] normal: &str) {
        assert_eq!(normalize_uri(raw).map(|u| u.as_str().to_owned()), Ok(normal.to_owned()));
        // The normal form is a fixed point: normalizing it again changes nothing.
        assert_eq!(
            normalize_uri(normal).map(|u| u.as_str().to_owned()),
            Ok(normal.to_owned())
        );
    }

    #[rstest]
    #[case::encoded_dot_dot("file:///etc/%2e%2e/passwd", UriProblem::EncodedDotSegment("%2e%2e".into()))]
    #[case::half_encoded_dot_dot("file:///tmp/.%2E/etc", UriProblem::EncodedDotSegment(".%2E".into()))]
    #[case::encoded_dot("file:///tmp/%2E/x", UriProblem::EncodedDotSegment("%2E".into()))]
    #[case::encoded_slash("file:///tmp%2F..%2Fetc/passwd", UriProblem::EncodedSeparator("%2F"))]
    #[case::encoded_slash_lower("file:///a%2fb", UriProblem::EncodedSeparator("%2F"))]
    #[case::encoded_backslash("file:///a%5Cb", UriProblem::EncodedSeparator("%5C"))]
    #[case::backslash("file:///tmp\\..\\etc", UriProblem::Backslash)]
    #[case::encoded_nul("file:///etc/passwd%00.txt", UriProblem::EncodedNul)]
    #[case::encoded_nul_in_query("https://h/?x=%00", UriProblem::EncodedNul)]
    #[case::raw_nul("file:///etc/passwd\0", UriProblem::ControlCharacter)]
    #[case::newline("https://h/a\nb", UriProblem::ControlCharacter)]
    #[case::c1_control("https://h/a\u{85}b", UriProblem::ControlCharacter)]
    #[case::bad_escape("file:///a%zz", UriProblem::InvalidEscape("%zz".into()))]
    #[case::truncated_escape("file:///a%4", UriProblem::InvalidEscape("%4".into()))]
    #[case::not_utf8("file:///a%FF", UriProblem::NotUtf8)]
    #[case::not_nfc("file:///jose\u{301}", UriProblem::NotNfc)]
    #[case::not_nfc_escaped("file:///jose%CC%81", UriProblem::NotNfc)]
    #[case::userinfo("http://user@host/", UriProblem::UserInfo("user".into()))]
    #[case::userinfo_password("https://a:b@evil.com@good.com/", UriProblem::UserInfo("a:b@evil.com".into()))]
    #[case::escaped_host("https://ex%61mple.com/", UriProblem::EscapedAuthority)]
    #[case::file_host("file://evil/etc/passwd", UriProblem::FileHost("evil".into()))]
    #[case::file_relative("file:etc/passwd", UriProblem::FileNotAbsolute)]
    #[case::relative("/etc/passwd", UriProblem::Relative)]
    #[case::relative_name("passwd", UriProblem::Relative)]
    #[case::empty("", UriProblem::Relative)]
    #[case::bad_scheme("1http://h/", UriProblem::Relative)]
    fn refuses(#[case] raw: &str, #[case] problem: UriProblem) {
        assert_eq!(normalize_uri(raw), Err(problem));
    }

    #[rstest]
    #[case::plain("file:///etc/passwd", Some("/etc/passwd"))]
    #[case::escaped("file:///My%20Documents/jos%C3%A9", Some("/My Documents/jos\u{e9}"))]
    #[case::reserved("file:///a%3Fb", Some("/a?b"))]
    #[case::http("https://h/etc/passwd", None)]
    fn file_paths_are_decoded(#[case] raw: &str, #[case] path: Option<&str>) {
        assert_eq!(normalize_uri(raw).expect("normalizes").file_path(), path);
    }

    #[test]
    fn parts_are_read_from_the_normal_form() {
        let uri = normalize_uri("HTTPS://Example.com:8443/a/./b?q#f").expect("normalizes");
        assert_eq!(
            (uri.scheme(), uri.host(), uri.path()),
            ("https", Some("example.com"), "/a/b")
        );
        let urn = normalize_uri("urn:x:y").expect("normalizes");
        assert_eq!((urn.host(), urn.path()), (None, "x:y"));
        assert_eq!(normalize_uri("file:///x").expect("normalizes").host(), Some(""));
    }

    /// Problems are sentences an author or agent can act on.
    #[test]
    fn problems_say_why() {
        let text = normalize_uri("file:///etc/%2e%2e/passwd").unwrap_err().to_string();
        assert!(text.contains("escaped dot"), "{text}");
    }
}
