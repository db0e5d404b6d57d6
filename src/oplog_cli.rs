//! `butler oplog [N]` and `butler undo [ID]`: the operation log for a person at the terminal
//! (the Brain's `work_oplog` / `work_undo`; see `butler_worker::git::oplog`).

use std::path::Path;

use anyhow::Context;
use butler_worker::config::Environment;
use butler_worker::git::{GitRepo, OpEntry, OpInfo, UndoRefusal};
use butler_worker::time::SharedClock;

fn repo(project: &Path) -> anyhow::Result<GitRepo> {
    GitRepo::discover(project).context("opening the project's repository")
}

fn line(e: &OpEntry) -> String {
    let mut out = format!("{:>5}  {}  {}", e.id, e.tool, e.what);
    if !e.by.is_empty() {
        out.push_str(&format!("  (for {})", e.by));
    }
    if !e.finished {
        out.push_str("  [unfinished]");
    }
    let mut changed: Vec<String> = e.files.iter().take(5).cloned().collect();
    if e.files.len() > 5 {
        changed.push(format!("… {} files in all", e.files.len()));
    }
    changed.extend(e.refs.iter().cloned());
    if !changed.is_empty() {
        out.push_str(&format!("\n       changed: {}", changed.join(", ")));
    }
    out.push('\n');
    out
}

/// The newest `n` entries, one block each.
pub fn oplog(project: &Path, n: usize) -> anyhow::Result<String> {
    let entries = repo(project)?.oplog_entries(n)?;
    if entries.is_empty() {
        return Ok("No operations logged yet.\n".into());
    }
    Ok(entries.iter().map(line).collect())
}

/// Undoes `id` (the newest when `None`); `Err` when refused, changing nothing.
pub fn undo(
    project: &Path,
    id: Option<u64>,
    clock: &SharedClock,
    env: &Environment,
) -> anyhow::Result<String> {
    let repo = repo(project)?;
    let lock = repo.lock_tree()?;
    let info = OpInfo {
        tool: "butler undo".into(),
        what: match id {
            Some(id) => format!("undo operation {id}"),
            None => "undo the newest operation".into(),
        },
        by: "person".into(),
        at: clock.now().unix(),
        undoes: None,
    };
    let done = match repo.oplog_undo(&lock, id, info)? {
        Ok(done) => done,
        Err(UndoRefusal::NoSuchOperation(id)) => match id {
            Some(id) => anyhow::bail!("no operation {id} in the log (butler oplog lists them)"),
            None => anyhow::bail!("no operations logged yet"),
        },
        Err(UndoRefusal::Unfinished(id)) => {
            anyhow::bail!("operation {id} is still running or never finished; nothing undone")
        }
        Err(UndoRefusal::ChangedSince {
            newest,
            files,
            refs,
        }) => {
            let all: Vec<String> = files.into_iter().chain(refs).collect();
            anyhow::bail!(
                "nothing undone: work since operation {newest} would be lost: {}",
                all.join(", ")
            )
        }
    };
    let retention =
        butler_orchestrator::work::oplog::retention(|name| env.get(name).map(str::to_owned));
    repo.oplog_prune(&lock, retention, clock.now().unix())?;
    let mut out = format!(
        "Undid operation {} ({}): files, index and references are as before it.\n",
        done.undone, done.undone_tool
    );
    if !done.also.is_empty() {
        let ids: Vec<String> = done.also.iter().map(u64::to_string).collect();
        out.push_str(&format!(
            "Later operations undone with it: {}.\n",
            ids.join(", ")
        ));
    }
    match &done.entry {
        Some(entry) => out.push_str(&format!(
            "This undo is operation {}; `butler undo {}` reverses it.\n",
            entry.id, entry.id
        )),
        None => out.push_str("Nothing had to change: the project already was as before it.\n"),
    }
    Ok(out)
}
