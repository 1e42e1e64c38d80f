//! Host, Origin and token checks for every request.

use std::sync::Arc;

use axum::extract::{ConnectInfo, Request, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::{peer_user, Conn};
use crate::Keeper;

pub(crate) async fn guard(State(gateway): State<Arc<Keeper>>, request: Request, next: Next) -> Response {
    let headers = request.headers();
    if !host_is_local(headers) {
        return refuse(
            StatusCode::MISDIRECTED_REQUEST,
            "Host is not a loopback name (DNS rebinding?)",
        );
    }
    if !origin_is_local(headers) {
        return refuse(StatusCode::FORBIDDEN, "requests from this Origin are not allowed");
    }
    if !token_matches(headers, gateway.token()) {
        let mut response = refuse(
            StatusCode::UNAUTHORIZED,
            "missing or wrong bearer token (see gateway.json)",
        );
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, header::HeaderValue::from_static("Bearer"));
        return response;
    }
    if request.uri().path().starts_with("/control") {
        let conn = request.extensions().get::<ConnectInfo<Conn>>().map(|c| c.0);
        if let Err(why) = same_user(conn).await {
            tracing::warn!("control API request refused: {why}");
            return refuse_owned(
                StatusCode::FORBIDDEN,
                format!("the control API answers only the gateway's own user: {why}"),
            );
        }
    }
    next.run(request).await
}

/// The client socket belongs to the user running the gateway. Fails closed when that cannot be
/// established.
async fn same_user(conn: Option<Conn>) -> Result<(), String> {
    let Some(Conn {
        local: Some(local),
        peer,
    }) = conn
    else {
        return Err("the connection's addresses are unknown".into());
    };
    let found = tokio::task::spawn_blocking(move || peer_user::peer_uid(local, peer))
        .await
        .ok()
        .flatten();
    match found {
        Some(uid) if uid == peer_user::own_uid() => Ok(()),
        Some(uid) => Err(format!("the connection from {peer} belongs to uid {uid}")),
        None => Err(format!("no local socket owner found for {peer}")),
    }
}

fn refuse_owned(status: StatusCode, text: String) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        format!("portcullis: {text}\n"),
    )
        .into_response()
}

fn refuse(status: StatusCode, text: &'static str) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        format!("portcullis: {text}\n"),
    )
        .into_response()
}

/// Exactly `127.0.0.1`, `localhost` or `[::1]`, with an optional numeric port. Nothing that
/// merely starts with `127.`: `127.0.0.1.nip.io` is a public name that resolves to loopback, the
/// very shape of a DNS-rebinding attack.
fn is_loopback_host(host: &str) -> bool {
    let name = match host.rsplit_once(':') {
        // The last colon of `[::1]` alone is inside the brackets; `[::1]:80` has a port after it.
        Some((name, port)) if !name.is_empty() && !host.ends_with(']') => {
            if port.is_empty() || !port.bytes().all(|b| b.is_ascii_digit()) || port.len() > 5 {
                return false;
            }
            name
        }
        _ => host,
    };
    matches!(name, "127.0.0.1" | "localhost" | "[::1]")
}

fn host_is_local(headers: &HeaderMap) -> bool {
    headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .is_none_or(is_loopback_host)
}

fn origin_is_local(headers: &HeaderMap) -> bool {
    let Some(origin) = headers.get(header::ORIGIN) else {
        return true;
    };
    let Ok(origin) = origin.to_str() else {
        return false;
    };
    // The desktop app's own webview.
    if matches!(
        origin,
        "tauri://localhost" | "http://tauri.localhost" | "https://tauri.localhost"
    ) {
        return true;
    }
    // An origin is scheme://host[:port] and nothing more; a path or userinfo is not an origin.
    origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"))
        .is_some_and(|host| !host.contains(['/', '@']) && is_loopback_host(host))
}

fn token_matches(headers: &HeaderMap, token: &str) -> bool {
    let Some(given) = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer ").or_else(|| v.strip_prefix("bearer ")))
    else {
        return false;
    };
    constant_time_eq(given.trim().as_bytes(), token.as_bytes())
}

/// Compares without an early exit, so timing does not reveal how much of the token matched.
pub(crate) fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_hosts() {
        for ok in ["127.0.0.1:7470", "localhost:1", "[::1]:80", "localhost", "127.0.0.1"] {
            assert!(is_loopback_host(ok), "{ok} is loopback");
        }
        for bad in [
            "evil.example:7470",
            "evil.example",
            "10.0.0.1:7470",
            "localhost.evil.example:1",
            "127.0.0.1.nip.io",
            "127.0.0.1.nip.io:7470",
            "127.evil.example",
            "127.0.0.2:7470",
            "127.1",
            "::1",
            "[::1",
            "[::1]x",
            "[::1]:",
            "localhost:",
            "localhost:80x",
            "localhost:99999999",
            "127.0.0.1:1:2",
            "[::2]:80",
            "",
        ] {
            assert!(!is_loopback_host(bad), "{bad} is not loopback");
        }
    }

    #[test]
    fn origins() {
        let mut h = HeaderMap::new();
        assert!(origin_is_local(&h), "no Origin: not a browser");
        h.insert(header::ORIGIN, "http://evil.example".parse().unwrap());
        assert!(!origin_is_local(&h));
        h.insert(header::ORIGIN, "http://localhost:5173".parse().unwrap());
        assert!(origin_is_local(&h));
        for ok in [
            "http://127.0.0.1",
            "https://127.0.0.1:7470",
            "http://[::1]:80",
            "http://localhost",
            "tauri://localhost",
            "http://tauri.localhost",
            "https://tauri.localhost",
        ] {
            h.insert(header::ORIGIN, ok.parse().unwrap());
            assert!(origin_is_local(&h), "{ok} is local");
        }
        for bad in [
            "http://127.evil.example",
            "http://127.0.0.1.nip.io",
            "https://127.0.0.1.nip.io:7470",
            "http://localhost.evil.example",
            "http://localhost@evil.example",
            "http://evil.example@localhost",
            "http://localhost/path",
            "ftp://localhost",
            "localhost",
            "tauri://localhost.evil.example",
            "http://tauri.localhost.evil.example",
        ] {
            h.insert(header::ORIGIN, bad.parse().unwrap());
            assert!(!origin_is_local(&h), "{bad} is not local");
        }
        h.insert(header::ORIGIN, "null".parse().unwrap());
        assert!(!origin_is_local(&h), "an opaque origin is a sandboxed page");
    }

    #[test]
    fn tokens() {
        let mut h = HeaderMap::new();
        assert!(!token_matches(&h, "secret"));
        h.insert(header::AUTHORIZATION, "Bearer secreT".parse().unwrap());
        assert!(!token_matches(&h, "secret"));
        h.insert(header::AUTHORIZATION, "Bearer secret".parse().unwrap());
        assert!(token_matches(&h, "secret"));
    }
}
