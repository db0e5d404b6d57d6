//! The `line` part of `work_observe`: the current line, how it stands against its shared
//! destination and the line it came from, and the task lines waiting for the Brain.

use butler_worker::git::{GitRepo, HeadInfo, Unpublished};
use serde::Serialize;
use serde_json::Value;

use crate::envelope::Reply;
use crate::error::WorkError;
use crate::work::snapshot::line_of;

/// How the current line stands against another: commits only it has, and only the other.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Standing {
    pub name: String,
    pub ahead: usize,
    pub behind: usize,
}

/// The current line in `work_observe`. Records the shared destination lacks are not repeated
/// here: they are `unpublished_records`.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct LineView {
    pub name: String,
    /// Records the shared destination has that this line lacks; absent when none (or no
    /// destination: `unpublished_records` is null then).
    #[serde(skip_serializing_if = "nothing_behind")]
    pub behind: Option<usize>,
    /// The line it was started from, and how it stands against it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<Standing>,
    /// Lines the ImplementMaid's tasks work on, waiting for task_accept or task_discard.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub task_lines: Vec<String>,
}

fn nothing_behind(behind: &Option<usize>) -> bool {
    behind.unwrap_or(0) == 0
}

/// The current line, how it stands against its shared destination (`unpublished`, already
/// counted by observe) and the line it came from, and the task lines. `None` (logged) when
/// the repository cannot say: observe never fails over it.
pub fn line_view(
    repo: &GitRepo,
    head: &HeadInfo,
    unpublished: Option<&Unpublished>,
) -> Option<LineView> {
    let read = || -> Result<LineView, WorkError> {
        let name = line_of(head);
        let from = match (&head.branch, &head.oid) {
            (Some(branch), Some(oid)) if !head.detached => match repo.line_origin(branch)? {
                Some(origin) => match repo.line_tip(&origin)? {
                    Some(tip) => {
                        let (ahead, behind) = repo.ahead_behind(oid, &tip)?;
                        Some(Standing {
                            name: origin,
                            ahead,
                            behind,
                        })
                    }
                    None => None,
                },
                None => None,
            },
            _ => None,
        };
        let task_lines = repo
            .lines()?
            .into_iter()
            .filter(|l| l.task.is_some())
            .map(|l| l.name)
            .collect();
        Ok(LineView {
            name,
            behind: unpublished.map(|u| u.behind),
            from,
            task_lines,
        })
    };
    read()
        .inspect_err(|e| tracing::warn!(error = %e, "work_observe could not read the line"))
        .ok()
}

/// Puts `line` into an observation's data, after `active_issue` (after `work_state` when there
/// is no active issue).
pub fn attach(reply: &mut Reply, line: Option<LineView>) {
    let (Some(line), Value::Object(data)) = (line, &mut reply.data) else {
        return;
    };
    let at = data
        .keys()
        .position(|k| k == "active_issue")
        .or_else(|| data.keys().position(|k| k == "work_state"))
        .map_or(data.len(), |i| i + 1);
    let value = serde_json::to_value(line).expect("a line view serializes");
    data.shift_insert(at, "line".into(), value);
}
