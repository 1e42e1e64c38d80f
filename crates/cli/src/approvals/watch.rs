//! `portcullis approvals watch`: an approver in the terminal.
//!
//! Subscribes to the gateway's event stream first (from then on the gateway holds calls for this
//! approver instead of refusing them), then fetches what is already pending, so nothing falls
//! between the two. Calls queue oldest first; one card is on screen at a time and one key decides
//! it. On a terminal, keys typed before a card appeared are discarded; from a pipe they are used in
//! order, each on the next card.

use std::collections::VecDeque;
use std::time::{Duration, SystemTime};

use super::format;
use super::keys::{Choice, Key, ANSWER_LEGEND, LEGEND};
use super::terminal::{self, KeyReceiver, RawMode, Screen, StopSignals};
use crate::control::{ApiError, Approval, ControlClient, ControlEvent, EventStream, Resolved, Scope, StreamItem};
use crate::exit::{Failure, Outcome};
use crate::text::clean;

/// What is on screen now.
#[derive(Debug, PartialEq)]
enum Shown {
    Nothing,
    Idle,
    Card(String),
}

/// Key mode, or typing the reason for a denial.
enum Mode {
    Keys,
    Reason(String),
}

enum Step {
    /// A key was used; look at the queue again before the next one.
    Again,
    /// Nothing more to do until an event or a key arrives.
    Wait,
    Quit,
}

enum Decision {
    Approve(Scope),
    Deny { reason: Option<String>, always: bool },
}

struct Watch<'a> {
    api: &'a ControlClient,
    screen: Screen,
    queue: VecDeque<Approval>,
    shown: Shown,
    mode: Mode,
    keys: VecDeque<Key>,
    key_rx: KeyReceiver,
    keys_closed: bool,
    raw: Option<RawMode>,
    width: usize,
}

pub(super) async fn run(api: &ControlClient, width: usize) -> Outcome {
    let mut events = api.events().await?;
    let pending = api.list().await?;
    let mut stop = StopSignals::install().map_err(|e| Failure::user(format!("cannot watch for signals: {e}")))?;
    let tty = std::io::IsTerminal::is_terminal(&std::io::stdin());
    let raw = if tty {
        Some(RawMode::enter().map_err(|e| Failure::user(format!("cannot put the terminal into raw mode: {e}")))?)
    } else {
        None
    };
    let key_rx = terminal::read_keys(tty).map_err(|e| Failure::user(format!("cannot read keys: {e}")))?;
    let mut watch = Watch {
        api,
        screen: Screen::stdout(raw.is_some(), width),
        queue: pending.into(),
        shown: Shown::Nothing,
        mode: Mode::Keys,
        keys: VecDeque::new(),
        key_rx,
        keys_closed: false,
        raw,
        width,
    };
    let result = watch.run(&mut events, &mut stop).await;
    let _ = watch.screen.clear_prompt();
    drop(watch); // restores the terminal before main prints any error
    result
}

impl Watch<'_> {
    async fn run(&mut self, events: &mut EventStream, stop: &mut StopSignals) -> Outcome {
        let mut tick = tokio::time::interval(Duration::from_secs(1));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        loop {
            self.show_front()?;
            match self.next_key().await? {
                Step::Again => continue,
                Step::Quit => return self.quit(),
                Step::Wait => {}
            }
            if self.keys_closed && self.keys.is_empty() {
                self.say("stdin closed: no more decisions can be made here; stopping")?;
                return self.quit();
            }
            if !self.screen.has_prompt() {
                self.refresh_prompt(false)?;
            }
            tokio::select! {
                item = events.next() => match item {
                    Some(StreamItem::Event(event)) => self.on_event(event)?,
                    Some(StreamItem::Unreadable(message)) => self.say(&message)?,
                    None => return Err(Failure::NoGateway(
                        "the gateway went away (its event stream closed); calls it held are refused".to_owned(),
                    )),
                },
                keys = self.key_rx.recv(), if !self.keys_closed => match keys {
                    Some(key) => self.keys.push_back(key),
                    None => self.keys_closed = true,
                },
                _ = tick.tick() => self.refresh_prompt(false)?, // the countdown, on a terminal
                () = stop.wait() => return self.quit(),
            }
        }
    }

    fn say(&mut self, text: &str) -> Outcome {
        self.screen.line(text).map_err(write_failed)
    }

    fn quit(&mut self) -> Outcome {
        let waiting = self.queue.len();
        let text = match waiting {
            0 => "stopped watching".to_owned(),
            1 => "stopped watching; 1 call is still waiting".to_owned(),
            n => format!("stopped watching; {n} calls are still waiting"),
        };
        self.say(&text)
    }

    /// Puts the oldest call on screen if it is not there yet, or says that nothing is waiting.
    fn show_front(&mut self) -> Outcome {
        let Some(front) = self.queue.front() else {
            if self.shown != Shown::Idle {
                self.shown = Shown::Idle;
                self.mode = Mode::Keys;
                self.say("waiting for calls that need approval (q to quit)")?;
            }
            return Ok(());
        };
        if self.shown == Shown::Card(front.id.clone()) {
            return Ok(());
        }
        let text = format::card(front, SystemTime::now(), self.width, self.queue.len() - 1);
        self.shown = Shown::Card(front.id.clone());
        self.mode = Mode::Keys;
        if self.raw.is_some() {
            // Keys typed before this card appeared were not meant for it.
            self.keys.clear();
            while self.key_rx.try_recv().is_ok() {}
        }
        let legend = legend_for(front);
        self.say("")?;
        self.say(&text)?;
        self.say(legend)?;
        self.refresh_prompt(true)
    }

    fn refresh_prompt(&mut self, force: bool) -> Outcome {
        let Some(front) = self.queue.front() else {
            return Ok(());
        };
        let text = match &self.mode {
            Mode::Keys => format::prompt(front, SystemTime::now(), self.queue.len() - 1),
            Mode::Reason(typed) => format!("reason (Enter denies, Esc goes back): {}", clean(typed)),
        };
        self.screen.prompt(&text, force).map_err(write_failed)
    }

    /// Uses the next buffered key, if it can be used now.
    async fn next_key(&mut self) -> Result<Step, Failure> {
        let Some(&key) = self.keys.front() else {
            return Ok(Step::Wait);
        };
        let Some(call) = self.queue.front().cloned() else {
            let choice = Choice::of(key);
            if choice.decides() && self.raw.is_none() {
                return Ok(Step::Wait); // piped: this key is for the next call that arrives
            }
            self.keys.pop_front();
            return Ok(match choice {
                Choice::Quit => Step::Quit,
                Choice::Help => {
                    self.say(LEGEND)?;
                    Step::Again
                }
                Choice::Unknown(_) => Step::Again,
                c if c.decides() => {
                    self.say("nothing is waiting for a decision")?;
                    Step::Again
                }
                _ => Step::Again,
            });
        };
        self.keys.pop_front();
        if let Mode::Reason(typed) = &mut self.mode {
            match key {
                Key::Char(c) => typed.push(c),
                Key::Backspace => {
                    typed.pop();
                }
                Key::Enter if typed.trim().is_empty() => {}
                Key::Enter => {
                    let reason = typed.trim().to_owned();
                    self.mode = Mode::Keys;
                    self.decide(
                        &call,
                        Decision::Deny {
                            reason: Some(reason),
                            always: false,
                        },
                    )
                    .await?;
                    return Ok(Step::Again);
                }
                Key::Escape => self.mode = Mode::Keys,
                Key::Interrupt => return Ok(Step::Quit),
                Key::Other => {}
            }
            // Redrawn on a terminal; from a pipe the reason prompt was printed once, on `r`.
            let back_to_keys = matches!(self.mode, Mode::Keys);
            self.refresh_prompt(back_to_keys)?;
            return Ok(Step::Again);
        }
        let decision = match Choice::of(key) {
            Choice::ApproveOnce => Decision::Approve(Scope::Once),
            Choice::ApproveSession => Decision::Approve(Scope::Session),
            Choice::AlwaysAllow => Decision::Approve(Scope::Always),
            Choice::Deny => Decision::Deny {
                reason: None,
                always: false,
            },
            Choice::DenyAlways => Decision::Deny {
                reason: None,
                always: true,
            },
            Choice::DenyWithReason => {
                self.mode = Mode::Reason(String::new());
                self.refresh_prompt(true)?;
                return Ok(Step::Again);
            }
            Choice::Quit => return Ok(Step::Quit),
            Choice::Help => {
                self.say(legend_for(&call))?;
                self.refresh_prompt(true)?;
                return Ok(Step::Again);
            }
            Choice::Ignore => return Ok(Step::Again),
            Choice::Unknown(c) => {
                self.say(&format!(
                    "{} does nothing here; press ? for the keys",
                    clean(&c.to_string())
                ))?;
                self.refresh_prompt(true)?;
                return Ok(Step::Again);
            }
        };
        self.decide(&call, decision).await?;
        Ok(Step::Again)
    }

    async fn decide(&mut self, call: &Approval, decision: Decision) -> Outcome {
        let (result, done) = match &decision {
            Decision::Approve(scope) => (
                self.api.approve(&call.id, *scope).await,
                format::approved_line(&call.id, scope.as_str(), Some(call)),
            ),
            Decision::Deny { reason, always } => (
                self.api.deny(&call.id, reason.as_deref(), *always).await,
                format::rejected_line(&call.id, *always, reason.as_deref(), Some(call)),
            ),
        };
        match result {
            Ok(()) => {
                self.remove(&call.id);
                self.say(&done)
            }
            Err(ApiError::NotPending(message)) => {
                self.remove(&call.id);
                self.say(&message)
            }
            Err(e @ ApiError::Unreachable { .. }) => Err(e.into()),
            Err(e) => {
                // The call is still waiting: say why it failed and let the person choose again.
                self.say(&format!("could not decide {}: {e}", clean(&call.id)))?;
                self.refresh_prompt(true)
            }
        }
    }

    fn remove(&mut self, id: &str) -> Option<Approval> {
        let position = self.queue.iter().position(|a| a.id == id)?;
        self.queue.remove(position)
    }

    fn on_event(&mut self, event: ControlEvent) -> Outcome {
        match event {
            ControlEvent::ApprovalRequested { approval } => {
                if self.queue.iter().any(|a| a.id == approval.id) {
                    return Ok(()); // already listed when the watch started
                }
                let note = format!("{} is waiting too", format::call_text(&approval));
                self.queue.push_back(*approval);
                if self.queue.len() > 1 {
                    self.say(&format!("{note} ({} more waiting)", self.queue.len() - 1))?;
                    self.refresh_prompt(true)?;
                }
                Ok(())
            }
            ControlEvent::ApprovalResolved(resolved) => self.on_resolved(&resolved),
            ControlEvent::AuditHealth { ok, error } => {
                let line = if ok {
                    "the audit log can be written again; calls are audited and forwarded".to_owned()
                } else {
                    format!(
                        "the gateway cannot write its audit log ({}); every tools/call is refused until it can",
                        clean(error.as_deref().unwrap_or("unknown error"))
                    )
                };
                self.say(&line)?;
                self.refresh_prompt(true)
            }
            ControlEvent::Other => Ok(()),
        }
    }

    /// A call left the queue without a key pressed here: decided elsewhere, timed out, cancelled.
    fn on_resolved(&mut self, resolved: &Resolved) -> Outcome {
        let on_screen = self.shown == Shown::Card(resolved.id.clone());
        let Some(call) = self.remove(&resolved.id) else {
            return Ok(());
        };
        self.say(&format::resolved_line(resolved, Some(&call)))?;
        if on_screen {
            self.mode = Mode::Keys; // a half-typed reason goes with the call it was for
        } else {
            self.refresh_prompt(true)?;
        }
        Ok(())
    }
}

fn write_failed(e: std::io::Error) -> Failure {
    Failure::user(format!("cannot write to stdout: {e}"))
}

/// The keys that decide `call`: a held answer is only passed once or refused.
fn legend_for(call: &crate::control::Approval) -> &'static str {
    if call.answer.is_some() {
        ANSWER_LEGEND
    } else {
        LEGEND
    }
}
