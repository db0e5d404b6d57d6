//! The work-state machine of `work_observe`: from a few facts to the state, the one required
//! action and the optional next tools. Pure, so every state is unit-tested.

use serde::Serialize;

use butler_worker::git::InProgress;

use crate::catalogue::{Key, fill, text};
use crate::error::{BlockReason, Unfinished};
use crate::tool::Tool;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WorkState {
    Uninitialized,
    CleanIdle,
    CleanWithActiveIssue,
    Dirty,
    RecordedUnpublished,
    DirtyAndUnpublished,
    Blocked,
    Unknown,
}

/// What the Brain must do next (at most one thing).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RequiredAction {
    pub tool: Tool,
    pub reason: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub required_args: Vec<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub policy_hint: Option<String>,
}

/// The facts the state is decided from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Facts {
    pub blocked: Option<BlockReason>,
    pub changed: usize,
    /// Unshared records; `None` when there is no shared destination.
    pub unpublished: Option<usize>,
    pub active_issue: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    pub state: WorkState,
    pub summary: String,
    pub required_action: Option<RequiredAction>,
    pub available_next: Vec<Tool>,
}

fn action(tool: Tool, reason: impl Into<String>, args: &[&'static str]) -> RequiredAction {
    RequiredAction {
        tool,
        reason: reason.into(),
        required_args: args.to_vec(),
        policy_hint: None,
    }
}

pub fn uninitialized() -> Decision {
    Decision {
        state: WorkState::Uninitialized,
        summary: text(Key::UninitSummary).into(),
        required_action: Some(action(
            Tool::WorkSessionStart,
            text(Key::UninitReason),
            &["project_root"],
        )),
        available_next: vec![Tool::WorkSessionStart],
    }
}

pub fn unknown(why: &str) -> Decision {
    Decision {
        state: WorkState::Unknown,
        summary: fill(Key::UnknownSummary, &[("why", &why)]),
        required_action: None,
        available_next: vec![Tool::WorkObserve, Tool::WorkHistory],
    }
}

pub fn decide(facts: &Facts) -> Decision {
    if let Some(reason) = &facts.blocked {
        return blocked(reason);
    }
    let unpublished = facts.unpublished.unwrap_or(0);
    let issue_hint = match facts.active_issue {
        Some(n) => fill(Key::DirtyLinked, &[("issue", &n)]),
        None => String::new(),
    };
    if facts.changed > 0 {
        let mut record = action(Tool::WorkRecord, text(Key::DirtyReason), &["message"]);
        let mut available = vec![Tool::WorkRecord, Tool::WorkDiff, Tool::WorkHistory];
        // Without an active issue, the policy hint (not the summary) says how to link.
        let summary = fill(
            Key::DirtySummary,
            &[("n", &facts.changed), ("linked", &issue_hint)],
        );
        if facts.active_issue.is_none() {
            record.policy_hint = Some(text(Key::DirtyNoIssueHint).into());
            available.insert(1, Tool::WorkStart);
        }
        if unpublished > 0 {
            return Decision {
                state: WorkState::DirtyAndUnpublished,
                summary: fill(
                    Key::DirtyUnpublishedSummary,
                    &[("n", &facts.changed), ("unpublished", &unpublished)],
                ),
                required_action: Some(record),
                available_next: available,
            };
        }
        return Decision {
            state: WorkState::Dirty,
            summary,
            required_action: Some(record),
            available_next: available,
        };
    }
    if unpublished > 0 {
        return Decision {
            state: WorkState::RecordedUnpublished,
            summary: fill(Key::UnpublishedSummary, &[("n", &unpublished)]),
            required_action: Some(action(Tool::WorkPublish, text(Key::UnpublishedReason), &[])),
            available_next: vec![Tool::WorkPublish, Tool::WorkHistory],
        };
    }
    match facts.active_issue {
        Some(n) => {
            let reason = if facts.unpublished.is_some() {
                fill(Key::DoneSharedReason, &[("issue", &n)])
            } else {
                fill(Key::DoneLocalReason, &[("issue", &n)])
            };
            Decision {
                state: WorkState::CleanWithActiveIssue,
                summary: fill(Key::DoneSummary, &[("reason", &reason)]),
                required_action: Some(action(Tool::WorkFinish, reason, &[])),
                available_next: vec![Tool::WorkFinish, Tool::WorkHistory],
            }
        }
        None => Decision {
            state: WorkState::CleanIdle,
            summary: text(Key::IdleSummary).into(),
            required_action: None,
            available_next: vec![Tool::WorkStart],
        },
    }
}

/// The blocked state: the one way on is always named (`required_action` is never null here);
/// giving an operation up is the policy hint.
fn blocked(reason: &BlockReason) -> Decision {
    let summary = fill(
        Key::BlockedSummary,
        &[
            ("what", &reason.describe()),
            ("hint", &capitalise(&reason.hint())),
        ],
    );
    let (required, available_next) = match reason {
        BlockReason::Unfinished(u) if u.op == Some(InProgress::Bisect) => (
            action(Tool::WorkVcs, text(Key::ReqBisect), &["args"]).hinted(text(Key::ReqBisectHint)),
            vec![Tool::WorkVcs, Tool::WorkHistory],
        ),
        BlockReason::Unfinished(u) => (
            resolve(u),
            vec![
                Tool::WorkRecord,
                Tool::WorkDiff,
                Tool::WorkVcs,
                Tool::WorkHistory,
            ],
        ),
        BlockReason::Detached => (
            action(Tool::WorkNewLine, text(Key::ReqDetached), &[])
                .hinted(text(Key::ReqDetachedHint)),
            vec![Tool::WorkNewLine, Tool::WorkSwitchLine, Tool::WorkHistory],
        ),
    };
    Decision {
        state: WorkState::Blocked,
        summary,
        required_action: Some(required),
        available_next,
    }
}

/// What finishing an unfinished operation takes: editing out the markers that remain, then
/// `work_record`.
fn resolve(u: &Unfinished) -> RequiredAction {
    let goal = u.goal();
    let reason = if !u.unresolved.is_empty() {
        fill(
            Key::ReqResolveConflicts,
            &[
                ("n", &u.unresolved.len()),
                ("list", &u.unresolved_list()),
                ("goal", &goal),
            ],
        )
    } else if !u.conflicted.is_empty() {
        fill(Key::ReqConflictsResolved, &[("goal", &goal)])
    } else {
        fill(Key::ReqRecordWill, &[("goal", &goal)])
    };
    let record = action(Tool::WorkRecord, reason, &[]);
    match u.abort_call() {
        Some(call) => record.hinted(&fill(Key::ReqGiveUpInstead, &[("call", &call)])),
        None => record,
    }
}

impl RequiredAction {
    fn hinted(mut self, hint: &str) -> RequiredAction {
        self.policy_hint = Some(hint.to_owned());
        self
    }
}

fn capitalise(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(changed: usize, unpublished: Option<usize>, issue: Option<u64>) -> Facts {
        Facts {
            blocked: None,
            changed,
            unpublished,
            active_issue: issue,
        }
    }

    #[test]
    fn each_state_from_its_facts() {
        assert_eq!(decide(&facts(0, Some(0), None)).state, WorkState::CleanIdle);
        assert_eq!(decide(&facts(0, None, None)).state, WorkState::CleanIdle);
        assert_eq!(
            decide(&facts(0, Some(0), Some(5))).state,
            WorkState::CleanWithActiveIssue
        );
        assert_eq!(decide(&facts(2, Some(0), Some(5))).state, WorkState::Dirty);
        assert_eq!(
            decide(&facts(0, Some(3), Some(5))).state,
            WorkState::RecordedUnpublished
        );
        assert_eq!(
            decide(&facts(1, Some(3), None)).state,
            WorkState::DirtyAndUnpublished
        );
        let blocked = Facts {
            blocked: Some(BlockReason::Detached),
            ..facts(1, Some(1), None)
        };
        assert_eq!(decide(&blocked).state, WorkState::Blocked);
    }

    #[test]
    fn dirty_without_issue_hints_at_issue_ids_and_offers_work_start() {
        let d = decide(&facts(1, Some(0), None));
        let action = d.required_action.expect("record is required");
        assert_eq!(action.tool, Tool::WorkRecord);
        assert!(action.policy_hint.expect("hint").contains("issue_ids"));
        assert!(d.available_next.contains(&Tool::WorkStart));
        assert!(
            !d.available_next.contains(&Tool::WorkStart) || d.available_next[0] == Tool::WorkRecord
        );
    }

    #[test]
    fn diff_is_never_required() {
        for f in [
            facts(1, Some(0), Some(1)),
            facts(1, Some(2), None),
            facts(0, Some(2), None),
        ] {
            let d = decide(&f);
            assert_ne!(d.required_action.map(|a| a.tool), Some(Tool::WorkDiff));
        }
    }

    #[test]
    fn blocked_always_names_the_way_on() {
        let unfinished = |op, conflicted: &[&str], unresolved: bool| {
            BlockReason::Unfinished(Unfinished {
                op,
                conflicted: conflicted.iter().map(|s| (*s).to_owned()).collect(),
                unresolved: if unresolved {
                    vec![butler_worker::git::Markers {
                        path: butler_worker::git::RepoPath::from_bytes("a.txt"),
                        lines: vec![3],
                    }]
                } else {
                    Vec::new()
                },
            })
        };
        let reasons = [
            unfinished(Some(InProgress::Rebase), &["a.txt"], true),
            unfinished(Some(InProgress::Rebase), &["a.txt"], false),
            unfinished(Some(InProgress::Merge), &[], false),
            unfinished(Some(InProgress::CherryPick), &["a.txt"], true),
            unfinished(Some(InProgress::Revert), &["a.txt"], true),
            unfinished(Some(InProgress::ApplyMailbox), &["a.txt"], true),
            unfinished(Some(InProgress::Bisect), &[], false),
            unfinished(None, &["a.txt"], true),
            BlockReason::Detached,
        ];
        for reason in reasons {
            let d = decide(&Facts {
                blocked: Some(reason.clone()),
                ..facts(1, Some(0), None)
            });
            assert_eq!(d.state, WorkState::Blocked);
            let required = d.required_action.clone().expect("never null when blocked");
            assert!(d.available_next.contains(&required.tool), "{reason:?}");
            if let BlockReason::Unfinished(Unfinished { op: Some(op), .. }) = &reason {
                let [verb, flag] = op.abort_args();
                let call = format!("work_vcs([\"{verb}\", \"{flag}\"])");
                assert!(
                    required
                        .policy_hint
                        .as_deref()
                        .is_some_and(|h| h.contains(&call))
                        && d.summary.contains(&call),
                    "the way out names the {op:?}: {d:?}"
                );
                assert!(
                    !d.summary.contains("merge") || *op == InProgress::Merge,
                    "{d:?}"
                );
            }
        }
    }

    #[test]
    fn markers_left_are_named_with_their_lines() {
        let reason = BlockReason::Unfinished(Unfinished {
            op: Some(InProgress::Rebase),
            conflicted: vec!["a.txt".into()],
            unresolved: vec![butler_worker::git::Markers {
                path: butler_worker::git::RepoPath::from_bytes("a.txt"),
                lines: vec![3, 9],
            }],
        });
        let d = decide(&Facts {
            blocked: Some(reason),
            ..facts(1, Some(0), None)
        });
        let required = d.required_action.expect("required");
        assert_eq!(required.tool, Tool::WorkRecord);
        assert!(
            required.reason.contains("a.txt (lines 3, 9)"),
            "{required:?}"
        );
        assert!(
            required.reason.contains("continue the rebase"),
            "{required:?}"
        );
    }

    #[test]
    fn clean_idle_requires_nothing() {
        let d = decide(&facts(0, Some(0), None));
        assert_eq!(d.required_action, None);
        assert_eq!(d.available_next, vec![Tool::WorkStart]);
    }
}
