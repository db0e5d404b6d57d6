//! A Brain's session: the project it works in, resolved once by `work_session_start`, and what
//! the session chose there (its active issue per line of work).
//!
//! State lives in the server instance, and rmcp makes one instance per MCP connection (stdio)
//! or per MCP session (`Mcp-Session-Id` over streamable HTTP), so each Brain has its own: two
//! sessions on one project share the repository and the ledger, never their choices. What must
//! survive a restart (the active issue) is also kept in the ledger: a session starts from what
//! the ledger held when it opened the project, and never takes a choice another session makes
//! after that.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use butler_worker::config::{Environment, ProjectConfig, ProjectTrust, TrustState};
use butler_worker::git::GitRepo;
use butler_worker::issues::{BackendInfo, IssueBackend};
use butler_worker::ledger::{Ledger, LedgerError, LedgerHandle};
use butler_worker::offload;
use butler_worker::secrets::KnownSecrets;
use butler_worker::time::SharedClock;

use crate::error::{ConfigProblem, WorkError};

/// The variable that sets how long a session's ledger connection stays open unused (seconds).
pub const LEDGER_IDLE_ENV: &str = "BUTLER_LEDGER_IDLE_S";
/// Default: a session's ledger connection is closed after this long unused.
pub const DEFAULT_LEDGER_IDLE: Duration = Duration::from_secs(30);

/// Everything a tool needs to act on the project.
pub struct Project {
    pub repo: GitRepo,
    /// The ledger (shared with the embedded issue store), open only while in use.
    ledger: Arc<LedgerHandle>,
    pub issues: Arc<dyn IssueBackend>,
    /// `owner/repo` when the shared destination names one, else the directory name.
    pub resolved_repo: String,
    /// Titles of issues already read, so `work_observe` does not ask the tracker every turn.
    pub titles: Mutex<HashMap<u64, String>>,
    /// Where every time the project's work stamps comes from.
    pub clock: SharedClock,
    /// Butler's own secrets (the tracker token), refused wherever the Brain would share them.
    pub known_secrets: KnownSecrets,
    /// The active issue per line of work: what the ledger remembered when the session opened,
    /// then what this session set (a line with none has no entry).
    session_issues: Mutex<HashMap<String, u64>>,
    /// Butler's environment, read once when the process started.
    pub env: Arc<Environment>,
    /// The user's configuration and the project's `.butler/config.toml` merged, read once when
    /// the session started.
    pub config: ProjectConfig,
}

impl Project {
    /// The key under which per-project state is remembered (the working tree's path).
    pub fn key(&self) -> String {
        self.repo.workdir().to_string_lossy().into_owned()
    }

    pub fn backend(&self) -> BackendInfo {
        self.issues.info()
    }

    /// The active issue of `line` for this session: the one it set, else the one the ledger
    /// remembered when the session opened (set by an earlier session, or before a restart).
    /// Never one another session set since: their choices are theirs.
    pub fn active_issue(&self, line: &str) -> Option<u64> {
        self.session_issues().get(line).copied()
    }

    /// Sets (or, with `None`, clears) the active issue of `line` for this session, and remembers
    /// it in the ledger for the sessions that open after.
    pub fn set_active_issue(
        &self,
        ledger: &Ledger,
        line: &str,
        issue: Option<u64>,
    ) -> Result<(), LedgerError> {
        ledger.set_active_issue(&self.key(), line, issue)?;
        let mut chosen = self.session_issues();
        match issue {
            Some(issue) => chosen.insert(line.to_owned(), issue),
            None => chosen.remove(line),
        };
        Ok(())
    }

    /// The session's choices (plain data: a panic elsewhere cannot leave them half-written).
    fn session_issues(&self) -> std::sync::MutexGuard<'_, HashMap<String, u64>> {
        self.session_issues
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Runs `f` with the ledger (reopened if it was released; calls are short and synchronous,
    /// one at a time).
    pub fn with_ledger<T>(
        &self,
        f: impl FnOnce(&Ledger) -> Result<T, WorkError>,
    ) -> Result<T, WorkError> {
        self.ledger.with(f)
    }

    /// Whether the session holds its ledger connection open right now.
    pub fn ledger_open(&self) -> bool {
        self.ledger.is_open()
    }
}

/// Closes `ledger`'s connection whenever it has gone unused for `idle`, until the session that
/// holds it is gone.
async fn release_when_idle(ledger: Weak<LedgerHandle>, idle: Duration) {
    let every = (idle / 2).max(Duration::from_millis(100));
    loop {
        tokio::time::sleep(every).await;
        let Some(ledger) = ledger.upgrade() else {
            return;
        };
        // Closing the last connection may checkpoint the log: file work, off the executor.
        let released = offload::blocking(move || {
            ledger
                .release_if_idle(idle, Instant::now())
                .then(|| ledger.path().to_path_buf())
        })
        .await;
        if let Ok(Some(path)) = released {
            tracing::debug!(path = %path.display(), "released an idle ledger connection");
        }
    }
}

/// How long a session's ledger connection stays open unused: [`LEDGER_IDLE_ENV`], else
/// [`DEFAULT_LEDGER_IDLE`].
fn ledger_idle(env: &Environment) -> Duration {
    env.get(LEDGER_IDLE_ENV)
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(|s| Duration::from_secs(s.max(1)))
        .unwrap_or(DEFAULT_LEDGER_IDLE)
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
    offload::blocking(move || crate::catalogue::sync_scope(lang, || f(&project)))
        .await
        .map_err(|e| WorkError::Internal(format!("worker task failed: {e}")))?
}

/// Longest `project_root` accepted.
const MAX_PATH: usize = 4096;

/// `work_session_start`: resolves the project, reads its configuration (with `env`'s
/// overrides) and chooses its issue backend; its ledger and issue store stamp times from
/// `clock`.
pub async fn open_project(
    root: &str,
    clock: SharedClock,
    env: Arc<Environment>,
) -> Result<(Arc<Project>, crate::envelope::Reply), WorkError> {
    let root = root.trim();
    if root.is_empty() || root.len() > MAX_PATH || root.contains('\0') {
        return Err(WorkError::InvalidArgument {
            field: "project_root",
            reason: crate::catalogue::text(crate::catalogue::Key::ArgProjectPath).into(),
        });
    }
    let path = std::path::PathBuf::from(root);
    if !path.is_absolute() {
        return Err(WorkError::InvalidArgument {
            field: "project_root",
            reason: crate::catalogue::fill(
                crate::catalogue::Key::ArgNotAbsolute,
                &[("root", &root)],
            ),
        });
    }
    let ledger_clock = clock.clone();
    let opened = offload::blocking(move || -> Result<_, WorkError> {
        let repo = GitRepo::discover(&path)?;
        let ledger = Ledger::open(repo.common_dir())?.with_clock(ledger_clock);
        // The session starts from the choices remembered when it opens, and only those.
        let key = repo.workdir().to_string_lossy().into_owned();
        let remembered: HashMap<String, u64> = ledger.active_issues(&key)?.into_iter().collect();
        let remote = match repo.destination()? {
            Some(dest) => Some(dest.remote),
            None => Some("origin".to_string()),
        };
        let url = match remote {
            Some(name) => repo.remote_url(&name)?,
            None => None,
        };
        Ok((repo, ledger, remembered, url))
    })
    .await
    .map_err(|e| WorkError::Internal(format!("session start: {e}")))??;
    let (repo, ledger, remembered, url) = opened;
    let ledger = Arc::new(LedgerHandle::new(ledger));
    let remote = url
        .as_deref()
        .and_then(butler_worker::remote_url::parse_remote);
    let resolved_repo = match &remote {
        Some(r) => format!("{}/{}", r.owner, r.repo),
        None => dir_name(repo.workdir()),
    };
    let config = ProjectConfig::load(repo.workdir(), &env).map_err(|e| WorkError::Config {
        problem: ConfigProblem::Files {
            detail: e.to_string(),
        },
    })?;
    let (issues, selection, known_secrets) = crate::backend::choose(
        &resolved_repo,
        remote.as_ref(),
        Arc::clone(&ledger),
        &config.issues,
    )
    .await?;
    tokio::spawn(release_when_idle(
        Arc::downgrade(&ledger),
        ledger_idle(&env),
    ));
    let project = Arc::new(Project {
        repo,
        ledger,
        issues,
        resolved_repo,
        titles: Mutex::new(HashMap::new()),
        clock,
        known_secrets,
        session_issues: Mutex::new(remembered),
        env,
        config,
    });
    let info = project.backend();
    let mut data = serde_json::json!({
        "resolved_repo": project.resolved_repo,
        "issue_backend": info.kind,
    });
    if let Some(note) = crate::backend::note(&selection) {
        data["issue_backend_note"] = note.into();
    }
    // The root the Brain gave is not repeated back; one found above it (a subdirectory was
    // given, or a link resolved) is news.
    let workdir = project.repo.workdir();
    if workdir != std::path::Path::new(root) {
        data["project_root"] = workdir.to_string_lossy().into();
    }
    let mut summary = crate::catalogue::fill(
        crate::catalogue::Key::SessionStarted,
        &[("repo", &project.resolved_repo)],
    );
    if let Some((note, sentence)) = untrusted_note(&project.config.trust, project.repo.workdir()) {
        data["untrusted_config"] = note;
        summary = format!("{summary} {sentence}");
    }
    Ok((project, crate::envelope::Reply::new(summary, data)))
}

/// What the session's first answer says about a project file whose settings of what runs were
/// left out because the user has not trusted it (nothing when none were): the file, the
/// settings, and the command that trusts it.
fn untrusted_note(trust: &ProjectTrust, root: &Path) -> Option<(serde_json::Value, String)> {
    if trust.state != TrustState::Untrusted || trust.ignored.is_empty() {
        return None;
    }
    let command = format!("butler trust {}", shell_word(&root.to_string_lossy()));
    let sentence = crate::catalogue::fill(
        crate::catalogue::Key::SessionUntrustedConfig,
        &[
            ("file", &trust.file.display()),
            ("settings", &shown_settings(&trust.ignored)),
            ("command", &command),
        ],
    );
    let note = serde_json::json!({
        "file": trust.file.to_string_lossy(),
        "ignored": trust.ignored,
        "trust_command": command,
    });
    Some((note, sentence))
}

/// The settings named in a sentence: the first eight, then `…`.
fn shown_settings(settings: &[String]) -> String {
    let mut text = settings
        .iter()
        .take(8)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if settings.len() > 8 {
        text.push_str(", …");
    }
    text
}

/// `text` as one shell word (quoted when it holds anything but plain path characters).
fn shell_word(text: &str) -> String {
    shlex::try_quote(text).map_or_else(|_| format!("{text:?}"), |q| q.into_owned())
}
