//! The keeper's own broker answers held calls in-process (its HTTP entry's sessions).

use std::time::Duration;

use futures::future::BoxFuture;

use crate::broker::standing::Asked as GrantAsked;
use crate::broker::{ApprovalBroker, DecideError, Extended, Resolution};
use portcullis_gate::held_calls::pending::{HeldBy, PendingApproval};
use portcullis_gate::held_calls::LiveSession;
use portcullis_gate::held_calls::{Asked, AtOnce, HeldCalls, Question};

impl ApprovalBroker {
    /// What a grant, the pause or the lack of approvers says at once; else the call is held.
    fn answer(&self, question: Question) -> Asked {
        if question.approval.asked_before {
            // Already before a person at a keeper that stopped: held again as it was; a grant or
            // the pause decides only calls asked from now on.
            return Asked::Held(self.hold_again(question.approval));
        }
        match self.at_once(&question) {
            Some(at_once) => Asked::AtOnce(at_once),
            None => {
                let session = question.approval.session.clone();
                Asked::Held(self.hold(question.approval, &session))
            }
        }
    }

    fn at_once(&self, question: &Question) -> Option<AtOnce> {
        let p = &question.approval;
        match (&p.rule, &p.pin_change) {
            // A grant given before the change approved the old definition: only a grant for the
            // new one counts.
            (HeldBy::PinChanged, Some(change)) => self
                .grants
                .changed_tool_allows(&p.server, &p.tool, &p.session, &change.new_digest)
                .then_some(AtOnce::ChangeApproved),
            // No grant covers what a server answered: each answer is passed or refused once.
            (HeldBy::PinChanged, None) | (HeldBy::Answer, _) => None,
            (HeldBy::Policy(_), _) => {
                let asked = GrantAsked {
                    method: p.method,
                    server: &p.server,
                    tool: &p.tool,
                    session: &p.session,
                    digest: &question.digest,
                    facts: p.client.facts(&p.arguments, &question.places),
                };
                self.grants
                    .standing
                    .find(&asked, portcullis_gate::clock::now_ms())
                    .map(AtOnce::Grant)
            }
        }
        .or_else(|| self.paused().then_some(AtOnce::Paused))
        .or_else(|| (!self.has_approver()).then_some(AtOnce::NoApprover))
    }
}

impl HeldCalls for ApprovalBroker {
    fn ask(&self, question: Question) -> BoxFuture<'_, Asked> {
        Box::pin(std::future::ready(self.answer(question)))
    }

    fn end(&self, id: &str, resolution: Resolution) {
        let _ = self.resolve(id, resolution);
    }

    fn extend(&self, id: &str, by: Duration, max_hold: Duration) -> Result<Extended, DecideError> {
        ApprovalBroker::extend(self, id, by, max_hold)
    }

    fn pending(&self, id: &str) -> Option<PendingApproval> {
        self.get(id)
    }

    fn withdraw_session(&self, session: &str) {
        ApprovalBroker::withdraw_session(self, session);
    }

    fn withdraw_request(&self, session: &str, request_id: &str) -> bool {
        ApprovalBroker::withdraw_request(self, session, request_id)
    }

    fn announce(&self, mut session: LiveSession) {
        if session.via.is_empty() {
            // The keeper's own HTTP entry; a data plane's session came over its link already filled in.
            session.via = "http".into();
            session.pid = std::process::id();
        }
        self.live_sessions.announce(session);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use tokio::sync::broadcast;

    use super::*;
    use crate::broker::standing::{Effect, NewGrant, Which};
    use crate::broker::tests::approval;

    fn question(approval: PendingApproval) -> Question {
        Question {
            approval,
            digest: "d".into(),
            places: Arc::default(),
        }
    }

    fn broker() -> Arc<ApprovalBroker> {
        ApprovalBroker::shared(broadcast::channel(16).0)
    }

    async fn ask(broker: &ApprovalBroker, approval: PendingApproval) -> Asked {
        HeldCalls::ask(broker, question(approval)).await
    }

    #[tokio::test]
    async fn nobody_to_ask_is_answered_at_once() {
        let broker = broker();
        assert!(matches!(
            ask(&broker, approval()).await,
            Asked::AtOnce(AtOnce::NoApprover)
        ));
        assert!(broker.pending().is_empty(), "nothing held");
    }

    #[tokio::test]
    async fn with_an_approver_the_call_is_held_until_ended() {
        let broker = broker();
        let _approver = broker.attach_approver();
        let Asked::Held(ticket) = ask(&broker, approval()).await else {
            panic!("held")
        };
        assert!(HeldCalls::pending(&*broker, &ticket.id).is_some());
        HeldCalls::end(&*broker, &ticket.id, Resolution::TimedOut);
        assert_eq!(ticket.resolution.await.unwrap(), Resolution::TimedOut);
        assert!(broker.pending().is_empty());
    }

    #[tokio::test]
    async fn a_standing_grant_answers_before_the_pause_and_the_pause_before_the_approvers() {
        let broker = broker();
        let _approver = broker.attach_approver();
        broker.set_paused(true);
        assert!(matches!(ask(&broker, approval()).await, Asked::AtOnce(AtOnce::Paused)));
        let grant = NewGrant {
            server: approval().server,
            tool: approval().tool,
            effect: Effect::Deny,
            reason: Some("not today".into()),
            session: None,
            which: Which::Any,
            expires_at_ms: None,
        };
        broker.grants.standing.add(grant, 0);
        match ask(&broker, approval()).await {
            Asked::AtOnce(AtOnce::Grant(found)) => assert_eq!(found.effect, Effect::Deny),
            _ => panic!("the grant decides"),
        }
    }

    /// A grant for the tool does not cover a changed definition: only "for this session" on the
    /// new definition does; and the pause holds back changed tools too.
    #[tokio::test]
    async fn a_changed_tool_is_answered_only_by_a_grant_for_its_new_definition() {
        let broker = broker();
        let _approver = broker.attach_approver();
        let p = approval();
        broker.grants.grant_session(p.method, &p.server, &p.tool, &p.session);
        let change = portcullis_gate::pins::PinChange {
            fields: vec!["description".into()],
            old_digest: "old".into(),
            new_digest: "new".into(),
            old: serde_json::json!({}),
            new: serde_json::json!({}),
            diff: Vec::new(),
            pinned_at: String::new(),
            seen_at: String::new(),
        };
        let changed = || PendingApproval {
            rule: HeldBy::PinChanged,
            pin_change: Some(change.clone()),
            asked_before: false,
            ..approval()
        };
        assert!(
            matches!(ask(&broker, changed()).await, Asked::Held(_)),
            "the old grant does not count"
        );
        broker.grants.grant_changed_tool(&p.server, &p.tool, &p.session, "new");
        assert!(matches!(
            ask(&broker, changed()).await,
            Asked::AtOnce(AtOnce::ChangeApproved)
        ));
        broker.grants.end_session(&p.session);
        broker.set_paused(true);
        assert!(matches!(ask(&broker, changed()).await, Asked::AtOnce(AtOnce::Paused)));
    }

    /// A call asked again after its keeper stopped was already before a person: it is held as
    /// it was (the pause and grants decide new calls), waits a while for an approver to attach,
    /// and is refused if none does.
    #[tokio::test]
    async fn a_call_asked_again_is_held_and_waits_a_while_for_an_approver() {
        let broker = broker();
        broker.set_paused(true);
        let again = || PendingApproval {
            asked_before: true,
            ..approval()
        };
        let Asked::Held(ticket) = ask(&broker, again()).await else {
            panic!("held although paused and with nobody attached yet")
        };
        let resolved = tokio::time::timeout(Duration::from_secs(10), ticket.resolution).await;
        assert_eq!(resolved.expect("refused in time").unwrap(), Resolution::Orphaned);

        let Asked::Held(ticket) = ask(&broker, again()).await else {
            panic!("held")
        };
        let _approver = broker.attach_approver();
        // Past the grace (200 ms under test), it still waits: bounded by the data plane's deadline.
        let waited = tokio::time::timeout(Duration::from_secs(1), ticket.resolution).await;
        assert!(waited.is_err(), "an approver came: it waits for them");
        assert_eq!(broker.pending().len(), 1);
    }
}
