//! A scriptable stand-in for an implementation agent, for tests.
//!
//! It accepts the command lines of every adapter (goose, claude, codex, aider) and ignores what
//! it does not need: it reads the prompt from stdin (or aider's `--message-file` / `--message`),
//! changes directory for codex's `-C`, then plays one attempt of the script named by the
//! environment variable `FAKE_AGENT_SCRIPT`.
//!
//! The script has one JSON array of actions per line, one line per attempt; a counter file
//! `<script>.attempt` beside it picks the line (the last line is repeated once they run out).
//! When the script's directory is not writable (the agent runs in a sandbox), the counter is
//! kept in `$TMPDIR/fake-agent.attempt` instead (the task's own temp dir, kept across attempts).
//! Actions (`{"do": …}`):
//! `write {path, text}`, `append {path, text}`, `delete {path}`, `sh {cmd}` (`sh -c`, e.g.
//! `git commit`), `sleep {ms}`, `hang`, `print {text?, bytes?}` (stdout), `eprint {text}`
//! (stderr), `exit {code}`, `crash` (abort), `record_prompt {path}`, `record_args {path}`,
//! `record_env {path}`, `mcp {calls: [{tool, arguments}], record?}` (starts the MCP server
//! named by the first `--with-extension` argument, in goose's syntax, and speaks
//! newline-delimited JSON-RPC to it: `initialize`, `notifications/initialized`, then one
//! `tools/call` per call; the responses are written to `record` when given). Relative paths
//! are relative to the working directory. Without an `exit` it exits 0.
//!
//! Actions that probe a sandbox report their outcome on stderr (`fake-agent: <what>: ok` or
//! `fake-agent: <what>: <error>`) and go on either way: `try_write {path, text}`,
//! `try_delete {path}`, `connect {port, host?}` (a TCP connection, default host `127.0.0.1`),
//! `getenv {name}` (prints `fake-agent: NAME=<value>` or `fake-agent: NAME is unset`).
//! Tests find it with `butler_testkit::fake_agent()`, which asks it (`--testkit-fingerprint`,
//! the only argument) which source it was built from.
#![allow(
    clippy::disallowed_methods,
    reason = "an agent's stand-in starts what an agent would: `sh` and its MCP server"
)]

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use butler_testkit::fake_agent;
use serde::Deserialize;

#[derive(Debug, Deserialize)]
#[serde(tag = "do", rename_all = "snake_case")]
enum Action {
    Write {
        path: PathBuf,
        text: String,
    },
    Append {
        path: PathBuf,
        text: String,
    },
    Delete {
        path: PathBuf,
    },
    Sh {
        cmd: String,
    },
    Sleep {
        ms: u64,
    },
    Hang,
    Print {
        #[serde(default)]
        text: Option<String>,
        #[serde(default)]
        bytes: Option<u64>,
    },
    Eprint {
        text: String,
    },
    Exit {
        code: i32,
    },
    Crash,
    RecordPrompt {
        path: PathBuf,
    },
    RecordArgs {
        path: PathBuf,
    },
    RecordEnv {
        path: PathBuf,
    },
    Mcp {
        calls: Vec<McpCall>,
        #[serde(default)]
        record: Option<PathBuf>,
    },
    TryWrite {
        path: PathBuf,
        text: String,
    },
    TryDelete {
        path: PathBuf,
    },
    Connect {
        port: u16,
        #[serde(default)]
        host: Option<String>,
    },
    Getenv {
        name: String,
    },
}

#[derive(Debug, Deserialize)]
struct McpCall {
    tool: String,
    #[serde(default)]
    arguments: serde_json::Value,
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args == [fake_agent::FINGERPRINT_ARG] {
        let source = fake_agent::fingerprint(include_str!("fake-agent.rs"));
        let _ = writeln!(std::io::stdout(), "{source}");
        return;
    }
    if let Some(dir) = flag_value(&args, "-C")
        && let Err(err) = std::env::set_current_dir(&dir)
    {
        fail(&format!("cannot enter {dir}: {err}"));
    }
    let prompt = read_prompt(&args);
    let Some(script) = std::env::var_os(fake_agent::SCRIPT_VAR).map(PathBuf::from) else {
        fail(&format!("{} is not set", fake_agent::SCRIPT_VAR));
    };
    let actions = this_attempt(&script);
    for action in actions {
        run(action, &prompt, &args);
    }
}

fn flag_value(args: &[String], flag: &str) -> Option<String> {
    args.iter()
        .position(|a| a == flag)
        .and_then(|i| args.get(i + 1))
        .cloned()
}

fn read_prompt(args: &[String]) -> String {
    if let Some(file) = flag_value(args, "--message-file") {
        return std::fs::read_to_string(&file).unwrap_or_else(|e| fail(&format!("{file}: {e}")));
    }
    if let Some(message) = flag_value(args, "--message") {
        return message;
    }
    let mut prompt = String::new();
    // stdin is the prompt pipe or /dev/null; a read error leaves the prompt empty.
    let _ = std::io::stdin().read_to_string(&mut prompt);
    prompt
}

fn this_attempt(script: &Path) -> Vec<Action> {
    let text = std::fs::read_to_string(script)
        .unwrap_or_else(|e| fail(&format!("{}: {e}", script.display())));
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    if lines.is_empty() {
        return Vec::new();
    }
    let mut beside = script.as_os_str().to_owned();
    beside.push(".attempt");
    let done = bump(Path::new(&beside))
        .or_else(|_| bump(&std::env::temp_dir().join("fake-agent.attempt")))
        .unwrap_or_else(|e| fail(&format!("counter: {e}")));
    let line = lines[done.min(lines.len() - 1)];
    serde_json::from_str(line).unwrap_or_else(|e| fail(&format!("script line {}: {e}", done + 1)))
}

/// Adds one to the counter in `file`; returns the count before.
fn bump(file: &Path) -> std::io::Result<usize> {
    let done: usize = std::fs::read_to_string(file)
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or(0);
    std::fs::write(file, (done + 1).to_string())?;
    Ok(done)
}

fn run(action: Action, prompt: &str, args: &[String]) {
    match action {
        Action::Write { path, text } => {
            if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
                let _ = std::fs::create_dir_all(parent);
            }
            write(&path, text.as_bytes());
        }
        Action::Append { path, text } => {
            let mut file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)
                .unwrap_or_else(|e| fail(&format!("{}: {e}", path.display())));
            file.write_all(text.as_bytes())
                .unwrap_or_else(|e| fail(&e.to_string()));
        }
        Action::Delete { path } => {
            let _ = std::fs::remove_file(&path).or_else(|_| std::fs::remove_dir_all(&path));
        }
        Action::Sh { cmd } => {
            let _ = std::process::Command::new("sh")
                .arg("-c")
                .arg(&cmd)
                .status();
        }
        Action::Sleep { ms } => std::thread::sleep(Duration::from_millis(ms)),
        Action::Hang => loop {
            std::thread::sleep(Duration::from_secs(3600));
        },
        Action::Print { text, bytes } => {
            let mut out = std::io::stdout().lock();
            if let Some(text) = text {
                let _ = out.write_all(text.as_bytes());
            }
            if let Some(mut left) = bytes {
                let chunk = [b'x'; 8192];
                while left > 0 {
                    let n = left.min(chunk.len() as u64) as usize;
                    if out.write_all(&chunk[..n]).is_err() {
                        break;
                    }
                    left -= n as u64;
                }
            }
            let _ = out.flush();
        }
        Action::Eprint { text } => {
            let _ = std::io::stderr().write_all(text.as_bytes());
        }
        Action::Exit { code } => std::process::exit(code),
        Action::Crash => std::process::abort(),
        Action::RecordPrompt { path } => write(&path, prompt.as_bytes()),
        Action::RecordArgs { path } => write(&path, args.join("\n").as_bytes()),
        Action::Mcp { calls, record } => {
            let responses = call_mcp(args, &calls);
            if let Some(path) = record {
                write(&path, responses.join("\n").as_bytes());
            }
        }
        Action::TryWrite { path, text } => {
            report(
                &format!("write {}", path.display()),
                std::fs::write(&path, text),
            );
        }
        Action::TryDelete { path } => {
            let removed = if path.is_dir() {
                std::fs::remove_dir_all(&path)
            } else {
                std::fs::remove_file(&path)
            };
            report(&format!("delete {}", path.display()), removed);
        }
        Action::Connect { port, host } => {
            let host = host.unwrap_or_else(|| "127.0.0.1".to_owned());
            let connected = std::net::TcpStream::connect((host.as_str(), port)).map(drop);
            report(&format!("connect {host}:{port}"), connected);
        }
        Action::Getenv { name } => {
            let line = match std::env::var(&name) {
                Ok(value) => format!("fake-agent: {name}={value}\n"),
                Err(_) => format!("fake-agent: {name} is unset\n"),
            };
            let _ = std::io::stderr().write_all(line.as_bytes());
        }
        Action::RecordEnv { path } => {
            let mut vars: Vec<String> = std::env::vars().map(|(k, v)| format!("{k}={v}")).collect();
            vars.sort();
            write(&path, vars.join("\n").as_bytes());
        }
    }
}

/// Splits a `--with-extension` value as goose does: leading `KEY=VAL` tokens are the server's
/// environment; `"…"` groups a token; no escapes.
fn split_extension(spec: &str) -> (Vec<(String, String)>, Vec<String>) {
    let mut tokens = Vec::new();
    let mut current = String::new();
    let mut quoted = false;
    let mut any = false;
    for c in spec.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                any = true;
            }
            c if c.is_whitespace() && !quoted => {
                if any {
                    tokens.push(std::mem::take(&mut current));
                    any = false;
                }
            }
            c => {
                current.push(c);
                any = true;
            }
        }
    }
    if any {
        tokens.push(current);
    }
    let mut env = Vec::new();
    let mut rest = tokens.into_iter().peekable();
    while let Some(token) = rest.peek() {
        match token.split_once('=') {
            Some((k, v)) if !k.is_empty() && !k.contains('/') => {
                env.push((k.to_owned(), v.to_owned()));
                rest.next();
            }
            _ => break,
        }
    }
    (env, rest.collect())
}

/// Starts the first extension and calls its tools; returns the raw response lines.
fn call_mcp(args: &[String], calls: &[McpCall]) -> Vec<String> {
    use std::io::BufRead;
    let Some(spec) = flag_value(args, "--with-extension") else {
        fail("no --with-extension to call");
    };
    let (env, command) = split_extension(&spec);
    let Some((program, rest)) = command.split_first() else {
        fail("empty --with-extension");
    };
    let mut child = std::process::Command::new(program)
        .args(rest)
        .envs(env)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| fail(&format!("cannot start {program}: {e}")));
    let mut input = child.stdin.take().expect("stdin is piped");
    let mut output = std::io::BufReader::new(child.stdout.take().expect("stdout is piped"));
    let mut send = |value: serde_json::Value| {
        let mut line = value.to_string();
        line.push('\n');
        input
            .write_all(line.as_bytes())
            .unwrap_or_else(|e| fail(&format!("mcp write: {e}")));
    };
    let mut read = || {
        let mut line = String::new();
        let n = output
            .read_line(&mut line)
            .unwrap_or_else(|e| fail(&format!("mcp read: {e}")));
        if n == 0 {
            fail("the MCP server closed its output");
        }
        line.trim_end().to_owned()
    };
    let mut responses = Vec::new();
    send(serde_json::json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "fake-agent", "version": "0"}
        }
    }));
    responses.push(read());
    send(serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    for (i, call) in calls.iter().enumerate() {
        let arguments = if call.arguments.is_null() {
            serde_json::json!({})
        } else {
            call.arguments.clone()
        };
        send(serde_json::json!({
            "jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
            "params": {"name": call.tool, "arguments": arguments}
        }));
        responses.push(read());
    }
    drop(input);
    let _ = child.wait();
    responses
}

/// `fake-agent: <what>: ok` or `fake-agent: <what>: <error>` on stderr.
fn report(what: &str, outcome: std::io::Result<()>) {
    let line = match outcome {
        Ok(()) => format!("fake-agent: {what}: ok\n"),
        Err(e) => format!("fake-agent: {what}: {e}\n"),
    };
    let _ = std::io::stderr().write_all(line.as_bytes());
}

fn write(path: &Path, bytes: &[u8]) {
    std::fs::write(path, bytes).unwrap_or_else(|e| fail(&format!("{}: {e}", path.display())));
}

fn fail(message: &str) -> ! {
    let _ = writeln!(std::io::stderr(), "fake-agent: {message}");
    std::process::exit(2);
}
