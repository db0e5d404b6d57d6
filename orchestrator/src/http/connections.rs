//! The open connections, how many there may be, and which one makes room for a new one.
//!
//! A connection that never sends its request, or holds still between requests, costs a file
//! descriptor and nothing else; the read timeouts end it, but a client that keeps opening such
//! connections could fill any cap in less time. So at the cap a new connection is not refused
//! while an idle one can make room: the oldest connection that never showed the token gives
//! way, else the oldest one with no call in flight. Only when every connection is busy with an
//! authorized call is the new one refused (503). A slow client can delay nobody but itself.
//!
//! The cap only holds if the process may open that many descriptors: at start the soft limit is
//! raised (up to the hard one) to fit the cap and a reserve, or the cap is lowered to fit.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio_util::sync::{CancellationToken, WaitForCancellationFuture};

/// Descriptors kept for everything but connections: ledgers, git's pipes, the runtime.
const RESERVED_DESCRIPTORS: u64 = 128;

/// The soft descriptor limit to ask for and the connections that then fit, for `wanted`
/// connections under the limits `soft` and `hard`: the soft limit raised (never past the hard
/// one) to fit them and the reserve; fewer connections when even the hard limit is short.
pub(crate) fn fit(wanted: usize, soft: u64, hard: u64) -> (u64, usize) {
    let need = (wanted as u64).saturating_add(RESERVED_DESCRIPTORS);
    let limit = soft.max(need.min(hard));
    let fits = limit.saturating_sub(RESERVED_DESCRIPTORS).max(1);
    (
        limit,
        wanted.min(usize::try_from(fits).unwrap_or(usize::MAX)),
    )
}

/// How many of `wanted` connections the process can hold, raising its soft descriptor limit
/// first if it has to (the log says when fewer fit).
pub(crate) fn fit_descriptors(wanted: usize) -> usize {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    let Ok((soft, hard)) = getrlimit(Resource::RLIMIT_NOFILE) else {
        return wanted;
    };
    let (limit, mut fits) = fit(wanted, soft, hard);
    if limit > soft && setrlimit(Resource::RLIMIT_NOFILE, limit, hard).is_err() {
        fits = fit(wanted, soft, soft).1;
    }
    if fits < wanted {
        tracing::warn!(
            wanted,
            fits,
            "the descriptor limit (`ulimit -n`) holds only {fits} connections; that is the cap"
        );
    }
    fits
}

/// The open connections, oldest first.
#[derive(Debug)]
pub(crate) struct Connections {
    max: usize,
    state: Mutex<State>,
    /// Set once the cap is first reached (said once in the log).
    full_once: AtomicBool,
}

#[derive(Debug, Default)]
struct State {
    next_id: u64,
    open: BTreeMap<u64, Arc<Conn>>,
}

/// One open connection.
#[derive(Debug, Default)]
pub(crate) struct Conn {
    /// Requests handed on past the edge whose answers are not sent yet.
    busy: AtomicUsize,
    /// A request on it carried the bearer token.
    authorized: AtomicBool,
    /// Cancelled when it must give way to a new connection.
    evicted: CancellationToken,
}

/// What [`give_way`] needs to know of a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Seen {
    pub busy: bool,
    pub authorized: bool,
}

/// Which connection makes room for a new one, given the open ones oldest first: the oldest
/// idle one that never showed the token, else the oldest idle one; `None` when all are busy.
pub(crate) fn give_way(open: impl IntoIterator<Item = (u64, Seen)>) -> Option<u64> {
    let mut oldest_idle = None;
    for (id, seen) in open {
        if seen.busy {
            continue;
        }
        if !seen.authorized {
            return Some(id);
        }
        oldest_idle.get_or_insert(id);
    }
    oldest_idle
}

impl Connections {
    /// At most `max` connections (at least one).
    pub(crate) fn new(max: usize) -> Arc<Self> {
        Arc::new(Self {
            max: max.max(1),
            state: Mutex::new(State::default()),
            full_once: AtomicBool::new(false),
        })
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // A map of counters: a panic elsewhere cannot leave it half-written.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Admits a new connection, closing an idle one if the cap is reached; `None` when every
    /// open connection is busy (the new one is to be refused).
    pub(crate) fn admit(self: &Arc<Self>) -> Option<Admitted> {
        let mut state = self.state();
        if state.open.len() >= self.max {
            if !self.full_once.swap(true, Ordering::Relaxed) {
                tracing::warn!(
                    max = self.max,
                    "connection cap reached: idle connections now make room for new ones"
                );
            }
            let seen = state.open.iter().map(|(id, conn)| (*id, conn.seen()));
            let id = give_way(seen)?;
            if let Some(old) = state.open.remove(&id) {
                old.evicted.cancel();
            }
        }
        let id = state.next_id;
        state.next_id += 1;
        let conn = Arc::new(Conn::default());
        state.open.insert(id, Arc::clone(&conn));
        Some(Admitted {
            id,
            conn,
            connections: Arc::clone(self),
        })
    }

    /// Connections open now.
    pub(crate) fn open(&self) -> usize {
        self.state().open.len()
    }
}

impl Conn {
    fn seen(&self) -> Seen {
        Seen {
            busy: self.busy.load(Ordering::Acquire) > 0,
            authorized: self.authorized.load(Ordering::Acquire),
        }
    }

    /// Notes that a request on this connection carried the token.
    pub(crate) fn authorized(&self) {
        self.authorized.store(true, Ordering::Release);
    }

    /// Marks the connection busy until the guard is dropped (its answer sent).
    pub(crate) fn busy(self: &Arc<Self>) -> Busy {
        self.busy.fetch_add(1, Ordering::AcqRel);
        Busy(Arc::clone(self))
    }
}

/// A request being answered on its connection.
#[derive(Debug)]
pub(crate) struct Busy(Arc<Conn>);

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.busy.fetch_sub(1, Ordering::AcqRel);
    }
}

/// An admitted connection; dropping it (the connection ended) frees its place.
#[derive(Debug)]
pub(crate) struct Admitted {
    id: u64,
    conn: Arc<Conn>,
    connections: Arc<Connections>,
}

impl Admitted {
    pub(crate) fn conn(&self) -> &Arc<Conn> {
        &self.conn
    }

    /// Completes when the connection must close to make room for a new one.
    pub(crate) fn evicted(&self) -> WaitForCancellationFuture<'_> {
        self.conn.evicted.cancelled()
    }
}

impl Drop for Admitted {
    fn drop(&mut self) {
        self.connections.state().open.remove(&self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const IDLE: Seen = Seen {
        busy: false,
        authorized: false,
    };
    const IDLE_CLIENT: Seen = Seen {
        busy: false,
        authorized: true,
    };
    const BUSY: Seen = Seen {
        busy: true,
        authorized: true,
    };

    #[test]
    fn the_descriptor_limit_is_raised_to_fit_the_cap_or_the_cap_lowered_to_fit_it() {
        // 1024 is enough for 256 and the reserve: nothing changes.
        assert_eq!(fit(256, 1024, 4096), (1024, 256));
        // 256 is not: raised as far as needed.
        assert_eq!(fit(256, 256, 4096), (384, 256));
        assert_eq!(fit(256, 256, u64::MAX), (384, 256));
        // Not even the hard limit holds them: fewer connections.
        assert_eq!(fit(256, 256, 300), (300, 172));
        assert_eq!(fit(256, 64, 64), (64, 1));
    }

    #[test]
    fn strangers_give_way_before_clients_and_busy_connections_never() {
        assert_eq!(give_way([(1, IDLE_CLIENT), (2, IDLE), (3, IDLE)]), Some(2));
        assert_eq!(
            give_way([(1, BUSY), (2, IDLE_CLIENT), (3, IDLE_CLIENT)]),
            Some(2)
        );
        assert_eq!(give_way([(1, BUSY), (2, BUSY)]), None);
        assert_eq!(give_way([]), None);
    }

    #[test]
    fn at_the_cap_the_oldest_idle_connection_is_closed_for_the_new_one() {
        let conns = Connections::new(2);
        let first = conns.admit().expect("room");
        let second = conns.admit().expect("room");
        second.conn().authorized();
        let _busy = second.conn().busy();
        let third = conns.admit().expect("the first makes room");
        assert!(first.conn.evicted.is_cancelled());
        assert!(!second.conn.evicted.is_cancelled());
        assert_eq!(conns.open(), 2);
        drop(first);
        assert_eq!(
            conns.open(),
            2,
            "an evicted connection was already counted out"
        );
        let _t = third.conn().busy();
        assert!(conns.admit().is_none(), "every connection is busy");
        drop(_t);
        let fourth = conns.admit().expect("the third is idle again");
        assert!(third.conn.evicted.is_cancelled());
        drop(fourth);
        drop(third);
        assert_eq!(conns.open(), 1);
    }
}
