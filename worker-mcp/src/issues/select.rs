//! Choosing the issue backend from configuration and the git remote.
//!
//! `local` always uses the embedded store; `gitea` always uses Gitea/Forgejo (a missing token,
//! URL or repository is a typed error); `auto` uses Gitea/Forgejo when a token is configured
//! and the server answers the Gitea API, else the embedded store. The probe is sent without
//! the token, so a token is never offered to a host that is not a Gitea server.
//!
//! Before any request, the server must be one the user bound the token to (see [`binding`]):
//! `gitea` refuses any other server (`TokenNotBound`, `PlainHttp`); `auto` does not even probe
//! a server the token is not bound to and uses the embedded store instead.

use std::time::Duration;

use url::Url;

use super::binding::{self, Refusal};
use super::gitea::{ClientOptions, GiteaBackend, GiteaTarget, ServerKind, probe_server};
use super::{IssueBackend, IssueError};
use crate::config::{
    BackendChoice, ENV_GITEA_HOSTS, ENV_GITEA_INSECURE_HTTP, ENV_GITEA_TOKEN, ENV_GITEA_URL,
    IssueConfig,
};
use crate::remote_url::RemoteRepo;

/// The longest the `auto` probe may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(3);

/// Which backend was chosen and why, for `work_session_start` to report (in the Brain's
/// language: the words are the orchestrator's catalogue's).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selection {
    /// `"local"`, `"gitea"` or `"forgejo"`.
    pub kind: &'static str,
    /// `owner/repo` on the remote tracker; `None` for the embedded store.
    pub repo: Option<String>,
    pub reason: SelectionReason,
}

/// Why a backend was chosen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SelectionReason {
    /// `BUTLER_ISSUE_BACKEND` / config asked for `local`.
    ConfiguredLocal,
    /// `gitea` was asked for; `version` when the server answered the probe.
    ConfiguredGitea { version: Option<String> },
    /// `auto`: the server answered the Gitea API.
    DetectedGitea { version: Option<String> },
    /// `auto`: no token is configured.
    NoToken,
    /// `auto`: no remote (nor configured URL and repository) to find a tracker from.
    NoRemote,
    /// `auto`: the remote's host does not answer the Gitea API.
    NotGitea,
    /// `auto`: the server (`scheme://host:port`) is not one the user bound the token to.
    TokenNotBound { host: String },
}

/// Why the configured backend cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum SelectError {
    #[error("the issue backend is set to `gitea` but no token is set; set `{ENV_GITEA_TOKEN}`")]
    MissingToken,
    #[error(
        "the issue backend is set to `gitea` but the server is unknown; set `{ENV_GITEA_URL}` \
         or add a git remote on the server"
    )]
    MissingUrl,
    #[error(
        "the issue backend is set to `gitea` but the repository is unknown; set `repo` in \
         `.butler/config.toml` or add a git remote on the server"
    )]
    MissingRepo,
    /// The server is not one the user bound the token to; nothing was sent to it.
    #[error(
        "the tracker token is only sent to servers named in `{ENV_GITEA_URL}` or \
         `{ENV_GITEA_HOSTS}`, and {host} is not one of them"
    )]
    TokenNotBound { host: String },
    /// A bound server over plain http on another machine; nothing was sent to it.
    #[error(
        "the tracker token would travel unencrypted (plain http) to {host}; use https, or \
         set `{ENV_GITEA_INSECURE_HTTP}=1` to accept that"
    )]
    PlainHttp { host: String },
    #[error(transparent)]
    Issue(#[from] IssueError),
}

impl SelectError {
    fn refused(refusal: Refusal, web_root: &Url) -> Self {
        let host = binding::origin_label(web_root);
        match refusal {
            Refusal::NotBound => SelectError::TokenNotBound { host },
            Refusal::PlainHttp => SelectError::PlainHttp { host },
        }
    }
}

/// Picks the issue backend. `local` builds the embedded store and is called only when it is
/// chosen.
pub async fn select_backend(
    cfg: &IssueConfig,
    remote: Option<&RemoteRepo>,
    local: impl FnOnce() -> Result<Box<dyn IssueBackend>, IssueError>,
) -> Result<(Box<dyn IssueBackend>, Selection), SelectError> {
    let local_with = |reason| -> Result<_, SelectError> {
        Ok((
            local()?,
            Selection {
                kind: "local",
                repo: None,
                reason,
            },
        ))
    };
    let web_root = cfg
        .gitea_url
        .clone()
        .or_else(|| remote.and_then(remote_web_root));
    let repo = cfg
        .repo
        .clone()
        .or_else(|| remote.map(|r| (r.owner.clone(), r.repo.clone())));

    match cfg.backend {
        BackendChoice::Local => local_with(SelectionReason::ConfiguredLocal),
        BackendChoice::Gitea => {
            let token = cfg.token.as_ref().ok_or(SelectError::MissingToken)?;
            let web_root = web_root.ok_or(SelectError::MissingUrl)?;
            let (owner, repo) = repo.ok_or(SelectError::MissingRepo)?;
            binding::token_may_go_to(&web_root, &cfg.token_hosts, cfg.insecure_http)
                .map_err(|r| SelectError::refused(r, &web_root))?;
            // The probe only tells Gitea from Forgejo here; a silent server is still used.
            let probe = probe_server(&web_root, probe_options(cfg)).await.ok();
            let kind = probe.as_ref().map_or(ServerKind::Gitea, |p| p.kind);
            let version = probe.map(|p| p.version);
            let target = GiteaTarget {
                web_root,
                owner,
                repo,
            };
            gitea(
                cfg,
                target,
                token,
                kind,
                SelectionReason::ConfiguredGitea { version },
            )
        }
        BackendChoice::Auto => {
            let Some(token) = cfg.token.as_ref() else {
                return local_with(SelectionReason::NoToken);
            };
            let (Some(web_root), Some((owner, repo))) = (web_root, repo) else {
                return local_with(SelectionReason::NoRemote);
            };
            match binding::token_may_go_to(&web_root, &cfg.token_hosts, cfg.insecure_http) {
                Ok(()) => {}
                // Not the user's tracker: not even asked whether it is one.
                Err(Refusal::NotBound) => {
                    return local_with(SelectionReason::TokenNotBound {
                        host: binding::origin_label(&web_root),
                    });
                }
                Err(refusal @ Refusal::PlainHttp) => {
                    return Err(SelectError::refused(refusal, &web_root));
                }
            }
            let (kind, version) = match probe_server(&web_root, probe_options(cfg)).await {
                Ok(probe) => (probe.kind, Some(probe.version)),
                // A server that hides its version behind sign-in, named by the user.
                Err(IssueError::AuthFailed) if cfg.gitea_url.is_some() => (ServerKind::Gitea, None),
                Err(e) => {
                    tracing::info!(error = %e, "no Gitea API on the remote's host");
                    return local_with(SelectionReason::NotGitea);
                }
            };
            let target = GiteaTarget {
                web_root,
                owner,
                repo,
            };
            gitea(
                cfg,
                target,
                token,
                kind,
                SelectionReason::DetectedGitea { version },
            )
        }
    }
}

fn gitea(
    cfg: &IssueConfig,
    target: GiteaTarget,
    token: &crate::config::Secret,
    kind: ServerKind,
    reason: SelectionReason,
) -> Result<(Box<dyn IssueBackend>, Selection), SelectError> {
    let repo = format!("{}/{}", target.owner, target.repo);
    let backend = GiteaBackend::new(
        target,
        token,
        kind,
        ClientOptions::with_timeout(cfg.timeout),
    )?;
    Ok((
        Box::new(backend),
        Selection {
            kind: kind.as_str(),
            repo: Some(repo),
            reason,
        },
    ))
}

fn probe_options(cfg: &IssueConfig) -> ClientOptions {
    ClientOptions::with_timeout(cfg.timeout.min(PROBE_TIMEOUT))
}

/// The web root of the server a remote points at (ssh remotes map to https on the same host).
fn remote_web_root(remote: &RemoteRepo) -> Option<Url> {
    Url::parse(&remote.web_base()).ok()
}
