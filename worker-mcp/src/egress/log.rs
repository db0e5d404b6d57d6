//! The egress proxy's account of every connection: who asked for which host and port, the
//! address it resolved and connected to, the bytes each way, admitted or refused and why, and
//! when (from the injected clock). Bounded: the first [`MAX_LOGGED`] connections of a phase
//! are listed, all are counted.

use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

use super::address::AddressClass;
use crate::time::Timestamp;

/// Connections listed per phase (agent, verify commands) of an attempt; the rest are counted.
pub const MAX_LOGGED: usize = 100;

/// How the connection was asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// `CONNECT host:port` (a tunnel: TLS or anything else).
    Connect,
    /// A plain `http://` request in absolute form.
    Http,
}

/// Why a connection was refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Refused {
    /// Neither a model endpoint nor on `[agent] network_allow`.
    NotAllowed,
    /// Every address the name resolved to is of a refused class.
    Address { class: AddressClass },
    /// One of Butler's own listening ports on this machine.
    ButlerPort,
    /// The name did not resolve (or the request named no host).
    Unresolved,
    /// The connection to the address failed.
    Unreachable,
    /// Too many connections at once.
    Busy,
    /// Not a proxy request (an origin-form request, an unsupported scheme).
    BadRequest,
}

/// Admitted, or refused and why (`"verdict": "refused", "reason": {"kind": …}`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "verdict", content = "reason", rename_all = "snake_case")]
pub enum Verdict {
    Admitted,
    Refused(Refused),
}

/// One connection through the proxy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Connection {
    pub method: Method,
    pub host: String,
    pub port: u16,
    /// The address the proxy connected to (or, refused, the one it would have).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
    #[serde(flatten)]
    pub verdict: Verdict,
    /// Bytes from the agent to the server.
    pub sent: u64,
    /// Bytes from the server to the agent.
    pub received: u64,
    pub started: Timestamp,
    pub ended: Timestamp,
}

/// What the proxy saw in one phase: the first [`MAX_LOGGED`] connections, and how many in all.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Connections {
    pub listed: Vec<Connection>,
    pub total: usize,
    pub refused: usize,
}

impl Connections {
    fn add(&mut self, c: Connection) {
        self.total += 1;
        if matches!(c.verdict, Verdict::Refused(_)) {
            self.refused += 1;
        }
        if self.listed.len() < MAX_LOGGED {
            self.listed.push(c);
        }
    }
}

/// The log the proxy writes and the Maid takes, shared.
#[derive(Debug, Clone, Default)]
pub struct ConnectionLog {
    inner: Arc<Mutex<Connections>>,
}

impl ConnectionLog {
    pub fn record(&self, c: Connection) {
        tracing::debug!(host = %c.host, port = c.port, verdict = ?c.verdict, "egress");
        self.inner
            .lock()
            .expect("the egress log lock is never poisoned")
            .add(c);
    }

    /// What was recorded since the last take.
    pub fn take(&self) -> Connections {
        std::mem::take(
            &mut *self
                .inner
                .lock()
                .expect("the egress log lock is never poisoned"),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_log_is_bounded_and_counts_everything() {
        let log = ConnectionLog::default();
        let at = Timestamp::parse("2026-04-15T10:20:00+09:00").expect("ts");
        for i in 0..(MAX_LOGGED + 5) {
            log.record(Connection {
                method: Method::Connect,
                host: format!("h{i}.example"),
                port: 443,
                address: None,
                verdict: if i % 2 == 0 {
                    Verdict::Admitted
                } else {
                    Verdict::Refused(Refused::NotAllowed)
                },
                sent: 0,
                received: 0,
                started: at,
                ended: at,
            });
        }
        let taken = log.take();
        assert_eq!(taken.listed.len(), MAX_LOGGED);
        assert_eq!(taken.total, MAX_LOGGED + 5);
        assert_eq!(taken.refused, (MAX_LOGGED + 5) / 2);
        assert_eq!(log.take(), Connections::default());
    }
}
