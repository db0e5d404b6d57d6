//! What a task's pod says on its log, one JSON object per line, for the orchestrator's side to
//! read back: its progress as it goes, then its end. Lines that are not Butler's (the agent's
//! own, logs on stderr, which a pod's log interleaves) are skipped by the reader.

use butler_worker::contract::ResultContract;
use serde::{Deserialize, Serialize};

use crate::run::Progress;

/// This protocol's version: every line of Butler's own carries it as `butler_task`.
pub(crate) const WIRE_VERSION: u32 = 1;

/// One line of the pod's log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PodMessage {
    /// Where the task is.
    Progress(Progress),
    /// The task ended with this Result Contract (the task line is pushed).
    Result(ResultContract),
    /// The task stopped before it could end: the error's text.
    Error(String),
}

#[derive(Serialize, Deserialize)]
struct Line<T> {
    butler_task: u32,
    #[serde(flatten)]
    message: T,
}

impl PodMessage {
    /// The message as one line (no newline).
    pub(crate) fn to_line(&self) -> String {
        serde_json::to_string(&Line {
            butler_task: WIRE_VERSION,
            message: self,
        })
        .expect("a pod message serialises")
    }

    /// The message a log line carries, when it is one of Butler's of this version.
    pub fn from_line(line: &str) -> Option<PodMessage> {
        let line = line.trim();
        if !line.starts_with('{') {
            return None;
        }
        let parsed: Line<PodMessage> = serde_json::from_str(line).ok()?;
        (parsed.butler_task == WIRE_VERSION).then_some(parsed.message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::activity::Seen;

    #[test]
    fn a_line_reads_back_as_the_message_it_carries() {
        for message in [
            PodMessage::Progress(Progress::AttemptStarted { attempt: 2 }),
            PodMessage::Progress(Progress::Activity(Seen {
                attempt: 1,
                count: 3,
                line: "edit src/a.rs".to_owned(),
            })),
            PodMessage::Error("the base commit could not be fetched".to_owned()),
        ] {
            let line = message.to_line();
            assert!(!line.contains('\n'), "{line}");
            assert_eq!(PodMessage::from_line(&line), Some(message));
        }
    }

    #[test]
    fn lines_that_are_not_butlers_are_skipped() {
        for line in [
            "",
            "Compiling foo",
            "{\"progress\":{\"step\":\"attempt_started\",\"attempt\":1}}",
            "{\"butler_task\":99,\"error\":\"from a newer Butler\"}",
            "{\"butler_task\":1,\"unknown\":1}",
        ] {
            assert_eq!(PodMessage::from_line(line), None, "{line}");
        }
    }
}
