//! What the agent does, while it does it: each line of its stdout is turned into typed events
//! ([`AgentEvent`]: tool calls, commands, file edits, messages, usage, errors, plain output) by a
//! parser for its output format — goose `stream-json`, Claude Code `stream-json`, codex
//! `exec --json`, aider's plain output ([`Format`], one module each); a line a parser does not
//! know is kept as plain output, never an error. [`AgentWatch`] is the supervisor's line
//! observer for one attempt: it parses, keeps the attempt's account ([`Activity`]), appends the
//! events to the task's log ([`log`]), passes a rate-limited line on for progress notifications,
//! and stops the agent when it loops ([`loops`]).

mod aider;
mod claude;
mod codex;
mod goose;
pub mod log;
pub(crate) mod loops;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use butler_worker::contract::{Activity, AgentEvent, TimedEvent, activity::short};
use butler_worker::process::{
    ChildSpec, Limits, LineObserver, LineSeen, Supervised, Verdict, supervise_observed,
};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

pub use log::{LogEntry, TaskLog};
pub(crate) use loops::{LoopSettings, LoopWatch};

/// How an agent writes what it does on stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `goose run --output-format stream-json`.
    GooseStreamJson,
    /// `claude -p --output-format stream-json --verbose`.
    ClaudeStreamJson,
    /// `codex exec --json`.
    CodexJson,
    /// Aider's plain output (it has no machine-readable one).
    AiderText,
    /// Lines of text, nothing known about them.
    PlainText,
}

/// Turns one agent's output lines into events.
pub(crate) trait Parser: Send {
    /// The events one line says (none for a line of the format that says nothing of note).
    fn line(&mut self, line: &str) -> Vec<AgentEvent>;

    /// The events still held when the output ends (a message streamed in parts).
    fn end(&mut self) -> Vec<AgentEvent> {
        Vec::new()
    }
}

/// The parser for `format`.
pub(crate) fn parser(format: Format) -> Box<dyn Parser> {
    match format {
        Format::GooseStreamJson => Box::new(goose::Goose::default()),
        Format::ClaudeStreamJson => Box::new(claude::Claude::default()),
        Format::CodexJson => Box::new(codex::Codex::default()),
        Format::AiderText => Box::new(aider::Aider::default()),
        Format::PlainText => Box::new(Plain),
    }
}

/// Every non-empty line is plain output.
struct Plain;

impl Parser for Plain {
    fn line(&mut self, line: &str) -> Vec<AgentEvent> {
        plain(line)
    }
}

/// A line no parser knows: plain output (blank lines say nothing).
fn plain(line: &str) -> Vec<AgentEvent> {
    if line.trim().is_empty() {
        Vec::new()
    } else {
        vec![AgentEvent::output(line)]
    }
}

/// Longest `line` of a tool call, in characters.
const CALL_LINE_CHARS: usize = 120;

/// A tool call: its digest identifies the tool and its arguments (key order does not matter).
fn tool_call(tool: &str, args: &Value) -> AgentEvent {
    let mut canonical = String::new();
    canonical_json(args, &mut canonical);
    AgentEvent::ToolCall {
        tool: tool.to_owned(),
        digest: fnv(&format!("{tool}\n{canonical}")),
        line: match args_line(args) {
            shown if shown.is_empty() => short(tool, CALL_LINE_CHARS),
            shown => short(&format!("{tool}: {shown}"), CALL_LINE_CHARS),
        },
    }
}

/// What a person wants to see of a call's arguments: the command, else the path, else the
/// arguments themselves.
fn args_line(args: &Value) -> String {
    for key in ["command", "cmd", "file_path", "path", "pattern", "query"] {
        if let Some(text) = args.get(key).and_then(Value::as_str) {
            return text.to_owned();
        }
    }
    match args {
        Value::Object(map) if map.is_empty() => String::new(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// JSON with object keys sorted, so the same arguments give the same text.
fn canonical_json(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                canonical_json(&map[key], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical_json(item, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// FNV-1a, 64 bits, in hex: stable across builds (evidence keeps it).
fn fnv(text: &str) -> String {
    let hash = text.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    format!("{hash:016x}")
}

/// The text of a tool result's content: a string, or the text parts of a content list.
fn content_text(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// What the agent's watch passes on for progress: the event's line and how many events the
/// attempt has seen so far.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Seen {
    pub attempt: u32,
    pub count: u64,
    pub line: String,
}

impl Seen {
    /// `attempt N: <line>`.
    pub fn describe(&self) -> String {
        format!("attempt {}: {}", self.attempt, self.line)
    }

    /// How far into its attempt: between the agent's start (0.1) and verifying (0.8), rising
    /// with each event and never reaching 0.75.
    pub(crate) fn within(&self) -> f64 {
        0.1 + 0.65 * (1.0 - 10.0 / (10.0 + self.count as f64))
    }
}

/// Progress lines of one attempt: one each [`PROGRESS_EVERY`] on average, in bursts of at most
/// [`PROGRESS_BURST`] (events often come together: a message ends as the next tool call
/// starts); errors are always passed on.
const PROGRESS_EVERY: Duration = Duration::from_millis(250);
const PROGRESS_BURST: u32 = 4;
/// Events of one attempt written to the task's log, at most (plain output counts half as much:
/// it is cut at half of this); the account in the evidence counts them all.
const LOGGED_EVENTS: u64 = 20_000;

/// One attempt's watch of its agent: the supervisor's line observer.
pub(crate) struct AgentWatch {
    parser: Box<dyn Parser>,
    loops: LoopWatch,
    workdir: PathBuf,
    attempt: u32,
    log: TaskLog,
    logged: u64,
    logged_output: u64,
    activity: Arc<Mutex<Activity>>,
    count: u64,
    progress: Option<tokio::sync::mpsc::UnboundedSender<Seen>>,
    progress_budget: Budget,
    last_at: Duration,
}

impl AgentWatch {
    /// A watch of attempt `attempt`'s agent writing `format`, working in `workdir` (edited
    /// paths under it are shown relative), logging to `log`.
    pub(crate) fn new(
        format: Format,
        loops: LoopSettings,
        workdir: &Path,
        log: TaskLog,
        attempt: u32,
    ) -> Self {
        Self {
            parser: parser(format),
            loops: LoopWatch::new(loops),
            workdir: workdir.to_path_buf(),
            attempt,
            log,
            logged: 0,
            logged_output: 0,
            activity: Arc::new(Mutex::new(Activity::default())),
            count: 0,
            progress: None,
            progress_budget: Budget::new(PROGRESS_BURST, PROGRESS_EVERY),
            last_at: Duration::ZERO,
        }
    }

    /// Takes one event; the ending when the agent loops.
    fn take(
        &mut self,
        mut event: AgentEvent,
        seen: LineSeen,
    ) -> Option<butler_worker::process::Ending> {
        if let AgentEvent::FileEdited { path } = &mut event
            && let Ok(relative) = Path::new(path.as_str()).strip_prefix(&self.workdir)
        {
            *path = relative.to_string_lossy().into_owned();
        }
        let ending = self.loops.event(&event, seen.at, seen.files_changed_at);
        self.count += 1;
        let timed = TimedEvent {
            at_ms: u64::try_from(seen.at.as_millis()).unwrap_or(u64::MAX),
            event,
        };
        self.log_event(&timed);
        self.pass_on(&timed.event);
        self.activity
            .lock()
            .expect("the activity lock is never poisoned")
            .record(timed);
        ending
    }

    fn log_event(&mut self, timed: &TimedEvent) {
        let output = matches!(timed.event, AgentEvent::Output { .. });
        if self.logged >= LOGGED_EVENTS || (output && self.logged_output >= LOGGED_EVENTS / 2) {
            return;
        }
        self.logged += 1;
        self.logged_output += u64::from(output);
        self.log.append(&LogEntry::Event {
            attempt: self.attempt,
            at_ms: timed.at_ms,
            event: timed.event.clone(),
        });
    }

    fn pass_on(&mut self, event: &AgentEvent) {
        let Some(progress) = &self.progress else {
            return;
        };
        let error = matches!(event, AgentEvent::Error { .. });
        if self.progress_budget.take(Instant::now()) || error {
            let _ = progress.send(Seen {
                attempt: self.attempt,
                count: self.count,
                line: short(&event.to_string(), CALL_LINE_CHARS),
            });
        }
    }
}

impl LineObserver for AgentWatch {
    fn line(&mut self, line: &[u8], seen: LineSeen) -> Verdict {
        self.last_at = seen.at;
        let text = String::from_utf8_lossy(line);
        for event in self.parser.line(&text) {
            if let Some(ending) = self.take(event, seen) {
                return Verdict::Stop(ending);
            }
        }
        Verdict::Continue
    }

    fn end(&mut self) {
        let seen = LineSeen {
            at: self.last_at,
            files_changed_at: None,
        };
        for event in self.parser.end() {
            let _ = self.take(event, seen);
        }
    }
}

/// A token bucket: `burst` at most, one more each `every`.
#[derive(Debug)]
struct Budget {
    tokens: u32,
    burst: u32,
    every: Duration,
    since: Option<Instant>,
}

impl Budget {
    fn new(burst: u32, every: Duration) -> Self {
        Self {
            tokens: burst,
            burst,
            every,
            since: None,
        }
    }

    /// Whether one more may go at `now`.
    fn take(&mut self, now: Instant) -> bool {
        let since = *self.since.get_or_insert(now);
        let earned = now.saturating_duration_since(since).as_nanos() / self.every.as_nanos();
        if earned > 0 {
            let earned = u32::try_from(earned).unwrap_or(u32::MAX);
            self.tokens = self.tokens.saturating_add(earned).min(self.burst);
            self.since = Some(since + self.every * earned.min(self.burst));
            if self.tokens == self.burst {
                self.since = Some(now);
            }
        }
        if self.tokens == 0 {
            return false;
        }
        self.tokens -= 1;
        true
    }
}

/// Runs the agent's command under `limits` with `watch` observing its stdout; `on_event` gets
/// the watch's progress lines as they come. Returns the run and the attempt's account.
pub(crate) async fn run_agent(
    spec: ChildSpec,
    limits: &Limits,
    cancel: &CancellationToken,
    mut watch: AgentWatch,
    on_event: &(dyn Fn(Seen) + Send + Sync),
) -> (Supervised, Activity) {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    watch.progress = Some(tx);
    let activity = watch.activity.clone();
    let supervised = supervise_observed(spec, limits, cancel, watch);
    tokio::pin!(supervised);
    let run = loop {
        tokio::select! {
            run = &mut supervised => break run,
            Some(seen) = rx.recv() => on_event(seen),
        }
    };
    while let Ok(seen) = rx.try_recv() {
        on_event(seen);
    }
    let activity = std::mem::take(
        &mut *activity
            .lock()
            .expect("the activity lock is never poisoned"),
    );
    (run, activity)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_arguments_in_any_key_order_have_one_digest() {
        let a = tool_call(
            "edit",
            &serde_json::json!({"path": "a", "old": "x", "new": "y"}),
        );
        let b = tool_call(
            "edit",
            &serde_json::json!({"new": "y", "old": "x", "path": "a"}),
        );
        let c = tool_call(
            "edit",
            &serde_json::json!({"new": "z", "old": "x", "path": "a"}),
        );
        let d = tool_call(
            "write",
            &serde_json::json!({"new": "y", "old": "x", "path": "a"}),
        );
        let digest = |e: &AgentEvent| match e {
            AgentEvent::ToolCall { digest, .. } => digest.clone(),
            other => panic!("{other:?}"),
        };
        assert_eq!(digest(&a), digest(&b));
        assert_ne!(digest(&a), digest(&c));
        assert_ne!(digest(&a), digest(&d));
        assert!(matches!(a, AgentEvent::ToolCall { line, .. } if line == "edit: a"));
    }

    #[test]
    fn a_call_line_shows_the_command_or_the_arguments() {
        let line = |tool: &str, args: Value| match tool_call(tool, &args) {
            AgentEvent::ToolCall { line, .. } => line,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            line("shell", serde_json::json!({"command": "ls -la"})),
            "shell: ls -la"
        );
        assert_eq!(
            line("note", serde_json::json!({"text": "hi"})),
            "note: {\"text\":\"hi\"}"
        );
        assert_eq!(line("tree", serde_json::json!({})), "tree");
        let long = "x".repeat(500);
        assert_eq!(
            line("shell", serde_json::json!({ "command": long }))
                .chars()
                .count(),
            CALL_LINE_CHARS + 1
        );
    }

    #[test]
    fn progress_lines_come_in_short_bursts_then_one_each_interval() {
        let every = Duration::from_millis(250);
        let mut budget = Budget::new(4, every);
        let t0 = Instant::now();
        let passed = |budget: &mut Budget, at: Duration, n: usize| {
            (0..n).filter(|_| budget.take(t0 + at)).count()
        };
        assert_eq!(passed(&mut budget, Duration::ZERO, 10), 4);
        assert_eq!(passed(&mut budget, every / 2, 10), 0);
        assert_eq!(passed(&mut budget, every, 10), 1);
        assert_eq!(passed(&mut budget, every * 3, 10), 2);
        // A quiet minute refills the burst, no more.
        assert_eq!(passed(&mut budget, every * 240, 10), 4);
        assert_eq!(passed(&mut budget, every * 241, 10), 1);
    }

    #[test]
    fn plain_output_is_kept_and_blank_lines_say_nothing() {
        let mut p = parser(Format::PlainText);
        assert_eq!(p.line("hello"), vec![AgentEvent::output("hello")]);
        assert!(p.line("   ").is_empty());
    }
}
