//! Progress of a running task, for MCP progress notifications.

use butler_worker::time::Timestamp;

use crate::activity::LogEntry;
use crate::contract::Outcome;

/// Where a running task is.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "step", rename_all = "snake_case")]
pub enum Progress {
    AttemptStarted {
        attempt: u32,
    },
    AgentRunning {
        attempt: u32,
    },
    /// What the agent just did (from its own output).
    Activity(crate::activity::Seen),
    Verifying {
        attempt: u32,
    },
    Retrying {
        attempt: u32,
    },
    Finished {
        outcome: Outcome,
    },
}

impl Progress {
    /// A one-line description and a fraction of the task's work (attempts count equally;
    /// the fraction strictly increases along a task, as MCP progress requires).
    pub fn describe(&self, max_attempts: u32) -> (String, f64) {
        let max = f64::from(max_attempts.max(1));
        let at = |attempt: u32, within: f64| (f64::from(attempt - 1) + within) / max;
        match self {
            Progress::AttemptStarted { attempt } => {
                (format!("attempt {attempt} started"), at(*attempt, 0.0))
            }
            Progress::AgentRunning { attempt } => (
                format!("attempt {attempt}: agent running"),
                at(*attempt, 0.1),
            ),
            // Between running (0.1) and verifying (0.8), rising with each event.
            Progress::Activity(seen) => (seen.describe(), at(seen.attempt, seen.within())),
            Progress::Verifying { attempt } => {
                (format!("attempt {attempt}: verifying"), at(*attempt, 0.8))
            }
            // Just below the next attempt's start, so progress strictly increases.
            Progress::Retrying { attempt } => (
                format!("retrying: attempt {attempt} next"),
                at(attempt.saturating_sub(1).max(1), 0.95),
            ),
            Progress::Finished { outcome } => (format!("finished: {outcome:?}"), 1.0),
        }
    }

    /// The task's step in its log (an agent's own events are logged as they come).
    pub(crate) fn log_entry(&self, max_attempts: u32, at: Timestamp) -> Option<LogEntry> {
        match self {
            Progress::Activity(_) => None,
            Progress::Finished { outcome } => Some(LogEntry::Finished {
                at,
                outcome: *outcome,
            }),
            step => Some(LogEntry::Step {
                at,
                text: step.describe(max_attempts).0,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at() -> Timestamp {
        Timestamp::parse("2026-04-15T10:00:00+09:00").expect("time")
    }

    #[test]
    fn progress_fractions_strictly_increase_over_three_attempts() {
        let mut steps = Vec::new();
        for attempt in 1..=3 {
            steps.push(Progress::AttemptStarted { attempt });
            steps.push(Progress::AgentRunning { attempt });
            steps.push(Progress::Verifying { attempt });
            if attempt < 3 {
                steps.push(Progress::Retrying {
                    attempt: attempt + 1,
                });
            }
        }
        steps.push(Progress::Finished {
            outcome: Outcome::Failed,
        });
        let fractions: Vec<f64> = steps.iter().map(|p| p.describe(3).1).collect();
        assert!(fractions.windows(2).all(|w| w[0] < w[1]), "{fractions:?}");
        assert_eq!(fractions.last(), Some(&1.0));
    }

    #[test]
    fn progress_becomes_steps_but_agent_activity_is_logged_by_the_watch() {
        let step = Progress::Verifying { attempt: 1 }.log_entry(3, at());
        assert_eq!(
            step,
            Some(LogEntry::Step {
                at: at(),
                text: "attempt 1: verifying".into()
            })
        );
        let activity = Progress::Activity(crate::activity::Seen {
            attempt: 1,
            count: 3,
            line: "tool shell: ls".into(),
        });
        assert_eq!(activity.log_entry(3, at()), None);
        let done = Progress::Finished {
            outcome: Outcome::Succeeded,
        }
        .log_entry(3, at());
        assert!(done.is_some_and(|d| d.is_end()));
    }
}
