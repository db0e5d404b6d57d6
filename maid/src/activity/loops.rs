//! The loop watch: from the agent's events, whether it is going round in circles — the same tool
//! call (same tool, same arguments) `repeats` times among its last `2 × repeats` calls with no
//! file changed meanwhile, or `quiet` of activity without any file change — and the ending that
//! says so. A decision over plain data (events, times), unit-tested without a process.

use std::collections::VecDeque;
use std::time::Duration;

use butler_worker::contract::{AgentEvent, AttemptEvidence};
use butler_worker::process::Ending;

/// When an agent counts as looping (`[agent] loop_repeats`, `loop_quiet_secs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoopSettings {
    /// The same tool call this many times without a file change stops the attempt (0: never).
    pub repeats: u32,
    /// This long of activity without a file change stops the attempt (zero: never).
    pub quiet: Duration,
}

impl Default for LoopSettings {
    fn default() -> Self {
        Self {
            repeats: 5,
            quiet: Duration::from_secs(600),
        }
    }
}

/// One attempt's loop watch.
#[derive(Debug)]
pub(crate) struct LoopWatch {
    settings: LoopSettings,
    /// The last tool calls since the last file change: `(tool, digest)` and the call's line.
    calls: VecDeque<((String, String), String)>,
    /// The last file change known (reported by the agent or seen in the tree); the start before.
    last_change: Duration,
}

impl LoopWatch {
    pub(crate) fn new(settings: LoopSettings) -> Self {
        Self {
            settings,
            calls: VecDeque::new(),
            last_change: Duration::ZERO,
        }
    }

    /// Takes one event that came at `at` (since the agent started), knowing the tree last
    /// changed at `files_changed_at`; returns the ending when the agent is looping.
    pub(crate) fn event(
        &mut self,
        event: &AgentEvent,
        at: Duration,
        files_changed_at: Option<Duration>,
    ) -> Option<Ending> {
        if let Some(changed) = files_changed_at
            && changed > self.last_change
        {
            self.changed(changed);
        }
        match event {
            AgentEvent::FileEdited { .. } => self.changed(at),
            AgentEvent::ToolCall { tool, digest, line } if self.settings.repeats > 0 => {
                let key = (tool.clone(), digest.clone());
                let window = 2 * self.settings.repeats as usize;
                if self.calls.len() == window {
                    self.calls.pop_front();
                }
                self.calls.push_back((key.clone(), line.clone()));
                let times = self.calls.iter().filter(|(k, _)| *k == key).count();
                if times >= self.settings.repeats as usize {
                    return Some(Ending::Looped {
                        repeated: line.clone(),
                        times: u32::try_from(times).unwrap_or(u32::MAX),
                    });
                }
            }
            _ => {}
        }
        let active = at.saturating_sub(self.last_change);
        if !self.settings.quiet.is_zero() && active >= self.settings.quiet {
            return Some(Ending::NoFileChange {
                active_s: active.as_secs(),
            });
        }
        None
    }

    fn changed(&mut self, at: Duration) {
        self.last_change = self.last_change.max(at);
        self.calls.clear();
    }
}

/// Whether the attempt was stopped for looping.
pub(crate) fn looped(ending: &Ending) -> bool {
    matches!(ending, Ending::Looped { .. } | Ending::NoFileChange { .. })
}

/// Whether the last two attempts were both stopped for looping: a third would loop again.
pub(crate) fn loops_again(attempts: &[AttemptEvidence]) -> bool {
    match attempts {
        [.., before, last] => looped(&before.agent_exit) && looped(&last.agent_exit),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(tool: &str, args: &str) -> AgentEvent {
        AgentEvent::ToolCall {
            tool: tool.into(),
            digest: format!("d-{args}"),
            line: format!("{tool}: {args}"),
        }
    }

    fn secs(s: u64) -> Duration {
        Duration::from_secs(s)
    }

    fn watch(repeats: u32) -> LoopWatch {
        LoopWatch::new(LoopSettings {
            repeats,
            quiet: secs(100),
        })
    }

    #[test]
    fn the_same_call_in_a_row_is_a_loop_at_the_set_count() {
        let mut w = watch(3);
        assert_eq!(w.event(&call("shell", "ls"), secs(1), None), None);
        assert_eq!(w.event(&call("shell", "ls"), secs(2), None), None);
        assert_eq!(
            w.event(&call("shell", "ls"), secs(3), None),
            Some(Ending::Looped {
                repeated: "shell: ls".into(),
                times: 3
            })
        );
    }

    #[test]
    fn alternating_calls_loop_too_but_varied_work_does_not() {
        let mut w = watch(3);
        let mut ended = None;
        for (i, args) in ["a", "b", "a", "b", "a"].iter().enumerate() {
            ended = w.event(&call("read", args), secs(i as u64), None);
        }
        assert!(matches!(ended, Some(Ending::Looped { times: 3, .. })));
        let mut w = watch(3);
        for (i, args) in ["a", "b", "c", "a", "d", "e", "a"].iter().enumerate() {
            assert_eq!(w.event(&call("read", args), secs(i as u64), None), None);
        }
    }

    #[test]
    fn a_file_change_reported_or_seen_in_the_tree_starts_over() {
        let mut w = watch(3);
        w.event(&call("shell", "cargo test"), secs(1), None);
        w.event(&call("shell", "cargo test"), secs(2), None);
        w.event(
            &AgentEvent::FileEdited {
                path: "src/a.rs".into(),
            },
            secs(3),
            None,
        );
        assert_eq!(w.event(&call("shell", "cargo test"), secs(4), None), None);
        assert_eq!(w.event(&call("shell", "cargo test"), secs(5), None), None);
        // The tree changed at 5.5 s (a write by a shell command, not reported).
        assert_eq!(
            w.event(
                &call("shell", "cargo test"),
                secs(6),
                Some(secs(5) + secs(1) / 2)
            ),
            None
        );
        assert_eq!(
            w.event(&call("shell", "cargo test"), secs(7), Some(secs(5))),
            None
        );
        assert!(
            w.event(&call("shell", "cargo test"), secs(8), Some(secs(5)))
                .is_some()
        );
    }

    #[test]
    fn a_long_stretch_of_activity_without_a_change_stops_it() {
        let mut w = watch(3);
        assert_eq!(w.event(&AgentEvent::output("x"), secs(50), None), None);
        assert_eq!(
            w.event(&AgentEvent::output("x"), secs(99), Some(secs(10))),
            None
        );
        assert_eq!(
            w.event(&AgentEvent::message("thinking"), secs(111), None),
            Some(Ending::NoFileChange { active_s: 101 })
        );
    }

    #[test]
    fn zero_settings_turn_the_watch_off() {
        let mut w = LoopWatch::new(LoopSettings {
            repeats: 0,
            quiet: Duration::ZERO,
        });
        for i in 0..50 {
            assert_eq!(w.event(&call("shell", "ls"), secs(i * 100), None), None);
        }
    }

    #[test]
    fn two_looped_attempts_in_a_row_end_the_task() {
        use butler_worker::contract::{DirectGit, Verification};
        let attempt = |n: u32, ending: Ending| AttemptEvidence {
            attempt: n,
            agent_exit: ending,
            duration_ms: 1,
            changed_files: vec![],
            direct_git: DirectGit::default(),
            verify: Verification::default(),
            record: None,
            worker_mcp_reached: true,
            agent_notes: vec![],
            warnings: vec![],
            sandbox: None,
            activity: None,
            leftovers: None,
        };
        let looped = || Ending::Looped {
            repeated: "shell: ls".into(),
            times: 5,
        };
        let exited = || Ending::Exited { code: 0 };
        assert!(!loops_again(&[attempt(1, looped())]));
        assert!(!loops_again(&[attempt(1, exited()), attempt(2, looped())]));
        assert!(!loops_again(&[attempt(1, looped()), attempt(2, exited())]));
        assert!(loops_again(&[
            attempt(1, looped()),
            attempt(2, Ending::NoFileChange { active_s: 600 })
        ]));
    }
}
