//! Keys for the watch prompt: raw stdin bytes → [`Key`]s → the [`Choice`] they stand for.
//!
//! Escape sequences (arrow keys, function keys, Alt+letter) are swallowed whole: an arrow key
//! sends `ESC [ A`, and reading that `A` as "always allow" would grant a permanent rule by accident.

/// One key press, decoded from the bytes a terminal (or a pipe) sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    Char(char),
    /// `\r` or `\n`.
    Enter,
    /// DEL (0x7f) or BS (0x08).
    Backspace,
    /// A lone ESC.
    Escape,
    /// Ctrl-C (0x03) or Ctrl-D (0x04); in raw mode these arrive as bytes, not signals.
    Interrupt,
    /// An escape sequence, another control byte, or invalid UTF-8: never a decision.
    Other,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Ground,
    /// After ESC: `[` or `O` starts a sequence; anything else is Alt+key.
    Escape,
    /// Inside `ESC [` …: parameter bytes until a final byte 0x40..=0x7e.
    Sequence,
    /// Inside a UTF-8 character: bytes still missing; `swallow` for the tail of an Alt+character.
    Utf8 {
        missing: usize,
        swallow: bool,
    },
}

#[derive(Debug)]
pub struct KeyDecoder {
    state: State,
    utf8: Vec<u8>,
    /// A terminal sends a whole escape sequence in one read, so an ESC that ends a read is the
    /// Escape key itself. Bytes from a pipe come one at a time, so there it cannot be told apart.
    lone_escape_at_end: bool,
}

impl KeyDecoder {
    pub fn new(lone_escape_at_end: bool) -> Self {
        Self {
            state: State::Ground,
            utf8: Vec::new(),
            lone_escape_at_end,
        }
    }

    /// Decodes the bytes of one read.
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<Key> {
        let mut keys = Vec::new();
        for &byte in bytes {
            if let Some(key) = self.byte(byte) {
                keys.push(key);
            }
        }
        if self.lone_escape_at_end && self.state == State::Escape {
            self.state = State::Ground;
            keys.push(Key::Escape);
        }
        keys
    }

    fn byte(&mut self, byte: u8) -> Option<Key> {
        match self.state {
            State::Ground => self.ground(byte),
            State::Escape => match byte {
                b'[' | b'O' => {
                    self.state = State::Sequence;
                    None
                }
                _ => {
                    // Alt+key: swallowed, with the rest of a multi-byte character.
                    self.state = match utf8_len(byte) {
                        len @ 2.. => State::Utf8 {
                            missing: len - 1,
                            swallow: true,
                        },
                        _ => State::Ground,
                    };
                    Some(Key::Other)
                }
            },
            State::Sequence => {
                if (0x40..=0x7e).contains(&byte) {
                    self.state = State::Ground;
                    Some(Key::Other)
                } else if (0x20..=0x3f).contains(&byte) {
                    None
                } else {
                    // Not a sequence after all; start over with this byte.
                    self.state = State::Ground;
                    self.ground(byte).or(Some(Key::Other))
                }
            }
            State::Utf8 { missing, swallow } => {
                if byte & 0xc0 != 0x80 {
                    // A truncated character: drop it and read this byte afresh.
                    self.state = State::Ground;
                    self.utf8.clear();
                    return self.ground(byte);
                }
                self.utf8.push(byte);
                if missing > 1 {
                    self.state = State::Utf8 {
                        missing: missing - 1,
                        swallow,
                    };
                    return None;
                }
                self.state = State::Ground;
                let bytes = std::mem::take(&mut self.utf8);
                if swallow {
                    return None;
                }
                Some(
                    std::str::from_utf8(&bytes)
                        .ok()
                        .and_then(|s| s.chars().next())
                        .map_or(Key::Other, Key::Char),
                )
            }
        }
    }

    fn ground(&mut self, byte: u8) -> Option<Key> {
        match byte {
            b'\r' | b'\n' => Some(Key::Enter),
            0x7f | 0x08 => Some(Key::Backspace),
            0x03 | 0x04 => Some(Key::Interrupt),
            0x1b => {
                self.state = State::Escape;
                None
            }
            0x20..=0x7e => Some(Key::Char(char::from(byte))),
            0x00..=0x1f => Some(Key::Other),
            _ => match utf8_len(byte) {
                0 | 1 => Some(Key::Other),
                len => {
                    self.utf8.clear();
                    self.utf8.push(byte);
                    self.state = State::Utf8 {
                        missing: len - 1,
                        swallow: false,
                    };
                    None
                }
            },
        }
    }
}

/// The length of a UTF-8 sequence from its lead byte; 0 for a byte that cannot lead one.
fn utf8_len(lead: u8) -> usize {
    match lead {
        0x00..=0x7f => 1,
        0xc2..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf4 => 4,
        _ => 0,
    }
}

/// What a key asks for while a call is on screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choice {
    ApproveOnce,
    ApproveSession,
    AlwaysAllow,
    Deny,
    DenyAlways,
    /// Deny with a reason typed on a line.
    DenyWithReason,
    Quit,
    Help,
    /// Keys that never decide anything (Enter, arrows, Escape).
    Ignore,
    /// A printable key with no meaning here.
    Unknown(char),
}

impl Choice {
    pub fn of(key: Key) -> Self {
        match key {
            Key::Char('a') => Self::ApproveOnce,
            Key::Char('s') => Self::ApproveSession,
            Key::Char('A') => Self::AlwaysAllow,
            Key::Char('d') => Self::Deny,
            Key::Char('D') => Self::DenyAlways,
            Key::Char('r') => Self::DenyWithReason,
            Key::Char('q') | Key::Interrupt => Self::Quit,
            Key::Char('?' | 'h') => Self::Help,
            Key::Char(c) => Self::Unknown(c),
            Key::Enter | Key::Backspace | Key::Escape | Key::Other => Self::Ignore,
        }
    }

    /// True for the keys that settle the call on screen.
    pub fn decides(self) -> bool {
        matches!(
            self,
            Self::ApproveOnce
                | Self::ApproveSession
                | Self::AlwaysAllow
                | Self::Deny
                | Self::DenyAlways
                | Self::DenyWithReason
        )
    }
}

/// The key legend shown under every card.
pub const LEGEND: &str =
    "[a] approve once  [s] approve for this session  [A] always allow  [d] deny  [D] deny always  [r] deny with a reason  [q] quit";

#[cfg(test)]
mod tests {
    use rstest::rstest;

    use super::*;

    #[rstest]
    #[case::approve_once('a', Choice::ApproveOnce)]
    #[case::session('s', Choice::ApproveSession)]
    #[case::always('A', Choice::AlwaysAllow)]
    #[case::deny('d', Choice::Deny)]
    #[case::deny_always('D', Choice::DenyAlways)]
    #[case::reason('r', Choice::DenyWithReason)]
    #[case::quit('q', Choice::Quit)]
    #[case::help('?', Choice::Help)]
    #[case::capital_s_is_not_session('S', Choice::Unknown('S'))]
    #[case::capital_q_is_not_quit('Q', Choice::Unknown('Q'))]
    #[case::y_is_not_yes('y', Choice::Unknown('y'))]
    fn letters_map_to_choices(#[case] c: char, #[case] expected: Choice) {
        assert_eq!(Choice::of(Key::Char(c)), expected);
    }

    #[rstest]
    #[case::enter(Key::Enter, Choice::Ignore)]
    #[case::escape(Key::Escape, Choice::Ignore)]
    #[case::other(Key::Other, Choice::Ignore)]
    #[case::backspace(Key::Backspace, Choice::Ignore)]
    #[case::ctrl_c(Key::Interrupt, Choice::Quit)]
    fn control_keys_never_decide(#[case] key: Key, #[case] expected: Choice) {
        assert_eq!(Choice::of(key), expected);
        assert!(!Choice::of(key).decides(), "{key:?} must not settle a call");
    }

    #[rstest]
    #[case::plain(b"a".as_slice(), vec![Key::Char('a')])]
    #[case::piped_keys_with_newlines(b"a\ns\r\n".as_slice(), vec![Key::Char('a'), Key::Enter, Key::Char('s'), Key::Enter, Key::Enter])]
    #[case::arrow_up_is_not_always_allow(b"\x1b[A".as_slice(), vec![Key::Other])]
    #[case::ss3_arrow(b"\x1bOA".as_slice(), vec![Key::Other])]
    #[case::f5_with_parameters(b"\x1b[15~d".as_slice(), vec![Key::Other, Key::Char('d')])]
    #[case::alt_a_is_swallowed(b"\x1ba".as_slice(), vec![Key::Other])]
    #[case::lone_escape(b"\x1b".as_slice(), vec![Key::Escape])]
    #[case::ctrl_c(b"\x03".as_slice(), vec![Key::Interrupt])]
    #[case::ctrl_d(b"\x04".as_slice(), vec![Key::Interrupt])]
    #[case::delete(b"\x7f".as_slice(), vec![Key::Backspace])]
    #[case::tab_is_other(b"\t".as_slice(), vec![Key::Other])]
    #[case::utf8(b"\xc3\xa9\xe2\x82\xac".as_slice(), vec![Key::Char('é'), Key::Char('€')])]
    #[case::invalid_utf8(b"\xffa".as_slice(), vec![Key::Other, Key::Char('a')])]
    #[case::truncated_utf8(b"\xc3a".as_slice(), vec![Key::Char('a')])]
    fn terminal_bytes_decode_to_keys(#[case] bytes: &[u8], #[case] expected: Vec<Key>) {
        let mut decoder = KeyDecoder::new(true);
        assert_eq!(decoder.feed(bytes), expected);
    }

    #[test]
    fn piped_escape_sequence_split_across_reads_is_still_swallowed() {
        let mut decoder = KeyDecoder::new(false);
        let keys: Vec<Key> = b"\x1b[A".iter().flat_map(|b| decoder.feed(&[*b])).collect();
        assert_eq!(
            keys,
            vec![Key::Other],
            "an arrow key read byte by byte must not become `A`"
        );
    }

    #[test]
    fn utf8_split_across_reads_decodes() {
        let mut decoder = KeyDecoder::new(true);
        assert_eq!(decoder.feed(b"\xe2\x82"), vec![]);
        assert_eq!(decoder.feed(b"\xac"), vec![Key::Char('€')]);
    }

    #[test]
    fn alt_with_multibyte_character_is_swallowed_whole() {
        let mut decoder = KeyDecoder::new(true);
        assert_eq!(decoder.feed(b"\x1b\xc3\xa9a"), vec![Key::Other, Key::Char('a')]);
    }
}
