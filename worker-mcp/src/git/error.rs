//! The one error type of the git worker.
//!
//! Variants carry what the caller needs to choose a response; raw git output stays in
//! `Failed::detail`, which is for logs only and never for the Brain.

use std::path::PathBuf;
use std::time::Duration;

/// Everything a git operation can fail with, classified for the orchestrator.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    /// The path is not inside a git working tree.
    #[error("not inside a git repository")]
    NotARepository,
    /// The repository has no working tree.
    #[error("the repository is bare (it has no working tree)")]
    BareRepository,
    /// A user-supplied path leaves the working tree (`..`, a symlinked parent, another
    /// absolute location, or git's own directory).
    #[error("the path is outside the project")]
    OutsideProject,
    /// `record_all` found nothing to save.
    #[error("nothing to record")]
    NothingToRecord,
    /// git has no author identity (`user.name` / `user.email`) to put on a record.
    #[error("no author identity is configured")]
    NoIdentity,
    /// A hook of the repository (or of the remote) refused the operation.
    #[error("a hook refused the operation")]
    HookRejected {
        /// The hook's name when known (`pre-commit`, `commit-msg`, `pre-receive`, …).
        hook: Option<String>,
        /// The last ~2 KB of what the hook printed (URL credentials removed).
        output_tail: String,
    },
    /// Another process holds the index lock.
    #[error("the index is locked by another process")]
    IndexLocked {
        /// The lock file.
        lock_path: PathBuf,
        /// How long ago the lock file was last modified, when known.
        age: Option<Duration>,
    },
    /// Another Butler process kept this working tree locked longer than Butler waits.
    #[error("another Butler is changing this working tree")]
    ButlerBusy {
        /// How long this one waited.
        waited: Duration,
    },
    /// The destination moved on (non-fast-forward); publishing would rewrite it.
    #[error("the destination has changes that are not here")]
    Rejected,
    /// The destination refused the credentials.
    #[error("the destination refused the credentials")]
    AuthFailed,
    /// The destination could not be reached (network, DNS, missing repository).
    #[error("the destination could not be reached")]
    Unreachable,
    /// git did not finish in time; its process group was killed.
    #[error("git {op} did not finish in time")]
    Timeout {
        /// The operation that timed out.
        op: &'static str,
    },
    /// The commit id does not name a commit of this repository.
    #[error("unknown commit")]
    UnknownCommit,
    /// The `git` program is not on PATH.
    #[error("git is not installed (not found on PATH)")]
    GitMissing,
    /// Anything else. `detail` is for logs only (bounded, credentials removed).
    #[error("git {op} failed")]
    Failed {
        /// The operation that failed.
        op: &'static str,
        /// Internal detail: exit status and a stderr tail.
        detail: String,
    },
}

impl From<git2::Error> for GitError {
    fn from(err: git2::Error) -> Self {
        GitError::Failed {
            op: "libgit2",
            detail: redact_credentials(err.message()),
        }
    }
}

impl GitError {
    pub(crate) fn failed(op: &'static str, detail: impl AsRef<str>) -> Self {
        GitError::Failed {
            op,
            detail: redact_credentials(detail.as_ref()),
        }
    }

    pub(crate) fn io(op: &'static str, err: std::io::Error) -> Self {
        GitError::failed(op, err.to_string())
    }
}

/// Removes credentials from every `scheme://user:pass@host` in `text`: the whole user-info
/// of http(s) URLs (tokens are often passed as the user name), the password elsewhere.
pub(crate) fn redact_credentials(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(pos) = rest.find("://") {
        let (before, after) = rest.split_at(pos + 3);
        out.push_str(before);
        let scheme = scheme_before(before);
        let end = after
            .find(|c: char| c == '/' || c.is_whitespace() || c == '\'' || c == '"')
            .unwrap_or(after.len());
        let authority = &after[..end];
        match authority.rfind('@') {
            Some(at) => {
                let userinfo = &authority[..at];
                let http =
                    scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https");
                if !http {
                    let user = userinfo.split(':').next().unwrap_or_default();
                    out.push_str(user);
                    out.push('@');
                }
                out.push_str(&authority[at + 1..]);
            }
            None => out.push_str(authority),
        }
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

/// The URL scheme that ends `before` (which ends with `://`).
fn scheme_before(before: &str) -> &str {
    let head = &before[..before.len() - 3];
    let start = head
        .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '+' || c == '-' || c == '.'))
        .map_or(0, |i| i + 1);
    &head[start..]
}

#[cfg(test)]
mod tests {
    use super::redact_credentials;

    #[test]
    fn https_userinfo_is_removed_entirely() {
        assert_eq!(
            redact_credentials("fatal: unable to access 'https://me:s3cret@host/o/r.git/': 403"),
            "fatal: unable to access 'https://host/o/r.git/': 403"
        );
        assert_eq!(redact_credentials("https://TOKEN@host/x"), "https://host/x");
    }

    #[test]
    fn ssh_password_is_removed_but_user_kept() {
        assert_eq!(
            redact_credentials("ssh://git:pw@host:22/o/r"),
            "ssh://git@host:22/o/r"
        );
        assert_eq!(
            redact_credentials("ssh://git@host/o/r"),
            "ssh://git@host/o/r"
        );
    }

    #[test]
    fn text_without_urls_is_unchanged() {
        assert_eq!(redact_credentials("a@b: nothing here"), "a@b: nothing here");
    }
}
