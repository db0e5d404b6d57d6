//! [7b] Verification of the recorded work: the test commands (confined, in their own fresh temp
//! dir), the file checks, and the two diff guards; afterwards what the commands did is undone
//! before the Maid's git runs again — permissions taken from Butler's state put back (see
//! `modes`), git tampering (a rewritten `.git` pointer, commits a test made) found against a
//! baseline taken after the record and undone — and the worktree is brought back to the
//! recorded state (see `artifacts`).

use super::artifacts::TreeState;
use super::attempt::AttemptStart;
use super::record::Recorded;
use super::workspace::Workspace;
use super::{Progress, TaskRun};
use crate::contract::{DirectGitFinding, Verification};
use crate::error::MaidError;
use crate::sandbox::Confinement;
use crate::verify::{TestSettings, check_files, run_tests, stubs, weakened_tests};

/// The verifiers' findings, and the helper the test commands ran under.
pub(super) struct Checked {
    pub verification: Verification,
    pub confined: Option<Confinement>,
    /// What the verify commands did that they must not, undone (the attempt's evidence lists
    /// it with the agent's).
    pub findings: Vec<DirectGitFinding>,
    /// Their connections through the task's egress proxy (`None` without one).
    pub egress: Option<butler_worker::egress::Connections>,
}

impl TaskRun<'_> {
    /// Runs the verifiers; after a cancellation only the scope is reported.
    pub(super) async fn verify(
        &self,
        workspace: &Workspace,
        start: &AttemptStart,
        recorded: &Recorded,
        cancelled: bool,
    ) -> Result<Checked, MaidError> {
        let attempt = start.attempt;
        let scope_violation = recorded.scope_violation.clone();
        if cancelled {
            return Ok(Checked {
                verification: Verification {
                    scope_violation,
                    ..Default::default()
                },
                confined: None,
                findings: Vec::new(),
                egress: None,
            });
        }
        let confined = workspace.sandbox.verify(attempt)?;
        (self.progress)(Progress::Verifying { attempt });
        let ctx = &self.shared.ctx;
        let paths = self.paths();
        let contract = self.contract();
        let mut verify_env = crate::env::verify_env(&ctx.parent_env, &ctx.env_allow);
        // Its own temp dir, fresh per attempt: nothing the agent planted is picked up.
        let _ = std::fs::remove_dir_all(&paths.verify_tmp);
        std::fs::create_dir_all(&paths.verify_tmp)
            .map_err(|e| MaidError::io("creating", &paths.verify_tmp, e))?;
        verify_env.set("TMPDIR", &paths.verify_tmp);
        // The same egress proxy as the agent's.
        workspace.sandbox.proxy_env(&mut verify_env);
        let wt = workspace.wt.clone();
        let (before, git_before) = self
            .blocking(move |s| {
                let branch = format!("refs/heads/{}", s.id().branch());
                Ok((TreeState::take(&wt)?, wt.baseline(&branch)?))
            })
            .await?;
        let settings = TestSettings {
            grace: ctx.grace,
            confine: confined.clone(),
            ..TestSettings::new(ctx.test_timeout, verify_env)
        };
        let tests = run_tests(
            &paths.worktree,
            &contract.success_criteria.commands,
            &settings,
            self.cancel,
        )
        .await;
        let egress = workspace.sandbox.take_egress().await;
        let file_checks = check_files(&paths.worktree, &contract.success_criteria.file_checks);
        let wt = workspace.wt.clone();
        let modes = start.modes.clone();
        let (findings, undone) = self
            .blocking(move |s| {
                let mut findings: Vec<DirectGitFinding> =
                    super::modes::put_back(&modes, wt.workdir(), s.main.workdir())
                        .into_iter()
                        .collect();
                findings.extend(
                    git_before
                        .detect_and_restore(&wt, s.id().as_str())?
                        .into_iter()
                        .map(DirectGitFinding::from),
                );
                Ok((findings, before.restore(&wt)?))
            })
            .await?;
        if !undone.is_empty() {
            tracing::debug!(?undone, "what verification left in the worktree is undone");
        }
        Ok(Checked {
            verification: Verification {
                scope_violation,
                tests,
                file_checks,
                weakened_tests: weakened_tests(&recorded.patch),
                stubs: stubs(&recorded.patch),
                test_changes_allowed: contract.constraints.allow_test_changes,
            },
            confined,
            findings,
            egress,
        })
    }
}
