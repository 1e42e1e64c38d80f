//! Answers that come back later, as an upstream's own task (2025-11-25 tasks): a forwarded
//! `tools/call` answered with `{task: {taskId}}` gives its real result to a later `tasks/result`,
//! which is no call of its own. That result is inspected as the call's answer would have been
//! ([`crate::answers`], the call's `results`), so a server cannot pass an answer around the
//! inspection by answering through a task.
//!
//! What differs from a call's own answer: the call's row was completed when the task was created,
//! so the audit does not keep this result; and a result the policy holds is withheld, with the
//! reason, rather than asked about (nobody waits on a `tasks/result` as on a held call).

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

use portcullis_wire::Message;

use crate::answers::AnswerCheck;

/// How many upstream tasks a session remembers; the oldest is forgotten first (its result is
/// then read as a plain pass-through would be, so the bound is generous).
const REMEMBERED: usize = 1024;

/// The largest answer read for a task id: a `CreateTaskResult` is small.
const CREATE_TASK_MAX: usize = 16 * 1024;

/// How each upstream task's result is inspected, by the upstream's task id.
#[derive(Default)]
pub(super) struct TaskAnswers {
    inner: Mutex<(HashMap<String, AnswerCheck>, VecDeque<String>)>,
}

impl TaskAnswers {
    /// When `answer` (to a forwarded call inspected by `check`) creates an upstream task, its
    /// result will be inspected the same way.
    pub(super) fn note(&self, answer: &Message, check: AnswerCheck) {
        let Some(task) = created_task(answer) else {
            return;
        };
        let mut inner = self.inner.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let (checks, order) = &mut *inner;
        if checks.insert(task.clone(), check).is_none() {
            order.push_back(task);
        }
        while order.len() > REMEMBERED {
            if let Some(old) = order.pop_front() {
                checks.remove(&old);
            }
        }
    }

    /// How the result of the upstream task `task` is inspected, if a call of this session made it.
    pub(super) fn check_of(&self, task: &str) -> Option<AnswerCheck> {
        let inner = self.inner.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        inner.0.get(task).copied()
    }

    /// How the answer to `request` (a `tasks/result`) is inspected, if its task is one of ours.
    pub(super) fn check_for(&self, request: &Message) -> Option<AnswerCheck> {
        let value = request.to_value().ok()?;
        let task = value.pointer("/params/taskId")?.as_str()?;
        self.check_of(task)
    }
}

/// The task id of a `CreateTaskResult` (`{result: {task: {taskId}}}`); read only from a small
/// answer that names one, so other answers cost a length check and a search.
fn created_task(answer: &Message) -> Option<String> {
    let bytes = answer.bytes();
    if bytes.len() > CREATE_TASK_MAX || memchr::memmem::find(bytes, b"\"taskId\"").is_none() {
        return None;
    }
    super::tasks::upstream_task(answer)
}

#[cfg(test)]
mod tests {
    use portcullis_wire::RequestId;
    use serde_json::json;

    use super::*;

    fn created(task: &str) -> Message {
        Message::response(
            &RequestId::number(1),
            &json!({"task": {"taskId": task, "status": "working"}}),
        )
    }

    #[test]
    fn a_created_task_is_remembered_with_its_check_and_other_answers_are_not() {
        let answers = TaskAnswers::default();
        let check = AnswerCheck::default();
        answers.note(&created("t-1"), check);
        let plain = Message::response(&RequestId::number(2), &json!({"content": [], "taskId": 3}));
        answers.note(&plain, check);
        assert_eq!(answers.check_of("t-1"), Some(check));
        let asked = json!({"jsonrpc": "2.0", "id": 5, "method": "tasks/result", "params": {"taskId": "t-1"}});
        assert_eq!(answers.check_for(&Message::from_value(&asked).unwrap()), Some(check));
        let other = json!({"jsonrpc": "2.0", "id": 6, "method": "tasks/result", "params": {"taskId": "t-2"}});
        assert_eq!(answers.check_for(&Message::from_value(&other).unwrap()), None);
    }

    #[test]
    fn the_oldest_task_is_forgotten_past_the_bound() {
        let answers = TaskAnswers::default();
        for n in 0..=REMEMBERED {
            answers.note(&created(&format!("t-{n}")), AnswerCheck::default());
        }
        assert_eq!(answers.check_of("t-0"), None);
        assert!(answers.check_of(&format!("t-{REMEMBERED}")).is_some());
    }
}
