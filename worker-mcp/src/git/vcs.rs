//! Running a git operation the Brain asked for through `work_vcs`: no shell, bounded output,
//! the usual time limit, and nothing that waits for a person or starts a viewer. Which
//! arguments are allowed at all is the orchestrator's policy; this only runs what it was given.

use std::time::Duration;

use serde::Serialize;

use super::command::{GitCommand, tail_of};
use super::error::redact_credentials;
use super::{GitError, GitRepo};

/// How much of stderr (and, on failure, of stdout) is kept for the Brain.
const MESSAGE_TAIL: usize = 2048;

/// What a `work_vcs` operation printed.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct VcsOutput {
    /// git exited with success.
    pub succeeded: bool,
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
    pub fn run_vcs(&self, args: &[String], max_output: usize) -> Result<VcsOutput, GitError> {
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
            output: redact_credentials(&String::from_utf8_lossy(&out.stdout)),
            errors: redact_credentials(&tail_of(&out.stderr_tail, MESSAGE_TAIL)),
            truncated,
        })
    }
}
