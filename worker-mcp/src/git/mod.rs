//! The git worker: the only code in Butler that reads or changes a git repository.
//!
//! [`GitRepo`] is a plain handle (paths only; `Clone + Send + Sync`) with synchronous methods;
//! async callers use [`crate::offload::blocking`]. Back ends are chosen by measurement
//! (libgit2, gix and the git CLI timed on large repositories; `benches/observe_vs_git.rs` keeps
//! the comparison with `git status`): cheap reads (HEAD, refs, upstream, ahead/behind,
//! recent commits, repository state) go through libgit2 in-process, reopened per call so they
//! always see the current state, and so do the operation log's own objects and references
//! (`objects.rs`); status, diffs, path history, recording and publishing spawn the
//! `git` program (see `command.rs`), so hooks, credentials and configuration behave exactly as
//! for a person. No git2 type appears in this module's public API.

mod additions;
mod command;
mod conflict;
mod diff;
mod effect;
mod error;
mod hardened;
mod history;
mod hooks;
mod line;
mod lock;
mod loss;
mod objects;
mod oplog;
mod path;
mod publish;
mod record;
mod repo;
mod status;
mod task;
mod transfer;
mod vcs;

use std::ffi::OsString;
use std::path::{Path, PathBuf};

pub use additions::{Added, Addition};
pub use conflict::{Continued, Markers, marker_starts};
pub use diff::{FileStat, Patch};
pub use effect::{Before, ConfigChange, Effect, Values, Watch};
pub use error::GitError;
pub use hardened::{MAID_EMAIL, MAID_NAME};
pub use history::CommitInfo;
pub use line::{
    Committer, LineClash, LineInfo, MAX_LINE_NAME, MergeOutcome, TASK_LINE_PREFIX, check_line_name,
    merge_line, task_of_line,
};
pub use lock::{BUTLER_WAIT, FOREIGN_WAIT, IndexLock, TreeLock};
pub use loss::{FilesQuery, LossQuery, Lost, Source, Untracked};
pub use oplog::{Begun, OPLOG_REFS, OpEntry, OpInfo, Retention, UndoRefusal, Undone};
pub use path::RepoPath;
pub use publish::PublishOutcome;
pub use record::{Recorded, Staged};
pub use repo::{Destination, HeadInfo, InProgress, Unpublished};
pub use status::{Change, NotRecordable, StatusEntry, Unrecordable, WorkTreeStatus};
pub use task::{Baseline, TaskGit, TreeStatus, task_worktrees_dir};
pub use transfer::{Access, FileCredentials, shown_destination};
pub use vcs::VcsOutput;

/// An opened (non-bare) repository: where its working tree and git directories are.
#[derive(Debug, Clone)]
pub struct GitRepo {
    workdir: PathBuf,
    git_dir: PathBuf,
    common_dir: PathBuf,
    command_env: Vec<(OsString, OsString)>,
}

impl GitRepo {
    /// Opens the repository whose working tree contains `path` (searching upwards).
    ///
    /// Refuses paths that are not inside a working tree (`NotARepository`) and bare
    /// repositories (`BareRepository`). The working directory returned by
    /// [`GitRepo::workdir`] is the canonical top level of the working tree.
    pub fn discover(path: &Path) -> Result<GitRepo, GitError> {
        let start = path.canonicalize().map_err(|_| GitError::NotARepository)?;
        let repo = git2::Repository::discover(&start).map_err(|e| match e.code() {
            git2::ErrorCode::NotFound => GitError::NotARepository,
            _ => GitError::from(e),
        })?;
        if repo.is_bare() {
            return Err(GitError::BareRepository);
        }
        let workdir = repo.workdir().ok_or(GitError::BareRepository)?;
        let canonical = |p: &Path| {
            p.canonicalize()
                .map_err(|e| GitError::failed("discover", format!("{}: {e}", p.display())))
        };
        Ok(GitRepo {
            workdir: canonical(workdir)?,
            git_dir: canonical(repo.path())?,
            common_dir: canonical(repo.commondir())?,
            command_env: Vec::new(),
        })
    }

    /// Adds environment variables to every git process this handle starts (for example a
    /// hermetic `HOME` and `GIT_CONFIG_GLOBAL` in tests). In-process reads are unaffected.
    pub fn with_command_env<K, V>(mut self, vars: impl IntoIterator<Item = (K, V)>) -> Self
    where
        K: Into<OsString>,
        V: Into<OsString>,
    {
        self.command_env
            .extend(vars.into_iter().map(|(k, v)| (k.into(), v.into())));
        self
    }

    /// The top level of the working tree (canonical).
    pub fn workdir(&self) -> &Path {
        &self.workdir
    }

    /// This working tree's git directory (`.git`, or `.git/worktrees/<name>` for a linked
    /// worktree): index, HEAD and in-progress operation state live here.
    pub fn git_dir(&self) -> &Path {
        &self.git_dir
    }

    /// The git directory shared by all worktrees (objects, refs, config); Butler's ledger
    /// lives under it.
    pub fn common_dir(&self) -> &Path {
        &self.common_dir
    }

    /// Turns a user-supplied path (repository-relative or absolute, possibly with `\xNN`
    /// escapes as written by [`RepoPath::display`]) into a [`RepoPath`].
    ///
    /// Anything that leaves the working tree (`..` above the top, symlinked parents pointing
    /// elsewhere, absolute paths elsewhere, the `.git` directory) is `OutsideProject`. The
    /// path need not exist (a deleted file can be named). The top itself gives the empty path.
    pub fn path_in_repo(&self, user_path: &str) -> Result<RepoPath, GitError> {
        path::resolve(&self.workdir, user_path)
    }

    /// Like [`Repo::path_in_repo`], with the last component followed as well: for paths a
    /// program opens or creates directories through.
    pub fn path_in_repo_followed(&self, user_path: &str) -> Result<RepoPath, GitError> {
        path::resolve_followed(&self.workdir, user_path)
    }

    /// A handle on a working tree whose directories Butler already knows (a task worktree it
    /// created): nothing in the tree is read to find them.
    pub(crate) fn from_dirs(
        workdir: PathBuf,
        git_dir: PathBuf,
        common_dir: PathBuf,
        command_env: Vec<(OsString, OsString)>,
    ) -> GitRepo {
        GitRepo {
            workdir,
            git_dir,
            common_dir,
            command_env,
        }
    }

    pub(crate) fn command_env(&self) -> &[(OsString, OsString)] {
        &self.command_env
    }

    /// Opens the repository in-process (cheap: ~0.3 ms); a fresh handle per call sees the
    /// current refs and config.
    pub(crate) fn open(&self) -> Result<git2::Repository, GitError> {
        Ok(git2::Repository::open_ext(
            &self.workdir,
            git2::RepositoryOpenFlags::NO_SEARCH,
            std::iter::empty::<&std::ffi::OsStr>(),
        )?)
    }
}

/// A repository with one commit, for the git layer's own tests.
#[cfg(test)]
pub(crate) mod test_repo {
    use butler_testkit::World;

    use super::GitRepo;

    /// A repository in a fresh world with `a.txt` committed.
    pub(crate) fn committed() -> (World, GitRepo) {
        let w = World::new();
        let path = w.init("repo");
        std::fs::write(path.join("a.txt"), "one\n").expect("write");
        w.commit(&path, "first");
        let repo = GitRepo::discover(&path)
            .expect("discover")
            .with_command_env(w.env.clone());
        (w, repo)
    }

    /// The names of the marker files hostile hooks, filters and drivers left in `dir`, sorted.
    pub(crate) fn markers_in(dir: &std::path::Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .expect("markers")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }
}
