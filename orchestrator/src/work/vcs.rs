//! `work_vcs`: the deliberate escape hatch for version-control operations that have no proper
//! tool (branch, stash, blame, remote, fetch, …). What may run is decided by
//! [`crate::vcs_policy`] over the arguments as git reads them; Butler runs the canonical
//! argument list without a shell, output bounded. Operations that could lose work are weighed
//! in the repository first: when nothing would be lost they run; otherwise the first call lists
//! exactly what would be lost and returns an approval reference, and only a second call
//! carrying it — after the Brain asked the human — runs, provided the arguments and what they
//! would lose are still the same. Butler never approves on its own.

use butler_worker::git::{GitRepo, Lost, TreeLock, VcsOutput, Watch};
use serde::Serialize;

use crate::catalogue::{Key, fill, text};
use crate::error::WorkError;
use crate::session::Project;
use crate::vcs_policy::{RepoFacts, Verdict, effects, vet};

/// The most output returned at once.
pub const MAX_OUTPUT: usize = 32 * 1024;
/// How many lost items are listed to the Brain (the total is always given).
const MAX_LOST_SHOWN: usize = 30;
const APPROVAL_KIND: &str = "work_vcs";

/// What a successful `work_vcs` call answers.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct VcsReply {
    /// The argument list that ran (after `git`): option prefixes expanded, clusters split.
    pub ran: Vec<String>,
    pub output: String,
    pub truncated: bool,
    /// What git said besides its output (progress, hints), bounded.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub messages: String,
    /// `false` when git answered a question with a silent "no" (nothing matched, not an
    /// ancestor, key not set): not a failure.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matched: Option<bool>,
    /// Configuration keys the run changed that work_vcs may not change, put back as they were.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub put_back: Vec<String>,
}

/// The repository facts the policy asks about, answered by git.
pub(crate) struct Facts<'a>(pub(crate) &'a GitRepo);

impl RepoFacts for Facts<'_> {
    fn is_commit(&self, rev: &str) -> bool {
        matches!(self.0.commit_of(rev), Ok(Some(_)))
    }

    fn guessed_remote_branch(&self, name: &str) -> Option<String> {
        match self.0.remote_branches_named(name) {
            Ok(refs) if refs.len() == 1 => refs.into_iter().next(),
            _ => None,
        }
    }

    fn inside(&self, path: &str) -> bool {
        self.0.path_in_repo(path).is_ok()
    }

    fn inside_followed(&self, path: &str) -> bool {
        self.0.path_in_repo_followed(path).is_ok()
    }

    fn is_ignored(&self, path: &str) -> bool {
        self.0.is_ignored(path).unwrap_or(false)
    }

    fn exists(&self, path: &str) -> bool {
        self.inside(path) && std::fs::symlink_metadata(self.0.workdir().join(path)).is_ok()
    }

    fn head_ref(&self) -> Option<String> {
        let head = self.0.head().ok()?;
        head.branch
            .filter(|_| !head.detached)
            .map(|b| format!("refs/heads/{b}"))
    }

    fn config_bool(&self, key: &str) -> Option<bool> {
        self.0.config_bool(key).ok().flatten()
    }
}

pub fn vcs(
    project: &Project,
    args: Vec<String>,
    approval: Option<String>,
) -> Result<(String, VcsReply), WorkError> {
    match vet(&args, &Facts(&project.repo)) {
        Verdict::Run { args } => {
            let held = project.repo.lock_tree()?;
            run(project, &held, args, approval.as_deref())
        }
        Verdict::RunUnlessLoss {
            args,
            loss,
            globals,
        } => {
            // One hold of the tree from the prediction to the check after the run: a record or
            // another operation landing in between would be weighed as this run's doing.
            let held = project.repo.lock_tree()?;
            let lost = project.repo.would_lose(&loss, &globals)?;
            if lost.is_empty() {
                return run(project, &held, args, approval.as_deref());
            }
            let fingerprint = fingerprint(&project.repo, &args, &lost)?;
            let lines: Vec<String> = lost.iter().map(Lost::describe).collect();
            match approval {
                None => {
                    let description = lines.join("\n");
                    let reference = project.with_ledger(|l| {
                        Ok(l.create_approval(APPROVAL_KIND, &fingerprint, &description)?)
                    })?;
                    Err(WorkError::NeedsApproval {
                        total: lines.len(),
                        lost: lines.into_iter().take(MAX_LOST_SHOWN).collect(),
                        reference,
                        will_run: args,
                    })
                }
                Some(reference) => {
                    let approved = project
                        .with_ledger(|l| Ok(l.consume_approval(reference.trim(), &fingerprint)?))?;
                    if !approved {
                        return Err(WorkError::PolicyBlocked {
                            reason: text(Key::ErrApprovalMismatch).into(),
                            hint: text(Key::ErrApprovalMismatchHint).into(),
                        });
                    }
                    // The user accepted exactly this loss: what the run then does is theirs.
                    run_approved(project, &held, args)
                }
            }
        }
        // The one place the policy's typed answer becomes text, in the call's language.
        Verdict::Invalid { why } => Err(WorkError::InvalidArgument {
            field: "args",
            reason: why.reason(),
        }),
        Verdict::UseProperTool {
            tool,
            subcommand,
            suggestion,
        } => Err(WorkError::UseProperTool {
            subcommand,
            tool,
            suggestion,
        }),
        Verdict::Refused { why } => Err(WorkError::PolicyBlocked {
            reason: why.reason(),
            hint: why.hint(),
        }),
    }
}

/// What an approval is bound to: the canonical arguments, exactly what they would lose, and
/// what those files hold now (a newer version of a file is not what the user agreed to lose).
fn fingerprint(repo: &GitRepo, args: &[String], lost: &[Lost]) -> Result<String, WorkError> {
    let contents = repo.contents_of(lost)?;
    Ok(serde_json::json!({"args": args, "lost": lost, "contents": contents}).to_string())
}

/// Runs `args` that were predicted to lose nothing, then checks what the run really did:
/// configuration it may not change is put back, and work it lost after all is put back and
/// asked about (`need_input`) as the prediction would have — unless `approval` is the answer
/// to exactly that question.
fn run(
    project: &Project,
    held: &TreeLock,
    args: Vec<String>,
    approval: Option<&str>,
) -> Result<(String, VcsReply), WorkError> {
    let before = project.repo.effect_before(effects::watch(&args))?;
    let out = project.repo.run_vcs_held(held, &args, MAX_OUTPUT);
    let effect = project
        .repo
        .effect_after(&before, &effects::disallowed_config)?;
    let out = out?;
    if !effect.lost.is_empty() {
        let fingerprint = fingerprint(&project.repo, &args, &effect.lost)?;
        let accepted = match approval {
            Some(reference) => {
                project.with_ledger(|l| Ok(l.consume_approval(reference.trim(), &fingerprint)?))?
            }
            None => false,
        };
        if !accepted {
            project.repo.restore_lost(&effect)?;
            tracing::warn!(ran = ?args, lost = effect.lost.len(), "work_vcs lost work the prediction missed; put back");
            let lines: Vec<String> = effect.lost.iter().map(Lost::describe).collect();
            let reference = project.with_ledger(|l| {
                Ok(l.create_approval(APPROVAL_KIND, &fingerprint, &lines.join("\n"))?)
            })?;
            return Err(WorkError::NeedsApproval {
                total: lines.len(),
                lost: lines.into_iter().take(MAX_LOST_SHOWN).collect(),
                reference,
                will_run: args,
            });
        }
    }
    answer(args, out, effect.config_put_back)
}

/// Runs `args` whose loss the user approved; configuration is still checked.
fn run_approved(
    project: &Project,
    held: &TreeLock,
    args: Vec<String>,
) -> Result<(String, VcsReply), WorkError> {
    let watch = Watch {
        config: true,
        ..Watch::default()
    };
    let before = project.repo.effect_before(watch)?;
    let out = project.repo.run_vcs_held(held, &args, MAX_OUTPUT);
    let effect = project
        .repo
        .effect_after(&before, &effects::disallowed_config)?;
    answer(args, out?, effect.config_put_back)
}

fn answer(
    args: Vec<String>,
    out: VcsOutput,
    put_back: Vec<String>,
) -> Result<(String, VcsReply), WorkError> {
    // git's convention for questions (grep, check-ignore, merge-base --is-ancestor,
    // config --get, show-ref --exists, …): exit 1 without a word means "no".
    let silent_no = !out.succeeded && out.code == Some(1) && out.errors.trim().is_empty();
    if silent_no {
        let summary = fill(Key::VcsNothingMatched, &[("args", &args.join(" "))]);
        return Ok((
            summary,
            VcsReply {
                ran: args,
                output: out.output,
                truncated: out.truncated,
                messages: String::new(),
                matched: Some(false),
                put_back,
            },
        ));
    }
    if !out.succeeded {
        let mut message = out.errors.clone();
        if !out.output.trim().is_empty() {
            // Merges and rebases report conflicts on stdout.
            let tail = tail(&out.output, 1024);
            message = format!("{}\n{}", tail.trim_end(), message.trim_end());
        }
        return Err(WorkError::VcsFailed {
            ran: args,
            message: message.trim().to_owned(),
        });
    }
    let mut summary = fill(Key::VcsDone, &[("args", &args.join(" "))]);
    if !put_back.is_empty() {
        summary.push(' ');
        summary.push_str(&fill(
            Key::NoteVcsConfigPutBack,
            &[("keys", &put_back.join(", "))],
        ));
    }
    Ok((
        summary,
        VcsReply {
            ran: args,
            output: out.output,
            truncated: out.truncated,
            messages: out.errors.trim().to_owned(),
            matched: None,
            put_back,
        },
    ))
}

fn tail(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut start = text.len() - max;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}
