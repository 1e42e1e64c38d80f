//! A server's stderr, logged line by line with each line capped.
//!
//! Stderr is free-form logging, so nothing bounds a line but us: a server that writes without a
//! newline would otherwise grow one line buffer without end. The first [`MAX_STDERR_LINE`] bytes
//! of a line are kept, the rest is read and discarded (only counted), and the line is logged as
//! cut. Reading goes on at the pipe's pace either way, so the server never blocks on a full pipe.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncRead, AsyncReadExt};

/// The longest stderr line kept: room for any real log line or stack frame.
pub(super) const MAX_STDERR_LINE: usize = 8 * 1024;
/// Stderr lines kept for status views: enough for the last error and the head of its trace,
/// few enough to show in a status panel (at most 160 KiB a server, with [`MAX_STDERR_LINE`]).
pub(super) const STDERR_TAIL: usize = 20;

/// One line of stderr, perhaps cut.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct StderrLine {
    pub text: String,
    /// Bytes of the line dropped beyond [`MAX_STDERR_LINE`].
    pub cut: u64,
}

/// Splits a byte stream into lines of at most `max` kept bytes.
pub(super) struct LineCapper {
    max: usize,
    line: Vec<u8>,
    cut: u64,
}

impl LineCapper {
    pub(super) fn new(max: usize) -> Self {
        Self {
            max,
            line: Vec::new(),
            cut: 0,
        }
    }

    /// Feeds `bytes`; calls `emit` for every line they finish.
    pub(super) fn feed(&mut self, mut bytes: &[u8], mut emit: impl FnMut(StderrLine)) {
        while !bytes.is_empty() {
            let end = bytes.iter().position(|&b| b == b'\n');
            let part = &bytes[..end.unwrap_or(bytes.len())];
            self.keep(part);
            match end {
                Some(i) => {
                    emit(self.take());
                    bytes = &bytes[i + 1..];
                }
                None => break,
            }
        }
    }

    /// What is left when the stream ends, if anything.
    pub(super) fn finish(&mut self) -> Option<StderrLine> {
        (!self.line.is_empty() || self.cut > 0).then(|| self.take())
    }

    fn keep(&mut self, part: &[u8]) {
        let room = self.max - self.line.len();
        let kept = part.len().min(room);
        self.line.extend_from_slice(&part[..kept]);
        self.cut += (part.len() - kept) as u64;
    }

    fn take(&mut self) -> StderrLine {
        if self.line.last() == Some(&b'\r') {
            self.line.pop();
        }
        let text = String::from_utf8_lossy(&self.line).into_owned();
        self.line.clear();
        StderrLine {
            text,
            cut: std::mem::take(&mut self.cut),
        }
    }
}

pub(super) async fn log_stderr(server: String, mut stderr: impl AsyncRead + Unpin, tail: Arc<Mutex<VecDeque<String>>>) {
    let mut capper = LineCapper::new(MAX_STDERR_LINE);
    let mut buf = vec![0u8; 16 * 1024];
    let emit = |line: StderrLine| record(&server, line, &tail);
    loop {
        match stderr.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => capper.feed(&buf[..n], emit),
        }
    }
    if let Some(line) = capper.finish() {
        emit(line);
    }
}

fn record(server: &str, line: StderrLine, tail: &Mutex<VecDeque<String>>) {
    if line.cut > 0 {
        tracing::info!(target: "portcullis::upstream::stderr", server, cut_bytes = line.cut,
            "{} [line cut: {} more bytes dropped]", line.text, line.cut);
    } else {
        tracing::info!(target: "portcullis::upstream::stderr", server, "{}", line.text);
    }
    if let Ok(mut tail) = tail.lock() {
        if tail.len() == STDERR_TAIL {
            tail.pop_front();
        }
        tail.push_back(line.text);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(max: usize, chunks: &[&[u8]]) -> Vec<StderrLine> {
        let mut capper = LineCapper::new(max);
        let mut out = Vec::new();
        for chunk in chunks {
            capper.feed(chunk, |l| out.push(l));
        }
        out.extend(capper.finish());
        out
    }

    #[test]
    fn short_lines_pass_whole_across_chunks() {
        let got = lines(8, &[b"ab", b"c\r\nde\n", b"f"]);
        let texts: Vec<_> = got.iter().map(|l| (l.text.as_str(), l.cut)).collect();
        assert_eq!(texts, [("abc", 0), ("de", 0), ("f", 0)]);
    }

    #[test]
    fn a_long_line_is_cut_and_the_rest_counted() {
        let big = vec![b'x'; 10_000];
        let got = lines(8, &[&big, &big, b"yz\nnext\n"]);
        assert_eq!(got[0].text, "xxxxxxxx");
        assert_eq!(got[0].cut, 20_002 - 8);
        assert_eq!(
            got[1],
            StderrLine {
                text: "next".into(),
                cut: 0
            }
        );
    }

    #[tokio::test]
    async fn megabytes_without_a_newline_keep_one_capped_line() {
        let (mut writer, reader) = tokio::io::duplex(64 * 1024);
        let tail = Arc::new(Mutex::new(VecDeque::new()));
        let task = tokio::spawn(log_stderr("s".into(), reader, tail.clone()));
        let chunk = vec![b'z'; 1024 * 1024];
        for _ in 0..8 {
            tokio::io::AsyncWriteExt::write_all(&mut writer, &chunk).await.unwrap();
        }
        tokio::io::AsyncWriteExt::write_all(&mut writer, b"\nok\n")
            .await
            .unwrap();
        drop(writer);
        tokio::time::timeout(std::time::Duration::from_secs(10), task)
            .await
            .unwrap()
            .unwrap();
        let tail: Vec<_> = tail.lock().unwrap().iter().cloned().collect();
        assert_eq!(tail.len(), 2);
        assert_eq!(tail[0].len(), MAX_STDERR_LINE);
        assert_eq!(tail[1], "ok");
    }
}
