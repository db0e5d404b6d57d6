//! Where a task's files live: its worktree (outside the git directory), the agent's own
//! directory and the verify commands' temp dir beside it, and the task's evidence directory in
//! the git directory (which the agent cannot write).

use std::path::{Path, PathBuf};

use butler_worker::git::TaskGit;

/// The directories of one task.
#[derive(Debug, Clone)]
pub(super) struct Paths {
    pub worktree: PathBuf,
    /// `<git common dir>/butler/tasks/<id>/`: attempt logs, out-of-scope patches, files the
    /// agent wrote into the Brain's tree, sandbox policies and reports.
    pub task_dir: PathBuf,
    /// The agent's own directory beside its worktree: `home/`, `tmp/`, the notes file.
    pub agent_dir: PathBuf,
    /// The verify commands' temp dir.
    pub verify_tmp: PathBuf,
}

impl Paths {
    pub(crate) fn of(worktrees: &Path, common_dir: &Path, task: &str) -> Paths {
        let worktree = worktrees.join(format!("task-{task}"));
        Paths {
            agent_dir: beside(&worktree, ".agent"),
            verify_tmp: beside(&worktree, ".verify"),
            task_dir: crate::activity::log::task_dir(common_dir, task),
            worktree,
        }
    }
}

/// `<worktree><suffix>`: the task's other directories, named after its worktree.
pub(super) fn beside(worktree: &Path, suffix: &str) -> PathBuf {
    let mut name = worktree.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// The repository's task worktrees directory (see
/// [`MaidContext::worktrees_root`](super::MaidContext::worktrees_root)).
pub(super) fn worktrees_dir(root: Option<&Path>, main: &TaskGit) -> PathBuf {
    match root {
        Some(root) => butler_worker::git::task_worktrees_dir(root, main.common_dir()),
        None => main.common_dir().join("butler").join("worktrees"),
    }
}
