//! `loadgen`: the fast MCP client the end-to-end benchmark (`bench/e2e.py`, run by
//! `scripts/bench.sh`) drives. Not a criterion bench: a small program kept here so it builds with
//! the workspace's own tokio and reqwest and needs no extra crate. One thread (tokio
//! current-thread runtime), so on the 2-core machine it leaves as much CPU as possible to the
//! system under test.
//!
//! ```text
//! loadgen http URL [--token T] [--sessions S] [--concurrency K] [--calls N] [--samples]
//!     S MCP sessions (initialize + notifications/initialized, DELETE at the end), K workers per
//!     session each calling `echo` back to back, N calls per session in all. Plain HTTP/1.1 with
//!     keep-alive; answers may be JSON or SSE. Prints one JSON line: calls, errors, elapsed_s,
//!     calls_per_s, p50_us, p90_us, p99_us, max_us (and lat_us with --samples).
//! loadgen stdio [--calls N] [--samples] -- COMMAND ARGS...
//!     Launches COMMAND, speaks newline-delimited JSON-RPC on its stdin/stdout: initialize, then
//!     N sequential `echo` calls. Same output.
//! loadgen approval URL --token T --server NAME --tool TOOL [--calls N] [--samples]
//!     Subscribes to GET URL/control/events, opens a session on URL/mcp/NAME, and N times: sends
//!     a `tools/call` of TOOL (held by policy), times send → `ApprovalRequested` on the event
//!     stream, approves it via POST /control/approvals/{id}/approve, times approve → the call's
//!     answer. Prints the first as p50_us… and the second as answer_p50_us…
//! ```
//!
//! Run bare (as `cargo bench -p portcullis-gateway` does) it prints this usage and exits 0.

#![allow(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::items_after_statements,
    reason = "a benchmark client: microsecond counts and percentile indexes are small and positive"
)]
#![allow(clippy::print_stdout, clippy::print_stderr, clippy::unwrap_used)]

use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

const PROTOCOL: &str = "2025-06-18";
const ACCEPT: &str = "application/json, text/event-stream";

type Error = Box<dyn std::error::Error + Send + Sync>;

#[derive(Default)]
struct Args {
    positional: Vec<String>,
    token: Option<String>,
    sessions: usize,
    concurrency: usize,
    calls: usize,
    server: String,
    tool: String,
    samples: bool,
    command: Vec<String>,
}

fn parse_args() -> Args {
    let mut args = Args {
        sessions: 1,
        concurrency: 1,
        calls: 1000,
        server: "everything".into(),
        tool: "get-sum".into(),
        ..Args::default()
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        let mut value = || it.next().unwrap_or_default();
        match a.as_str() {
            "--token" => args.token = Some(value()),
            "--sessions" => args.sessions = value().parse().unwrap_or(1),
            "--concurrency" => args.concurrency = value().parse().unwrap_or(1),
            "--calls" => args.calls = value().parse().unwrap_or(1000),
            "--server" => args.server = value(),
            "--tool" => args.tool = value(),
            "--samples" => args.samples = true,
            "--bench" => {}
            "--" => {
                args.command = it.by_ref().collect();
                break;
            }
            _ => args.positional.push(a),
        }
    }
    args
}

fn main() {
    let args = parse_args();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mode = args.positional.first().cloned().unwrap_or_default();
    let result = rt.block_on(async {
        match mode.as_str() {
            "http" => http_mode(&args).await,
            "stdio" => stdio_mode(&args).await,
            "approval" => approval_mode(&args).await,
            _ => {
                println!("{USAGE}");
                Ok(json!(null))
            }
        }
    });
    match result {
        Ok(Value::Null) => {}
        Ok(report) => println!("{report}"),
        Err(e) => {
            eprintln!("loadgen: {e}");
            std::process::exit(1);
        }
    }
}

const USAGE: &str = "loadgen http URL [--token T] [--sessions S] [--concurrency K] [--calls N] [--samples]\n\
loadgen stdio [--calls N] [--samples] -- COMMAND ARGS...\n\
loadgen approval URL --token T --server NAME --tool TOOL [--calls N] [--samples]\n\
(the client of bench/e2e.py; see scripts/bench.sh)";

/// p50/p90/p99/max of latencies in µs, plus the samples when asked.
fn summarize(prefix: &str, mut lat: Vec<u64>, samples: bool, out: &mut serde_json::Map<String, Value>) {
    lat.sort_unstable();
    let at = |q: f64| -> u64 {
        if lat.is_empty() {
            return 0;
        }
        lat[((lat.len() as f64 * q) as usize).min(lat.len() - 1)]
    };
    out.insert(format!("{prefix}p50_us"), json!(at(0.5)));
    out.insert(format!("{prefix}p90_us"), json!(at(0.9)));
    out.insert(format!("{prefix}p99_us"), json!(at(0.99)));
    out.insert(format!("{prefix}max_us"), json!(lat.last().copied().unwrap_or(0)));
    if samples {
        out.insert(format!("{prefix}lat_us"), json!(lat));
    }
}

fn echo_call(id: u64) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": { "name": "echo", "arguments": { "message": format!("bench {id}") } } })
}

fn initialize(id: u64) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "method": "initialize",
            "params": { "protocolVersion": PROTOCOL, "capabilities": {},
                        "clientInfo": { "name": "portcullis-loadgen", "version": "1.0.0" } } })
}

/// The answer to `id` in a body that is either one JSON message or an SSE stream of them.
fn find_response(body: &[u8], id: u64, sse: bool) -> Option<Value> {
    if !sse {
        return serde_json::from_slice(body).ok();
    }
    let text = std::str::from_utf8(body).ok()?;
    // Events are separated by blank lines; an event's data lines are joined by \n.
    let mut data = String::new();
    for line in text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l)) {
        if let Some(rest) = line.strip_prefix("data:") {
            if !data.is_empty() {
                data.push('\n');
            }
            data.push_str(rest.strip_prefix(' ').unwrap_or(rest));
        } else if line.is_empty() && !data.is_empty() {
            if let Ok(v) = serde_json::from_str::<Value>(&data) {
                if v.get("id").and_then(Value::as_u64) == Some(id) {
                    return Some(v);
                }
            }
            data.clear();
        }
    }
    None
}

fn is_ok_result(v: &Value) -> bool {
    v.get("result")
        .is_some_and(|r| r.get("isError") != Some(&Value::Bool(true)))
}

struct HttpSession {
    client: reqwest::Client,
    url: String,
    token: Option<String>,
    session: Option<String>,
    protocol: String,
}

impl HttpSession {
    fn post(&self, body: &Value) -> reqwest::RequestBuilder {
        let mut req = self
            .client
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", ACCEPT)
            .body(serde_json::to_vec(body).unwrap());
        if let Some(t) = &self.token {
            req = req.bearer_auth(t);
        }
        if let Some(s) = &self.session {
            req = req
                .header("mcp-session-id", s)
                .header("mcp-protocol-version", &self.protocol);
        }
        req
    }

    /// One request, answered by a response with the same id.
    async fn call(&self, body: &Value, id: u64) -> Result<Value, Error> {
        let resp = self.post(body).send().await?;
        let status = resp.status();
        let sse = resp
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        let bytes = resp.bytes().await?;
        if !status.is_success() {
            return Err(format!("HTTP {status}: {}", String::from_utf8_lossy(&bytes)).into());
        }
        find_response(&bytes, id, sse)
            .ok_or_else(|| format!("no response to id {id} in: {}", String::from_utf8_lossy(&bytes)).into())
    }

    async fn open(client: reqwest::Client, url: &str, token: Option<String>) -> Result<Self, Error> {
        let mut s = HttpSession {
            client,
            url: url.to_owned(),
            token,
            session: None,
            protocol: PROTOCOL.into(),
        };
        let resp = s.post(&initialize(0)).send().await?;
        let status = resp.status();
        let sid = resp
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let sse = resp
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        let bytes = resp.bytes().await?;
        if !status.is_success() {
            return Err(format!("initialize: HTTP {status}: {}", String::from_utf8_lossy(&bytes)).into());
        }
        let init = find_response(&bytes, 0, sse).ok_or("initialize: no response")?;
        if let Some(v) = init.pointer("/result/protocolVersion").and_then(Value::as_str) {
            s.protocol = v.to_owned();
        }
        s.session = sid;
        let resp = s
            .post(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }))
            .send()
            .await?;
        let status = resp.status();
        let _ = resp.bytes().await;
        if !status.is_success() {
            return Err(format!("notifications/initialized: HTTP {status}").into());
        }
        Ok(s)
    }

    async fn close(&self) {
        if self.session.is_none() {
            return;
        }
        let mut req = self
            .client
            .delete(&self.url)
            .header("mcp-session-id", self.session.as_deref().unwrap_or_default())
            .header("mcp-protocol-version", &self.protocol);
        if let Some(t) = &self.token {
            req = req.bearer_auth(t);
        }
        if let Ok(resp) = req.send().await {
            let _ = resp.bytes().await;
        }
    }
}

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .pool_max_idle_per_host(1024)
        .tcp_nodelay(true)
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap()
}

async fn http_mode(args: &Args) -> Result<Value, Error> {
    let url = args.positional.get(1).ok_or("http: URL missing")?.clone();
    let client = client();
    // Sessions are opened before the clock starts (each may start a server process).
    let t_open = Instant::now();
    let opened = futures::future::join_all(
        (0..args.sessions).map(|_| HttpSession::open(client.clone(), &url, args.token.clone())),
    )
    .await;
    let mut sessions = Vec::new();
    for s in opened {
        sessions.push(Arc::new(s?));
    }
    let open_s = t_open.elapsed().as_secs_f64();
    let errors = Arc::new(AtomicU64::new(0));
    let first_error = Arc::new(std::sync::Mutex::new(None::<String>));
    let next_id = Arc::new(AtomicU64::new(1));
    let per_worker = args.calls / args.concurrency.max(1);
    let t0 = Instant::now();
    let mut workers = Vec::new();
    for s in &sessions {
        for _ in 0..args.concurrency.max(1) {
            let (s, errors, first_error, next_id) = (s.clone(), errors.clone(), first_error.clone(), next_id.clone());
            workers.push(async move {
                let mut lat = Vec::with_capacity(per_worker);
                for _ in 0..per_worker {
                    let id = next_id.fetch_add(1, Ordering::Relaxed);
                    let t = Instant::now();
                    let r = s.call(&echo_call(id), id).await;
                    lat.push(t.elapsed().as_micros() as u64);
                    let err = match r {
                        Ok(v) if is_ok_result(&v) => None,
                        Ok(v) => Some(format!("not a result: {v}")),
                        Err(e) => Some(e.to_string()),
                    };
                    if let Some(e) = err {
                        errors.fetch_add(1, Ordering::Relaxed);
                        first_error.lock().unwrap().get_or_insert(e);
                    }
                }
                lat
            });
        }
    }
    let lat: Vec<u64> = futures::future::join_all(workers).await.into_iter().flatten().collect();
    let elapsed = t0.elapsed().as_secs_f64();
    futures::future::join_all(sessions.iter().map(|s| s.close())).await;
    let mut out = serde_json::Map::new();
    out.insert("calls".into(), json!(lat.len()));
    out.insert("errors".into(), json!(errors.load(Ordering::Relaxed)));
    out.insert("first_error".into(), json!(first_error.lock().unwrap().clone()));
    out.insert("elapsed_s".into(), json!(elapsed));
    out.insert("open_s".into(), json!(open_s));
    out.insert("calls_per_s".into(), json!(lat.len() as f64 / elapsed));
    summarize("", lat, args.samples, &mut out);
    Ok(Value::Object(out))
}

async fn stdio_mode(args: &Args) -> Result<Value, Error> {
    let (program, rest) = args.command.split_first().ok_or("stdio: COMMAND missing")?;
    let mut child = tokio::process::Command::new(program)
        .args(rest)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()?;
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    let mut lines = BufReader::new(child.stdout.take().ok_or("no stdout")?).lines();
    let mut line_buf = Vec::with_capacity(256);
    // Reads lines until the response to `id` (server notifications and requests are skipped).
    async fn answer(
        lines: &mut tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
        id: u64,
    ) -> Result<Value, Error> {
        loop {
            let line = lines.next_line().await?.ok_or("server closed stdout")?;
            let v: Value = match serde_json::from_str(&line) {
                Ok(v) => v,
                Err(_) => continue,
            };
            if v.get("id").and_then(Value::as_u64) == Some(id)
                && (v.get("result").is_some() || v.get("error").is_some())
            {
                return Ok(v);
            }
        }
    }
    send(&mut stdin, &mut line_buf, &initialize(0)).await?;
    let init = tokio::time::timeout(Duration::from_secs(30), answer(&mut lines, 0)).await??;
    if init.get("result").is_none() {
        return Err(format!("initialize failed: {init}").into());
    }
    send(
        &mut stdin,
        &mut line_buf,
        &json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }),
    )
    .await?;
    let mut errors = 0u64;
    let mut first_error = None;
    let mut lat = Vec::with_capacity(args.calls);
    let t0 = Instant::now();
    for id in 1..=args.calls as u64 {
        let t = Instant::now();
        send(&mut stdin, &mut line_buf, &echo_call(id)).await?;
        let v = answer(&mut lines, id).await?;
        lat.push(t.elapsed().as_micros() as u64);
        if !is_ok_result(&v) {
            errors += 1;
            first_error.get_or_insert_with(|| v.to_string());
        }
    }
    let elapsed = t0.elapsed().as_secs_f64();
    drop(stdin);
    let _ = tokio::time::timeout(Duration::from_secs(5), child.wait()).await;
    let _ = child.kill().await;
    let mut out = serde_json::Map::new();
    out.insert("calls".into(), json!(lat.len()));
    out.insert("errors".into(), json!(errors));
    out.insert("first_error".into(), json!(first_error));
    out.insert("elapsed_s".into(), json!(elapsed));
    out.insert("calls_per_s".into(), json!(lat.len() as f64 / elapsed));
    summarize("", lat, args.samples, &mut out);
    Ok(Value::Object(out))
}

/// Writes one message as a line.
async fn send(stdin: &mut tokio::process::ChildStdin, buf: &mut Vec<u8>, v: &Value) -> Result<(), Error> {
    buf.clear();
    serde_json::to_writer(&mut *buf, v)?;
    buf.push(b'\n');
    stdin.write_all(buf).await?;
    stdin.flush().await?;
    Ok(())
}

/// Reads SSE events from a streaming body until one is an `ApprovalRequested` event.
struct EventStream<S> {
    body: S,
    buf: Vec<u8>,
}

impl<S> EventStream<S>
where
    S: futures::Stream<Item = reqwest::Result<bytes::Bytes>> + Unpin,
{
    /// The next event's data as JSON (comments and other fields skipped).
    async fn next_event(&mut self) -> Result<Value, Error> {
        loop {
            if let Some(end) = find_blank_line(&self.buf) {
                let frame: Vec<u8> = self.buf.drain(..end.1).collect();
                let text = String::from_utf8_lossy(&frame[..end.0]).into_owned();
                let data: Vec<&str> = text
                    .split('\n')
                    .filter_map(|l| l.strip_prefix("data:"))
                    .map(|d| d.strip_prefix(' ').unwrap_or(d))
                    .collect();
                if !data.is_empty() {
                    return Ok(serde_json::from_str(&data.join("\n"))?);
                }
                continue;
            }
            let chunk = self.body.next().await.ok_or("event stream ended")??;
            self.buf.extend_from_slice(&chunk);
        }
    }
}

/// (end of the event, start of the next) for the first `\n\n`.
fn find_blank_line(buf: &[u8]) -> Option<(usize, usize)> {
    buf.windows(2).position(|w| w == b"\n\n").map(|p| (p, p + 2))
}

async fn approval_mode(args: &Args) -> Result<Value, Error> {
    let base = args
        .positional
        .get(1)
        .ok_or("approval: URL missing")?
        .trim_end_matches('/')
        .to_owned();
    let token = args.token.clone().ok_or("approval: --token missing")?;
    let client = client();
    let events = reqwest::Client::builder().no_proxy().build()?;
    let resp = events
        .get(format!("{base}/control/events"))
        .bearer_auth(&token)
        .header("accept", "text/event-stream")
        .send()
        .await?;
    if !resp.status().is_success() {
        return Err(format!("control/events: HTTP {}", resp.status()).into());
    }
    let mut stream = EventStream {
        body: resp.bytes_stream(),
        buf: Vec::new(),
    };
    // The first frame is the `: subscribed` comment: wait for it, then we count as an approver.
    while !stream.buf.starts_with(b": subscribed") {
        let chunk = stream.body.next().await.ok_or("event stream ended")??;
        stream.buf.extend_from_slice(&chunk);
    }
    if let Some(end) = find_blank_line(&stream.buf) {
        stream.buf.drain(..end.1);
    }
    let session = Arc::new(
        HttpSession::open(
            client.clone(),
            &format!("{base}/mcp/{}", args.server),
            Some(token.clone()),
        )
        .await?,
    );
    let mut seen = Vec::with_capacity(args.calls);
    let mut answered = Vec::with_capacity(args.calls);
    let mut errors = 0u64;
    let mut first_error = None;
    for i in 0..args.calls as u64 {
        let id = 1_000_000 + i;
        let body = json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call",
                           "params": { "name": args.tool, "arguments": { "a": i, "b": 2 } } });
        let t0 = Instant::now();
        let s = session.clone();
        let call = tokio::spawn(async move { s.call(&body, id).await });
        let approval_id = loop {
            let ev = tokio::time::timeout(Duration::from_secs(10), stream.next_event()).await??;
            if ev.get("type").and_then(Value::as_str) == Some("ApprovalRequested") {
                break ev
                    .pointer("/approval/id")
                    .and_then(Value::as_str)
                    .ok_or("ApprovalRequested without id")?
                    .to_owned();
            }
        };
        seen.push(t0.elapsed().as_micros() as u64);
        let t1 = Instant::now();
        let resp = client
            .post(format!("{base}/control/approvals/{approval_id}/approve"))
            .bearer_auth(&token)
            .header("content-type", "application/json")
            .body("{}")
            .send()
            .await?;
        let status = resp.status();
        let _ = resp.bytes().await;
        if !status.is_success() {
            return Err(format!("approve: HTTP {status}").into());
        }
        let result = call.await?;
        answered.push(t1.elapsed().as_micros() as u64);
        match result {
            Ok(v) if is_ok_result(&v) => {}
            Ok(v) => {
                errors += 1;
                first_error.get_or_insert_with(|| v.to_string());
            }
            Err(e) => {
                errors += 1;
                first_error.get_or_insert_with(|| e.to_string());
            }
        }
    }
    session.close().await;
    let mut out = serde_json::Map::new();
    out.insert("calls".into(), json!(seen.len()));
    out.insert("errors".into(), json!(errors));
    out.insert("first_error".into(), json!(first_error));
    summarize("", seen, args.samples, &mut out);
    summarize("answer_", answered, args.samples, &mut out);
    Ok(Value::Object(out))
}
