//! Running a git operation the Brain asked for through `work_vcs`: no shell, bounded output,
//! the usual time limit, and nothing that waits for a person or starts a viewer. Which
//! arguments are allowed at all is the orchestrator's policy; this only runs what it was given.

use std::time::Duration;

use serde::Serialize;

use super::command::GitCommand;
use super::error::redact_credentials;
use super::{GitError, GitRepo, TreeLock};
use crate::process::tail_of;

/// How much of stderr is kept for the Brain.
const MESSAGE_MAX: usize = 2048;

/// git's message, bounded: a usage dump after it is dropped, and when still long its start
/// (the error) and its end (the last progress or hint) are kept.
fn message(stderr: &str) -> String {
    let text = match stderr.find("\nusage: ") {
        Some(i) => &stderr[..i],
        None if stderr.starts_with("usage: ") => stderr.lines().next().unwrap_or_default(),
        None => stderr,
    };
    if text.len() <= MESSAGE_MAX {
        return text.to_owned();
    }
    let mut head_end = MESSAGE_MAX / 2;
    while !text.is_char_boundary(head_end) {
        head_end -= 1;
    }
    format!(
        "{}\n…\n{}",
        &text[..head_end],
        tail_of(text, MESSAGE_MAX / 2)
    )
}

/// What a `work_vcs` operation printed.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct VcsOutput {
    /// git exited with success.
    pub succeeded: bool,
    /// git's exit code (for telling a silent "no" — exit 1, nothing on stderr — from a failure).
    #[serde(skip)]
    pub code: Option<i32>,
    /// stdout, bounded, credentials removed.
    pub output: String,
    /// The end of stderr (bounded, credentials removed): progress, hints, or why it failed.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub errors: String,
    pub truncated: bool,
}

impl GitRepo {
    /// Runs `git <args>` in the working tree; stdout bounded to `max_output` bytes, the end of
    /// stderr kept. A failing operation is an answer (with its output), not an error.
    ///
    /// It runs holding Butler's lock on this working tree (any of these operations may write
    /// the index), waiting for another Butler that holds it, and gives an `index.lock` that is
    /// not Butler's a moment to go.
    pub fn run_vcs(&self, args: &[String], max_output: usize) -> Result<VcsOutput, GitError> {
        let held = self.lock_tree()?;
        self.run_vcs_held(&held, args, max_output)
    }

    /// [`GitRepo::run_vcs`] with this tree's lock already held, so what the caller notes
    /// before and after the run sees only the run's doing.
    pub fn run_vcs_held(
        &self,
        held: &TreeLock,
        args: &[String],
        max_output: usize,
    ) -> Result<VcsOutput, GitError> {
        self.holds(held)?;
        // A moment for a person's git to finish; if its lock stays, git itself says so.
        let _ = self.wait_for_index(held);
        let out = GitCommand::new(self, "vcs")
            .args(args)
            // Nothing may wait for a person or start a viewer: `:` is git's "no editor", the
            // pager is `cat`, merges take their prepared message.
            .env("GIT_EDITOR", ":")
            .env("GIT_SEQUENCE_EDITOR", ":")
            .env("GIT_PAGER", "cat")
            .env("PAGER", "cat")
            .env("GIT_MERGE_AUTOEDIT", "no")
            .max_stdout(max_output)
            .timeout(Duration::from_secs(120))
            .run()?;
        let truncated = out.truncated();
        Ok(VcsOutput {
            succeeded: out.status.success(),
            code: out.status.exit_code(),
            output: redact_credentials(&String::from_utf8_lossy(&out.stdout)),
            errors: redact_credentials(&message(&out.stderr_tail)),
            truncated,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::message;

    #[test]
    fn messages_keep_the_error_and_drop_usage_dumps() {
        assert_eq!(
            message(
                "error: option `abort' takes no arguments\nusage: git merge [<options>]\n    -n  x\n"
            ),
            "error: option `abort' takes no arguments"
        );
        let long = format!("fatal: first\n{}\nlast hint\n", "progress\n".repeat(500));
        let m = message(&long);
        assert!(
            m.starts_with("fatal: first") && m.contains("last hint") && m.len() < 2200,
            "{m}"
        );
    }
}
