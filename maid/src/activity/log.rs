//! The task's log, `<task dir>/events.jsonl`: one JSON entry a line — the task's steps, each
//! event of its agent, how each attempt's agent ended, and the task's end — appended while the
//! task runs, read by `butler task log [--follow]`. This module is its one writer and its one
//! reader. The task directory is the Maid's (the agent cannot write it); every text an agent
//! wrote is shown through [`AgentEvent`]'s display, which neutralises control characters.

use std::fmt;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use butler_worker::contract::{AgentEvent, Outcome, activity::printable};
use butler_worker::process::Ending;
use butler_worker::time::Timestamp;
use serde::{Deserialize, Serialize};

/// The log's file name in the task's directory.
pub(crate) const LOG_FILE: &str = "events.jsonl";

/// A task's directory: `<git common dir>/butler/tasks/<task>` (the Maid's files of the task).
pub fn task_dir(common_dir: &Path, task: &str) -> PathBuf {
    common_dir
        .join(butler_worker::ledger::LEDGER_DIR)
        .join("tasks")
        .join(task)
}

/// One line of the log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "entry", rename_all = "snake_case")]
pub enum LogEntry {
    /// A step of the task (`attempt 1 started`, `attempt 1: verifying`, …).
    Step { at: Timestamp, text: String },
    /// Something the agent did, `at_ms` after its attempt's agent started.
    Event {
        attempt: u32,
        at_ms: u64,
        #[serde(flatten)]
        event: AgentEvent,
    },
    /// How an attempt's agent ended.
    AgentEnded { attempt: u32, ending: Ending },
    /// The task ended with this outcome.
    Finished { at: Timestamp, outcome: Outcome },
    /// The task stopped on an error before it could end.
    Stopped { at: Timestamp, error: String },
}

impl LogEntry {
    /// Whether the task ended with it.
    pub fn is_end(&self) -> bool {
        matches!(self, Self::Finished { .. } | Self::Stopped { .. })
    }
}

impl fmt::Display for LogEntry {
    /// One line for a person.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Step { at, text } => write!(f, "{at}  {text}"),
            Self::Event {
                attempt,
                at_ms,
                event,
            } => write!(f, "  [{attempt} +{:.1}s] {event}", *at_ms as f64 / 1000.0),
            Self::AgentEnded { attempt, ending } => {
                write!(f, "  [{attempt}] agent {}", printable(&ending.to_string()))
            }
            Self::Finished { at, outcome } => {
                write!(f, "{at}  finished: {}", outcome_word(*outcome))
            }
            Self::Stopped { at, error } => write!(f, "{at}  stopped: {}", printable(error)),
        }
    }
}

fn outcome_word(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Succeeded => "succeeded",
        Outcome::Failed => "failed",
        Outcome::Cancelled => "cancelled",
    }
}

/// A task's log file.
#[derive(Debug, Clone)]
pub struct TaskLog {
    path: PathBuf,
}

impl TaskLog {
    /// The log in `task_dir` (see [`task_dir`]).
    pub fn in_dir(task_dir: &Path) -> Self {
        Self {
            path: task_dir.join(LOG_FILE),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one entry as one line (one `write` on a file opened for appending, so entries
    /// of two writers never mix). A log that cannot be written is reported, never fatal.
    pub(crate) fn append(&self, entry: &LogEntry) {
        let mut line = serde_json::to_string(entry).expect("a log entry always serialises");
        line.push('\n');
        let written = (|| {
            if let Some(dir) = self.path.parent() {
                std::fs::create_dir_all(dir)?;
            }
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&self.path)?
                .write_all(line.as_bytes())
        })();
        if let Err(e) = written {
            tracing::warn!(path = %self.path.display(), %e, "the task log could not be written");
        }
    }

    /// The complete entries from byte `offset` on, and the offset after the last of them (a
    /// line still being written is left for the next read). A line that is not an entry (a
    /// newer Butler's) is skipped. No file yet: nothing.
    pub fn read_from(&self, offset: u64) -> std::io::Result<(Vec<LogEntry>, u64)> {
        let mut file = match std::fs::File::open(&self.path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((Vec::new(), offset)),
            Err(e) => return Err(e),
        };
        file.seek(SeekFrom::Start(offset))?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)?;
        let complete = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        let entries = bytes[..complete]
            .split(|&b| b == b'\n')
            .filter(|line| !line.is_empty())
            .filter_map(|line| serde_json::from_slice(line).ok())
            .collect();
        Ok((entries, offset + complete as u64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at() -> Timestamp {
        Timestamp::parse("2026-04-15T10:00:00+09:00").expect("time")
    }

    #[test]
    fn entries_are_appended_and_read_back_in_order_from_an_offset() {
        let dir = tempfile::tempdir().expect("tempdir");
        let log = TaskLog::in_dir(&dir.path().join("tasks/t1"));
        assert_eq!(log.read_from(0).expect("read"), (vec![], 0));
        let entries = [
            LogEntry::Step {
                at: at(),
                text: "attempt 1 started".into(),
            },
            LogEntry::Event {
                attempt: 1,
                at_ms: 1500,
                event: AgentEvent::FileEdited {
                    path: "src/a.rs".into(),
                },
            },
            LogEntry::AgentEnded {
                attempt: 1,
                ending: Ending::Looped {
                    repeated: "shell: ls".into(),
                    times: 5,
                },
            },
            LogEntry::Finished {
                at: at(),
                outcome: Outcome::Failed,
            },
        ];
        log.append(&entries[0]);
        log.append(&entries[1]);
        let (first, offset) = log.read_from(0).expect("read");
        assert_eq!(first, entries[..2]);
        // A line being written is not read yet.
        std::fs::OpenOptions::new()
            .append(true)
            .open(log.path())
            .expect("open")
            .write_all(b"{\"entry\":\"st")
            .expect("write");
        assert_eq!(log.read_from(offset).expect("read"), (vec![], offset));
        std::fs::OpenOptions::new()
            .append(true)
            .open(log.path())
            .expect("open")
            .write_all(b"range\"}\nnot json\n")
            .expect("write");
        log.append(&entries[2]);
        log.append(&entries[3]);
        let (rest, _) = log.read_from(offset).expect("read");
        assert_eq!(rest, entries[2..]);
        assert!(rest[1].is_end());
    }

    #[test]
    fn entries_read_as_one_line_each() {
        let lines: Vec<String> = [
            LogEntry::Step {
                at: at(),
                text: "attempt 1: verifying".into(),
            },
            LogEntry::Event {
                attempt: 2,
                at_ms: 2340,
                event: AgentEvent::command("cargo test", Some(101), false),
            },
            LogEntry::AgentEnded {
                attempt: 2,
                ending: Ending::Exited { code: 0 },
            },
            LogEntry::Stopped {
                at: at(),
                error: "disk\x1b[2J full".into(),
            },
        ]
        .iter()
        .map(ToString::to_string)
        .collect();
        assert_eq!(
            lines,
            [
                "2026-04-15T10:00:00+09:00  attempt 1: verifying",
                "  [2 +2.3s] ran `cargo test`: exit 101",
                "  [2] agent exit code 0",
                "2026-04-15T10:00:00+09:00  stopped: disk?[2J full",
            ]
        );
    }
}
