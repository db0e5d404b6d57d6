//! A Brain's session: the project it works in, resolved once by `work_session_start`.
//!
//! State lives in the server instance, and rmcp makes one instance per MCP connection, so each
//! connection (stdio today, one per HTTP session later) has its own session. What must
//! survive a restart (the active issue) is kept in the ledger instead.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use butler_worker::git::GitRepo;
use butler_worker::issues::{BackendInfo, IssueBackend};
use butler_worker::ledger::Ledger;
use butler_worker::secrets::KnownSecrets;
use butler_worker::time::SharedClock;

use crate::error::WorkError;

/// Everything a tool needs to act on the project.
pub struct Project {
    pub repo: GitRepo,
    pub ledger: Mutex<Ledger>,
    pub issues: Arc<dyn IssueBackend>,
    /// `owner/repo` when the shared destination names one, else the directory name.
    pub resolved_repo: String,
    /// How the issue backend was chosen, for `work_session_start` to report.
    pub backend_note: String,
    /// Titles of issues already read, so `work_observe` does not ask the tracker every turn.
    pub titles: Mutex<HashMap<u64, String>>,
    /// Where every time the project's work stamps comes from.
    pub clock: SharedClock,
    /// Butler's own secrets (the tracker token), refused wherever the Brain would share them.
    pub known_secrets: KnownSecrets,
}

impl Project {
    /// The key under which per-project state is remembered (the working tree's path).
    pub fn key(&self) -> String {
        self.repo.workdir().to_string_lossy().into_owned()
    }

    pub fn backend(&self) -> BackendInfo {
        self.issues.info()
    }

    /// Runs `f` with the ledger locked (ledger calls are short and synchronous).
    pub fn with_ledger<T>(
        &self,
        f: impl FnOnce(&Ledger) -> Result<T, WorkError>,
    ) -> Result<T, WorkError> {
        let guard = self
            .ledger
            .lock()
            .map_err(|_| WorkError::Internal("ledger lock poisoned".into()))?;
        f(&guard)
    }
}

/// The directory name, used as the repository name when no remote names one.
pub fn dir_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "project".into())
}

/// Runs blocking project work (git, SQLite) off the async executor.
pub async fn blocking<T: Send + 'static>(
    project: &Arc<Project>,
    f: impl FnOnce(&Project) -> Result<T, WorkError> + Send + 'static,
) -> Result<T, WorkError> {
    let project = Arc::clone(project);
    let lang = crate::catalogue::current();
    tokio::task::spawn_blocking(move || crate::catalogue::sync_scope(lang, || f(&project)))
        .await
        .map_err(|e| WorkError::Internal(format!("worker task failed: {e}")))?
}

/// Longest `project_root` accepted.
const MAX_PATH: usize = 4096;

/// `work_session_start`: resolves the project and its issue backend; its ledger and issue
/// store stamp times from `clock`.
pub async fn open_project(
    root: &str,
    clock: SharedClock,
) -> Result<(Arc<Project>, crate::envelope::Reply), WorkError> {
    let root = root.trim();
    if root.is_empty() || root.len() > MAX_PATH || root.contains('\0') {
        return Err(WorkError::InvalidArgument {
            field: "project_root",
            reason: "give the project's absolute path".into(),
        });
    }
    let path = std::path::PathBuf::from(root);
    if !path.is_absolute() {
        return Err(WorkError::InvalidArgument {
            field: "project_root",
            reason: format!("`{root}` is not an absolute path"),
        });
    }
    let ledger_clock = clock.clone();
    let opened = tokio::task::spawn_blocking(move || -> Result<_, WorkError> {
        let repo = GitRepo::discover(&path)?;
        let ledger = Ledger::open(repo.common_dir())?.with_clock(ledger_clock);
        let remote = match repo.destination()? {
            Some(dest) => Some(dest.remote),
            None => Some("origin".to_string()),
        };
        let url = match remote {
            Some(name) => repo.remote_url(&name)?,
            None => None,
        };
        Ok((repo, ledger, url))
    })
    .await
    .map_err(|e| WorkError::Internal(format!("session start: {e}")))??;
    let (repo, ledger, url) = opened;
    let remote = url
        .as_deref()
        .and_then(butler_worker::remote_url::parse_remote);
    let resolved_repo = match &remote {
        Some(r) => format!("{}/{}", r.owner, r.repo),
        None => dir_name(repo.workdir()),
    };
    let (issues, backend_note, known_secrets) =
        crate::backend::choose(&repo, &resolved_repo, remote.as_ref(), clock.clone()).await?;
    let project = Arc::new(Project {
        repo,
        ledger: Mutex::new(ledger),
        issues,
        resolved_repo,
        backend_note,
        titles: Mutex::new(HashMap::new()),
        clock,
        known_secrets,
    });
    let info = project.backend();
    let data = serde_json::json!({
        "project_root": project.repo.workdir().to_string_lossy(),
        "resolved_repo": project.resolved_repo,
        "issue_backend": info.kind,
        "issue_backend_note": project.backend_note,
    });
    let summary = crate::catalogue::fill(
        crate::catalogue::Key::SessionStarted,
        &[("repo", &project.resolved_repo), ("backend", &info.kind)],
    );
    Ok((project, crate::envelope::Reply::new(summary, data)))
}
