//! Which issue backend a session uses: the Gitea/Forgejo tracker when configured (and, in
//! `auto` mode, reachable), else the embedded store in the ledger file. The tracker token goes
//! only to a server the user bound it to (see `butler_worker::issues::binding`).

use std::sync::Arc;

use butler_worker::config::{ENV_GITEA_HOSTS, ENV_GITEA_TOKEN, IssueConfig};
use butler_worker::issues::local::LocalIssues;
use butler_worker::issues::select::{SelectError, Selection, SelectionReason, select_backend};
use butler_worker::issues::{IssueBackend, IssueError};
use butler_worker::ledger::LedgerHandle;
use butler_worker::remote_url::RemoteRepo;
use butler_worker::secrets::KnownSecrets;

use crate::catalogue::{Key, fill, text};
use crate::error::{ConfigProblem, WorkError};

/// The session's issue backend, why it was chosen, and the secrets Butler holds (to refuse
/// them wherever the Brain would share them).
pub async fn choose(
    name: &str,
    remote: Option<&RemoteRepo>,
    ledger: Arc<LedgerHandle>,
    config: &IssueConfig,
) -> Result<(Arc<dyn IssueBackend>, Selection, KnownSecrets), WorkError> {
    let known = KnownSecrets::new(config.token.as_ref());
    let name = name.to_string();
    // The embedded store shares the session's ledger connection (and its clock).
    let local = move || {
        Ok::<_, IssueError>(Box::new(LocalIssues::shared(ledger, name)) as Box<dyn IssueBackend>)
    };
    let (backend, selection) = select_backend(config, remote, local)
        .await
        .map_err(select_error)?;
    Ok((Arc::from(backend), selection, known))
}

/// Why the configured tracker cannot be used, as the tools report it.
fn select_error(e: SelectError) -> WorkError {
    match e {
        SelectError::Issue(issue) => WorkError::Issue(issue),
        SelectError::TokenNotBound { host } => WorkError::TokenRefused {
            host,
            plain_http: false,
        },
        SelectError::PlainHttp { host } => WorkError::TokenRefused {
            host,
            plain_http: true,
        },
        SelectError::MissingToken => WorkError::Config {
            problem: ConfigProblem::TrackerToken,
        },
        SelectError::MissingUrl => WorkError::Config {
            problem: ConfigProblem::TrackerUrl,
        },
        SelectError::MissingRepo => WorkError::Config {
            problem: ConfigProblem::TrackerRepo,
        },
    }
}

/// What `work_session_start` says about the choice, in the current language: nothing when the
/// user asked for the embedded store (the summary's `issues: local` says it all), else which
/// tracker and why, or why not the tracker.
pub fn note(selection: &Selection) -> Option<String> {
    let repo = selection.repo.as_deref().unwrap_or("");
    let tracker = |key, version: &Option<String>| {
        let version = version.as_ref().map_or(String::new(), |v| {
            fill(Key::BackendVersion, &[("version", v)])
        });
        fill(
            key,
            &[
                ("kind", &selection.kind),
                ("repo", &repo),
                ("version", &version),
            ],
        )
    };
    Some(match &selection.reason {
        SelectionReason::ConfiguredLocal => return None,
        SelectionReason::ConfiguredGitea { version } => tracker(Key::BackendConfigured, version),
        SelectionReason::DetectedGitea { version } => tracker(Key::BackendDetected, version),
        SelectionReason::NoToken => fill(Key::BackendNoToken, &[("variable", &ENV_GITEA_TOKEN)]),
        SelectionReason::NoRemote => text(Key::BackendNoRemote).to_owned(),
        SelectionReason::NotGitea => text(Key::BackendNotGitea).to_owned(),
        SelectionReason::TokenNotBound { host } => fill(
            Key::BackendTokenNotBound,
            &[("host", host), ("variable", &ENV_GITEA_HOSTS)],
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalogue::{Lang, sync_scope};

    fn selection(kind: &'static str, repo: Option<&str>, reason: SelectionReason) -> Selection {
        Selection {
            kind,
            repo: repo.map(str::to_owned),
            reason,
        }
    }

    #[test]
    fn the_store_the_user_asked_for_needs_no_note() {
        let asked = selection("local", None, SelectionReason::ConfiguredLocal);
        assert_eq!(note(&asked), None);
    }

    #[test]
    fn each_other_choice_says_why_in_the_session_language() {
        let version = Some("1.22.0".to_owned());
        let cases = [
            (
                selection(
                    "gitea",
                    Some("acme/widgets"),
                    SelectionReason::DetectedGitea {
                        version: version.clone(),
                    },
                ),
                "gitea issues of acme/widgets (version 1.22.0) (detected)",
            ),
            (
                selection(
                    "forgejo",
                    Some("acme/widgets"),
                    SelectionReason::ConfiguredGitea { version: None },
                ),
                "forgejo issues of acme/widgets (configured)",
            ),
            (
                selection("local", None, SelectionReason::NoToken),
                "embedded issue store (no `BUTLER_GITEA_TOKEN` set)",
            ),
            (
                selection("local", None, SelectionReason::NoRemote),
                "embedded issue store (no remote tracker found)",
            ),
            (
                selection("local", None, SelectionReason::NotGitea),
                "embedded issue store (the remote's host does not answer as Gitea)",
            ),
            (
                selection(
                    "gitea",
                    Some("acme/widgets"),
                    SelectionReason::ConfiguredGitea {
                        version: version.clone(),
                    },
                ),
                "gitea issues of acme/widgets (version 1.22.0) (configured)",
            ),
            (
                selection(
                    "local",
                    None,
                    SelectionReason::TokenNotBound {
                        host: "https://other.example".into(),
                    },
                ),
                "embedded issue store (the tracker token is not bound to https://other.example; \
                 to use that tracker, the user adds it to `BUTLER_GITEA_HOSTS`)",
            ),
        ];
        for (chosen, english) in cases {
            assert_eq!(note(&chosen).as_deref(), Some(english));
            let japanese = sync_scope(Lang::Ja, || note(&chosen)).expect("a note");
            assert!(!japanese.contains("issue store"), "{japanese}");
        }
        let detected = selection(
            "gitea",
            Some("acme/widgets"),
            SelectionReason::DetectedGitea { version },
        );
        let japanese = sync_scope(Lang::Ja, || note(&detected)).expect("a note");
        assert!(
            japanese.contains("acme/widgets") && japanese.contains("1.22.0"),
            "{japanese}"
        );
    }

    /// The tracker the user asked for cannot be used: said as the worker says it in English,
    /// in the session's language otherwise.
    #[test]
    fn a_tracker_that_cannot_be_used_is_said_as_the_worker_says_it() {
        let cases = || {
            [
                SelectError::MissingToken,
                SelectError::MissingUrl,
                SelectError::MissingRepo,
            ]
        };
        for e in cases() {
            let english = e.to_string();
            let WorkError::Config { problem } = select_error(e) else {
                panic!("not a settings problem: {english}");
            };
            assert_eq!(problem.to_string(), english);
            let japanese = sync_scope(Lang::Ja, || problem.describe());
            assert!(
                japanese.contains("gitea") && japanese != english,
                "{japanese}"
            );
        }
    }
}
