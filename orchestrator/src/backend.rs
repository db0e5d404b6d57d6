//! Which issue backend a session uses: the Gitea/Forgejo tracker when configured (and, in
//! `auto` mode, reachable), else the embedded store in the ledger file. The tracker token goes
//! only to a server the user bound it to (see `butler_worker::issues::binding`).

use std::sync::Arc;

use butler_worker::config::IssueConfig;
use butler_worker::git::GitRepo;
use butler_worker::issues::local::LocalIssues;
use butler_worker::issues::select::{SelectError, select_backend};
use butler_worker::issues::{IssueBackend, IssueError};
use butler_worker::remote_url::RemoteRepo;
use butler_worker::secrets::KnownSecrets;
use butler_worker::time::SharedClock;

use crate::error::WorkError;

/// The session's issue backend, the note saying why it was chosen, and the secrets Butler
/// holds (to refuse them wherever the Brain would share them).
pub async fn choose(
    repo: &GitRepo,
    name: &str,
    remote: Option<&RemoteRepo>,
    clock: SharedClock,
    config: &IssueConfig,
) -> Result<(Arc<dyn IssueBackend>, String, KnownSecrets), WorkError> {
    let known = KnownSecrets::new(config.token.as_ref());
    let common_dir = repo.common_dir().to_path_buf();
    let name = name.to_string();
    let local = move || {
        let store = LocalIssues::open(&common_dir, name).map_err(|e| IssueError::Backend {
            context: format!("embedded issue store: {e}"),
        })?;
        Ok(Box::new(store.with_clock(clock)) as Box<dyn IssueBackend>)
    };
    let (backend, selection) =
        select_backend(config, remote, local)
            .await
            .map_err(|e| match e {
                SelectError::Issue(issue) => WorkError::Issue(issue),
                SelectError::TokenNotBound { host } => WorkError::TokenRefused {
                    host,
                    plain_http: false,
                },
                SelectError::PlainHttp { host } => WorkError::TokenRefused {
                    host,
                    plain_http: true,
                },
                other @ (SelectError::MissingToken
                | SelectError::MissingUrl
                | SelectError::MissingRepo) => WorkError::Config {
                    problem: other.to_string(),
                },
            })?;
    Ok((Arc::from(backend), selection.summary(), known))
}
