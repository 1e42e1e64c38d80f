//! `byte_relay`: the cheapest stdio proxy there is, as the floor of what any proxy process costs
//! (`bench/connect_ab.py`, beside `bench/naive_relay.py`, a Python line relay). Not a criterion
//! bench: it starts `COMMAND ARGS...` and copies bytes from its own stdin to the child's stdin
//! and from the child's stdout to its own stdout, one blocking thread each way, no parsing, no
//! framing, no async runtime: each message costs one wake and one read and write per hop.
//!
//! ```text
//! byte_relay -- COMMAND ARGS...
//! ```
//!
//! Run bare (as `cargo bench -p portcullis-gateway` does) it prints this usage and exits 0.

use std::io::{Read, Write};
use std::process::{Command, ExitCode, Stdio};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(split) = args.iter().position(|a| a == "--") else {
        eprintln!("usage: byte_relay -- COMMAND ARGS...");
        return ExitCode::SUCCESS;
    };
    let Some((command, rest)) = args[split + 1..].split_first() else {
        eprintln!("byte_relay: no command after --");
        return ExitCode::FAILURE;
    };
    let mut child = match Command::new(command)
        .args(rest)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
    {
        Ok(child) => child,
        Err(e) => {
            eprintln!("byte_relay: cannot start {command}: {e}");
            return ExitCode::FAILURE;
        }
    };
    let (Some(mut to_child), Some(mut from_child)) = (child.stdin.take(), child.stdout.take()) else {
        eprintln!("byte_relay: the child has no pipes");
        return ExitCode::FAILURE;
    };
    // Our stdin → the child's; its end closes the child's stdin, as a client closing would.
    std::thread::spawn(move || copy(&mut std::io::stdin().lock(), &mut to_child));
    copy(&mut from_child, &mut std::io::stdout().lock());
    let _ = child.wait();
    ExitCode::SUCCESS
}

/// Passes on whatever each read returns, at once (no buffering beyond one read).
fn copy(from: &mut impl Read, to: &mut impl Write) {
    let mut buf = vec![0_u8; 64 * 1024];
    loop {
        match from.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                if to.write_all(&buf[..n]).and_then(|()| to.flush()).is_err() {
                    return;
                }
            }
        }
    }
}
