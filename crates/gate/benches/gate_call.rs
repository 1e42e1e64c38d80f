//! One `tools/call` through the gate as `portcullis connect` runs it (issue 31): the client's line
//! read by the strict reader, the session, `Gate::decide` with a real policy, the audit row
//! committed to a real SQLite file (the product's settings: WAL, `synchronous=NORMAL`, so a commit
//! writes the log without an fsync; checkpoints on their own thread), the forward to the server
//! and its answer back to the client's writer.
//!
//! The gateway is `local_conn::serve_stdio` on a one-thread runtime, as in `connect`, with the
//! client on an in-memory duplex. The server is this bench binary started again with
//! [`UPSTREAM_ARG`]: a child process over pipes, as a real stdio server is, that answers each line
//! at once, so the figures are about the gate and not about a server.
//!
//! Each case is timed twice: wall time (what criterion measures by default, which includes the
//! child's turn on the other core) and the CPU of this process (utime + stime from getrusage:
//! the gate's thread, the audit writer's and checkpointer's threads; not the server's).
//! `parts/*` time the gate's stages alone, without I/O.
//!
//! `cargo bench -p portcullis-gateway --bench gate_call`

use std::io::{BufRead, Write};
use std::sync::Arc;
use std::time::Duration;

use criterion::measurement::{Measurement, ValueFormatter, WallTime};
use criterion::{BenchmarkGroup, Criterion, Throughput};
use portcullis_config::config::Config;
use portcullis_gate::audit_log::AuditLog;
use portcullis_gate::gate::{Call, Digester};
use portcullis_gate::held_calls::remote::RemoteHeldCalls;
use portcullis_gate::Plane;
use portcullis_wire::canonical::ArgumentDigester;
use portcullis_wire::Message;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf};

/// Started with this argument, the binary is the echo server instead of the bench.
const UPSTREAM_ARG: &str = "--as-echo-upstream";
const SERVER: &str = "echo";
const POLICY: &str = r#"{"version":"1","default":"deny","tools":{"echo":{}}}"#;
const MODERN_META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"gate-bench","version":"1"}}"#;

fn main() {
    if std::env::args().nth(1).as_deref() == Some(UPSTREAM_ARG) {
        echo_upstream();
        return;
    }
    let mut wall = Criterion::default().configure_from_args();
    let mut cpu = Criterion::default().with_measurement(ProcessCpu).configure_from_args();
    let bench = Bench::start();
    bench.calls(&mut wall.benchmark_group("gate_call"), &WallTime);
    bench.calls(&mut cpu.benchmark_group("gate_call_cpu"), &ProcessCpu);
    bench.stop();
    parts(&mut wall.benchmark_group("gate_call_parts"), &WallTime);
    parts(&mut cpu.benchmark_group("gate_call_parts_cpu"), &ProcessCpu);
    wall.final_summary();
}

/// The gateway with its one server, and one client connection per era.
struct Bench {
    _dir: tempfile::TempDir,
    rt: tokio::runtime::Runtime,
    gateway: Arc<Plane>,
    legacy: std::cell::RefCell<Client>,
    modern: std::cell::RefCell<Client>,
}

impl Bench {
    fn start() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(dir.path().join("policies")).expect("policies dir");
        std::fs::write(dir.path().join(format!("policies/{SERVER}.json")), POLICY).expect("policy");
        let exe = std::env::current_exe().expect("own path");
        let config = json!({"listen": "127.0.0.1:0", "mcpServers": {SERVER: {"command": exe, "args": [UPSTREAM_ARG]}}});
        let config = Config::from_str(&config.to_string(), &dir.path().join("portcullis.json")).expect("config");
        // One thread, as `connect` runs (crates/cli/src/exit.rs).
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        // `connect` with no keeper running: nothing here is held, so it is never asked.
        let no_keeper = RemoteHeldCalls::new(Box::new(|| {
            Box::pin(async { Err(std::io::Error::other("no keeper in this bench")) })
        }));
        let events = portcullis_gate::event_channel();
        let gateway = rt.block_on(async {
            Plane::open(config, &dir.path().join("data"), events, Arc::new(no_keeper)).expect("plane")
        });
        let legacy = rt.block_on(Client::connect(&gateway, true));
        let modern = rt.block_on(Client::connect(&gateway, false));
        Self {
            _dir: dir,
            rt,
            gateway,
            legacy: legacy.into(),
            modern: modern.into(),
        }
    }

    fn stop(self) {
        drop(self.legacy);
        drop(self.modern);
        self.rt.block_on(self.gateway.stop());
    }

    /// Each case: a batch of calls, one after the other, each answered before the next is sent.
    fn calls<M: Measurement>(&self, g: &mut BenchmarkGroup<'_, M>, m: &M) {
        g.throughput(Throughput::Elements(1));
        g.measurement_time(Duration::from_secs(8));
        let cases: [(&str, &std::cell::RefCell<Client>, &str, bool); 3] = [
            ("legacy_allowed", &self.legacy, "echo", true),
            ("modern_allowed", &self.modern, "echo", true),
            ("legacy_denied", &self.legacy, "wipe", false),
        ];
        for (name, client, tool, allowed) in cases {
            // Checked before timing: the case does what its name says.
            let answer = self.rt.block_on(client.borrow_mut().call(tool));
            let answer: Value = serde_json::from_slice(&answer).expect("an answer");
            let refused = answer["result"]["isError"] == json!(true);
            assert_eq!(!refused, allowed, "{name}: {answer}");
            g.bench_function(name, |b| {
                b.iter_custom(|iters| {
                    let mut client = client.borrow_mut();
                    let start = m.start();
                    self.rt.block_on(async {
                        for _ in 0..iters {
                            client.call(tool).await;
                        }
                    });
                    m.end(start)
                });
            });
        }
    }
}

/// A client on the gateway's stdio protocol (`local_conn::serve_stdio`), in memory.
struct Client {
    rd: BufReader<ReadHalf<DuplexStream>>,
    wr: WriteHalf<DuplexStream>,
    modern: bool,
    next_id: u64,
    line: Vec<u8>,
}

impl Client {
    async fn connect(gateway: &Arc<Plane>, legacy: bool) -> Self {
        let (ours, theirs) = tokio::io::duplex(1 << 16);
        let (rd, wr) = tokio::io::split(theirs);
        tokio::spawn(portcullis_gate::local_conn::serve_stdio(
            gateway.clone(),
            SERVER.to_owned(),
            rd,
            wr,
        ));
        let (rd, wr) = tokio::io::split(ours);
        let mut client = Self {
            rd: BufReader::new(rd),
            wr,
            modern: !legacy,
            next_id: 1,
            line: Vec::new(),
        };
        if legacy {
            let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"gate-bench","version":"1"}}}"#;
            client.send(init.as_bytes()).await;
            client.answer().await;
            client
                .send(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
                .await;
        }
        client
    }

    async fn send(&mut self, line: &[u8]) {
        self.wr.write_all(line).await.expect("write");
        self.wr.write_all(b"\n").await.expect("write");
    }

    async fn answer(&mut self) -> Vec<u8> {
        self.line.clear();
        self.rd.read_until(b'\n', &mut self.line).await.expect("read");
        assert!(!self.line.is_empty(), "the gateway closed the connection");
        self.line.clone()
    }

    /// One `tools/call` of `tool` with small arguments; its answer line.
    async fn call(&mut self, tool: &str) -> Vec<u8> {
        let id = self.next_id;
        self.next_id += 1;
        let meta = if self.modern { MODERN_META } else { r#""_meta":{}"# };
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{{"message":"hello {id}"}},{meta}}}}}"#
        );
        self.send(line.as_bytes()).await;
        self.answer().await
    }
}

/// The gate's stages alone, in-process, no I/O: what each costs of one call.
fn parts<M: Measurement>(g: &mut BenchmarkGroup<'_, M>, m: &M) {
    let line = format!(
        r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"echo","arguments":{{"message":"hello 7"}},{MODERN_META}}}}}"#
    );
    let raw = bytes::Bytes::from(line);
    g.bench_function("strict_read", |b| {
        b.iter(|| Message::parse(raw.clone()).expect("valid"));
    });
    let msg = Message::parse(raw.clone()).expect("valid");
    let id = msg.id().cloned().expect("an id");
    let digester = Digester::from(ArgumentDigester::new([7; 32]));
    // The call read once: params, arguments parsed, their digest.
    g.bench_function("call_read", |b| {
        b.iter(|| Call::read(SERVER, &msg, &id, &digester).expect("a call"));
    });
    let (call, _) = Call::read(SERVER, &msg, &id, &digester).expect("a call");
    g.bench_function("digest", |b| b.iter(|| digester.digest(&call.arguments)));
    let policy = portcullis_policy::Policy::from_json_str(POLICY, "bench").expect("policy");
    let places = portcullis_policy::Places::default();
    let caller = portcullis_gate::gate::Caller::default();
    g.bench_function("policy_eval", |b| {
        b.iter(|| policy.evaluate_call(&call.tool, &caller.facts(&call.arguments, &places)));
    });
    let dir = tempfile::tempdir().expect("tempdir");
    let audit = AuditLog::new(portcullis_audit::AuditWriter::open(&dir.path().join("audit.db")).expect("audit"));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let row = row(&call, &digester);
    g.bench_function("audit_commit", |b| {
        b.iter_custom(|iters| {
            let start = m.start();
            rt.block_on(async {
                for _ in 0..iters {
                    audit.record(row.clone()).await.expect("committed");
                }
            });
            m.end(start)
        });
    });
}

fn row(call: &Call, digester: &Digester) -> portcullis_audit::NewDecision {
    portcullis_audit::NewDecision {
        method: portcullis_audit::Method::ToolsCall,
        time_ms: 1,
        session: "relay:0123456789abcdef".into(),
        client_name: Some("gate-bench".into()),
        client_version: Some("1".into()),
        server: call.server.clone(),
        tool: call.tool.clone(),
        arguments: call.arguments.clone(),
        arguments_text: call.arguments_text.clone(),
        arguments_digest: digester.digest(&call.arguments),
        decision: portcullis_audit::Decision::Allowed,
        decided_by: portcullis_audit::DecidedBy::Policy,
        rule: Some("tools.echo".into()),
        reason: None,
        wait_ms: None,
        request_id: Some("7".into()),
        original_arguments: None,
        extra_redact_keys: Vec::new(),
    }
}

/// The server: answers every request line at once (`initialize`, `tools/call` echoes
/// `arguments.message`, anything else an empty result); notifications are read and dropped.
fn echo_upstream() {
    let stdin = std::io::stdin().lock();
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for line in stdin.split(b'\n') {
        let Ok(line) = line else { return };
        let Ok(msg) = serde_json::from_slice::<Value>(&line) else {
            continue;
        };
        let (Some(id), Some(method)) = (msg.get("id"), msg["method"].as_str()) else {
            continue;
        };
        let result = match method {
            "initialize" => json!({"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
                "serverInfo": {"name": "echo", "version": "1"}}),
            "tools/call" => json!({"content": [{"type": "text", "text": msg["params"]["arguments"]["message"]}]}),
            _ => json!({}),
        };
        let answer = json!({"jsonrpc": "2.0", "id": id, "result": result});
        if serde_json::to_writer(&mut out, &answer).is_err() || out.write_all(b"\n").and_then(|()| out.flush()).is_err()
        {
            return;
        }
    }
}

/// CPU time of this whole process (every thread: the gate's, the audit writer's and its
/// checkpointer's), from getrusage: what a call costs the machine, not how long it waits.
struct ProcessCpu;

#[cfg(not(unix))]
fn cpu_now() -> Duration {
    // getrusage is Unix's; the bench runs on Linux, and off Unix its CPU figures read zero.
    Duration::ZERO
}

#[cfg(unix)]
fn cpu_now() -> Duration {
    let usage = nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_SELF).expect("getrusage");
    let micros = |t: nix::sys::time::TimeVal| {
        Duration::from_secs(u64::try_from(t.tv_sec()).unwrap_or(0))
            + Duration::from_micros(u64::try_from(t.tv_usec()).unwrap_or(0))
    };
    micros(usage.user_time()) + micros(usage.system_time())
}

impl Measurement for ProcessCpu {
    type Intermediate = Duration;
    type Value = Duration;

    fn start(&self) -> Duration {
        cpu_now()
    }

    fn end(&self, started: Duration) -> Duration {
        cpu_now().saturating_sub(started)
    }

    fn add(&self, a: &Duration, b: &Duration) -> Duration {
        *a + *b
    }

    fn zero(&self) -> Duration {
        Duration::ZERO
    }

    fn to_f64(&self, value: &Duration) -> f64 {
        value.as_secs_f64() * 1e9
    }

    fn formatter(&self) -> &dyn ValueFormatter {
        &CpuFormatter
    }
}

/// Nanoseconds of CPU, shown as "µs cpu" and calls per CPU-second.
struct CpuFormatter;

impl ValueFormatter for CpuFormatter {
    fn scale_values(&self, _typical: f64, values: &mut [f64]) -> &'static str {
        for v in values {
            *v /= 1e3;
        }
        "µs cpu"
    }

    fn scale_throughputs(&self, _typical: f64, throughput: &Throughput, values: &mut [f64]) -> &'static str {
        let (Throughput::Elements(n) | Throughput::Bytes(n) | Throughput::BytesDecimal(n) | Throughput::Bits(n)) =
            *throughput;
        #[allow(clippy::cast_precision_loss)] // a count of calls per sample
        let per = n as f64;
        for v in values {
            *v = per * 1e9 / *v;
        }
        "calls/cpu-s"
    }

    fn scale_for_machines(&self, _values: &mut [f64]) -> &'static str {
        "ns"
    }
}
