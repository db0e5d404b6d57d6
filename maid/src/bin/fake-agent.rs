//! A scriptable stand-in for an implementation agent, for tests.
//!
//! It accepts the command lines of every adapter (goose, claude, codex, aider) and ignores what
//! it does not need: it reads the prompt from stdin (or aider's `--message-file` / `--message`),
//! changes directory for codex's `-C`, then plays one attempt of the script named by the
//! environment variable `FAKE_AGENT_SCRIPT`.
//!
//! The script has one JSON array of actions per line, one line per attempt; a counter file
//! `<script>.attempt` beside it picks the line (the last line is repeated once they run out).
//! Actions (`{"do": …}`):
//! `write {path, text}`, `append {path, text}`, `delete {path}`, `sh {cmd}` (`sh -c`, e.g.
//! `git commit`), `sleep {ms}`, `hang`, `print {text?, bytes?}` (stdout), `eprint {text}`
//! (stderr), `exit {code}`, `crash` (abort), `record_prompt {path}`, `record_args {path}`,
//! `record_env {path}`. Relative paths are relative to the working directory. Without an
//! `exit` it exits 0.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

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
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Some(dir) = flag_value(&args, "-C")
        && let Err(err) = std::env::set_current_dir(&dir)
    {
        fail(&format!("cannot enter {dir}: {err}"));
    }
    let prompt = read_prompt(&args);
    let Some(script) = std::env::var_os("FAKE_AGENT_SCRIPT").map(PathBuf::from) else {
        fail("FAKE_AGENT_SCRIPT is not set");
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
    let mut counter = script.as_os_str().to_owned();
    counter.push(".attempt");
    let done: usize = std::fs::read_to_string(&counter)
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or(0);
    std::fs::write(&counter, (done + 1).to_string())
        .unwrap_or_else(|e| fail(&format!("counter: {e}")));
    let line = lines[done.min(lines.len() - 1)];
    serde_json::from_str(line).unwrap_or_else(|e| fail(&format!("script line {}: {e}", done + 1)))
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
        Action::RecordEnv { path } => {
            let mut vars: Vec<String> = std::env::vars().map(|(k, v)| format!("{k}={v}")).collect();
            vars.sort();
            write(&path, vars.join("\n").as_bytes());
        }
    }
}

fn write(path: &Path, bytes: &[u8]) {
    std::fs::write(path, bytes).unwrap_or_else(|e| fail(&format!("{}: {e}", path.display())));
}

fn fail(message: &str) -> ! {
    let _ = writeln!(std::io::stderr(), "fake-agent: {message}");
    std::process::exit(2);
}
