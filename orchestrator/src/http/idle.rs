//! Which MCP sessions are alive, which calls are in flight, and which sessions have been idle
//! too long.
//!
//! A session is registered when its `initialize` answer names it (`Mcp-Session-Id`); a request
//! naming a session that is not registered (never was, or expired) is answered 404 so the client
//! starts a new one, as the MCP specification asks. A session is idle when no call of its is in
//! flight and none began or ended for the idle timeout: a long call (`run_implement`) never
//! expires its session half-way. Calls without a session (`initialize`) count for shutdown only.
//! There are at most so many live sessions: an `initialize` beyond them is refused before rmcp
//! makes a server for it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use tokio::sync::Notify;

/// The live sessions and the calls in flight.
#[derive(Debug, Default)]
pub(crate) struct Sessions {
    state: Mutex<State>,
    /// Woken whenever a call ends.
    call_ended: Notify,
}

#[derive(Debug, Default)]
struct State {
    sessions: HashMap<String, Seen>,
    /// Every call in flight, with or without a session.
    in_flight: usize,
    /// Sessions being opened (places reserved by [`Sessions::try_open`]).
    opening: usize,
}

#[derive(Debug, Clone, Copy)]
struct Seen {
    last: Instant,
    in_flight: usize,
}

/// One call in flight; dropping it (its answer sent, or the client gone) ends it.
#[derive(Debug)]
pub(crate) struct Call {
    sessions: Arc<Sessions>,
    session: Option<String>,
}

impl Drop for Call {
    fn drop(&mut self) {
        self.sessions.end(self.session.as_deref(), Instant::now());
    }
}

/// A place reserved for a session being opened; dropping it frees the place (the session it
/// opened, if any, is registered by then).
#[derive(Debug)]
pub(crate) struct Opening {
    sessions: Arc<Sessions>,
}

impl Drop for Opening {
    fn drop(&mut self) {
        let mut state = self.sessions.state();
        state.opening = state.opening.saturating_sub(1);
    }
}

impl Sessions {
    fn state(&self) -> MutexGuard<'_, State> {
        // Counters only: a panic elsewhere cannot leave them half-written.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A new session, named by its `initialize` answer.
    pub(crate) fn register(&self, id: &str, now: Instant) {
        self.state().sessions.insert(
            id.to_owned(),
            Seen {
                last: now,
                in_flight: 0,
            },
        );
    }

    /// Reserves a place for a new session; `None` when `max` sessions are live or opening.
    pub(crate) fn try_open(self: &Arc<Self>, max: usize) -> Option<Opening> {
        let mut state = self.state();
        if state.sessions.len() + state.opening >= max {
            return None;
        }
        state.opening += 1;
        Some(Opening {
            sessions: Arc::clone(self),
        })
    }

    /// A session the client ended (`DELETE`).
    pub(crate) fn forget(&self, id: &str) {
        self.state().sessions.remove(id);
    }

    /// Whether `id` is a live session; marks it as seen now.
    pub(crate) fn touch(&self, id: &str, now: Instant) -> bool {
        match self.state().sessions.get_mut(id) {
            Some(seen) => {
                seen.last = now;
                true
            }
            None => false,
        }
    }

    /// Begins a call of session `id` (`None`: a call outside any session); `None` when `id` is
    /// not a live session.
    pub(crate) fn begin(self: &Arc<Self>, id: Option<&str>, now: Instant) -> Option<Call> {
        let mut state = self.state();
        if let Some(id) = id {
            let seen = state.sessions.get_mut(id)?;
            seen.in_flight += 1;
            seen.last = now;
        }
        state.in_flight += 1;
        Some(Call {
            sessions: Arc::clone(self),
            session: id.map(str::to_owned),
        })
    }

    fn end(&self, id: Option<&str>, now: Instant) {
        {
            let mut state = self.state();
            state.in_flight = state.in_flight.saturating_sub(1);
            if let Some(seen) = id.and_then(|id| state.sessions.get_mut(id)) {
                seen.in_flight = seen.in_flight.saturating_sub(1);
                seen.last = now;
            }
        }
        self.call_ended.notify_waiters();
    }

    /// Removes and returns the sessions with no call in flight that were last seen `timeout`
    /// or longer before `now`.
    pub(crate) fn take_expired(&self, now: Instant, timeout: Duration) -> Vec<String> {
        let mut state = self.state();
        let expired: Vec<String> = state
            .sessions
            .iter()
            .filter(|(_, seen)| {
                seen.in_flight == 0 && now.saturating_duration_since(seen.last) >= timeout
            })
            .map(|(id, _)| id.clone())
            .collect();
        for id in &expired {
            state.sessions.remove(id);
        }
        expired
    }

    /// Calls in flight, with or without a session.
    pub(crate) fn in_flight(&self) -> usize {
        self.state().in_flight
    }

    /// Live sessions.
    pub(crate) fn live(&self) -> usize {
        self.state().sessions.len()
    }

    /// Returns once no call is in flight.
    pub(crate) async fn all_calls_ended(&self) {
        loop {
            let ended = self.call_ended.notified();
            if self.in_flight() == 0 {
                return;
            }
            ended.await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINUTE: Duration = Duration::from_secs(60);

    #[test]
    fn a_session_expires_after_the_timeout_without_calls() {
        let s = Arc::new(Sessions::default());
        let t0 = Instant::now();
        s.register("a", t0);
        s.register("b", t0);
        assert!(s.touch("b", t0 + 20 * MINUTE));
        assert!(s.take_expired(t0 + 29 * MINUTE, 30 * MINUTE).is_empty());
        assert_eq!(s.take_expired(t0 + 30 * MINUTE, 30 * MINUTE), ["a"]);
        assert!(
            !s.touch("a", t0 + 31 * MINUTE),
            "an expired session is gone"
        );
        assert!(s.begin(Some("a"), t0 + 31 * MINUTE).is_none());
        assert_eq!(s.take_expired(t0 + 50 * MINUTE, 30 * MINUTE), ["b"]);
        assert_eq!(s.live(), 0);
    }

    #[test]
    fn a_call_in_flight_keeps_its_session_alive_however_long_it_runs() {
        let s = Arc::new(Sessions::default());
        let t0 = Instant::now();
        s.register("a", t0);
        let call = s.begin(Some("a"), t0).expect("live");
        assert_eq!(s.in_flight(), 1);
        assert!(s.take_expired(t0 + 600 * MINUTE, 30 * MINUTE).is_empty());
        drop(call);
        assert_eq!(s.in_flight(), 0);
        // The end of the call counts as activity.
        let now = Instant::now();
        assert!(s.take_expired(now + 29 * MINUTE, 30 * MINUTE).is_empty());
        assert_eq!(s.take_expired(now + 30 * MINUTE, 30 * MINUTE), ["a"]);
    }

    #[test]
    fn unknown_sessions_are_never_registered_by_their_requests() {
        let s = Arc::new(Sessions::default());
        let t0 = Instant::now();
        assert!(!s.touch("made-up", t0));
        assert!(s.begin(Some("made-up"), t0).is_none());
        assert_eq!(s.live(), 0);
        assert_eq!(s.in_flight(), 0);
        let outside = s.begin(None, t0).expect("calls outside a session count");
        assert_eq!(s.in_flight(), 1);
        drop(outside);
        s.register("a", t0);
        s.forget("a");
        assert_eq!(s.live(), 0);
    }

    #[test]
    fn no_more_sessions_open_than_the_cap_counting_those_being_opened() {
        let s = Arc::new(Sessions::default());
        let t0 = Instant::now();
        let a = s.try_open(2).expect("room");
        let b = s.try_open(2).expect("room");
        assert!(s.try_open(2).is_none(), "two are being opened");
        s.register("a", t0);
        drop(a);
        drop(b);
        let c = s.try_open(2).expect("one live, one place left");
        s.register("c", t0);
        drop(c);
        assert!(s.try_open(2).is_none(), "two live");
        s.forget("a");
        assert!(s.try_open(2).is_some(), "a place again");
    }

    #[tokio::test]
    async fn waiting_for_calls_returns_when_the_last_one_ends() {
        let s = Arc::new(Sessions::default());
        s.all_calls_ended().await;
        let first = s.begin(None, Instant::now()).expect("call");
        let second = s.begin(None, Instant::now()).expect("call");
        let waiter = tokio::spawn({
            let s = Arc::clone(&s);
            async move { s.all_calls_ended().await }
        });
        drop(first);
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!waiter.is_finished(), "one call is still in flight");
        drop(second);
        tokio::time::timeout(Duration::from_secs(5), waiter)
            .await
            .expect("woken")
            .expect("joined");
    }
}
