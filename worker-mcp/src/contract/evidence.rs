//! Evidence: what one attempt of a task did and how the verifiers judged it. Success is read
//! from here, never from an agent's account of its work.

use serde::{Deserialize, Serialize};

use super::{FileExpectation, RecordId};
/// How a supervised child ended: the supervisor's own type, part of the evidence.
pub use crate::process::Ending;
/// A process the reaper ended: pid, command name, signal.
pub use crate::process::reaper::EndedProcess;

/// What one attempt did and how it was judged.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AttemptEvidence {
    /// 1-based.
    pub attempt: u32,
    /// The agent's exit code or how it was stopped. Information, never success.
    pub agent_exit: Ending,
    pub duration_ms: u64,
    pub changed_files: Vec<String>,
    pub direct_git: DirectGit,
    pub verify: Verification,
    /// The ledger record the Maid made of this attempt's work, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub record: Option<RecordId>,
    /// Whether the restricted worker MCP was started for this attempt (an agent such as goose
    /// silently runs without an extension that failed to start).
    #[serde(default)]
    pub worker_mcp_reached: bool,
    /// Notes the agent left through the worker MCP during the attempt.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub agent_notes: Vec<AgentNote>,
    /// Things the Brain should know that are not failures (e.g. `worker MCP not reached`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// What the sandbox did: mode, whether applied, the kernel's ABI, the rules, the refusals.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<crate::sandbox::SandboxReport>,
    /// What the agent's own output showed of its work: counts, its usage figures, the last
    /// notable events (absent when its output showed nothing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub activity: Option<super::Activity>,
    /// Processes the agent or a verify command left running (double-forked, in a session of
    /// their own, …), which Butler ended after it and before inspecting the worktree; absent
    /// when there were none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leftovers: Option<LeftoverProcesses>,
}

/// What an attempt's agent and verify commands left running, ended by Butler's reaper.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeftoverProcesses {
    /// The first [`LeftoverProcesses::MAX`] of them.
    pub processes: Vec<LeftoverProcess>,
    /// How many were ended in all.
    pub total: u32,
}

impl LeftoverProcesses {
    /// Processes listed (the total counts all).
    pub(crate) const MAX: usize = 20;

    /// Adds what one run left (`listed` of its `total`), started by `started_by`.
    pub fn add(&mut self, started_by: StartedBy, listed: Vec<EndedProcess>, total: u32) {
        self.total = self.total.saturating_add(total);
        for process in listed {
            if self.processes.len() < Self::MAX {
                self.processes.push(LeftoverProcess {
                    started_by,
                    process,
                });
            }
        }
    }
}

/// One process left running, and how it was ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeftoverProcess {
    pub started_by: StartedBy,
    #[serde(flatten)]
    pub process: EndedProcess,
}

/// Whose run left a process behind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StartedBy {
    Agent,
    Verify,
}

/// A note the agent left through the worker MCP.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentNote {
    pub kind: NoteKind,
    pub text: String,
}

/// What kind of note an agent left through the worker MCP.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NoteKind {
    /// A note for the task's issue.
    Note,
    /// A summary of progress so far.
    Progress,
    /// The agent cannot go on; the reason.
    Blocked,
    /// The worker MCP was started for the task (the agent reached it).
    Connected,
}

impl NoteKind {
    pub(crate) const ALL: [NoteKind; 4] = [
        NoteKind::Note,
        NoteKind::Progress,
        NoteKind::Blocked,
        NoteKind::Connected,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            NoteKind::Note => "note",
            NoteKind::Progress => "progress",
            NoteKind::Blocked => "blocked",
            NoteKind::Connected => "connected",
        }
    }

    pub fn parse(text: &str) -> Option<NoteKind> {
        NoteKind::ALL.into_iter().find(|k| k.as_str() == text)
    }
}

/// Git the agent ran itself, and tampering found against the baseline.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DirectGit {
    pub detected: bool,
    pub findings: Vec<DirectGitFinding>,
}

impl DirectGit {
    pub fn from_findings(findings: Vec<DirectGitFinding>) -> Self {
        Self {
            detected: !findings.is_empty(),
            findings,
        }
    }
}

/// What the agent did to git, found by the git worker against the task's baseline
/// ([`crate::git::Baseline`]; all of it restored).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Tampering {
    /// Commits the agent made; unwound into the working tree, their changes kept.
    Commits {
        count: u32,
        subjects: Vec<String>,
    },
    /// HEAD was switched to another branch or detached.
    BranchSwitched {
        from: String,
        to: String,
    },
    RefCreated {
        name: String,
    },
    RefDeleted {
        name: String,
    },
    RefMoved {
        name: String,
    },
    /// Files were staged.
    IndexChanged,
    /// Repository configuration changed (e.g. `core.fsmonitor`, `core.hooksPath`).
    ConfigChanged {
        keys: Vec<String>,
    },
    HooksChanged {
        names: Vec<String>,
    },
    /// The worktree's `.git` pointer file was changed, removed or replaced (it could point the
    /// Maid's git at a repository of the agent's making); it was written back.
    GitLinkChanged,
}

/// One thing the agent did to git or outside its tree (all restored by the Maid). What it did
/// to git is a [`Tampering`], shown with the same `kind` tag.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum DirectGitFinding {
    /// A file written outside the task's worktree.
    OutsideWrite { path: String },
    /// Agent configuration planted in the tree (`.aider.conf.yml`, `.goosehints`, …).
    AgentConfigPlanted { path: String },
    /// A repository the agent created inside its worktree (a directory with a `.git` of its
    /// own): never recorded (git would make it a gitlink) nor entered by the Maid's git; left
    /// in the worktree.
    NestedRepository { path: String },
    /// Permission bits taken away during the attempt from Butler's state (the repository's git
    /// data, the ledger, the evidence, the worktrees' directories) or from the worktree's own
    /// files and directories, put back: `count` paths, the first few named.
    ModesRestored { count: u32, paths: Vec<String> },
    /// Files and directories of the Brain's tree whose mode or modification time changed
    /// during the attempt (their modes were put back): `count` paths, the first few named.
    BrainMetadataChanged { count: u32, paths: Vec<String> },
    /// Commits, switched or moved refs, staged files, changed config or hooks.
    #[serde(untagged)]
    Git(Tampering),
}

impl From<Tampering> for DirectGitFinding {
    fn from(t: Tampering) -> Self {
        Self::Git(t)
    }
}

/// The verifiers' findings for one attempt.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verification {
    /// Changed paths outside `target_paths`; not carried into the task's record.
    pub scope_violation: Vec<String>,
    pub tests: Vec<TestRun>,
    pub file_checks: Vec<FileCheckResult>,
    /// Changed lines that delete or weaken tests and assertions.
    pub weakened_tests: Vec<GuardFinding>,
    /// Stubs left in added lines (`todo!()`, `TODO`, `pass`-only bodies, …).
    pub stubs: Vec<GuardFinding>,
    /// The task allowed changing tests: the two guards' findings are reported, not failures.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub test_changes_allowed: bool,
}

impl Verification {
    /// Scope, tests and file checks all passed, and neither guard found anything (unless the
    /// task allowed changing tests): a weakened test or a stub fails an attempt like a failing
    /// test.
    pub fn passed(&self) -> bool {
        self.scope_violation.is_empty()
            && self.tests.iter().all(|t| t.passed)
            && self.file_checks.iter().all(|c| c.passed)
            && !self.guards_failed()
    }

    /// A guard found a weakened test or a stub, and the task did not allow changing tests.
    pub fn guards_failed(&self) -> bool {
        let found = !self.weakened_tests.is_empty() || !self.stubs.is_empty();
        found && !self.test_changes_allowed
    }
}

/// One test command's run in the task's worktree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestRun {
    pub command: String,
    /// `None` when the command was stopped (time limit, cancellation) or killed by a signal.
    pub exit_code: Option<i32>,
    pub passed: bool,
    /// How it ended, when not by a plain exit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<Ending>,
    /// The last part of its combined output (bounded).
    pub output_tail: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileCheckResult {
    pub path: String,
    pub expect: FileExpectation,
    pub passed: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// A line flagged by one of the two diff guards.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GuardFinding {
    pub path: String,
    /// Line number in the new file (added lines) or the old file (removed lines).
    pub line: u32,
    pub what: String,
    /// The line itself, trimmed and shortened.
    pub text: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn findings_keep_one_flat_kind_tag_and_read_back() {
        let findings = vec![
            DirectGitFinding::Git(Tampering::Commits {
                count: 1,
                subjects: vec!["wip".into()],
            }),
            DirectGitFinding::Git(Tampering::IndexChanged),
            DirectGitFinding::OutsideWrite {
                path: "../x".into(),
            },
            DirectGitFinding::NestedRepository {
                path: "src/vendored".into(),
            },
            DirectGitFinding::ModesRestored {
                count: 2,
                paths: vec![".git/objects".into(), ".git/butler/ledger.db".into()],
            },
            DirectGitFinding::BrainMetadataChanged {
                count: 1,
                paths: vec!["README.md".into()],
            },
        ];
        let json = serde_json::to_value(&findings).expect("json");
        assert_eq!(
            json,
            serde_json::json!([
                {"kind": "commits", "count": 1, "subjects": ["wip"]},
                {"kind": "index_changed"},
                {"kind": "outside_write", "path": "../x"},
                {"kind": "nested_repository", "path": "src/vendored"},
                {"kind": "modes_restored", "count": 2,
                 "paths": [".git/objects", ".git/butler/ledger.db"]},
                {"kind": "brain_metadata_changed", "count": 1, "paths": ["README.md"]}
            ])
        );
        let back: Vec<DirectGitFinding> = serde_json::from_value(json).expect("reads back");
        assert_eq!(back, findings);
    }

    #[test]
    fn the_leftovers_shape_in_the_evidence_is_stable() {
        let mut leftovers = LeftoverProcesses {
            processes: Vec::new(),
            total: 0,
        };
        let ended = |pid, command: &str, signal: &str| EndedProcess {
            pid,
            command: command.into(),
            signal: signal.into(),
        };
        leftovers.add(
            StartedBy::Agent,
            vec![
                ended(4242, "sh", "SIGKILL"),
                ended(4250, "sleep", "SIGTERM"),
            ],
            2,
        );
        leftovers.add(
            StartedBy::Verify,
            vec![ended(5001, "python3", "SIGTERM")],
            1,
        );
        insta::assert_json_snapshot!(leftovers);
        let many: Vec<EndedProcess> = (0..30).map(|n| ended(n, "x", "SIGTERM")).collect();
        leftovers.add(StartedBy::Verify, many, 31);
        assert_eq!(leftovers.processes.len(), LeftoverProcesses::MAX);
        assert_eq!(leftovers.total, 34);
    }

    #[test]
    fn note_kinds_are_written_as_the_agent_tools_name_them() {
        for kind in NoteKind::ALL {
            let json = serde_json::to_value(kind).expect("json");
            assert_eq!(json, kind.as_str());
            assert_eq!(NoteKind::parse(kind.as_str()), Some(kind));
        }
        assert_eq!(NoteKind::parse("shout"), None);
    }
}
