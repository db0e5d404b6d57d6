//! The sandbox's system-call filter with the real helper on this machine's kernel: a hostile
//! program (Python, which reaches the system calls directly) tries every way out the filter
//! closes — a server of its own on the proxy's port at another address (the port Landlock
//! allows on every host), TCP Fast Open, datagrams, a UNIX socket listening by path and an
//! abstract one, tracing, a new user namespace, typing into a terminal, the kernel's key ring —
//! while its allowed work (connections to the proxy, blocking and not, socket pairs, child
//! processes, a test's own server on loopback) goes on. The supervisor's account lists each refusal.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::os::unix::net::UnixListener;
use std::path::Path;
use std::time::Duration;

use butler_worker::sandbox::syscalls::SyscallRefusals;
use butler_worker::sandbox::{HelperReport, Network, Policy, SandboxMode};

const HELPER: &str = env!("CARGO_BIN_EXE_sandbox-exec");
const PYTHON: &str = "/usr/bin/python3";

const HOSTILE: &str = r#"
import ctypes, os, select, socket, subprocess, sys
proxy, other, unix_path, service = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
libc = ctypes.CDLL(None, use_errno=True)
def addr(s):
    host, port = s.rsplit(":", 1)
    return (host, int(port))
def attempt(name, f):
    try:
        r = f()
        print(name, "ok", r, flush=True)
    except OSError as e:
        print(name, "refused", e.errno, flush=True)
def blocking():
    c = socket.create_connection(addr(proxy), timeout=5)
    return c.recv(64).decode().strip()
def nonblocking():
    c = socket.socket()
    c.setblocking(False)
    try:
        c.connect(addr(proxy))
    except BlockingIOError:
        pass
    select.select([c], [], [], 5)
    return c.recv(64).decode().strip()
def elsewhere():
    socket.create_connection(addr(other), timeout=5).recv(64)
def fastopen():
    s = socket.socket()
    s.sendto(b"secret", 0x20000000, addr(other))
def udp():
    socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"secret", ("127.0.0.1", 9))
def unix_path_socket():
    socket.socket(socket.AF_UNIX).connect(unix_path)
def unix_abstract():
    socket.socket(socket.AF_UNIX).connect("\0butler-test-bus")
def pair():
    a, b = socket.socketpair()
    a.sendall(b"x")
    return b.recv(1).decode()
def child():
    return subprocess.run(["/bin/sh", "-c", "echo child"], capture_output=True, text=True).stdout.strip()
def errno_call(f):
    def run():
        if f() == -1:
            raise OSError(ctypes.get_errno(), "")
    return run
def own_server():
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("0.0.0.0", 0))
    srv.listen()
    host, port = srv.getsockname()
    c = socket.create_connection(("127.0.0.1", port), timeout=5)
    a, _ = srv.accept()
    a.sendall(b"own")
    return host + " " + c.recv(10).decode()
def bind_outside():
    socket.socket().bind(("192.0.2.1", 0))
def service_behind_own_port():
    # A server of its own on the same port as a service of the machine, another loopback
    # address: the service stays out of reach.
    srv = socket.socket()
    srv.bind(("127.0.0.2", service))
    srv.listen()
    socket.create_connection(("127.0.0.1", service), timeout=5).recv(10)
attempt("own_server", own_server)
attempt("service_behind_own_port", service_behind_own_port)
attempt("bind_outside", bind_outside)
attempt("proxy", blocking)
attempt("proxy_nonblocking", nonblocking)
attempt("other_host_same_port", elsewhere)
attempt("fast_open", fastopen)
attempt("udp", udp)
attempt("unix_path", unix_path_socket)
attempt("unix_abstract", unix_abstract)
attempt("socketpair", pair)
attempt("child", child)
attempt("ptrace", errno_call(lambda: libc.ptrace(0, 0, None, None)))
attempt("new_user_namespace", errno_call(lambda: libc.unshare(0x10000000)))
attempt("tiocsti", errno_call(lambda: libc.ioctl(0, 0x5412, ctypes.c_char_p(b"x"))))
attempt("keyring", errno_call(lambda: libc.syscall(250, 0, -3, 0, 0, 0)))
"#;

/// Serves one line per connection; returns what each connection sent before closing.
fn serve(listener: TcpListener, greeting: &'static str) -> std::sync::mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut stream = stream;
            let _ = stream.write_all(greeting.as_bytes());
            let _ = stream.set_read_timeout(Some(Duration::from_millis(300)));
            let mut got = Vec::new();
            let _ = stream.read_to_end(&mut got);
            let _ = tx.send(got);
        }
    });
    rx
}

fn run_hostile(
    dir: &Path,
    network: Network,
    proxy: &str,
    other: &str,
    unix: &Path,
    service: u16,
) -> String {
    let policy = Policy::new(SandboxMode::Required, vec![dir.to_path_buf()], network);
    policy.write_to(&dir.join("policy.json")).expect("policy");
    // The test stands for Butler, which starts the helper.
    #[allow(clippy::disallowed_methods)]
    let out = std::process::Command::new(HELPER)
        .arg("--policy")
        .arg(dir.join("policy.json"))
        .arg("--report")
        .arg(dir.join("report.json"))
        .arg("--syscalls")
        .arg(dir.join("syscalls.jsonl"))
        .args(["--", PYTHON, "-c", HOSTILE, proxy, other])
        .arg(unix)
        .arg(service.to_string())
        .current_dir(dir)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("helper runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

fn outcome<'a>(stdout: &'a str, name: &str) -> &'a str {
    stdout
        .lines()
        .find_map(|l| l.strip_prefix(name).and_then(|r| r.strip_prefix(' ')))
        .unwrap_or_else(|| panic!("{name} not tried:\n{stdout}"))
}

#[test]
fn behind_the_proxy_only_the_proxy_is_reached_and_every_refusal_is_accounted() {
    let dir = tempfile::tempdir().expect("tempdir");
    let proxy = TcpListener::bind("127.0.0.1:0").expect("proxy");
    let port = proxy.local_addr().expect("addr").port();
    // The agent's own server on the proxy's port, at another address of this machine.
    let other = TcpListener::bind(("127.0.0.2", port)).expect("same port elsewhere");
    let unix_path = dir.path().join("agent.sock");
    let unix = UnixListener::bind(&unix_path).expect("unix listener");
    unix.set_nonblocking(true).expect("nonblocking");
    let proxied = serve(proxy, "proxy\n");
    let leaked = serve(other, "exfil\n");
    let service = TcpListener::bind("127.0.0.1:0").expect("service");
    let service_port = service.local_addr().expect("addr").port();
    let reached = serve(service, "service\n");
    let network = Network::Proxy {
        proxy: format!("127.0.0.1:{port}").parse().expect("addr"),
    };
    let stdout = run_hostile(
        dir.path(),
        network,
        &format!("127.0.0.1:{port}"),
        &format!("127.0.0.2:{port}"),
        &unix_path,
        service_port,
    );
    assert_eq!(outcome(&stdout, "proxy"), "ok proxy", "{stdout}");
    assert_eq!(outcome(&stdout, "proxy_nonblocking"), "ok proxy");
    assert_eq!(outcome(&stdout, "socketpair"), "ok x");
    assert_eq!(outcome(&stdout, "child"), "ok child");
    // A test's own server: bound on loopback (the wildcard address is bound as loopback) and
    // reached by its own client.
    assert_eq!(outcome(&stdout, "own_server"), "ok 127.0.0.1 own");
    let eacces = format!("refused {}", libc::EACCES);
    let eperm = format!("refused {}", libc::EPERM);
    for name in [
        "other_host_same_port",
        "fast_open",
        "udp",
        "unix_path",
        "unix_abstract",
        "bind_outside",
        "service_behind_own_port",
    ] {
        assert_eq!(outcome(&stdout, name), eacces, "{name}: {stdout}");
    }
    for name in ["ptrace", "new_user_namespace", "tiocsti", "keyring"] {
        assert_eq!(outcome(&stdout, name), eperm, "{name}: {stdout}");
    }
    assert!(
        leaked.try_recv().is_err(),
        "the agent's own server was reached"
    );
    assert!(
        reached.try_recv().is_err(),
        "the machine's service was reached"
    );
    assert!(unix.accept().is_err(), "the UNIX socket was reached");
    assert_eq!(
        proxied.recv_timeout(Duration::from_secs(5)).ok(),
        Some(Vec::new())
    );

    let report: HelperReport = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("report.json")).expect("report"),
    )
    .expect("json");
    assert!(report.syscall_filter, "{report:?}");
    let account: SyscallRefusals = serde_json::from_str(
        std::fs::read_to_string(dir.path().join("syscalls.jsonl"))
            .expect("account")
            .lines()
            .next()
            .expect("a line"),
    )
    .expect("json");
    assert_eq!(account.proxied, 2, "{account:?}");
    let listed: Vec<(String, String)> = account
        .refused
        .iter()
        .map(|r| (r.call.clone(), r.detail.clone()))
        .collect();
    for expected in [
        ("connect", format!("127.0.0.2:{port}")),
        ("sendto", "MSG_FASTOPEN".to_owned()),
        ("socket", "ipv4 datagram".to_owned()),
        ("socket", "unix stream".to_owned()),
        ("ptrace", String::new()),
        ("unshare", "new namespace".to_owned()),
        ("ioctl", "TIOCSTI".to_owned()),
        ("keyctl", String::new()),
        ("bind", "192.0.2.1:0".to_owned()),
    ] {
        let expected = (expected.0.to_owned(), expected.1);
        assert!(listed.contains(&expected), "{expected:?} not in {listed:?}");
    }
    assert!(
        account.refused.iter().all(|r| r.command == "python3"),
        "{account:?}"
    );
}

#[test]
fn with_an_open_network_datagrams_pass_and_unix_sockets_stay_closed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = TcpListener::bind("127.0.0.1:0").expect("server");
    let addr = server.local_addr().expect("addr").to_string();
    let _served = serve(server, "server\n");
    let unix_path = dir.path().join("agent.sock");
    let _unix = UnixListener::bind(&unix_path).expect("unix listener");
    let stdout = run_hostile(dir.path(), Network::Open, &addr, &addr, &unix_path, 1);
    assert_eq!(outcome(&stdout, "proxy"), "ok server", "{stdout}");
    assert!(outcome(&stdout, "udp").starts_with("ok"), "{stdout}");
    assert_eq!(
        outcome(&stdout, "unix_path"),
        format!("refused {}", libc::EACCES)
    );
    assert_eq!(
        outcome(&stdout, "new_user_namespace"),
        format!("refused {}", libc::EPERM)
    );
}

#[test]
fn no_capability_reaches_the_command_and_butlers_environment_stays_unreadable() {
    let dir = tempfile::tempdir().expect("tempdir");
    let policy = Policy::new(
        SandboxMode::Required,
        vec![dir.path().to_path_buf()],
        Network::Open,
    );
    policy
        .write_to(&dir.path().join("policy.json"))
        .expect("policy");
    // This test stands for Butler: its own environment is what the command must not read.
    let me = std::process::id();
    let script = format!(
        "grep -E '^Cap(Prm|Eff|Bnd|Amb)' /proc/self/status; \
         if cat /proc/{me}/environ >/dev/null 2>&1; then echo environ read; else echo environ refused; fi"
    );
    #[allow(clippy::disallowed_methods)]
    let out = std::process::Command::new(HELPER)
        .arg("--policy")
        .arg(dir.path().join("policy.json"))
        .args(["--", "/bin/sh", "-c", &script])
        .env("BUTLER_GITEA_TOKEN", "tok-never-to-the-agent")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("helper runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for set in ["CapPrm", "CapEff", "CapBnd", "CapAmb"] {
        assert!(
            stdout.contains(&format!("{set}:\t0000000000000000")),
            "{set} not empty:\n{stdout}"
        );
    }
    assert!(stdout.contains("environ refused"), "{stdout}");
}
