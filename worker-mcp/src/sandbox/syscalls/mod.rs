//! The system-call filter of a confined command: what Landlock does not cover, refused by a
//! seccomp filter the helper's second stage installs before it becomes the command (inherited by
//! everything it starts, never lifted), and answered by the helper's first stage — the reaper,
//! outside the sandbox — which receives the filter's listener and so sees every refused call.
//!
//! Refused in every confined mode: creating UNIX sockets other than connected pairs (no ssh
//! agent, Docker socket or desktop bus by path, no abstract socket outside), other address
//! families than IPv4/IPv6 and the kernel's route information (no packet, raw, vsock, …),
//! `ptrace` and reading or writing another process's memory, new namespaces (`unshare`,
//! `clone`), `TIOCSTI`/`TIOCLINUX` (typing into a terminal), the kernel's key rings, TCP Fast
//! Open (a connection opened by `sendto`, which skips `connect`'s checks). `io_uring` answers
//! "not here" (its operations would skip the filter) and `clone3` too (its flags are in memory
//! the filter cannot read; the C library then uses `clone`).
//!
//! With the task's egress proxy ([`Network::Proxy`]) no datagram socket is allowed either, and
//! every `connect` is handed to the supervisor, which reads the address from the process's
//! memory: the proxy's own address is connected **by the supervisor itself**, and the
//! connected socket put in place of the process's (so no later change of that memory can
//! redirect it); a loopback port a process of the sandbox listens on (a test's server) is
//! connected by the supervisor on the process's own socket; every other address is refused.
//! Landlock's port rule alone would allow the proxy's port on every host. `bind` is decided
//! there too: loopback only (the wildcard address is bound as loopback), so a test's server
//! works and nothing outside can connect in.

mod bpf;
mod kernel;
mod supervisor;

pub use supervisor::{Supervisor, SyscallRefusal, SyscallRefusals};

use std::os::fd::OwnedFd;

use bpf::{Action, CallRule, Case, Condition};

use super::policy::Network;

/// The `ioctl` that types into a terminal, and the console's, which can too.
const TIOCLINUX: u32 = 0x541C;
/// `sendto`/`sendmsg` flag opening a TCP connection without `connect`.
const MSG_FASTOPEN: u32 = 0x2000_0000;
/// `clone`/`unshare` flags making namespaces.
const NEW_NAMESPACES: u32 = (libc::CLONE_NEWUSER
    | libc::CLONE_NEWNS
    | libc::CLONE_NEWNET
    | libc::CLONE_NEWPID
    | libc::CLONE_NEWIPC
    | libc::CLONE_NEWUTS
    | libc::CLONE_NEWCGROUP) as u32;
const SOCK_TYPE_MASK: u32 = 0xf;

fn arg_u32(v: i32) -> u32 {
    v as u32
}

/// The cases of `socket(domain, type, protocol)` that are allowed.
fn socket_cases(network: &Network) -> Vec<Case> {
    let allow = |when: Vec<Condition>| Case {
        when,
        then: Action::Allow,
    };
    let mut cases = Vec::new();
    for family in [libc::AF_INET, libc::AF_INET6] {
        for protocol in [0, libc::IPPROTO_TCP] {
            cases.push(allow(vec![
                Condition::equals(0, arg_u32(family)),
                Condition {
                    arg: 1,
                    mask: SOCK_TYPE_MASK,
                    value: arg_u32(libc::SOCK_STREAM),
                },
                Condition::equals(2, arg_u32(protocol)),
            ]));
        }
        if !matches!(network, Network::Proxy { .. }) {
            cases.push(allow(vec![
                Condition::equals(0, arg_u32(family)),
                Condition {
                    arg: 1,
                    mask: SOCK_TYPE_MASK,
                    value: arg_u32(libc::SOCK_DGRAM),
                },
            ]));
        }
    }
    // Interface and route information (the C library's resolver asks it which address families
    // the machine has); it sends nothing anywhere.
    cases.push(allow(vec![
        Condition::equals(0, arg_u32(libc::AF_NETLINK)),
        Condition::equals(2, arg_u32(libc::NETLINK_ROUTE)),
    ]));
    cases
}

/// The filter's rules for a command whose network is `network`.
pub(crate) fn rules(network: &Network) -> Vec<CallRule> {
    let fastopen = |nr: i64, flags_arg: u8| CallRule {
        nr,
        cases: vec![Case {
            when: vec![Condition::clear(flags_arg, MSG_FASTOPEN)],
            then: Action::Allow,
        }],
        otherwise: Action::Notify,
    };
    let no_namespace = |nr: i64| CallRule {
        nr,
        cases: vec![Case {
            when: vec![Condition::clear(0, NEW_NAMESPACES)],
            then: Action::Allow,
        }],
        otherwise: Action::Notify,
    };
    let mut rules = vec![
        CallRule {
            nr: libc::SYS_socket,
            cases: socket_cases(network),
            otherwise: Action::Notify,
        },
        CallRule {
            nr: libc::SYS_socketpair,
            cases: vec![Case {
                when: vec![Condition::equals(0, arg_u32(libc::AF_UNIX))],
                then: Action::Allow,
            }],
            otherwise: Action::Notify,
        },
        fastopen(libc::SYS_sendto, 3),
        fastopen(libc::SYS_sendmsg, 2),
        fastopen(libc::SYS_sendmmsg, 3),
        CallRule::always(libc::SYS_ptrace, Action::Notify),
        CallRule::always(libc::SYS_process_vm_readv, Action::Notify),
        CallRule::always(libc::SYS_process_vm_writev, Action::Notify),
        no_namespace(libc::SYS_unshare),
        no_namespace(libc::SYS_clone),
        CallRule::always(libc::SYS_clone3, Action::Errno(libc::ENOSYS)),
        CallRule {
            nr: libc::SYS_ioctl,
            cases: vec![
                Case {
                    when: vec![Condition::equals(1, libc::TIOCSTI as u32)],
                    then: Action::Notify,
                },
                Case {
                    when: vec![Condition::equals(1, TIOCLINUX)],
                    then: Action::Notify,
                },
            ],
            otherwise: Action::Allow,
        },
        CallRule::always(libc::SYS_io_uring_setup, Action::Errno(libc::ENOSYS)),
        CallRule::always(libc::SYS_io_uring_enter, Action::Errno(libc::ENOSYS)),
        CallRule::always(libc::SYS_io_uring_register, Action::Errno(libc::ENOSYS)),
        CallRule::always(libc::SYS_keyctl, Action::Notify),
        CallRule::always(libc::SYS_add_key, Action::Notify),
        CallRule::always(libc::SYS_request_key, Action::Notify),
    ];
    if matches!(network, Network::Proxy { .. }) {
        rules.push(CallRule::always(libc::SYS_connect, Action::Notify));
        rules.push(CallRule::always(libc::SYS_bind, Action::Notify));
    }
    rules
}

/// Installs the filter for `network` on the calling thread and returns its listener, for the
/// supervisor. `no_new_privs` must be set (the Landlock restriction sets it).
pub(crate) fn install(network: &Network) -> Result<OwnedFd, String> {
    let program = bpf::compile(&rules(network), Action::Allow)?;
    kernel::install_with_listener(&program)
        .map_err(|e| format!("the system-call filter could not be installed: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use bpf::AUDIT_ARCH;

    fn decide(network: &Network, nr: i64, args: [u64; 6]) -> u32 {
        let prog = bpf::compile(&rules(network), Action::Allow).expect("compiles");
        bpf::tests::run(&prog, AUDIT_ARCH, nr as u32, args)
    }

    #[test]
    fn sockets_are_allowed_by_family_type_and_protocol() {
        let proxy = Network::Proxy {
            proxy: "127.0.0.1:3128".parse().expect("addr"),
        };
        let socket = |n: &Network, domain: i32, ty: i32, proto: i32| {
            decide(
                n,
                libc::SYS_socket,
                [domain as u64, ty as u64, proto as u64, 0, 0, 0],
            )
        };
        let allow = libc::SECCOMP_RET_ALLOW;
        let notify = libc::SECCOMP_RET_USER_NOTIF;
        let stream = libc::SOCK_STREAM | libc::SOCK_CLOEXEC | libc::SOCK_NONBLOCK;
        for n in [&proxy, &Network::Open] {
            assert_eq!(socket(n, libc::AF_INET, stream, 0), allow);
            assert_eq!(socket(n, libc::AF_INET6, stream, libc::IPPROTO_TCP), allow);
            assert_eq!(socket(n, libc::AF_INET, stream, libc::IPPROTO_SCTP), notify);
            assert_eq!(socket(n, libc::AF_UNIX, stream, 0), notify);
            assert_eq!(socket(n, libc::AF_UNIX, libc::SOCK_DGRAM, 0), notify);
            assert_eq!(socket(n, libc::AF_PACKET, libc::SOCK_RAW, 0), notify);
            assert_eq!(socket(n, libc::AF_INET, libc::SOCK_RAW, 1), notify);
            assert_eq!(socket(n, libc::AF_VSOCK, stream, 0), notify);
            assert_eq!(
                socket(n, libc::AF_NETLINK, libc::SOCK_RAW, libc::NETLINK_ROUTE),
                allow
            );
            assert_eq!(
                socket(n, libc::AF_NETLINK, libc::SOCK_RAW, libc::NETLINK_AUDIT),
                notify
            );
        }
        assert_eq!(socket(&proxy, libc::AF_INET, libc::SOCK_DGRAM, 0), notify);
        assert_eq!(
            socket(&Network::Open, libc::AF_INET, libc::SOCK_DGRAM, 0),
            allow
        );
        let connect = |n: &Network| decide(n, libc::SYS_connect, [3, 0, 16, 0, 0, 0]);
        assert_eq!(connect(&proxy), notify);
        assert_eq!(connect(&Network::Open), allow);
    }

    #[test]
    fn namespaces_terminals_tracing_and_fast_open_are_handed_over() {
        let n = Network::Open;
        let notify = libc::SECCOMP_RET_USER_NOTIF;
        let allow = libc::SECCOMP_RET_ALLOW;
        let clone_thread = (libc::CLONE_VM | libc::CLONE_THREAD | libc::CLONE_SIGHAND) as u64;
        assert_eq!(
            decide(&n, libc::SYS_clone, [clone_thread, 0, 0, 0, 0, 0]),
            allow
        );
        let new_user = libc::CLONE_NEWUSER as u64;
        assert_eq!(
            decide(&n, libc::SYS_clone, [new_user, 0, 0, 0, 0, 0]),
            notify
        );
        assert_eq!(
            decide(
                &n,
                libc::SYS_unshare,
                [libc::CLONE_NEWNET as u64, 0, 0, 0, 0, 0]
            ),
            notify
        );
        assert_eq!(
            decide(
                &n,
                libc::SYS_unshare,
                [libc::CLONE_FILES as u64, 0, 0, 0, 0, 0]
            ),
            allow
        );
        assert_eq!(
            decide(&n, libc::SYS_clone3, [0; 6]),
            libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32
        );
        assert_eq!(
            decide(
                &n,
                libc::SYS_ioctl,
                [0, u64::from(libc::TIOCSTI as u32), 0, 0, 0, 0]
            ),
            notify
        );
        assert_eq!(
            decide(
                &n,
                libc::SYS_ioctl,
                [0, u64::from(libc::TIOCGWINSZ as u32), 0, 0, 0, 0]
            ),
            allow
        );
        assert_eq!(decide(&n, libc::SYS_ptrace, [0; 6]), notify);
        assert_eq!(
            decide(&n, libc::SYS_sendto, [3, 0, 1, 0x2000_0040, 0, 0]),
            notify
        );
        assert_eq!(decide(&n, libc::SYS_sendto, [3, 0, 1, 0x40, 0, 0]), allow);
        assert_eq!(
            decide(&n, libc::SYS_sendmsg, [3, 0, 0x2000_0000, 0, 0, 0]),
            notify
        );
        assert_eq!(decide(&n, libc::SYS_keyctl, [0; 6]), notify);
        assert_eq!(decide(&n, libc::SYS_read, [0; 6]), allow);
    }
}
