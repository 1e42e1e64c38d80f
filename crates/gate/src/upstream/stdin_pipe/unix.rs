//! The Unix pipe: written by the sender when it has room, else by the writer task ([`super`]).

use std::collections::VecDeque;
use std::io::{ErrorKind, IoSlice};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use bytes::Bytes;
use tokio::net::unix::pipe;
use tokio::sync::Notify;

use super::{frame, Refused};
use crate::queue::Budget;

pub(in crate::upstream) struct StdinPipe {
    state: Mutex<State>,
    /// Wakes the writer task: a backlog to drain, or stdin to close.
    wake: Notify,
    budget: Budget,
}

struct State {
    /// `None` once closed: the descriptor is dropped with the last clone (the writer's).
    pipe: Option<Arc<pipe::Sender>>,
    /// What is still to write, in order: each message as one or two parts (its bytes, its
    /// newline); a part written in part is replaced by its rest.
    backlog: VecDeque<Bytes>,
    /// Messages with something in the backlog (for the budget's count).
    held_messages: usize,
    held_bytes: usize,
    /// Close once the backlog is written ([`StdinPipe::close`]).
    closing: bool,
}

impl StdinPipe {
    /// Takes the child's stdin; the returned future is its writer task (run it on the runtime).
    pub(in crate::upstream) fn for_child(
        stdin: tokio::process::ChildStdin,
        budget: Budget,
    ) -> std::io::Result<(Arc<Self>, impl std::future::Future<Output = ()> + Send + 'static)> {
        Ok(Self::new(pipe::Sender::from_owned_fd(stdin.into_owned_fd()?)?, budget))
    }

    /// The writing end of a pipe, and its writer task.
    fn new(pipe: pipe::Sender, budget: Budget) -> (Arc<Self>, impl std::future::Future<Output = ()> + Send + 'static) {
        let this = Arc::new(Self {
            state: Mutex::new(State {
                pipe: Some(Arc::new(pipe)),
                backlog: VecDeque::new(),
                held_messages: 0,
                held_bytes: 0,
                closing: false,
            }),
            wake: Notify::new(),
            budget,
        });
        let writer = this.clone().drain();
        (this, writer)
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // Every critical section leaves the state whole (a push, a pop, a counter).
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Sends `message` as a line: written now when the pipe takes it and nothing waits before
    /// it, else queued behind what waits.
    pub(in crate::upstream) fn send(&self, message: &Bytes) -> Result<(), Refused> {
        let parts = frame(message);
        let total = parts[0].len() + parts[1].len();
        let mut state = self.lock();
        if state.closing {
            return Err(Refused::Closed);
        }
        let Some(pipe) = state.pipe.clone() else {
            return Err(Refused::Closed);
        };
        let mut written = 0;
        if state.backlog.is_empty() {
            match write_parts(&pipe, &parts) {
                Ok(n) if n == total => return Ok(()),
                Ok(n) => written = n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                Err(_) => {
                    state.shut();
                    drop(state);
                    // The writer task ends too.
                    self.wake.notify_one();
                    return Err(Refused::Closed);
                }
            }
        }
        let rest = total - written;
        // A message already partly written must go on whole, whatever the budget says.
        let over = state.held_messages >= self.budget.messages || state.held_bytes + rest > self.budget.bytes;
        if written == 0 && over {
            return Err(Refused::Full);
        }
        let mut skip = written;
        for part in parts {
            let taken = skip.min(part.len());
            skip -= taken;
            if taken < part.len() {
                state.backlog.push_back(part.slice(taken..));
            }
        }
        state.held_messages += 1;
        state.held_bytes += rest;
        drop(state);
        self.wake.notify_one();
        Ok(())
    }

    /// Closes stdin once everything sent before is written (the server then sees end of input).
    pub(in crate::upstream) fn close(&self) {
        self.lock().closing = true;
        self.wake.notify_one();
    }

    /// The writer task: drains the backlog as the pipe takes it; ends when stdin closes.
    async fn drain(self: Arc<Self>) {
        loop {
            let wake = self.wake.notified();
            let pipe = {
                let mut state = self.lock();
                match (&state.pipe, state.backlog.is_empty()) {
                    (None, _) => return,
                    (Some(_), true) if state.closing => {
                        state.shut();
                        return;
                    }
                    (Some(_), true) => None,
                    (Some(pipe), false) => Some(pipe.clone()),
                }
            };
            let Some(pipe) = pipe else {
                wake.await;
                continue;
            };
            if pipe.writable().await.is_err() || !self.write_backlog(&pipe) {
                self.lock().shut();
                return;
            }
        }
    }

    /// Writes what the pipe takes now; `false` when the pipe failed.
    fn write_backlog(&self, pipe: &pipe::Sender) -> bool {
        let mut state = self.lock();
        while let Some(front) = state.backlog.front().cloned() {
            match pipe.try_write(&front) {
                Ok(n) => {
                    state.held_bytes -= n;
                    if n < front.len() {
                        state.backlog[0] = front.slice(n..);
                    } else {
                        state.backlog.pop_front();
                        // A message's last part is its newline (or its framed copy's end).
                        if front.last() == Some(&b'\n') {
                            state.held_messages = state.held_messages.saturating_sub(1);
                        }
                    }
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => return true,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => return false,
            }
        }
        true
    }
}

impl State {
    /// Closed for good: nothing more is written, the descriptor goes with the last clone.
    fn shut(&mut self) {
        self.pipe = None;
        self.backlog.clear();
        self.held_bytes = 0;
        self.held_messages = 0;
        self.closing = true;
    }
}
/// One non-blocking write of both parts; how many bytes went.
fn write_parts(pipe: &pipe::Sender, parts: &[Bytes; 2]) -> std::io::Result<usize> {
    loop {
        match pipe.try_write_vectored(&[IoSlice::new(&parts[0]), IoSlice::new(&parts[1])]) {
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            other => return other,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use tokio::io::AsyncReadExt;

    use super::*;

    const WITHIN: Duration = Duration::from_secs(10);

    fn b(bytes: &'static [u8]) -> Bytes {
        Bytes::from_static(bytes)
    }

    fn budget(bytes: usize, messages: usize) -> Budget {
        Budget { bytes, messages }
    }

    /// Reads what the pipe carries until the writer closes it.
    async fn read_all(mut rx: pipe::Receiver) -> Vec<u8> {
        let mut out = Vec::new();
        tokio::time::timeout(WITHIN, rx.read_to_end(&mut out))
            .await
            .expect("the pipe closed within the bound")
            .expect("read");
        out
    }

    #[tokio::test]
    async fn lines_written_at_once_arrive_whole_and_in_order_then_close_ends_the_input() {
        let (tx, rx) = pipe::pipe().unwrap();
        let (stdin, writer) = StdinPipe::new(tx, budget(1 << 20, 16));
        let writer = tokio::spawn(writer);
        stdin.send(&b(b"{\"id\":1}")).unwrap();
        stdin.send(&b(b"{\"id\":2}")).unwrap();
        stdin.close();
        assert_eq!(
            stdin.send(&b(b"late")),
            Err(Refused::Closed),
            "nothing is sent after close"
        );
        assert_eq!(read_all(rx).await, b"{\"id\":1}\n{\"id\":2}\n");
        tokio::time::timeout(WITHIN, writer).await.unwrap().unwrap();
    }

    /// A line larger than the pipe's buffer is written in part at once, the rest by the writer
    /// task; lines sent meanwhile wait behind it, and `close` waits for all of them.
    #[tokio::test]
    async fn what_the_pipe_does_not_take_is_written_later_in_the_order_sent() {
        let (tx, rx) = pipe::pipe().unwrap();
        let (stdin, writer) = StdinPipe::new(tx, budget(8 << 20, 16));
        tokio::spawn(writer);
        let big = Bytes::from(vec![b'x'; 1 << 20]); // far over a pipe's 64 KiB
        stdin.send(&big).unwrap();
        assert!(stdin.lock().held_bytes > 0, "the pipe did not take 1 MiB at once");
        stdin.send(&b(b"after")).unwrap();
        stdin.close();
        let got = read_all(rx).await;
        let mut want = big.to_vec();
        want.push(b'\n');
        want.extend_from_slice(b"after\n");
        assert!(
            got == want,
            "the large line came whole, then the next one ({} bytes read)",
            got.len()
        );
    }

    /// Regression guard for the budget the child's queue had: a backlog over it refuses the
    /// message alone, and the pipe goes on.
    #[tokio::test]
    async fn a_line_over_the_backlog_budget_is_refused_alone() {
        let (tx, rx) = pipe::pipe().unwrap();
        let (stdin, writer) = StdinPipe::new(tx, budget(256 << 10, 16));
        let big = Bytes::from(vec![b'y'; 200 << 10]);
        stdin.send(&big).unwrap(); // partly written, the rest in the backlog
        assert_eq!(
            stdin.send(&big),
            Err(Refused::Full),
            "a second one does not fit the backlog"
        );
        tokio::spawn(writer);
        stdin.send(&b(b"small")).unwrap();
        stdin.close();
        let got = read_all(rx).await;
        assert_eq!(
            got.len(),
            big.len() + 1 + b"small\n".len(),
            "the first line and the small one, nothing of the refused"
        );
        assert!(got.ends_with(b"y\nsmall\n"));
    }

    /// Pretty-printed JSON (an HTTP client's body) must not end the line early: its raw newlines
    /// and carriage returns become spaces, so the server reads one message, the one the gate read.
    #[tokio::test]
    async fn raw_newlines_inside_a_message_cannot_smuggle_a_second_line() {
        let (tx, rx) = pipe::pipe().unwrap();
        let (stdin, writer) = StdinPipe::new(tx, budget(1 << 20, 16));
        tokio::spawn(writer);
        stdin
            .send(&b(b"{\"id\":1,\r\n\"method\":\"ping\"}\n{\"id\":2}"))
            .unwrap();
        stdin.close();
        assert_eq!(read_all(rx).await, b"{\"id\":1,  \"method\":\"ping\"} {\"id\":2}\n");
    }

    /// The server went away: the write fails (EPIPE) — at once, or in the writer task when the
    /// line had to wait (a pipe just opened is not known to be writable yet) — the writer task
    /// ends, and everything later is refused.
    #[tokio::test]
    async fn a_closed_reader_ends_the_writer_and_refuses_what_comes_next() {
        let (tx, rx) = pipe::pipe().unwrap();
        let (stdin, writer) = StdinPipe::new(tx, budget(1 << 20, 16));
        let writer = tokio::spawn(writer);
        drop(rx);
        let _ = stdin.send(&b(b"{}"));
        tokio::time::timeout(WITHIN, writer)
            .await
            .expect("the writer task ended with the pipe")
            .unwrap();
        assert_eq!(stdin.send(&b(b"{}")), Err(Refused::Closed), "nothing more is sent");
    }
}
