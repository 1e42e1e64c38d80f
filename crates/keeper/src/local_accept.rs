//! The keeper's local socket ([`portcullis_gate::local_socket`]): each connection opens with a
//! hello (`portcullis_gate::local_conn::Hello`) naming its role. A data plane's keeper link
//! ([`crate::link_serve`]) asks about the calls it holds; a relay connection (a `connect` older
//! than the one-hop shape, or one on a platform where it relays) drives a session of the keeper's
//! own plane, line by line ([`portcullis_gate::local_conn::drive`]). A hello that is not this
//! keeper's is answered with a one-line JSON-RPC error whose `data.code` says why.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use bytes::BytesMut;
use portcullis_gate::held_calls::link;
use portcullis_gate::local_conn::{drive, Hello, RefusalCode, ACK, PROTOCOL};
use portcullis_gate::local_socket;
use portcullis_wire::codec::encode_line_into;
use portcullis_wire::{error_code, LineDecoder};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::Keeper;

/// The longest hello read (a server name and a token fit easily).
const HELLO_MAX: usize = 4096;
/// How long a client has to send its hello.
const HELLO_WITHIN: Duration = Duration::from_secs(5);

/// What an accepted hello opens.
enum Opened {
    Relay(String),
    /// At the link version the data plane speaks.
    KeeperLink(u32),
}

/// The keeper's answer to a link hello: [`ACK`] for a version-1 data plane (it reads nothing
/// else), else one naming the version both sides now speak.
fn link_ack(version: u32) -> Vec<u8> {
    if version < 2 {
        return ACK.to_vec();
    }
    format!("{{\"portcullis\":{PROTOCOL},\"ok\":true,\"link\":{version}}}\n").into_bytes()
}

/// Accepts connections on `listener` until `stopping`, then removes the socket file; every open
/// connection ends on `stopping` too (its client reconnects to the next gateway).
pub(crate) async fn serve(keeper: Arc<Keeper>, listener: local_socket::Listener, stopping: CancellationToken) {
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            () = stopping.cancelled() => break,
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
            accepted = listener.accept() => match accepted {
                Ok(stream) => {
                    let (keeper, stopping) = (keeper.clone(), stopping.clone());
                    let hang_up = local_socket::hang_up(&stream);
                    connections.spawn(async move { run(keeper, stream, hang_up, stopping).await });
                }
                Err(e) => {
                    tracing::warn!(error = %e, "local socket: accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            },
        }
    }
    listener.remove_if_ours();
    drop(listener);
    while connections.join_next().await.is_some() {}
}

/// One connection, from hello to close. `hang_up` resolves when the client has closed the whole
/// connection (not only its writing half): it ends the wait for answers after end of input.
pub(crate) async fn run<S, H>(keeper: Arc<Keeper>, stream: S, hang_up: H, stopping: CancellationToken)
where
    S: AsyncRead + AsyncWrite + Send + 'static,
    H: Future<Output = ()> + Send,
{
    let (mut rd, mut wr) = tokio::io::split(stream);
    let mut buf = BytesMut::with_capacity(portcullis_wire::codec::FIRST_CAPACITY);
    let hello = tokio::time::timeout(HELLO_WITHIN, read_hello(&mut rd, &mut buf))
        .await
        .unwrap_or_else(|_| Err("no hello within 5 s".to_owned()));
    let server = match hello
        .map_err(|why| (RefusalCode::BadHello, why))
        .and_then(|h| check(&keeper, h))
    {
        Ok(Opened::Relay(server)) => server,
        Ok(Opened::KeeperLink(version)) => {
            if wr.write_all(&link_ack(version)).await.is_ok() {
                let (held, record) = keeper.keeper_side();
                tokio::select! {
                    () = crate::link_serve::serve(held, record, rd, buf, wr) => {}
                    () = stopping.cancelled() => {}
                }
            }
            return;
        }
        Err((code, why)) => {
            tracing::warn!("local socket: connection refused: {why}");
            let mut line = Vec::new();
            encode_line_into(&mut line, &refusal(code, &why));
            let _ = wr.write_all(&line).await;
            let _ = wr.shutdown().await;
            return;
        }
    };
    if wr.write_all(ACK).await.is_err() {
        return;
    }
    drive(keeper.plane().clone(), server, rd, buf, wr, hang_up, stopping).await;
}

/// The first line, whatever it holds (checked by [`check`]).
async fn read_hello<R: AsyncRead + Unpin>(rd: &mut R, buf: &mut BytesMut) -> Result<Hello, String> {
    let mut decoder = LineDecoder::new(HELLO_MAX);
    loop {
        match decoder.decode(buf) {
            Ok(Some(line)) => {
                return serde_json::from_slice(&line)
                    .map_err(|e| format!("the hello line is not a Portcullis hello: {e}"))
            }
            Ok(None) => {}
            Err(e) => return Err(format!("hello: {e}")),
        }
        match rd.read_buf(buf).await {
            Ok(0) => return Err("closed before the hello".into()),
            Err(e) => return Err(format!("reading the hello: {e}")),
            Ok(_) => {}
        }
    }
}

fn check(keeper: &Keeper, hello: Hello) -> Result<Opened, (RefusalCode, String)> {
    if hello.portcullis != PROTOCOL {
        let why = format!(
            "this gateway speaks local-socket protocol {PROTOCOL}, the client {}",
            hello.portcullis
        );
        return Err((RefusalCode::BadHello, why));
    }
    if !crate::http::guard::constant_time_eq(hello.token.as_bytes(), keeper.token().as_bytes()) {
        let why = "the token does not match this gateway's (is gateway.json from another gateway?)";
        return Err((RefusalCode::BadToken, why.into()));
    }
    match hello.role.as_deref() {
        Some(link::ROLE) => {
            let version = hello.link.unwrap_or(1);
            return link::speaks(version)
                .map(|()| Opened::KeeperLink(version))
                .map_err(|why| (RefusalCode::BadHello, why));
        }
        Some(other) => return Err((RefusalCode::BadHello, format!("no such role: {other:?}"))),
        None => {}
    }
    if !keeper.has_server(&hello.server) {
        let why = format!("no server named {:?} in the config", hello.server);
        return Err((RefusalCode::UnknownServer, why));
    }
    Ok(Opened::Relay(hello.server))
}

/// The hello refused: a JSON-RPC error (what any client can show) with the [`RefusalCode`] in
/// `data`, for the relay to branch on.
fn refusal(code: RefusalCode, why: &str) -> Vec<u8> {
    let error = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {
            "code": error_code::INVALID_REQUEST,
            "message": format!("[portcullis] {why}"),
            "data": { "code": code },
        },
    });
    serde_json::to_vec(&error).unwrap_or_default()
}
