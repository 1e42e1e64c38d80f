//! The terminal side of `approvals watch`: keys from stdin, text to stdout, and the signals that
//! end it.
//!
//! On a TTY, stdin goes into raw input mode (no line buffering, no echo, Ctrl-C as a byte) for as
//! long as a [`RawMode`] lives; dropping it restores the saved settings, also when unwinding.
//! Output processing stays on, so `\n` still starts a new line. From a pipe, bytes are read one at a
//! time so tests can feed keys.

use std::io::{self, IsTerminal, Read, Write};

use tokio::sync::mpsc;

use super::keys::{Key, KeyDecoder};

/// Keys as they are typed; the channel closes when stdin ends.
pub type KeyReceiver = mpsc::UnboundedReceiver<Vec<Key>>;

/// Reads stdin on its own thread (a blocking read cannot be cancelled, and a thread outside the
/// runtime does not hold up its shutdown when the command ends).
pub fn read_keys(tty: bool) -> io::Result<KeyReceiver> {
    let mut input = stdin_reader()?;
    let (tx, rx) = mpsc::unbounded_channel();
    std::thread::Builder::new()
        .name("approvals-keys".into())
        .spawn(move || {
            let mut decoder = KeyDecoder::new(tty);
            let mut buf = [0_u8; 64];
            let chunk = if tty { buf.len() } else { 1 };
            loop {
                match input.read(&mut buf[..chunk]) {
                    Ok(0) => break,
                    Ok(n) => {
                        let keys = decoder.feed(&buf[..n]);
                        if !keys.is_empty() && tx.send(keys).is_err() {
                            break;
                        }
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(_) => break,
                }
            }
        })?;
    Ok(rx)
}

/// An unbuffered reader of fd 0, so no bytes hide in a userspace buffer when type-ahead is flushed.
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

#[cfg(unix)]
pub use unix::RawMode;

#[cfg(unix)]
mod unix {
    use std::io;
    use std::os::fd::{AsFd, OwnedFd};

    use nix::sys::termios::{
        tcflush, tcgetattr, tcsetattr, FlushArg, InputFlags, LocalFlags, SetArg, SpecialCharacterIndices, Termios,
    };

    /// Raw input mode on the terminal behind stdin; the saved mode comes back on drop.
    pub struct RawMode {
        fd: OwnedFd,
        saved: Termios,
    }

    impl RawMode {
        pub fn enter() -> io::Result<Self> {
            let fd = io::stdin().as_fd().try_clone_to_owned()?;
            let saved = tcgetattr(&fd)?;
            let mut raw = saved.clone();
            // Keys one at a time, unechoed; Ctrl-C/Ctrl-Z/Ctrl-S/Ctrl-V arrive as bytes.
            raw.local_flags
                .remove(LocalFlags::ICANON | LocalFlags::ECHO | LocalFlags::ISIG | LocalFlags::IEXTEN);
            raw.input_flags.remove(InputFlags::IXON);
            raw.control_chars[SpecialCharacterIndices::VMIN as usize] = 1;
            raw.control_chars[SpecialCharacterIndices::VTIME as usize] = 0;
            // TCSAFLUSH: keys typed before the watcher started must not decide anything.
            tcsetattr(&fd, SetArg::TCSAFLUSH, &raw)?;
            Ok(Self { fd, saved })
        }

        /// Drops keys typed but not yet read, so a key meant for one card never lands on the next.
        pub fn discard_typeahead(&self) {
            let _ = tcflush(&self.fd, FlushArg::TCIFLUSH);
        }
    }

    impl Drop for RawMode {
        fn drop(&mut self) {
            let _ = tcsetattr(&self.fd, SetArg::TCSANOW, &self.saved);
        }
    }
}

/// Without termios there is no raw mode; keys then arrive a line at a time.
#[cfg(not(unix))]
pub struct RawMode;

#[cfg(not(unix))]
impl RawMode {
    pub fn enter() -> io::Result<Self> {
        Ok(Self)
    }

    pub fn discard_typeahead(&self) {}
}

/// Ends the watch on SIGINT, SIGTERM or SIGHUP (in raw mode Ctrl-C is a key, not a signal).
pub struct StopSignals {
    #[cfg(unix)]
    signals: [tokio::signal::unix::Signal; 3],
}

impl StopSignals {
    #[cfg(unix)]
    pub fn install() -> io::Result<Self> {
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
    pub fn install() -> io::Result<Self> {
        Ok(Self {})
    }

    #[cfg(unix)]
    pub async fn wait(&mut self) {
        let [interrupt, terminate, hangup] = &mut self.signals;
        tokio::select! {
            _ = interrupt.recv() => {}
            _ = terminate.recv() => {}
            _ = hangup.recv() => {}
        }
    }

    #[cfg(not(unix))]
    pub async fn wait(&mut self) {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// Where the watch writes. On a terminal (`live`) the prompt is one line redrawn in place;
/// elsewhere every line is final, so a test reading the output sees each thing once.
pub struct Screen {
    out: Box<dyn Write + Send>,
    live: bool,
    width: usize,
    prompt_visible: bool,
}

impl Screen {
    pub fn stdout(width: usize) -> Self {
        let out = io::stdout();
        let live = out.is_terminal();
        Self::new(Box::new(out), live, width)
    }

    pub fn new(out: Box<dyn Write + Send>, live: bool, width: usize) -> Self {
        Self {
            out,
            live,
            width,
            prompt_visible: false,
        }
    }

    pub fn has_prompt(&self) -> bool {
        self.prompt_visible
    }

    /// A finished line, above the prompt.
    pub fn line(&mut self, text: &str) -> io::Result<()> {
        self.clear_prompt()?;
        writeln!(self.out, "{text}")?;
        self.out.flush()
    }

    /// Shows the prompt. On a terminal it replaces the previous one (and keeps to one row, showing
    /// the end of what was typed); elsewhere it is printed only when `force`d.
    pub fn prompt(&mut self, text: &str, force: bool) -> io::Result<()> {
        if self.live {
            let chars: Vec<char> = text.chars().collect();
            let room = self.width.saturating_sub(1).max(10);
            let shown: String = if chars.len() > room {
                std::iter::once('…')
                    .chain(chars[chars.len() - (room - 1)..].iter().copied())
                    .collect()
            } else {
                text.to_owned()
            };
            write!(self.out, "\r\x1b[2K{shown}")?;
        } else if force {
            writeln!(self.out, "{}", text.trim_end())?;
        } else {
            return Ok(());
        }
        self.prompt_visible = true;
        self.out.flush()
    }

    /// Takes the prompt off the screen (terminal) so what follows starts on a clean row.
    pub fn clear_prompt(&mut self) -> io::Result<()> {
        if self.live && self.prompt_visible {
            write!(self.out, "\r\x1b[2K")?;
        }
        self.prompt_visible = false;
        Ok(())
    }
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
        let mut screen = Screen::new(Box::new(sink.clone()), false, 80);
        screen.prompt("[a] > ", true).unwrap();
        screen.prompt("[a] > ", false).unwrap();
        screen.line("approved 1 (once)").unwrap();
        assert_eq!(sink.text(), "[a] >\napproved 1 (once)\n");
    }

    #[test]
    fn terminal_prompt_is_redrawn_in_place_and_cleared_before_lines() {
        let sink = Sink::default();
        let mut screen = Screen::new(Box::new(sink.clone()), true, 80);
        screen.prompt("in 3s > ", true).unwrap();
        screen.prompt("in 2s > ", false).unwrap();
        screen.line("done").unwrap();
        assert_eq!(sink.text(), "\r\x1b[2Kin 3s > \r\x1b[2Kin 2s > \r\x1b[2Kdone\n");
    }

    #[test]
    fn terminal_prompt_keeps_to_one_row() {
        let sink = Sink::default();
        let mut screen = Screen::new(Box::new(sink.clone()), true, 20);
        screen.prompt("reason: abcdefghijklmnopqrstuvwxyz", true).unwrap();
        assert_eq!(sink.text(), "\r\x1b[2K…ijklmnopqrstuvwxyz");
    }
}
