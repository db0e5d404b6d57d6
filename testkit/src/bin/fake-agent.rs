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
//! Actions that play an agent's reported work write it on stdout in the output format of the
//! agent whose command line it was given (goose `run --output-format stream-json`, claude
//! `-p --output-format stream-json`, codex `exec --json`, aider's plain lines; otherwise plain
//! text), one flushed line at a time: `tool {name, args?, times?, ms?, failed?}` (a tool call
//! and its result, `times` times `ms` apart; the name `shell` is each agent's shell tool, with
//! `args.command`), `say {text}`, `usage {input_tokens?, output_tokens?, cost_usd?, turns?}`,
//! `edit {path, text}` (writes the file and reports the edit), `run {cmd}` (runs `sh -c` and
//! reports the command with its exit code), `fail {text}` (an error as the agent reports one).
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
    Tool {
        name: String,
        #[serde(default)]
        args: serde_json::Value,
        #[serde(default)]
        times: Option<u64>,
        #[serde(default)]
        ms: Option<u64>,
        #[serde(default)]
        failed: bool,
    },
    Say {
        text: String,
    },
    Usage {
        #[serde(default)]
        input_tokens: u64,
        #[serde(default)]
        output_tokens: u64,
        #[serde(default)]
        cost_usd: Option<f64>,
        #[serde(default)]
        turns: Option<u32>,
    },
    Edit {
        path: PathBuf,
        text: String,
    },
    Run {
        cmd: String,
    },
    Fail {
        text: String,
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
    let args_list = args;
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
        Action::Tool {
            name,
            args,
            times,
            ms,
            failed,
        } => {
            let style = Style::of(args_list);
            for i in 0..times.unwrap_or(1) {
                if i > 0 {
                    std::thread::sleep(Duration::from_millis(ms.unwrap_or(0)));
                }
                style.tool(&name, &args, "ok", failed);
            }
        }
        Action::Say { text } => Style::of(args_list).say(&text),
        Action::Usage {
            input_tokens,
            output_tokens,
            cost_usd,
            turns,
        } => Style::of(args_list).usage(input_tokens, output_tokens, cost_usd, turns),
        Action::Edit { path, text } => {
            let existed = path.exists();
            if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
                let _ = std::fs::create_dir_all(parent);
            }
            write(&path, text.as_bytes());
            Style::of(args_list).edit(&path, &text, existed);
        }
        Action::Run { cmd } => {
            let out = std::process::Command::new("sh")
                .arg("-c")
                .arg(&cmd)
                .stdin(std::process::Stdio::null())
                .output();
            let (code, text) = match out {
                Ok(o) => (
                    o.status.code().unwrap_or(-1),
                    String::from_utf8_lossy(&o.stdout).into_owned(),
                ),
                Err(e) => (-1, e.to_string()),
            };
            Style::of(args_list).run(&cmd, code, &text);
        }
        Action::Fail { text } => Style::of(args_list).fail(&text),
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

/// The output format of the agent whose command line the fake agent was given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Style {
    Goose,
    Claude,
    Codex,
    Aider,
    Text,
}

/// A fresh number for ids in the output.
fn seq() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static SEQ: AtomicU64 = AtomicU64::new(0);
    SEQ.fetch_add(1, Ordering::Relaxed)
}

/// One line on stdout, flushed at once (a watcher reads it as it comes).
fn emit(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(line.as_bytes());
    let _ = out.write_all(b"\n");
    let _ = out.flush();
}

fn emit_json(value: serde_json::Value) {
    emit(&value.to_string());
}

impl Style {
    fn of(args: &[String]) -> Self {
        let has = |a: &str| args.iter().any(|x| x == a);
        let stream_json = args
            .windows(2)
            .any(|w| w[0] == "--output-format" && w[1] == "stream-json");
        if args.first().is_some_and(|a| a == "exec") && has("--json") {
            Style::Codex
        } else if stream_json && has("-p") {
            Style::Claude
        } else if stream_json && args.first().is_some_and(|a| a == "run") {
            Style::Goose
        } else if has("--message-file") || has("--message") {
            Style::Aider
        } else {
            Style::Text
        }
    }

    fn goose_message(role: &str, id: serde_json::Value, content: serde_json::Value) {
        emit_json(serde_json::json!({"type": "message", "message": {
            "id": id, "role": role, "created": 0, "content": [content],
            "metadata": {"userVisible": true, "agentVisible": true}}}));
    }

    fn claude_message(kind: &str, content: serde_json::Value) {
        let n = seq();
        emit_json(serde_json::json!({"type": kind, "message": {
            "id": format!("msg_{n}"), "type": "message", "role": kind, "content": [content]},
            "parent_tool_use_id": null, "session_id": "fake"}));
    }

    fn codex_item(started: bool, item: serde_json::Value) {
        let kind = if started {
            "item.started"
        } else {
            "item.completed"
        };
        emit_json(serde_json::json!({"type": kind, "item": item}));
    }

    /// A tool call and its result.
    fn tool(self, name: &str, args: &serde_json::Value, output: &str, failed: bool) {
        let n = seq();
        let command = args.get("command").and_then(|c| c.as_str()).unwrap_or("");
        match self {
            Style::Goose => {
                let id = format!("call_{n}");
                Self::goose_message(
                    "assistant",
                    serde_json::json!(format!("m{n}")),
                    serde_json::json!({"type": "toolRequest", "id": id, "toolCall":
                        {"status": "success", "value": {"name": name, "arguments": args}}}),
                );
                Self::goose_message(
                    "user",
                    serde_json::Value::Null,
                    serde_json::json!({"type": "toolResponse", "id": id, "toolResult":
                        {"status": "success", "value": {"content": [{"type": "text",
                        "text": output}], "isError": failed}}}),
                );
            }
            Style::Claude => {
                let id = format!("toolu_{n}");
                let (name, input) = if name == "shell" {
                    (
                        "Bash",
                        serde_json::json!({"command": command, "description": "run"}),
                    )
                } else {
                    (name, args.clone())
                };
                Self::claude_message(
                    "assistant",
                    serde_json::json!({"type": "tool_use", "id": id, "name": name,
                        "input": input}),
                );
                Self::claude_message(
                    "user",
                    serde_json::json!({"type": "tool_result", "tool_use_id": id,
                        "content": output, "is_error": failed}),
                );
            }
            Style::Codex => {
                let id = format!("item_{n}");
                let (status, code) = if failed {
                    ("failed", 1)
                } else {
                    ("completed", 0)
                };
                if name == "shell" {
                    Self::codex_item(
                        true,
                        serde_json::json!({"id": id,
                        "type": "command_execution", "command": command,
                        "aggregated_output": "", "exit_code": null, "status": "in_progress"}),
                    );
                    Self::codex_item(
                        false,
                        serde_json::json!({"id": id,
                        "type": "command_execution", "command": command,
                        "aggregated_output": output, "exit_code": code, "status": status}),
                    );
                } else {
                    Self::codex_item(
                        true,
                        serde_json::json!({"id": id,
                        "type": "mcp_tool_call", "server": "butler", "tool": name,
                        "arguments": args, "status": "in_progress"}),
                    );
                    Self::codex_item(
                        false,
                        serde_json::json!({"id": id,
                        "type": "mcp_tool_call", "server": "butler", "tool": name,
                        "arguments": args, "status": status}),
                    );
                }
            }
            Style::Aider if name == "shell" => emit(&format!("Running {command}")),
            Style::Aider | Style::Text => emit(&format!("{name} {args}")),
        }
    }

    fn say(self, text: &str) {
        let n = seq();
        match self {
            Style::Goose => Self::goose_message(
                "assistant",
                serde_json::json!(format!("m{n}")),
                serde_json::json!({"type": "text", "text": text}),
            ),
            Style::Claude => {
                Self::claude_message(
                    "assistant",
                    serde_json::json!({"type": "text", "text": text}),
                );
            }
            Style::Codex => Self::codex_item(
                false,
                serde_json::json!({"id": format!("item_{n}"), "type": "agent_message",
                    "text": text}),
            ),
            Style::Aider | Style::Text => emit(text),
        }
    }

    fn usage(self, input: u64, output: u64, cost: Option<f64>, turns: Option<u32>) {
        match self {
            Style::Goose => emit_json(serde_json::json!({"type": "complete",
                "total_tokens": input + output})),
            Style::Claude => emit_json(serde_json::json!({"type": "result",
                "subtype": "success", "is_error": false, "num_turns": turns.unwrap_or(1),
                "result": "", "session_id": "fake", "total_cost_usd": cost.unwrap_or(0.0),
                "usage": {"input_tokens": input, "output_tokens": output}})),
            Style::Codex => emit_json(serde_json::json!({"type": "turn.completed",
                "usage": {"input_tokens": input, "cached_input_tokens": 0,
                "output_tokens": output, "reasoning_output_tokens": 0}})),
            Style::Aider | Style::Text => {
                let mut line = format!("Tokens: {input} sent, {output} received.");
                if let Some(cost) = cost {
                    line.push_str(&format!(" Cost: ${cost:.4} message, ${cost:.4} session."));
                }
                emit(&line);
            }
        }
    }

    fn edit(self, path: &Path, text: &str, existed: bool) {
        let absolute = std::env::current_dir()
            .map(|d| d.join(path))
            .unwrap_or_else(|_| path.to_path_buf());
        let shown = path.to_string_lossy();
        match self {
            Style::Goose => self.tool(
                "write",
                &serde_json::json!({"path": shown, "content": text}),
                "written",
                false,
            ),
            Style::Claude => self.tool(
                "Write",
                &serde_json::json!({"file_path": absolute, "content": text}),
                "File written",
                false,
            ),
            Style::Codex => {
                let id = format!("item_{}", seq());
                let kind = if existed { "update" } else { "add" };
                let changes = serde_json::json!([{"path": absolute, "kind": kind}]);
                Self::codex_item(
                    true,
                    serde_json::json!({"id": id, "type": "file_change",
                    "changes": changes, "status": "in_progress"}),
                );
                Self::codex_item(
                    false,
                    serde_json::json!({"id": id, "type": "file_change",
                    "changes": changes, "status": "completed"}),
                );
            }
            Style::Aider | Style::Text => emit(&format!("Applied edit to {shown}")),
        }
    }

    fn run(self, cmd: &str, code: i32, output: &str) {
        match self {
            Style::Codex => {
                let id = format!("item_{}", seq());
                let status = if code == 0 { "completed" } else { "failed" };
                Self::codex_item(
                    true,
                    serde_json::json!({"id": id,
                    "type": "command_execution", "command": cmd, "aggregated_output": "",
                    "exit_code": null, "status": "in_progress"}),
                );
                Self::codex_item(
                    false,
                    serde_json::json!({"id": id,
                    "type": "command_execution", "command": cmd, "aggregated_output": output,
                    "exit_code": code, "status": status}),
                );
            }
            Style::Aider | Style::Text => {
                emit(&format!("Running {cmd}"));
                for line in output.lines() {
                    emit(line);
                }
            }
            Style::Goose | Style::Claude => {
                self.tool(
                    "shell",
                    &serde_json::json!({"command": cmd}),
                    output,
                    code != 0,
                );
            }
        }
    }

    fn fail(self, text: &str) {
        match self {
            Style::Goose => emit_json(serde_json::json!({"type": "error", "error": text})),
            Style::Claude => emit_json(serde_json::json!({"type": "result",
                "subtype": "error_during_execution", "is_error": true, "num_turns": 1,
                "result": text, "session_id": "fake"})),
            Style::Codex => emit_json(serde_json::json!({"type": "turn.failed",
                "error": {"message": text}})),
            Style::Aider | Style::Text => emit(&format!("litellm.APIError: {text}")),
        }
    }
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
