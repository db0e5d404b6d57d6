//! What the evidence says the sandbox did for one attempt.

use serde::{Deserialize, Serialize};

use super::landlock_rules::Enforcement;
use super::policy::{Network, SandboxMode};
use super::syscalls::{SyscallRefusal, SyscallRefusals};
use crate::egress::{Connections, Endpoint, HostPattern};

/// The sandbox of one attempt: the mode, whether the agent ran confined (and if not, why),
/// the kernel's Landlock ABI, the rules, and the refused accesses seen in the output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SandboxReport {
    pub mode: SandboxMode,
    /// Whether the agent ran confined.
    pub applied: bool,
    /// Why it did not (`off`, no Landlock in this kernel, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_applied: Option<String>,
    /// How much of the ruleset the kernel enforced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enforcement: Option<Enforcement>,
    /// The kernel's Landlock ABI, as the sandbox helper saw it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub landlock_abi: Option<u8>,
    /// Trees the agent could write (it could read everywhere but `denied_read`). Empty when not
    /// applied.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub writable: Vec<String>,
    /// TCP connections it could open (by port, on any host).
    pub network: Network,
    /// Whether the verify commands ran confined too (writing only the worktree and their own
    /// temp dir).
    pub verify_confined: bool,
    /// What neither could read or write (credential stores, Butler's own directories, the
    /// configured `deny_read`), by name (`~/.ssh`), those that existed. Empty when not applied.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub denied_read: Vec<String>,
    /// Output lines of the agent (and of the verify commands) that show a refused access, at
    /// most [`super::MAX_REFUSALS`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refused: Vec<Refusal>,
    /// How many such lines there were in all.
    #[serde(default)]
    pub refused_total: usize,
    /// Whether the system-call filter was installed (see `docs/sandbox.md`).
    #[serde(default)]
    pub syscall_filter: bool,
    /// System calls the filter refused, as its supervisor saw them (at most
    /// [`super::MAX_REFUSALS`] kinds).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub syscalls_refused: Vec<SyscallRefusalSeen>,
    /// How many calls it refused in all.
    #[serde(default)]
    pub syscalls_refused_total: u32,
    /// Connections to the egress proxy the supervisor opened for the commands.
    #[serde(default)]
    pub proxied_connections: u32,
    /// The task's egress proxy: what it admitted and every connection through it. Absent when
    /// the network is `open` or a port list by choice, or nothing was confined.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub egress: Option<EgressReport>,
}

/// One kind of refused system call, with whose run it was seen in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SyscallRefusalSeen {
    pub source: RefusalSource,
    #[serde(flatten)]
    pub refusal: SyscallRefusal,
}

/// The egress section of the evidence: the hosts the proxy admitted and the connections of
/// the attempt's agent and verify commands (each listed up to [`crate::egress::MAX_LOGGED`],
/// all counted).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EgressReport {
    /// Why no proxy ran although it is the default (a kernel without network rules).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_applied: Option<String>,
    /// The agent's model endpoints (`configured`: named by the user, so they may be on this
    /// machine).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub endpoints: Vec<Endpoint>,
    /// `[agent] network_allow`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allowed_hosts: Vec<HostPattern>,
    pub agent: Connections,
    pub verify: Connections,
}

/// Whose output a refusal was seen in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RefusalSource {
    Agent,
    Verify,
}

/// One refused access, as the output showed it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Refusal {
    pub source: RefusalSource,
    /// The path (or `host:port`) the line names, when it names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// The line, cut to 200 characters.
    pub line: String,
}

impl SandboxReport {
    /// Adds what the system-call filter refused in one run of the agent or a verify command.
    pub fn add_syscall_refusals(&mut self, source: RefusalSource, run: SyscallRefusals) {
        self.syscalls_refused_total = self.syscalls_refused_total.saturating_add(run.total);
        self.proxied_connections = self.proxied_connections.saturating_add(run.proxied);
        for refusal in run.refused {
            let room = self.syscalls_refused.len() < super::MAX_REFUSALS;
            let same = self.syscalls_refused.iter_mut().find(|seen| {
                seen.source == source
                    && seen.refusal.call == refusal.call
                    && seen.refusal.detail == refusal.detail
                    && seen.refusal.command == refusal.command
            });
            match same {
                Some(seen) => seen.refusal.count = seen.refusal.count.saturating_add(refusal.count),
                None if room => {
                    self.syscalls_refused
                        .push(SyscallRefusalSeen { source, refusal });
                }
                None => {}
            }
        }
    }

    /// Adds refusals, keeping the list bounded and counting them all.
    pub fn add_refusals(&mut self, found: Vec<Refusal>) {
        for refusal in found {
            if self.refused.contains(&refusal) {
                continue;
            }
            self.refused_total += 1;
            if self.refused.len() < super::MAX_REFUSALS {
                self.refused.push(refusal);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::egress::{AddressClass, Connection, Method, Refused, Verdict};
    use crate::time::Timestamp;

    #[test]
    fn the_egress_section_shape_is_stable() {
        let at = Timestamp::parse("2026-04-15T10:20:00+09:00").expect("ts");
        let later = Timestamp::parse("2026-04-15T10:20:03+09:00").expect("ts");
        let connection =
            |host: &str, port, address: Option<&str>, verdict, sent, received| Connection {
                method: Method::Connect,
                host: host.into(),
                port,
                address: address.map(str::to_owned),
                verdict,
                sent,
                received,
                started: at,
                ended: later,
            };
        let report = EgressReport {
            not_applied: None,
            endpoints: vec![Endpoint {
                host: "127.0.0.1".into(),
                port: 11434,
                configured: true,
            }],
            allowed_hosts: vec![
                HostPattern::parse("pypi.org").expect("p"),
                HostPattern::parse("*.npmjs.org").expect("p"),
            ],
            agent: Connections {
                listed: vec![
                    connection(
                        "127.0.0.1",
                        11434,
                        Some("127.0.0.1:11434"),
                        Verdict::Admitted,
                        812,
                        20480,
                    ),
                    connection(
                        "evil.example",
                        443,
                        None,
                        Verdict::Refused(Refused::NotAllowed),
                        0,
                        0,
                    ),
                    connection(
                        "localhost",
                        8765,
                        Some("127.0.0.1:8765"),
                        Verdict::Refused(Refused::Address {
                            class: AddressClass::Loopback,
                        }),
                        0,
                        0,
                    ),
                ],
                total: 3,
                refused: 2,
            },
            verify: Connections::default(),
        };
        insta::assert_json_snapshot!(report);
        let fallback = EgressReport {
            not_applied: Some("the kernel's Landlock has no network rules".into()),
            ..EgressReport::default()
        };
        insta::assert_json_snapshot!(fallback);
    }

    #[test]
    fn the_report_shape_is_stable() {
        let mut report = SandboxReport {
            mode: SandboxMode::Auto,
            applied: true,
            not_applied: None,
            enforcement: Some(Enforcement::Full),
            landlock_abi: Some(7),
            writable: vec![
                "<data>/worktrees/project-0123/task-t1".into(),
                "<data>/worktrees/project-0123/task-t1.agent".into(),
            ],
            network: Network::Restricted {
                connect_tcp: vec![11434],
            },
            verify_confined: true,
            denied_read: vec![
                "~/.ssh".into(),
                "~/.config/gh".into(),
                "~/.config/butler".into(),
            ],
            refused: Vec::new(),
            refused_total: 0,
            syscall_filter: true,
            syscalls_refused: Vec::new(),
            syscalls_refused_total: 0,
            proxied_connections: 0,
            egress: None,
        };
        report.add_syscall_refusals(
            RefusalSource::Agent,
            SyscallRefusals {
                refused: vec![SyscallRefusal {
                    call: "connect".into(),
                    detail: "203.0.113.7:443".into(),
                    command: "python3".into(),
                    count: 1,
                }],
                total: 1,
                proxied: 3,
            },
        );
        report.add_refusals(super::super::scan_refusals(
            "touch: cannot touch '/home/me/.bashrc': Permission denied\n\
             fatal: Unable to create '/p/.git/worktrees/task-t1/index.lock': Permission denied\n",
            RefusalSource::Agent,
        ));
        insta::assert_json_snapshot!(report);
        let unavailable = SandboxReport {
            mode: SandboxMode::Auto,
            applied: false,
            not_applied: Some(
                "the kernel offers no Landlock (not built in, or disabled at boot)".into(),
            ),
            enforcement: None,
            landlock_abi: None,
            writable: vec![],
            network: Network::Open,
            verify_confined: false,
            denied_read: vec![],
            refused: vec![],
            refused_total: 0,
            syscall_filter: false,
            syscalls_refused: vec![],
            syscalls_refused_total: 0,
            proxied_connections: 0,
            egress: None,
        };
        insta::assert_json_snapshot!(unavailable);
    }
}
