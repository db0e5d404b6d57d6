//! Publishing: `git push <remote> HEAD:refs/heads/<branch>` with the user's own transport and
//! credentials, never forced, in a session without a terminal, with a time limit. A local
//! `pre-push` hook that refuses is named like a `pre-commit` hook that refuses a record.

use std::time::Duration;

use super::GitRepo;
use super::command::{GitCommand, GitOutput};
use super::error::{GitError, redact_credentials};
use super::hooks::HookTrace;
use super::repo::Destination;
use crate::process::tail_of;

const PUBLISH_TIMEOUT: Duration = Duration::from_secs(120);
const HOOK_OUTPUT_TAIL: usize = 2 << 10;

/// What publishing did.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct PublishOutcome {
    /// The destination already had HEAD; nothing was sent.
    pub up_to_date: bool,
    /// The branch's upstream was configured by this call.
    pub upstream_set: bool,
}

impl GitRepo {
    /// Sends HEAD to `dest` (fast-forward only) and, when `dest` was inferred
    /// (`!dest.configured`), makes it the branch's upstream.
    ///
    /// Errors: `Rejected` (the destination moved on), `AuthFailed`, `HookRejected` (the local
    /// `pre-push` hook, or a hook or rule on the remote, refused), `Unreachable`, `Timeout`,
    /// `Failed`.
    pub fn publish(&self, dest: &Destination) -> Result<PublishOutcome, GitError> {
        if dest.remote.starts_with('-') || dest.branch.starts_with('-') {
            return Err(GitError::failed("push", "invalid destination name"));
        }
        let mut push = GitCommand::new(self, "push").args(["push", "--porcelain"]);
        if !dest.configured {
            push = push.arg("--set-upstream");
        }
        let push = push
            .arg(&dest.remote)
            .arg(format!("HEAD:refs/heads/{}", dest.branch))
            .timeout(PUBLISH_TIMEOUT);
        let trace = HookTrace::create();
        let out = HookTrace::attach(trace.as_ref(), push).run()?;
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        if out.status.success() {
            return Ok(PublishOutcome {
                up_to_date: ref_lines(&stdout).all(|(flag, _)| flag == '='),
                upstream_set: !dest.configured,
            });
        }
        if let Some(hook) = HookTrace::hooks(trace.as_ref()).failed {
            tracing::warn!(hook, "a local hook refused publishing");
            return Err(GitError::HookRejected {
                hook: Some(hook),
                output_tail: redact_credentials(tail_of(&out.stderr_tail, HOOK_OUTPUT_TAIL)),
            });
        }
        Err(classify(&out, &stdout))
    }
}

/// Porcelain ref lines: `<flag>\t<from>:<to>\t<summary>`.
fn ref_lines(stdout: &str) -> impl Iterator<Item = (char, &str)> {
    stdout.lines().filter_map(|line| {
        let mut parts = line.splitn(3, '\t');
        let flag = parts.next()?.chars().next()?;
        let _refs = parts.next()?;
        Some((flag, parts.next().unwrap_or_default()))
    })
}

pub(super) fn classify(out: &GitOutput, stdout: &str) -> GitError {
    let stderr = out.stderr_tail.as_str();
    tracing::warn!(detail = %out.detail(), "publishing failed");
    for (flag, summary) in ref_lines(stdout) {
        if flag != '!' {
            continue;
        }
        if summary.starts_with("[rejected]") {
            return GitError::Rejected;
        }
        if summary.starts_with("[remote rejected]") {
            return GitError::HookRejected {
                hook: hook_name(summary),
                output_tail: redact_credentials(tail_of(stderr, HOOK_OUTPUT_TAIL)),
            };
        }
    }
    let lower = stderr.to_ascii_lowercase();
    let has = |needles: &[&str]| needles.iter().any(|n| lower.contains(n));
    if has(&["[rejected]", "non-fast-forward", "fetch first"]) {
        GitError::Rejected
    } else if has(&[
        "permission denied",
        "authentication failed",
        "could not read username",
        "could not read password",
        "invalid username or password",
        "returned error: 401",
        "returned error: 403",
        "http 401",
        "http 403",
        "host key verification failed",
    ]) {
        GitError::AuthFailed
    } else if has(&["[remote rejected]", "hook declined"]) {
        GitError::HookRejected {
            hook: hook_name(stderr),
            output_tail: redact_credentials(tail_of(stderr, HOOK_OUTPUT_TAIL)),
        }
    } else if has(&[
        "could not resolve host",
        "could not resolve hostname",
        "connection refused",
        "connection timed out",
        "operation timed out",
        "network is unreachable",
        "no route to host",
        "does not appear to be a git repository",
        "repository not found",
        "returned error: 404",
        "could not read from remote repository",
        "unable to access",
        "failed to connect",
    ]) {
        GitError::Unreachable
    } else {
        GitError::failed("push", out.detail())
    }
}

/// `[remote rejected] (pre-receive hook declined)` → `pre-receive`.
fn hook_name(text: &str) -> Option<String> {
    let end = text.find(" hook declined")?;
    let start = text[..end].rfind(['(', ' ']).map_or(0, |i| i + 1);
    let name = &text[start..end];
    (!name.is_empty()).then(|| name.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hook_names_are_read_from_remote_rejections() {
        assert_eq!(
            hook_name("[remote rejected] (pre-receive hook declined)"),
            Some("pre-receive".into())
        );
        assert_eq!(hook_name("[remote rejected] (protected branch)"), None);
    }

    #[test]
    fn porcelain_lines_are_split() {
        let lines: Vec<_> =
            ref_lines("To /x\n=\tHEAD:refs/heads/main\t[up to date]\nDone\n").collect();
        assert_eq!(lines, vec![('=', "[up to date]")]);
    }
}
