//! The filter's supervisor, in the helper's first stage (outside the sandbox): receives the
//! listener from the second stage, answers every call the filter hands over, and keeps an
//! account of what it refused for the evidence.

use std::fs::File;
use std::io::{IoSliceMut, Read};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpStream};
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::fs::FileExt;
use std::os::unix::net::UnixStream;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::socket::{ControlMessageOwned, MsgFlags, recvmsg};
use serde::{Deserialize, Serialize};

use super::kernel;
use crate::process::reaper::Watch;

/// Distinct refusals listed per run (the total counts them all).
pub(crate) const MAX_LISTED: usize = 40;
/// How long the first stage waits for the second to hand the listener over.
const HANDOVER: Duration = Duration::from_secs(30);

/// One kind of refused call, as the evidence lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SyscallRefusal {
    /// The system call (`connect`, `socket`, `ptrace`, …).
    pub call: String,
    /// What it asked for: an address (`203.0.113.7:443`, `unix:/run/docker.sock`), a socket
    /// kind (`unix stream`), a flag (`TIOCSTI`).
    pub detail: String,
    /// The command name of the process that asked (it may have chosen it).
    pub command: String,
    /// How many times.
    pub count: u32,
}

/// What the supervisor did in one run (one JSON line of the helper's `--syscalls` file).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SyscallRefusals {
    /// The first [`MAX_LISTED`] distinct refusals.
    pub refused: Vec<SyscallRefusal>,
    /// Refused calls in all.
    pub total: u32,
    /// Connections to the egress proxy the supervisor opened for the command.
    #[serde(default)]
    pub proxied: u32,
}

/// Answers the calls handed over by the filter of one confined command.
#[derive(Debug)]
pub struct Supervisor {
    handover: Option<UnixStream>,
    /// The second stage's end of the handover socket, inherited by it and closed here once it
    /// started (so its end, if it dies before handing over, reads as closed).
    second_stage: Option<UnixStream>,
    /// The egress proxy: the one address `connect` may reach (when the network is the proxy).
    proxy: Option<SocketAddr>,
    /// Kept by the thread that answers, read when the command has ended.
    account: Arc<Mutex<SyscallRefusals>>,
}

/// The thread that answers the handed-over calls: receiving blocks until a call comes, so it
/// runs beside the reaper's loop, never in it (a call whose process died between a wake-up
/// and the receive would otherwise hold the reaper).
struct Answerer {
    listener: OwnedFd,
    proxy: Option<SocketAddr>,
    account: Arc<Mutex<SyscallRefusals>>,
}

impl Supervisor {
    /// A supervisor that will receive the listener from the second stage, and the descriptor
    /// number the second stage inherits to send it on (not close-on-exec: the first stage is
    /// single-threaded and starts nothing else meanwhile).
    pub(crate) fn handover(proxy: Option<SocketAddr>) -> std::io::Result<(Self, i32)> {
        use nix::fcntl::{FcntlArg, FdFlag, fcntl};
        let (mine, theirs) = UnixStream::pair()?;
        fcntl(&theirs, FcntlArg::F_SETFD(FdFlag::empty())).map_err(std::io::Error::from)?;
        let number = theirs.as_raw_fd();
        Ok((
            Self {
                handover: Some(mine),
                second_stage: Some(theirs),
                proxy,
                account: Arc::default(),
            },
            number,
        ))
    }

    /// The second stage's side: sends `listener` on the inherited descriptor `to`, then closes
    /// both (neither reaches the program).
    pub(crate) fn send_listener(to: i32, listener: OwnedFd) -> Result<(), String> {
        use nix::fcntl::{FcntlArg, FdFlag, fcntl};
        use nix::sys::socket::{ControlMessage, sendmsg};
        let socket = kernel::adopt(to).map_err(|e| format!("no handover socket: {e}"))?;
        let _ = fcntl(&socket, FcntlArg::F_SETFD(FdFlag::FD_CLOEXEC));
        let fds = [listener.as_raw_fd()];
        sendmsg::<()>(
            socket.as_raw_fd(),
            &[std::io::IoSlice::new(b"L")],
            &[ControlMessage::ScmRights(&fds)],
            MsgFlags::empty(),
            None,
        )
        .map_err(|e| format!("the filter's listener could not be handed over: {e}"))?;
        Ok(())
    }

    /// What it refused (`None` when nothing was handed over and nothing proxied).
    pub(crate) fn account(&self) -> Option<SyscallRefusals> {
        let account = self
            .account
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        (account.total > 0 || account.proxied > 0).then_some(account)
    }

    fn receive_listener(stream: &UnixStream) -> Option<OwnedFd> {
        let mut fds = [PollFd::new(stream.as_fd(), PollFlags::POLLIN)];
        let timeout = PollTimeout::try_from(HANDOVER).unwrap_or(PollTimeout::NONE);
        if poll(&mut fds, timeout).ok()? == 0 {
            return None;
        }
        let mut byte = [0u8; 1];
        let mut iov = [IoSliceMut::new(&mut byte)];
        let mut space = nix::cmsg_space!([std::os::fd::RawFd; 1]);
        let msg = recvmsg::<()>(
            stream.as_raw_fd(),
            &mut iov,
            Some(&mut space),
            MsgFlags::MSG_CMSG_CLOEXEC,
        )
        .ok()?;
        let mut received = None;
        for cmsg in msg.cmsgs().ok()? {
            if let ControlMessageOwned::ScmRights(fds) = cmsg {
                for fd in fds {
                    let owned = kernel::adopt(fd).ok();
                    if received.is_none() {
                        received = owned;
                    }
                }
            }
        }
        received
    }
}

impl Answerer {
    /// Answers calls until the listener fails (the process ends with the thread blocked in a
    /// receive when nothing is left to answer).
    fn run(self) {
        loop {
            match kernel::receive(self.listener.as_fd()) {
                Ok(notif) => self.answer(&notif),
                // The caller died before it was received, or the wait was interrupted.
                Err(e)
                    if e.raw_os_error() == Some(libc::ENOENT)
                        || e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => return,
            }
        }
    }

    /// Answers call `id` with `errno` (0: success).
    fn respond(&self, id: u64, errno: i32) {
        let _ = kernel::respond(self.listener.as_fd(), id, 0, errno);
    }

    /// The address a `connect` or `bind` names (argument 1, length argument 2), read from the
    /// process's memory; `None` when the call is no longer waiting (nothing to answer), `Some(None)`
    /// when the memory could not be read.
    fn address(&self, notif: &libc::seccomp_notif) -> Option<Option<Destination>> {
        let len = (notif.data.args[2] as usize).min(128);
        let raw = read_memory(notif.pid, notif.data.args[1], len);
        // Read first, then checked: a reused pid would have answered for another process.
        if !kernel::still_waiting(self.listener.as_fd(), notif.id) {
            return None;
        }
        Some(raw.map(|bytes| parse_address(&bytes)))
    }

    fn refuse(&self, id: u64, errno: i32, call: &str, detail: String, pid: u32) {
        self.respond(id, errno);
        let command = command_name(pid);
        let mut account = self
            .account
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        account.total = account.total.saturating_add(1);
        if let Some(seen) = account
            .refused
            .iter_mut()
            .find(|r| r.call == call && r.detail == detail && r.command == command)
        {
            seen.count = seen.count.saturating_add(1);
        } else if account.refused.len() < MAX_LISTED {
            account.refused.push(SyscallRefusal {
                call: call.to_owned(),
                detail,
                command,
                count: 1,
            });
        }
    }

    fn answer(&self, notif: &libc::seccomp_notif) {
        let nr = i64::from(notif.data.nr);
        let args = notif.data.args;
        let low = |i: usize| args[i] as u32 as i32;
        let (id, pid) = (notif.id, notif.pid);
        match nr {
            libc::SYS_connect => self.connect(notif),
            libc::SYS_bind => self.bind(notif),
            libc::SYS_socket => {
                let detail = socket_kind(low(0), low(1));
                self.refuse(id, libc::EACCES, "socket", detail, pid);
            }
            libc::SYS_socketpair => {
                let detail = socket_kind(low(0), low(1));
                self.refuse(id, libc::EACCES, "socketpair", detail, pid);
            }
            libc::SYS_sendto | libc::SYS_sendmsg | libc::SYS_sendmmsg => {
                let call = call_name(nr);
                self.refuse(id, libc::EACCES, call, "MSG_FASTOPEN".into(), pid);
            }
            libc::SYS_ioctl => {
                let detail = if low(1) as u32 == libc::TIOCSTI as u32 {
                    "TIOCSTI"
                } else {
                    "TIOCLINUX"
                };
                self.refuse(id, libc::EPERM, "ioctl", detail.into(), pid);
            }
            libc::SYS_clone | libc::SYS_unshare => {
                let call = call_name(nr);
                self.refuse(id, libc::EPERM, call, "new namespace".into(), pid);
            }
            _ => {
                let call = call_name(nr);
                self.refuse(id, libc::EPERM, call, String::new(), pid);
            }
        }
    }

    /// `bind(fd, addr, len)` behind the proxy: a TCP socket may listen on loopback only (a
    /// test's server); the wildcard address is bound as loopback. Bound by the supervisor on
    /// the process's own socket, to the address it checked.
    fn bind(&self, notif: &libc::seccomp_notif) {
        let (id, pid, fd) = (notif.id, notif.pid, notif.data.args[0] as u32);
        let Some(destination) = self.address(notif) else {
            return;
        };
        let Some(Destination::Inet(addr)) = destination else {
            let detail = destination.map_or_else(|| "unreadable address".into(), |d| d.to_string());
            self.refuse(id, libc::EACCES, "bind", detail, pid);
            return;
        };
        let local = match addr.ip() {
            IpAddr::V4(v4) if v4.is_unspecified() => {
                SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), addr.port())
            }
            IpAddr::V6(v6) if v6.is_unspecified() => {
                SocketAddr::new(IpAddr::V6(Ipv6Addr::LOCALHOST), addr.port())
            }
            ip if ip.is_loopback() => addr,
            IpAddr::V6(v6) if v6.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback()) => addr,
            _ => {
                self.refuse(id, libc::EACCES, "bind", addr.to_string(), pid);
                return;
            }
        };
        let answer = on_own_socket(pid, fd, |socket| {
            nix::sys::socket::bind(socket.as_raw_fd(), &socket_address(local))
        });
        self.respond(id, answer);
    }

    /// `connect(fd, addr, len)`: the proxy's address is connected by the supervisor and the
    /// socket put in place of `fd`; anything else is refused.
    fn connect(&self, notif: &libc::seccomp_notif) {
        let (id, pid, fd) = (notif.id, notif.pid, notif.data.args[0] as u32);
        let Some(destination) = self.address(notif) else {
            return;
        };
        let Some(destination) = destination else {
            self.refuse(
                id,
                libc::EACCES,
                "connect",
                "unreadable address".into(),
                pid,
            );
            return;
        };
        let to_proxy = match (&destination, self.proxy) {
            (Destination::Inet(addr), Some(proxy)) => same_endpoint(*addr, proxy),
            _ => false,
        };
        if let Destination::Inet(addr) = destination
            && !to_proxy
            && addr.ip().is_loopback()
            && listened_on_by_the_sandbox(addr)
        {
            // A server the command started itself (a test's): connected by the supervisor on
            // the process's own socket, to the address checked.
            let answer = on_own_socket(pid, fd, |socket| {
                nix::sys::socket::connect(socket.as_raw_fd(), &socket_address(addr))
            });
            self.respond(id, answer);
            return;
        }
        if !to_proxy {
            let detail = destination.to_string();
            self.refuse(id, libc::EACCES, "connect", detail, pid);
            return;
        }
        match self
            .proxy
            .map(|proxy| proxied(&self.listener, id, pid, fd, proxy))
        {
            Some(Ok(())) => {
                let mut account = self
                    .account
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                account.proxied = account.proxied.saturating_add(1);
            }
            Some(Err(e)) => self.respond(id, e.raw_os_error().unwrap_or(libc::ECONNREFUSED)),
            None => {}
        }
    }
}

/// Runs `call` on a duplicate of the process's descriptor `fd` (the same socket); the errno to
/// answer with (0: success).
fn on_own_socket(pid: u32, fd: u32, call: impl FnOnce(&OwnedFd) -> nix::Result<()>) -> i32 {
    let Some(tgid) = thread_group(pid) else {
        return libc::ESRCH;
    };
    match kernel::take_descriptor(tgid, fd) {
        Ok(socket) => match call(&socket) {
            Ok(()) => 0,
            Err(errno) => errno as i32,
        },
        Err(e) => e.raw_os_error().unwrap_or(libc::EBADF),
    }
}

/// The process (thread group) thread `tid` belongs to.
fn thread_group(tid: u32) -> Option<u32> {
    let status = std::fs::read_to_string(format!("/proc/{tid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("Tgid:"))?
        .trim()
        .parse()
        .ok()
}

fn socket_address(addr: SocketAddr) -> nix::sys::socket::SockaddrStorage {
    nix::sys::socket::SockaddrStorage::from(addr)
}

/// Whether a process of the sandbox (a descendant of the supervisor) listens on TCP `addr`
/// itself — that address and port, or the port on the wildcard address (`/proc/net/tcp*`,
/// matched by socket inode). Another address's listener on the same port does not count: a
/// sandbox server on `127.0.0.2:5432` opens no way to a database on `127.0.0.1:5432`.
fn listened_on_by_the_sandbox(addr: SocketAddr) -> bool {
    let inodes = listening_inodes(addr);
    if inodes.is_empty() {
        return false;
    }
    let me = nix::unistd::getpid();
    crate::process::reaper::descendants(me)
        .iter()
        .any(|(pid, ..)| {
            std::fs::read_dir(format!("/proc/{pid}/fd"))
                .into_iter()
                .flatten()
                .flatten()
                .filter_map(|entry| std::fs::read_link(entry.path()).ok())
                .filter_map(|target| {
                    target
                        .to_str()?
                        .strip_prefix("socket:[")?
                        .strip_suffix(']')?
                        .parse::<u64>()
                        .ok()
                })
                .any(|inode| inodes.contains(&inode))
        })
}

/// Socket inodes listening on TCP `addr` (its address and port, or its port on the wildcard
/// address), from the IPv4 and IPv6 tables.
fn listening_inodes(addr: SocketAddr) -> Vec<u64> {
    let want = canonical(addr.ip());
    let mut found = Vec::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let Ok(text) = std::fs::read_to_string(table) else {
            continue;
        };
        for line in text.lines().skip(1) {
            let fields: Vec<&str> = line.split_whitespace().collect();
            // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
            let (Some(local), Some(state), Some(inode)) =
                (fields.get(1), fields.get(3), fields.get(9))
            else {
                continue;
            };
            let Some((ip, port)) = table_address(local) else {
                continue;
            };
            let here = canonical(ip);
            if *state == "0A"
                && port == addr.port()
                && (here == want || here.is_unspecified())
                && let Ok(inode) = inode.parse()
            {
                found.push(inode);
            }
        }
    }
    found
}

/// An address as `/proc/net/tcp*` writes it: hex, each 32-bit word in the machine's order.
fn table_address(field: &str) -> Option<(IpAddr, u16)> {
    let (hex, port) = field.rsplit_once(':')?;
    let port = u16::from_str_radix(port, 16).ok()?;
    let words: Vec<u32> = (0..hex.len() / 8)
        .map(|i| u32::from_str_radix(hex.get(i * 8..i * 8 + 8)?, 16).ok())
        .collect::<Option<_>>()?;
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_ne_bytes()).collect();
    match bytes.len() {
        4 => Some((
            IpAddr::V4(Ipv4Addr::new(bytes[0], bytes[1], bytes[2], bytes[3])),
            port,
        )),
        16 => {
            let mut octets = [0u8; 16];
            octets.copy_from_slice(&bytes);
            Some((IpAddr::V6(Ipv6Addr::from(octets)), port))
        }
        _ => None,
    }
}

/// IPv4 written as IPv6 (`::ffff:a.b.c.d`) read as the IPv4 address.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        IpAddr::V4(_) => ip,
    }
}

/// Opens a connection to the proxy, puts it in place of the process's `fd` (with its
/// non-blocking and close-on-exec flags) and answers `connect` with success.
fn proxied(
    listener: &OwnedFd,
    id: u64,
    pid: u32,
    fd: u32,
    proxy: SocketAddr,
) -> std::io::Result<()> {
    let flags = descriptor_flags(pid, fd).unwrap_or(0);
    let stream = TcpStream::connect_timeout(&proxy, Duration::from_secs(5))?;
    stream.set_nonblocking(flags & libc::O_NONBLOCK as u32 != 0)?;
    kernel::install_descriptor(
        listener.as_fd(),
        id,
        stream.as_fd(),
        fd,
        flags & libc::O_CLOEXEC as u32 != 0,
    )?;
    kernel::respond(listener.as_fd(), id, 0, 0)
}

impl Watch for Supervisor {
    fn started(&mut self) {
        self.second_stage = None;
        let Some(stream) = self.handover.take() else {
            return;
        };
        let Some(listener) = Self::receive_listener(&stream) else {
            return;
        };
        let answerer = Answerer {
            listener,
            proxy: self.proxy,
            account: Arc::clone(&self.account),
        };
        // Started after the reaper blocked its signals: the thread keeps them blocked, so they
        // still reach the reaper's signal file.
        let _ = std::thread::Builder::new()
            .name("seccomp-answer".into())
            .spawn(move || answerer.run());
    }
}

/// Reads `len` bytes at `address` in process `pid` (the supervisor is its ancestor, outside
/// its sandbox).
fn read_memory(pid: u32, address: u64, len: usize) -> Option<Vec<u8>> {
    let file = File::open(format!("/proc/{pid}/mem")).ok()?;
    let mut bytes = vec![0u8; len];
    file.read_exact_at(&mut bytes, address).ok()?;
    Some(bytes)
}

/// The file status flags of `fd` in process `pid` (`/proc/<pid>/fdinfo`, octal).
fn descriptor_flags(pid: u32, fd: u32) -> Option<u32> {
    let mut text = String::new();
    File::open(format!("/proc/{pid}/fdinfo/{fd}"))
        .ok()?
        .read_to_string(&mut text)
        .ok()?;
    let line = text.lines().find_map(|l| l.strip_prefix("flags:"))?;
    u32::from_str_radix(line.trim(), 8).ok()
}

fn command_name(pid: u32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .map(|c| c.trim_end().chars().take(16).collect())
        .unwrap_or_default()
}

/// Where a `connect` was going.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Destination {
    Inet(SocketAddr),
    Unix(String),
    Other(u16),
}

impl std::fmt::Display for Destination {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Inet(addr) => write!(f, "{addr}"),
            Self::Unix(path) => write!(f, "unix:{path}"),
            Self::Other(family) => write!(f, "address family {family}"),
        }
    }
}

fn parse_address(bytes: &[u8]) -> Destination {
    let family = match bytes {
        [a, b, ..] => u16::from_ne_bytes([*a, *b]),
        _ => return Destination::Other(0),
    };
    let port = |b: &[u8]| u16::from_be_bytes([b[2], b[3]]);
    match i32::from(family) {
        libc::AF_INET if bytes.len() >= 8 => {
            let ip = Ipv4Addr::new(bytes[4], bytes[5], bytes[6], bytes[7]);
            Destination::Inet(SocketAddr::new(IpAddr::V4(ip), port(bytes)))
        }
        libc::AF_INET6 if bytes.len() >= 24 => {
            let mut octets = [0u8; 16];
            octets.copy_from_slice(&bytes[8..24]);
            Destination::Inet(SocketAddr::new(
                IpAddr::V6(Ipv6Addr::from(octets)),
                port(bytes),
            ))
        }
        libc::AF_UNIX => {
            let path = &bytes[2..];
            let shown = match path.first() {
                Some(0) => format!(
                    "@{}",
                    String::from_utf8_lossy(path[1..].split(|b| *b == 0).next().unwrap_or(&[]))
                ),
                _ => String::from_utf8_lossy(path.split(|b| *b == 0).next().unwrap_or(&[]))
                    .into_owned(),
            };
            Destination::Unix(shown.chars().take(200).collect())
        }
        _ => Destination::Other(family),
    }
}

/// Whether `addr` is the proxy's address (an IPv4-mapped IPv6 spelling included).
fn same_endpoint(addr: SocketAddr, proxy: SocketAddr) -> bool {
    let canonical = |a: SocketAddr| match a.ip() {
        IpAddr::V6(v6) => v6
            .to_ipv4_mapped()
            .map_or(a, |v4| SocketAddr::new(IpAddr::V4(v4), a.port())),
        IpAddr::V4(_) => a,
    };
    canonical(addr) == canonical(proxy)
}

fn socket_kind(domain: i32, ty: i32) -> String {
    let family = match domain {
        libc::AF_UNIX => "unix".to_owned(),
        libc::AF_INET => "ipv4".to_owned(),
        libc::AF_INET6 => "ipv6".to_owned(),
        libc::AF_NETLINK => "netlink".to_owned(),
        libc::AF_PACKET => "packet".to_owned(),
        libc::AF_VSOCK => "vsock".to_owned(),
        n => format!("family {n}"),
    };
    let kind = match ty & 0xf {
        libc::SOCK_STREAM => "stream".to_owned(),
        libc::SOCK_DGRAM => "datagram".to_owned(),
        libc::SOCK_RAW => "raw".to_owned(),
        libc::SOCK_SEQPACKET => "seqpacket".to_owned(),
        n => format!("type {n}"),
    };
    format!("{family} {kind}")
}

fn call_name(nr: i64) -> &'static str {
    match nr {
        libc::SYS_connect => "connect",
        libc::SYS_bind => "bind",
        libc::SYS_socket => "socket",
        libc::SYS_socketpair => "socketpair",
        libc::SYS_sendto => "sendto",
        libc::SYS_sendmsg => "sendmsg",
        libc::SYS_sendmmsg => "sendmmsg",
        libc::SYS_ptrace => "ptrace",
        libc::SYS_process_vm_readv => "process_vm_readv",
        libc::SYS_process_vm_writev => "process_vm_writev",
        libc::SYS_unshare => "unshare",
        libc::SYS_clone => "clone",
        libc::SYS_ioctl => "ioctl",
        libc::SYS_keyctl => "keyctl",
        libc::SYS_add_key => "add_key",
        libc::SYS_request_key => "request_key",
        _ => "system call",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sockaddr_in(ip: [u8; 4], port: u16) -> Vec<u8> {
        let mut b = (libc::AF_INET as u16).to_ne_bytes().to_vec();
        b.extend(port.to_be_bytes());
        b.extend(ip);
        b.extend([0u8; 8]);
        b
    }

    #[test]
    fn addresses_are_read_as_the_kernel_reads_them() {
        let proxy: SocketAddr = "127.0.0.1:3128".parse().expect("addr");
        let to = parse_address(&sockaddr_in([127, 0, 0, 1], 3128));
        assert_eq!(to, Destination::Inet(proxy));
        let Destination::Inet(a) = to else { panic!() };
        assert!(same_endpoint(a, proxy));
        let elsewhere = parse_address(&sockaddr_in([203, 0, 113, 7], 3128));
        assert_eq!(elsewhere.to_string(), "203.0.113.7:3128");
        let Destination::Inet(e) = elsewhere else {
            panic!()
        };
        assert!(!same_endpoint(e, proxy), "same port, another host");
        let mut v6 = (libc::AF_INET6 as u16).to_ne_bytes().to_vec();
        v6.extend(3128u16.to_be_bytes());
        v6.extend([0u8; 4]);
        v6.extend(Ipv4Addr::new(127, 0, 0, 1).to_ipv6_mapped().octets());
        v6.extend([0u8; 4]);
        let Destination::Inet(mapped) = parse_address(&v6) else {
            panic!()
        };
        assert!(same_endpoint(mapped, proxy));
        let mut unix = (libc::AF_UNIX as u16).to_ne_bytes().to_vec();
        unix.extend(b"/run/docker.sock\0junk");
        assert_eq!(parse_address(&unix).to_string(), "unix:/run/docker.sock");
        let mut abstract_ = (libc::AF_UNIX as u16).to_ne_bytes().to_vec();
        abstract_.extend(b"\0bus\0");
        assert_eq!(parse_address(&abstract_).to_string(), "unix:@bus");
        assert_eq!(parse_address(&[0]).to_string(), "address family 0");
    }

    #[test]
    fn listening_addresses_are_read_as_the_kernel_writes_them() {
        assert_eq!(
            table_address("0100007F:1F90"),
            Some(("127.0.0.1".parse().expect("ip"), 8080))
        );
        assert_eq!(
            table_address("0200007F:0016"),
            Some(("127.0.0.2".parse().expect("ip"), 22))
        );
        assert_eq!(
            table_address("00000000000000000000000001000000:0050"),
            Some(("::1".parse().expect("ip"), 80))
        );
        assert_eq!(
            canonical(
                table_address("0000000000000000FFFF00000100007F:0050")
                    .expect("v6")
                    .0
            ),
            "127.0.0.1".parse::<IpAddr>().expect("ip")
        );
        assert_eq!(table_address("garbage"), None);
    }

    #[test]
    fn the_account_shape_is_stable() {
        let account = SyscallRefusals {
            refused: vec![SyscallRefusal {
                call: "connect".into(),
                detail: "203.0.113.7:443".into(),
                command: "curl".into(),
                count: 2,
            }],
            total: 2,
            proxied: 1,
        };
        insta::assert_json_snapshot!(account);
    }
}
