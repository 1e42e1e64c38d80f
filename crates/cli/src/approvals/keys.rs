//! Keys for the watch prompt: a terminal's key events (decoded by crossterm) or a pipe's
//! characters → [`Key`]s → the [`Choice`] they stand for.
//!
//! Arrow keys, function keys and Alt+letter never become letters: an arrow key sends `ESC [ A`,
//! and reading that `A` as "always allow" would grant a permanent rule by accident. crossterm
//! reads such a sequence as one key; from a pipe, an escape drops the rest of its line.

use crossterm::event::{Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

/// One key press.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Key {
    Char(char),
    Enter,
    Backspace,
    /// A lone Escape key.
    Escape,
    /// Ctrl-C or Ctrl-D; in raw mode these arrive as keys, not signals.
    Interrupt,
    /// An arrow, a function key, a key with Ctrl or Alt, another control: never a decision.
    Other,
}

impl Key {
    /// The key a terminal event stands for; `None` for events that are not key presses.
    pub(super) fn of_event(event: &Event) -> Option<Self> {
        match event {
            Event::Key(key) if key.kind == KeyEventKind::Press => Some(Self::of_key(key)),
            _ => None,
        }
    }

    fn of_key(key: &KeyEvent) -> Self {
        let steered = key.modifiers.intersects(!KeyModifiers::SHIFT);
        let control = key.modifiers == KeyModifiers::CONTROL;
        match key.code {
            KeyCode::Char('c' | 'd') if control => Self::Interrupt,
            // Raw BS (0x08) arrives as Ctrl-H.
            KeyCode::Char('h') if control => Self::Backspace,
            KeyCode::Char(c) if !steered && !c.is_control() => Self::Char(c),
            KeyCode::Enter if !steered => Self::Enter,
            KeyCode::Backspace if !steered => Self::Backspace,
            KeyCode::Esc if !steered => Self::Escape,
            _ => Self::Other,
        }
    }
}

/// Keys from a pipe (a script, a test, or a line-mode terminal behind `cat`): one per character.
/// There is no terminal to tell an Escape key from the start of a sequence, so an escape and the
/// rest of its line are dropped.
#[derive(Debug, Default)]
pub(super) struct PipedKeys {
    /// The start of a character split across reads.
    partial: Vec<u8>,
    in_escape: bool,
}

impl PipedKeys {
    /// The keys in the bytes of one read.
    pub(super) fn feed(&mut self, bytes: &[u8]) -> Vec<Key> {
        let mut rest = std::mem::take(&mut self.partial);
        rest.extend_from_slice(bytes);
        let mut keys = Vec::new();
        let mut at = 0;
        loop {
            let e = match std::str::from_utf8(&rest[at..]) {
                Ok(text) => {
                    self.keys_of(text, &mut keys);
                    return keys;
                }
                Err(e) => e,
            };
            let valid = at + e.valid_up_to();
            self.keys_of(std::str::from_utf8(&rest[at..valid]).unwrap_or_default(), &mut keys);
            let Some(bad) = e.error_len() else {
                rest[valid..].clone_into(&mut self.partial); // completed by the next read
                return keys;
            };
            keys.push(Key::Other);
            at = valid + bad;
        }
    }

    fn keys_of(&mut self, text: &str, keys: &mut Vec<Key>) {
        for c in text.chars() {
            if self.in_escape {
                self.in_escape = !matches!(c, '\r' | '\n');
                continue;
            }
            keys.push(match c {
                '\r' | '\n' => Key::Enter,
                '\u{7f}' | '\u{8}' => Key::Backspace,
                '\u{3}' | '\u{4}' => Key::Interrupt,
                '\u{1b}' => {
                    self.in_escape = true;
                    continue;
                }
                c if c.is_control() => Key::Other,
                c => Key::Char(c),
            });
        }
    }
}

/// What a key asks for while a call is on screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Choice {
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
    pub(super) fn of(key: Key) -> Self {
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
    pub(super) fn decides(self) -> bool {
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

/// The key legend under the card of a held answer: it is passed or refused once, nothing more.
pub(super) const ANSWER_LEGEND: &str =
    "[a] pass it to the agent once  [d] refuse it  [r] refuse with a reason  [q] quit";

/// The key legend shown under every card.
pub(super) const LEGEND: &str =
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

    fn press(code: KeyCode, modifiers: KeyModifiers) -> Event {
        Event::Key(KeyEvent::new(code, modifiers))
    }

    #[rstest]
    #[case::plain(press(KeyCode::Char('a'), KeyModifiers::NONE), Some(Key::Char('a')))]
    #[case::shifted(press(KeyCode::Char('A'), KeyModifiers::SHIFT), Some(Key::Char('A')))]
    #[case::arrow_up_is_not_always_allow(press(KeyCode::Up, KeyModifiers::NONE), Some(Key::Other))]
    #[case::function_key(press(KeyCode::F(5), KeyModifiers::NONE), Some(Key::Other))]
    #[case::alt_a_is_not_a(press(KeyCode::Char('a'), KeyModifiers::ALT), Some(Key::Other))]
    #[case::ctrl_a_is_not_a(press(KeyCode::Char('a'), KeyModifiers::CONTROL), Some(Key::Other))]
    #[case::ctrl_c(press(KeyCode::Char('c'), KeyModifiers::CONTROL), Some(Key::Interrupt))]
    #[case::ctrl_d_is_not_deny(press(KeyCode::Char('d'), KeyModifiers::CONTROL), Some(Key::Interrupt))]
    #[case::ctrl_h_is_backspace(press(KeyCode::Char('h'), KeyModifiers::CONTROL), Some(Key::Backspace))]
    #[case::enter(press(KeyCode::Enter, KeyModifiers::NONE), Some(Key::Enter))]
    #[case::escape(press(KeyCode::Esc, KeyModifiers::NONE), Some(Key::Escape))]
    #[case::tab(press(KeyCode::Tab, KeyModifiers::NONE), Some(Key::Other))]
    #[case::utf8(press(KeyCode::Char('é'), KeyModifiers::NONE), Some(Key::Char('é')))]
    #[case::resize_is_no_key(Event::Resize(80, 24), None)]
    fn terminal_events_map_to_keys(#[case] event: Event, #[case] expected: Option<Key>) {
        assert_eq!(Key::of_event(&event), expected);
    }

    #[test]
    fn a_key_release_is_not_a_second_press() {
        let mut release = KeyEvent::new(KeyCode::Char('a'), KeyModifiers::NONE);
        release.kind = KeyEventKind::Release;
        assert_eq!(Key::of_event(&Event::Key(release)), None);
    }

    #[rstest]
    #[case::plain(b"a".as_slice(), vec![Key::Char('a')])]
    #[case::keys_with_newlines(b"a\ns\r\n".as_slice(), vec![Key::Char('a'), Key::Enter, Key::Char('s'), Key::Enter, Key::Enter])]
    #[case::arrow_up_is_not_always_allow(b"\x1b[A\nd".as_slice(), vec![Key::Char('d')])]
    #[case::ss3_arrow(b"\x1bOA\n".as_slice(), vec![])]
    #[case::alt_a_is_dropped(b"\x1ba\n".as_slice(), vec![])]
    #[case::ctrl_c(b"\x03".as_slice(), vec![Key::Interrupt])]
    #[case::ctrl_d(b"\x04".as_slice(), vec![Key::Interrupt])]
    #[case::delete(b"\x7f".as_slice(), vec![Key::Backspace])]
    #[case::tab_is_other(b"\t".as_slice(), vec![Key::Other])]
    #[case::utf8(b"\xc3\xa9\xe2\x82\xac".as_slice(), vec![Key::Char('é'), Key::Char('€')])]
    #[case::invalid_utf8(b"\xffa".as_slice(), vec![Key::Other, Key::Char('a')])]
    fn piped_bytes_map_to_keys(#[case] bytes: &[u8], #[case] expected: Vec<Key>) {
        assert_eq!(PipedKeys::default().feed(bytes), expected);
    }

    #[test]
    fn piped_escape_sequence_split_across_reads_is_still_dropped() {
        let mut keys = PipedKeys::default();
        let got: Vec<Key> = b"\x1b[A\n".iter().flat_map(|b| keys.feed(&[*b])).collect();
        assert_eq!(got, vec![], "an arrow key read byte by byte must not become `A`");
    }

    #[test]
    fn utf8_split_across_reads_decodes() {
        let mut keys = PipedKeys::default();
        assert_eq!(keys.feed(b"\xe2\x82"), vec![]);
        assert_eq!(keys.feed(b"\xac"), vec![Key::Char('€')]);
    }
}
