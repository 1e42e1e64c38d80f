//! The terminal side of `approvals watch`: keys from stdin, text to stdout, and the signals that
//! end it.
//!
//! On a terminal, crossterm puts stdin into raw mode (no line buffering, no echo, Ctrl-C a key)
//! for as long as a [`RawMode`] lives, and decodes its key events; dropping it restores the
//! terminal, also when unwinding. Raw mode turns output processing off too, so while it is on a
//! [`Screen`] ends its lines with `\r\n` (also into a pipe: `watch | tee` shows on that terminal).
//! From a pipe, each character is a key ([`PipedKeys`]).

use std::io::{self, IsTerminal, Read, Write};
use std::time::Duration;

use tokio::sync::mpsc;

use super::keys::{Key, PipedKeys};
use crate::text::columns;

/// Keys as they are typed; the channel closes when stdin ends.
pub(super) type KeyReceiver = mpsc::UnboundedReceiver<Key>;

/// Reads keys on their own thread (a blocking read cannot be cancelled, and a thread outside the
/// runtime does not hold up its shutdown when the command ends): a terminal's key events through
/// crossterm, or a pipe's bytes.
pub(super) fn read_keys(tty: bool) -> io::Result<KeyReceiver> {
    // Keys come at a person's typing speed and are read as they come: no bound needed.
    let (tx, rx) = mpsc::unbounded_channel();
    let thread = std::thread::Builder::new().name("approvals-keys".into());
    if tty {
        thread.spawn(move || {
            while let Ok(event) = crossterm::event::read() {
                if let Some(key) = Key::of_event(&event) {
                    if tx.send(key).is_err() {
                        break;
                    }
                }
            }
        })?;
    } else {
        let mut input = stdin_reader()?;
        thread.spawn(move || {
            let mut keys = PipedKeys::default();
            let mut buf = [0_u8; 64];
            loop {
                match input.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => {
                        if keys.feed(&buf[..n]).into_iter().any(|key| tx.send(key).is_err()) {
                            break;
                        }
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(_) => break,
                }
            }
        })?;
    }
    Ok(rx)
}

/// An unbuffered reader of fd 0, so every byte read is a key handed on at once.
#[cfg(unix)]
fn stdin_reader() -> io::Result<Box<dyn Read + Send>> {
    use std::os::fd::AsFd;
    let fd = io::stdin().as_fd().try_clone_to_owned()?;
    Ok(Box::new(std::fs::File::from(fd)))
}

#[cfg(not(unix))]
fn stdin_reader() -> io::Result<Box<dyn Read + Send>> {
    Ok(Box::new(io::stdin()))
}

/// Raw mode on the terminal behind stdin; the saved mode comes back on drop.
pub(super) struct RawMode(());

impl RawMode {
    /// Enters raw mode and drops the keys typed before: they were not meant for any card.
    pub(super) fn enter() -> io::Result<Self> {
        crossterm::terminal::enable_raw_mode()?;
        let raw = Self(());
        while crossterm::event::poll(Duration::ZERO)? {
            crossterm::event::read()?;
        }
        Ok(raw)
    }
}

impl Drop for RawMode {
    fn drop(&mut self) {
        let _ = crossterm::terminal::disable_raw_mode();
    }
}

/// The terminal's width in columns, when stdout is one.
pub(super) fn columns_of_stdout() -> Option<usize> {
    if !io::stdout().is_terminal() {
        return None;
    }
    let (columns, _rows) = crossterm::terminal::size().ok()?;
    Some(usize::from(columns)).filter(|c| *c > 0)
}

/// Ends the watch on SIGINT, SIGTERM or SIGHUP (in raw mode Ctrl-C is a key, not a signal).
pub(super) struct StopSignals {
    #[cfg(unix)]
    signals: [tokio::signal::unix::Signal; 3],
}

impl StopSignals {
    #[cfg(unix)]
    pub(super) fn install() -> io::Result<Self> {
        use tokio::signal::unix::{signal, SignalKind};
        Ok(Self {
            signals: [
                signal(SignalKind::interrupt())?,
                signal(SignalKind::terminate())?,
                signal(SignalKind::hangup())?,
            ],
        })
    }

    #[cfg(not(unix))]
    pub(super) fn install() -> io::Result<Self> {
        Ok(Self {})
    }

    #[cfg(unix)]
    pub(super) async fn wait(&mut self) {
        let [interrupt, terminate, hangup] = &mut self.signals;
        tokio::select! {
            _ = interrupt.recv() => {}
            _ = terminate.recv() => {}
            _ = hangup.recv() => {}
        }
    }

    #[cfg(not(unix))]
    pub(super) async fn wait(&mut self) {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// Where the watch writes. On a terminal (`live`) the prompt is one line redrawn in place;
/// elsewhere every line is final, so a test reading the output sees each thing once.
pub(super) struct Screen {
    out: Box<dyn Write + Send>,
    live: bool,
    /// `\r\n` while the terminal is in raw mode (no output processing), else `\n`.
    line_end: &'static str,
    width: usize,
    prompt_visible: bool,
}

impl Screen {
    pub(super) fn stdout(raw: bool, width: usize) -> Self {
        let out = io::stdout();
        let live = out.is_terminal();
        Self::new(Box::new(out), live, raw, width)
    }

    pub(super) fn new(out: Box<dyn Write + Send>, live: bool, raw: bool, width: usize) -> Self {
        Self {
            out,
            live,
            line_end: if raw { "\r\n" } else { "\n" },
            width,
            prompt_visible: false,
        }
    }

    pub(super) fn has_prompt(&self) -> bool {
        self.prompt_visible
    }

    /// A finished line, above the prompt.
    pub(super) fn line(&mut self, text: &str) -> io::Result<()> {
        self.clear_prompt()?;
        let end = self.line_end;
        write!(self.out, "{}{end}", text.replace('\n', end))?;
        self.out.flush()
    }

    /// Shows the prompt. On a terminal it replaces the previous one (and keeps to one row, showing
    /// the end of what was typed); elsewhere it is printed only when `force`d.
    pub(super) fn prompt(&mut self, text: &str, force: bool) -> io::Result<()> {
        if self.live {
            let room = self.width.saturating_sub(1).max(10);
            write!(self.out, "\r\x1b[2K{}", tail_within(text, room))?;
        } else if force {
            write!(self.out, "{}{}", text.trim_end(), self.line_end)?;
        } else {
            return Ok(());
        }
        self.prompt_visible = true;
        self.out.flush()
    }

    /// Takes the prompt off the screen (terminal) so what follows starts on a clean row.
    pub(super) fn clear_prompt(&mut self) -> io::Result<()> {
        if self.live && self.prompt_visible {
            write!(self.out, "\r\x1b[2K")?;
        }
        self.prompt_visible = false;
        Ok(())
    }
}

/// `text`, or `…` and as much of its end as fits in `room` columns.
fn tail_within(text: &str, room: usize) -> String {
    if columns(text) <= room {
        return text.to_owned();
    }
    let mut used = 1; // the `…`
    let mut tail: Vec<char> = text
        .chars()
        .rev()
        .take_while(|c| {
            used += columns(c.encode_utf8(&mut [0; 4]));
            used <= room
        })
        .collect();
    tail.push('…');
    tail.into_iter().rev().collect()
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;

    #[derive(Clone, Default)]
    struct Sink(Arc<Mutex<Vec<u8>>>);

    impl Write for Sink {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    impl Sink {
        fn text(&self) -> String {
            String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
        }
    }

    #[test]
    fn piped_output_prints_each_prompt_once_and_no_escapes() {
        let sink = Sink::default();
        let mut screen = Screen::new(Box::new(sink.clone()), false, false, 80);
        screen.prompt("[a] > ", true).unwrap();
        screen.prompt("[a] > ", false).unwrap();
        screen.line("approved 1 (once)").unwrap();
        assert_eq!(sink.text(), "[a] >\napproved 1 (once)\n");
    }

    #[test]
    fn terminal_prompt_is_redrawn_in_place_and_cleared_before_lines() {
        let sink = Sink::default();
        let mut screen = Screen::new(Box::new(sink.clone()), true, true, 80);
        screen.prompt("in 3s > ", true).unwrap();
        screen.prompt("in 2s > ", false).unwrap();
        screen.line("done").unwrap();
        assert_eq!(sink.text(), "\r\x1b[2Kin 3s > \r\x1b[2Kin 2s > \r\x1b[2Kdone\r\n");
    }

    #[test]
    fn terminal_prompt_keeps_to_one_row() {
        let sink = Sink::default();
        let mut screen = Screen::new(Box::new(sink.clone()), true, true, 20);
        screen.prompt("reason: abcdefghijklmnopqrstuvwxyz", true).unwrap();
        assert_eq!(sink.text(), "\r\x1b[2K…ijklmnopqrstuvwxyz");
    }

    #[test]
    fn lines_return_the_carriage_in_raw_mode_as_the_terminal_no_longer_does() {
        for live in [true, false] {
            let sink = Sink::default();
            let mut screen = Screen::new(Box::new(sink.clone()), live, true, 80);
            screen.line("card\n  server fs").unwrap();
            assert_eq!(sink.text(), "card\r\n  server fs\r\n", "live: {live}");
        }
        let sink = Sink::default();
        let mut screen = Screen::new(Box::new(sink.clone()), true, false, 80);
        screen.line("card\n  server fs").unwrap();
        assert_eq!(
            sink.text(),
            "card\n  server fs\n",
            "without raw mode the terminal returns the carriage"
        );
    }

    #[test]
    fn a_long_prompt_keeps_its_end_within_the_columns() {
        assert_eq!(tail_within("short", 10), "short");
        assert_eq!(tail_within("reason: 日本語テキスト", 10), "…テキスト");
        assert!(columns(&tail_within("reason: 日本語テキスト", 10)) <= 10);
    }
}
