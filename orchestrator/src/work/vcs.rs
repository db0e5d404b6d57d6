//! `work_vcs`: the deliberate escape hatch for version-control operations that have no proper
//! tool (branch, stash, blame, remote, fetch, …). Run without a shell, output bounded. What is
//! allowed is decided by `crate::vcs_policy`; operations that irreversibly discard work pass
//! the approval gate: the first call explains the loss and returns an approval reference, and
//! only a second call carrying it — after the Brain asked the human — runs. Butler never
//! approves on its own.

use butler_worker::git::VcsOutput;

use crate::error::WorkError;
use crate::session::Project;
use crate::vcs_policy::{Verdict, vet};

/// The most output returned at once.
pub const MAX_OUTPUT: usize = 32 * 1024;
const APPROVAL_KIND: &str = "work_vcs";

pub fn vcs(
    project: &Project,
    args: Vec<String>,
    approval: Option<String>,
) -> Result<(String, VcsOutput), WorkError> {
    match vet(&args) {
        Verdict::Run => run(project, &args),
        Verdict::Invalid { reason } => Err(WorkError::InvalidArgument {
            field: "args",
            reason,
        }),
        Verdict::UseProperTool {
            tool,
            subcommand,
            suggestion,
        } => Err(WorkError::UseProperTool {
            subcommand,
            tool: tool.to_string(),
            suggestion,
        }),
        Verdict::PolicyBlocked { reason } => Err(WorkError::PolicyBlocked {
            reason,
            hint: "use the proper work_* tool, or ask the user to run this themselves".into(),
        }),
        Verdict::NeedsApproval {
            summary_of_loss,
            fingerprint,
        } => match approval {
            None => {
                let loss = describe_loss(project, &summary_of_loss);
                let reference = project.with_ledger(|l| {
                    Ok(l.create_approval(APPROVAL_KIND, &fingerprint, &loss)?)
                })?;
                Err(WorkError::NeedsApproval { loss, reference })
            }
            Some(reference) => {
                let approved = project
                    .with_ledger(|l| Ok(l.consume_approval(reference.trim(), &fingerprint)?))?;
                if !approved {
                    return Err(WorkError::PolicyBlocked {
                        reason: "That approval does not match these arguments, was used, or expired".into(),
                        hint: "call work_vcs without approval to get a new reference, and ask the user again".into(),
                    });
                }
                run(project, &args)
            }
        },
    }
}

fn run(project: &Project, args: &[String]) -> Result<(String, VcsOutput), WorkError> {
    let out = project.repo.run_vcs(args, MAX_OUTPUT)?;
    let shown = args.join(" ");
    let summary = if out.succeeded {
        format!("work_vcs([{shown}]) done.")
    } else {
        format!("work_vcs([{shown}]) failed; see errors.")
    };
    Ok((summary, out))
}

/// The policy's description of the loss, made concrete with what is unrecorded right now.
fn describe_loss(project: &Project, summary: &str) -> String {
    let Ok(status) = project.repo.status() else {
        return summary.to_string();
    };
    if status.entries.is_empty() {
        return format!("{summary} (nothing is unrecorded right now)");
    }
    let names: Vec<String> = status
        .entries
        .iter()
        .take(10)
        .map(|e| e.path.display())
        .collect();
    let more = status.entries.len().saturating_sub(names.len());
    let tail = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    format!("{summary}; unrecorded now: {}{tail}", names.join(", "))
}
