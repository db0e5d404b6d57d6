//! What an agent did during an attempt, as its own output tells it: typed events (tool calls,
//! commands, file edits, messages, usage figures, errors, plain output) and the bounded account
//! of them kept in the evidence. The Maid's parsers (one per agent output format) produce the
//! events; nothing here judges success — the verifiers do.

use std::fmt;

use serde::{Deserialize, Serialize};

/// How many notable events an attempt's evidence keeps (the last ones).
pub(crate) const LAST_EVENTS: usize = 20;
/// Longest text of one event (a message, an error, an output line), in characters.
pub(crate) const EVENT_TEXT_CHARS: usize = 200;

/// One thing an agent did, as its output reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum AgentEvent {
    /// It called a tool. The same tool with the same arguments has the same `digest`; `line`
    /// says it for a person (`shell: cargo test`).
    ToolCall {
        tool: String,
        digest: String,
        line: String,
    },
    /// A shell command it ran has ended: with this exit code where the agent reports one,
    /// else only whether it failed.
    Command {
        command: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        exit_code: Option<i32>,
        failed: bool,
    },
    /// It changed a file with its own editing tool (path as the agent named it).
    FileEdited { path: String },
    /// It said something (the start of it).
    Message { text: String },
    /// Its usage so far in this attempt, as it reported it.
    Usage(Usage),
    /// It reported an error (a failed tool, a model endpoint that failed, …).
    Error { text: String },
    /// A line of its output that is none of the above (kept, never an error).
    Output { text: String },
}

impl AgentEvent {
    /// A message event, its text shortened to one line of [`EVENT_TEXT_CHARS`].
    pub fn message(text: &str) -> Self {
        Self::Message {
            text: short(text, EVENT_TEXT_CHARS),
        }
    }

    /// An error event, shortened like a message.
    pub fn error(text: &str) -> Self {
        Self::Error {
            text: short(text, EVENT_TEXT_CHARS),
        }
    }

    /// A plain output line, shortened like a message.
    pub fn output(text: &str) -> Self {
        Self::Output {
            text: short(text, EVENT_TEXT_CHARS),
        }
    }

    /// A command's end; its text shortened like a message.
    pub fn command(command: &str, exit_code: Option<i32>, failed: bool) -> Self {
        Self::Command {
            command: short(command, EVENT_TEXT_CHARS),
            exit_code,
            failed: failed || exit_code.is_some_and(|c| c != 0),
        }
    }

    /// Whether it is worth keeping among an attempt's last events (plain output and usage are
    /// only counted).
    pub(crate) fn notable(&self) -> bool {
        !matches!(self, Self::Output { .. } | Self::Usage(_))
    }
}

impl fmt::Display for AgentEvent {
    /// One short line for a person (control characters of the agent's text shown as `?`, so
    /// nothing it wrote can steer a terminal).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let line = match self {
            Self::ToolCall { line, .. } => format!("tool {line}"),
            Self::Command {
                command,
                exit_code: Some(code),
                ..
            } => format!("ran `{command}`: exit {code}"),
            Self::Command {
                command, failed, ..
            } => format!("ran `{command}`: {}", if *failed { "failed" } else { "ok" }),
            Self::FileEdited { path } => format!("edited {path}"),
            Self::Message { text } => format!("said: {text}"),
            Self::Usage(usage) => format!("usage: {usage}"),
            Self::Error { text } => format!("error: {text}"),
            Self::Output { text } => format!("| {text}"),
        };
        f.write_str(&printable(&line))
    }
}

/// `text` with control characters (escape sequences, carriage returns) shown as `?`.
pub fn printable(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect()
}

/// The agent's own figures, where its output reports them (every field optional: agents
/// report different things).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u64>,
    /// Input tokens served from the provider's cache (included in `input_tokens` or not, as
    /// the agent counts them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_input_tokens: Option<u64>,
    /// Where the agent reports only a total.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<Cost>,
    /// Model turns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turns: Option<u32>,
}

impl Usage {
    /// Whether it says anything at all.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }

    /// Figures of two runs added up (a field is known when either knows it).
    pub fn plus(self, other: Usage) -> Usage {
        fn add<T: std::ops::Add<Output = T>>(a: Option<T>, b: Option<T>) -> Option<T> {
            match (a, b) {
                (Some(a), Some(b)) => Some(a + b),
                (a, b) => a.or(b),
            }
        }
        Usage {
            input_tokens: add(self.input_tokens, other.input_tokens),
            output_tokens: add(self.output_tokens, other.output_tokens),
            cached_input_tokens: add(self.cached_input_tokens, other.cached_input_tokens),
            total_tokens: add(self.total_tokens, other.total_tokens),
            cost_usd: add(self.cost_usd, other.cost_usd),
            turns: add(self.turns, other.turns),
        }
    }
}

impl fmt::Display for Usage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        if let Some(n) = self.input_tokens {
            parts.push(format!("{} tokens in", tokens(n)));
        }
        if let Some(n) = self.output_tokens {
            parts.push(format!("{} out", tokens(n)));
        }
        if let Some(n) = self.cached_input_tokens {
            parts.push(format!("{} cached", tokens(n)));
        }
        if let Some(n) = self.total_tokens {
            parts.push(format!("{} tokens", tokens(n)));
        }
        if let Some(cost) = self.cost_usd {
            parts.push(format!("${:.4}", cost.0));
        }
        if let Some(turns) = self.turns {
            parts.push(format!("{turns} turn(s)"));
        }
        if parts.is_empty() {
            f.write_str("none reported")
        } else {
            f.write_str(&parts.join(", "))
        }
    }
}

fn tokens(n: u64) -> String {
    match n {
        0..1_000 => n.to_string(),
        1_000..1_000_000 => format!("{:.1}k", n as f64 / 1e3),
        _ => format!("{:.1}M", n as f64 / 1e6),
    }
}

/// A cost in US dollars as the agent reported it. Compared by its bits, so evidence stays
/// comparable (`Eq`); agents never report `NaN`, and a parser never makes one.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Cost(pub f64);

impl PartialEq for Cost {
    fn eq(&self, other: &Self) -> bool {
        self.0.to_bits() == other.0.to_bits()
    }
}

impl Eq for Cost {}

impl std::ops::Add for Cost {
    type Output = Cost;
    fn add(self, other: Cost) -> Cost {
        Cost(self.0 + other.0)
    }
}

/// An event and when it came, in milliseconds since the attempt's agent started.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimedEvent {
    pub at_ms: u64,
    #[serde(flatten)]
    pub event: AgentEvent,
}

/// What the agent's output showed of its work during one attempt: how many events of each
/// kind, its usage figures, and the last notable events.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Activity {
    pub counts: ActivityCounts,
    /// The agent's own figures (tokens, cost, turns) where its output reports them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// The last notable events (at most [`LAST_EVENTS`]), oldest first; plain output and usage
    /// are only counted.
    pub last: Vec<TimedEvent>,
}

/// Events of each kind seen in one attempt.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActivityCounts {
    pub tool_calls: u64,
    pub commands: u64,
    pub failed_commands: u64,
    pub files_edited: u64,
    pub messages: u64,
    pub errors: u64,
    pub output_lines: u64,
}

impl Activity {
    /// Takes one event into the account.
    pub fn record(&mut self, event: TimedEvent) {
        let c = &mut self.counts;
        match &event.event {
            AgentEvent::ToolCall { .. } => c.tool_calls += 1,
            AgentEvent::Command { failed, .. } => {
                c.commands += 1;
                c.failed_commands += u64::from(*failed);
            }
            AgentEvent::FileEdited { .. } => c.files_edited += 1,
            AgentEvent::Message { .. } => c.messages += 1,
            AgentEvent::Error { .. } => c.errors += 1,
            AgentEvent::Output { .. } => c.output_lines += 1,
            AgentEvent::Usage(usage) => self.usage = Some(*usage),
        }
        if event.event.notable() {
            if self.last.len() == LAST_EVENTS {
                self.last.remove(0);
            }
            self.last.push(event);
        }
    }

    /// Whether the output showed nothing at all.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

/// `text` on one line (whitespace runs collapsed, control characters shown as `?`), cut to `max`
/// characters with `…`.
pub fn short(text: &str, max: usize) -> String {
    let one_line = printable(&text.split_whitespace().collect::<Vec<_>>().join(" "));
    match one_line.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &one_line[..at]),
        None => one_line,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_keep_one_flat_kind_tag_and_read_back() {
        let events = vec![
            TimedEvent {
                at_ms: 5,
                event: AgentEvent::ToolCall {
                    tool: "shell".into(),
                    digest: "0123456789abcdef".into(),
                    line: "shell: ls".into(),
                },
            },
            TimedEvent {
                at_ms: 9,
                event: AgentEvent::Usage(Usage {
                    input_tokens: Some(10),
                    cost_usd: Some(Cost(0.25)),
                    ..Usage::default()
                }),
            },
            TimedEvent {
                at_ms: 12,
                event: AgentEvent::command("cargo test", Some(101), false),
            },
        ];
        let json = serde_json::to_value(&events).expect("json");
        assert_eq!(
            json,
            serde_json::json!([
                {"at_ms": 5, "kind": "tool_call", "tool": "shell", "digest": "0123456789abcdef",
                 "line": "shell: ls"},
                {"at_ms": 9, "kind": "usage", "input_tokens": 10, "cost_usd": 0.25},
                {"at_ms": 12, "kind": "command", "command": "cargo test", "exit_code": 101,
                 "failed": true}
            ])
        );
        let back: Vec<TimedEvent> = serde_json::from_value(json).expect("reads back");
        assert_eq!(back, events);
    }

    #[test]
    fn the_account_counts_everything_and_keeps_the_last_notable_events() {
        let mut activity = Activity::default();
        for i in 0..30 {
            activity.record(TimedEvent {
                at_ms: i,
                event: AgentEvent::message(&format!("step {i}")),
            });
            activity.record(TimedEvent {
                at_ms: i,
                event: AgentEvent::output("noise"),
            });
        }
        activity.record(TimedEvent {
            at_ms: 31,
            event: AgentEvent::Usage(Usage {
                turns: Some(3),
                ..Usage::default()
            }),
        });
        assert_eq!(activity.counts.messages, 30);
        assert_eq!(activity.counts.output_lines, 30);
        assert_eq!(activity.last.len(), LAST_EVENTS);
        assert_eq!(activity.last[0].event, AgentEvent::message("step 10"));
        assert_eq!(activity.usage.and_then(|u| u.turns), Some(3));
    }

    /// The account as the evidence carries it (`attempts[].activity`): every kind of event.
    #[test]
    fn the_activity_shape_in_the_evidence_is_stable() {
        let mut activity = Activity::default();
        let events = [
            AgentEvent::ToolCall {
                tool: "developer__shell".into(),
                digest: "9f2c41d07be3a865".into(),
                line: "developer__shell: cargo test".into(),
            },
            AgentEvent::command("cargo test", Some(101), false),
            AgentEvent::FileEdited {
                path: "src/lib.rs".into(),
            },
            AgentEvent::message("The test fails because greet is missing; adding it."),
            AgentEvent::error("model endpoint returned 429"),
            AgentEvent::output("   Compiling demo v0.1.0"),
            AgentEvent::Usage(Usage {
                input_tokens: Some(12_840),
                output_tokens: Some(913),
                cached_input_tokens: Some(8_000),
                total_tokens: None,
                cost_usd: Some(Cost(0.0421)),
                turns: Some(4),
            }),
        ];
        for (i, event) in events.into_iter().enumerate() {
            activity.record(TimedEvent {
                at_ms: 400 * i as u64,
                event,
            });
        }
        insta::assert_json_snapshot!(activity);
    }

    #[test]
    fn texts_are_one_short_printable_line() {
        assert_eq!(short("a\n  b\tc", 10), "a b c");
        assert_eq!(short("ééééé", 3), "ééé…");
        assert_eq!(short("red \x1b[31mtext\x07", 40), "red ?[31mtext?");
        let edited = AgentEvent::FileEdited {
            path: "a\x1b]0;owned\x07.rs".into(),
        };
        assert_eq!(edited.to_string(), "edited a?]0;owned?.rs");
    }

    #[test]
    fn usage_adds_up_and_reads_for_a_person() {
        let a = Usage {
            input_tokens: Some(1_500),
            cost_usd: Some(Cost(0.5)),
            ..Usage::default()
        };
        let b = Usage {
            input_tokens: Some(500),
            output_tokens: Some(20),
            turns: Some(2),
            ..Usage::default()
        };
        let sum = a.plus(b);
        assert_eq!(sum.input_tokens, Some(2_000));
        assert_eq!(sum.output_tokens, Some(20));
        assert_eq!(
            sum.to_string(),
            "2.0k tokens in, 20 out, $0.5000, 2 turn(s)"
        );
        assert_eq!(Usage::default().to_string(), "none reported");
    }
}
