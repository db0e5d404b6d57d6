//! The policy of `work_vcs(args)`: which git command lines Butler runs for the Brain, read the
//! way git reads them.
//!
//! [`vet`] decides over the argument list (without the leading `git`), in this order:
//! 1. git's global options ([`crate::hook::git_cli`], the hook's parser): only those that
//!    neither run programs nor point git elsewhere pass (`--no-pager`, the pathspec modes, …).
//! 2. A subcommand a Butler tool stands for is refused with `use_proper_tool`
//!    ([`crate::equivalents`]).
//! 3. The command path (`stash push`, `remote add`, …) must be on the allow-list
//!    ([`allow::ENTRIES`]); known dangerous ones are refused with their reason.
//! 4. The arguments are normalised as git's parse-options would read them
//!    ([`normalise`]): option prefixes expanded against the command's real option list
//!    (derived from git, [`git_options`]), negations, clusters, glued and separate values.
//!    Unknown or ambiguous options are refused.
//! 5. Every option has a class ([`allow::Class`]): options that run a program are refused;
//!    options that name a file must stay in the project.
//! 6. The command's own decision ([`decide`]) checks positionals (paths, URLs, refspecs,
//!    config keys) and names the effects that can lose work as [`LossQuery`]s.
//!
//! The caller runs the canonical argument list ([`Verdict::Run`]); for
//! [`Verdict::RunUnlessLoss`] it first computes the loss in the repository and asks the user
//! (through the Brain) when anything would be lost.

pub mod allow;
mod decide;
#[cfg(test)]
mod derive;
pub mod effects;
#[rustfmt::skip]
pub mod git_options;
pub mod normalise;
pub mod parsing;
pub mod table;
mod why;

pub use why::{Refusal, Unread};

use butler_worker::git::LossQuery;

use crate::catalogue::Key;
use crate::equivalents;
use crate::hook::git_cli::{self, GitInvocation};
use crate::hook::replacement_call;
use crate::tool::Tool;

/// What `vet` needs to know about the repository (answered by git in the running server,
/// by a table in unit tests).
pub trait RepoFacts {
    /// `rev` names a commit here.
    fn is_commit(&self, rev: &str) -> bool;
    /// The remote-tracking ref git's checkout/switch guess would start `name` from, when
    /// exactly one remote has a branch called `name` (`refs/remotes/origin/<name>`).
    fn guessed_remote_branch(&self, name: &str) -> Option<String>;
    /// `path` (as given, relative to the project's top) stays inside the project's working
    /// tree once `..` and symbolic links are resolved, and is not in git's own directory.
    fn inside(&self, path: &str) -> bool;
    /// Like [`RepoFacts::inside`], with the last component followed too when it is a symbolic
    /// link (for files git opens and directories it creates or enters).
    fn inside_followed(&self, path: &str) -> bool {
        self.inside(path)
    }
    /// git ignores `path`.
    fn is_ignored(&self, path: &str) -> bool;
    /// Something exists at `path` in the working tree (relative to the project's top).
    fn exists(&self, path: &str) -> bool;
    /// The full ref of the branch HEAD is on (`refs/heads/main`); `None` when detached.
    fn head_ref(&self) -> Option<String>;
    /// A boolean config value.
    fn config_bool(&self, key: &str) -> Option<bool>;
}

/// The decision about one `work_vcs` call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Run this canonical argument list.
    Run { args: Vec<String> },
    /// Run this canonical argument list unless computing `loss` finds something that would
    /// be lost; then only with the user's approval. `globals` are the pathspec options the
    /// loss computation must use too.
    RunUnlessLoss {
        args: Vec<String>,
        loss: Vec<LossQuery>,
        globals: Vec<String>,
    },
    /// The arguments are malformed or not understood.
    Invalid { why: Unread },
    /// A Butler tool does this; `work_vcs` refuses it.
    UseProperTool {
        /// The tool to use (`work_diff`, …).
        tool: Tool,
        /// The git subcommand that was asked for.
        subcommand: String,
        /// The call to make instead, e.g. `work_history(n=5)`.
        suggestion: String,
    },
    /// Refused: it would run a program, reach outside the project, share work, or is not
    /// offered.
    Refused { why: Refusal },
}

/// A refusal from a decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Stop {
    Invalid(Unread),
    Refused(Refusal),
}

/// Global options allowed before the subcommand: they change neither the repository nor the
/// programs git runs.
const ALLOWED_GLOBALS: &[&str] = &[
    "--no-pager",
    "-P",
    "--no-optional-locks",
    "--no-replace-objects",
    "--no-lazy-fetch",
    "--no-advice",
    "--literal-pathspecs",
    "--no-literal-pathspecs",
    "--glob-pathspecs",
    "--noglob-pathspecs",
    "--icase-pathspecs",
];

/// Decide what `work_vcs(args)` may do with `args` (the words after `git`).
pub fn vet(args: &[String], facts: &dyn RepoFacts) -> Verdict {
    if let Some(why) = malformed(args) {
        return Verdict::Invalid { why };
    }
    let inv = git_cli::parse(args);
    if let Some(option) = &inv.unknown_option {
        return Verdict::Invalid {
            why: Unread::NotGitOption {
                option: option.clone(),
            },
        };
    }
    if let Some(verdict) = globals_verdict(&inv) {
        return verdict;
    }
    let Some(sub) = inv.subcommand.clone() else {
        return Verdict::Invalid {
            why: Unread::NoSubcommand,
        };
    };
    if let Some(decl) = equivalents::proper_tool(&sub, &inv.rest) {
        return Verdict::UseProperTool {
            tool: decl.tool,
            subcommand: sub,
            suggestion: replacement_call(&inv),
        };
    }
    let decided = decide::command(&sub, &inv.rest, facts);
    // Any spelling of a use a proper tool covers goes to that tool: the canonical form is
    // asked too (`switch --create=topic` reads as `switch -c topic`).
    if let Ok((words_args, _)) = &decided
        && words_args.first().is_some_and(|w| w == &sub)
        && let Some(decl) = equivalents::proper_tool(&sub, &words_args[1..])
    {
        let canonical = git_cli::parse(words_args);
        return Verdict::UseProperTool {
            tool: decl.tool,
            subcommand: sub,
            suggestion: replacement_call(&canonical),
        };
    }
    match decided {
        Ok((words_args, loss)) => {
            let globals: Vec<String> = inv.globals.iter().map(|g| g.name.clone()).collect();
            let mut full = globals.clone();
            full.extend(words_args);
            if loss.is_empty() {
                Verdict::Run { args: full }
            } else {
                Verdict::RunUnlessLoss {
                    args: full,
                    loss,
                    globals: globals
                        .into_iter()
                        .filter(|g| g.ends_with("pathspecs"))
                        .collect(),
                }
            }
        }
        Err(Stop::Invalid(why)) => Verdict::Invalid { why },
        Err(Stop::Refused(why)) => Verdict::Refused { why },
    }
}

fn malformed(args: &[String]) -> Option<Unread> {
    if args.is_empty() {
        return Some(Unread::NoArgs);
    }
    if args.iter().any(String::is_empty) {
        return Some(Unread::EmptyArg);
    }
    if args.iter().any(|a| a.contains('\0')) {
        return Some(Unread::NulArg);
    }
    if args[0] == "git" {
        return Some(Unread::LeadingGit);
    }
    None
}

fn globals_verdict(inv: &GitInvocation) -> Option<Verdict> {
    let g = inv
        .globals
        .iter()
        .find(|g| !ALLOWED_GLOBALS.contains(&g.name.as_str()))?;
    let why = match g.name.as_str() {
        "-c" | "--config-env" => Key::VcsWhyOverridesConfig,
        "--exec-path" => Key::VcsWhyExecPath,
        "-p" | "--paginate" => Key::VcsWhyStartsPager,
        "-C" | "--git-dir" | "--work-tree" | "--bare" | "--namespace" | "--super-prefix"
        | "--shallow-file" | "--attr-source" => Key::VcsWhyPointsElsewhere,
        "--" => Key::VcsWhyNotGlobal,
        _ => Key::VcsWhyNotOfferedOption,
    };
    Some(Verdict::Refused {
        why: Refusal::Global {
            option: g.name.clone(),
            why,
        },
    })
}

#[cfg(test)]
mod tests;
