//! The operation log as the Brain meets it: every tool that changes the project's files,
//! index or references runs through [`logged`] (a snapshot before, the entry completed after;
//! see `butler_worker::git::oplog`), its answer carries the entry's id (`data.oplog_id`:
//! `data.operation` already names the git operation `work_record` carries on), and
//! `work_oplog` / `work_undo` list and undo entries. An entry's `what` is written from the
//! catalogue in the language of the session that made it, and kept in those words.

use std::future::Future;
use std::sync::Arc;

use butler_worker::git::{Begun, GitRepo, OpEntry, OpInfo, Retention};
use serde_json::{Value, json};

use crate::catalogue::{Key, fill, text};
use crate::envelope::Reply;
use crate::error::WorkError;
use crate::session::{Project, blocking};
use crate::tool::Tool;

/// Entries `work_oplog` lists without `n`, and at most.
const DEFAULT_SHOWN: usize = 10;
const MAX_SHOWN: usize = 100;

/// Retention from the environment: `BUTLER_OPLOG_KEEP` entries (default 200) and
/// `BUTLER_OPLOG_DAYS` days (default 30).
pub fn retention(get: impl Fn(&str) -> Option<String>) -> Retention {
    let mut r = Retention::default();
    if let Some(keep) = get("BUTLER_OPLOG_KEEP").and_then(|v| v.trim().parse().ok()) {
        r.keep = keep;
    }
    if let Some(days) = get("BUTLER_OPLOG_DAYS").and_then(|v| v.trim().parse::<i64>().ok()) {
        r.max_age_secs = days.max(0) * 24 * 3600;
    }
    r
}

fn begin(project: &Project, tool: Tool, what: String, by: String) -> Result<Begun, WorkError> {
    let lock = project.repo.lock_tree()?;
    let info = OpInfo {
        tool: tool.as_str().to_owned(),
        what,
        by,
        at: project.clock.now().unix(),
        undoes: None,
    };
    Ok(project.repo.oplog_begin(&lock, info)?)
}

fn finish(project: &Project, begun: Begun) -> Result<Option<OpEntry>, WorkError> {
    let lock = project.repo.lock_tree()?;
    let entry = project.repo.oplog_finish(&lock, begun)?;
    prune(&project.repo, &lock, project)?;
    Ok(entry)
}

fn prune(
    repo: &GitRepo,
    lock: &butler_worker::git::TreeLock,
    project: &Project,
) -> Result<(), WorkError> {
    let keep = retention(|name| project.env.get(name).map(str::to_owned));
    repo.oplog_prune(lock, keep, project.clock.now().unix())?;
    Ok(())
}

/// Runs `op` with a snapshot taken before it; a successful answer that changed something
/// carries the entry's id (`data.oplog_id`) and says how to undo it.
pub async fn logged<F>(
    project: &Arc<Project>,
    tool: Tool,
    what: String,
    by: String,
    op: F,
) -> Result<Reply, WorkError>
where
    F: Future<Output = Result<Reply, WorkError>>,
{
    let begun = blocking(project, move |p| begin(p, tool, what, by)).await?;
    let id = begun.id();
    let outcome = op.await;
    let entry = match blocking(project, move |p| finish(p, begun)).await {
        Ok(entry) => entry,
        Err(err) => {
            // The operation ran; only its entry is incomplete (undo will say so).
            tracing::warn!(error = %err, id, "the operation's log entry was not completed");
            None
        }
    };
    let mut reply = outcome?;
    if let Some(entry) = entry {
        mark(&mut reply, entry.id);
    }
    Ok(reply)
}

/// Adds the operation's id to an answer.
fn mark(reply: &mut Reply, id: u64) {
    if let Value::Object(map) = &mut reply.data {
        map.insert("oplog_id".into(), json!(id));
    }
    reply.summary.push(' ');
    reply
        .summary
        .push_str(&fill(Key::NoteUndoable, &[("id", &id)]));
}

/// `work_oplog(n?)`.
pub fn oplog(project: &Project, n: Option<i64>) -> Result<Reply, WorkError> {
    let n = match n {
        None => DEFAULT_SHOWN,
        Some(n) if (1..=MAX_SHOWN as i64).contains(&n) => n as usize,
        Some(n) => {
            return Err(WorkError::InvalidArgument {
                field: "n",
                reason: fill(
                    Key::ArgNotBetween,
                    &[("n", &n), ("min", &1), ("max", &MAX_SHOWN)],
                ),
            });
        }
    };
    let entries = project.repo.oplog_entries(n)?;
    let summary = if entries.is_empty() {
        text(Key::OplogEmpty).to_owned()
    } else {
        fill(Key::OplogListed, &[("n", &entries.len())])
    };
    Ok(Reply::new(summary, json!({"operations": entries})))
}

/// `work_undo(operation?)`.
pub fn undo(project: &Project, operation: Option<i64>, by: &str) -> Result<Reply, WorkError> {
    let id = match operation {
        None => None,
        Some(n) if n > 0 => Some(n as u64),
        Some(n) => {
            return Err(WorkError::InvalidArgument {
                field: "operation",
                reason: fill(Key::ArgNotOperationId, &[("n", &n)]),
            });
        }
    };
    let lock = project.repo.lock_tree()?;
    let info = OpInfo {
        tool: Tool::WorkUndo.as_str().into(),
        what: match id {
            Some(id) => fill(Key::OpWhatUndo, &[("id", &id)]),
            None => text(Key::OpWhatUndoNewest).into(),
        },
        by: by.to_owned(),
        at: project.clock.now().unix(),
        undoes: None,
    };
    let done = project
        .repo
        .oplog_undo(&lock, id, info)?
        .map_err(WorkError::UndoRefused)?;
    prune(&project.repo, &lock, project)?;
    let mut summary = match &done.entry {
        Some(entry) => fill(
            Key::Undone,
            &[
                ("id", &done.undone),
                ("tool", &done.undone_tool),
                ("undo", &entry.id),
            ],
        ),
        None => fill(
            Key::UndoneAlready,
            &[("id", &done.undone), ("tool", &done.undone_tool)],
        ),
    };
    if !done.also.is_empty() {
        let ids: Vec<String> = done.also.iter().map(u64::to_string).collect();
        summary.push(' ');
        summary.push_str(&fill(Key::UndoneAlso, &[("ids", &ids.join(", "))]));
    }
    let (files, refs) = done
        .entry
        .as_ref()
        .map(|e| (e.files.clone(), e.refs.clone()))
        .unwrap_or_default();
    Ok(Reply::new(
        summary,
        json!({
            "undone": done.undone,
            "also_undone": done.also,
            "oplog_id": done.entry.as_ref().map(|e| e.id),
            "files": files,
            "refs": refs,
        }),
    ))
}
