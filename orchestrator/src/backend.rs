//! Which issue backend a session uses: the Gitea/Forgejo tracker when configured (and, in
//! `auto` mode, reachable), else the embedded store in the ledger file. The tracker token goes
//! only to a server the user bound it to (see `butler_worker::issues::binding`).

use std::sync::Arc;

use butler_worker::config::IssueConfig;
use butler_worker::issues::local::LocalIssues;
use butler_worker::issues::select::{SelectError, select_backend};
use butler_worker::issues::{IssueBackend, IssueError};
use butler_worker::ledger::LedgerHandle;
use butler_worker::remote_url::RemoteRepo;
use butler_worker::secrets::KnownSecrets;

use crate::error::WorkError;

/// The session's issue backend, the note saying why it was chosen, and the secrets Butler
/// holds (to refuse them wherever the Brain would share them).
pub async fn choose(
    name: &str,
    remote: Option<&RemoteRepo>,
    ledger: Arc<LedgerHandle>,
    config: &IssueConfig,
) -> Result<(Arc<dyn IssueBackend>, String, KnownSecrets), WorkError> {
    let known = KnownSecrets::new(config.token.as_ref());
    let name = name.to_string();
    // The embedded store shares the session's ledger connection (and its clock).
    let local = move || {
        Ok::<_, IssueError>(Box::new(LocalIssues::shared(ledger, name)) as Box<dyn IssueBackend>)
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
