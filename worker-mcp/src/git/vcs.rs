//! Running a git operation the Brain asked for through `work_vcs`: no shell, bounded output,
//! the usual time limit. Which arguments are allowed at all is the orchestrator's policy; this
//! only runs what it was given.

use std::time::Duration;

use serde::Serialize;

use super::command::GitCommand;
use super::error::redact_credentials;
use super::{GitError, GitRepo};
use crate::process::tail_of;

/// What a `work_vcs` operation printed.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct VcsOutput {
    pub succeeded: bool,
    pub output: String,
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
        // A moment for a person's git to finish; if its lock stays, git itself says so.
        let _ = self.wait_for_index(&held);
        let out = GitCommand::new(self, "vcs")
            .args(args)
            // Nothing may wait for a person: no editor, no pager.
            .env("GIT_EDITOR", ":")
            .env("GIT_SEQUENCE_EDITOR", ":")
            .env("GIT_PAGER", "cat")
            .max_stdout(max_output)
            .timeout(Duration::from_secs(120))
            .run()?;
        let truncated = out.truncated();
        Ok(VcsOutput {
            succeeded: out.status.success(),
            output: redact_credentials(&String::from_utf8_lossy(&out.stdout)),
            errors: tail_of(&out.stderr_tail, 4096).to_owned(),
            truncated,
        })
    }
}
