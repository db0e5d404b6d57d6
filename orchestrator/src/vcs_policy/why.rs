//! Why `work_vcs` does not run a command line, typed: each refusal and each reading problem
//! carries its values (the option, the subcommand, the path), and the texts come from the
//! catalogue in the current call's language only where the answer is made
//! ([`Refusal::reason`], [`Refusal::hint`], [`Unread::reason`]).

use crate::catalogue::{Key, fill, text};

/// A command line `work_vcs` understood and refuses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// A global option before the subcommand; `why` is a `VcsWhy…` phrase.
    Global {
        option: String,
        why: Key,
    },
    /// A subcommand or command path refused for a named reason.
    Subcommand {
        shown: String,
        why: Key,
        hint: Key,
    },
    /// A subcommand not on the allow-list.
    NotOffered {
        sub: String,
    },
    /// An option the command does not have.
    UnknownOption {
        word: String,
        shown: String,
    },
    /// An option that runs a program (`why` names it).
    OptionRunsProgram {
        spelled: String,
        shown: String,
        why: Key,
    },
    /// An option refused for another reason.
    OptionRefused {
        spelled: String,
        shown: String,
        why: Key,
    },
    PathOutside {
        spec: String,
    },
    OpenedOutside {
        what: String,
        path: String,
    },
    FileOutside {
        what: String,
        path: String,
    },
    TransportUrl {
        url: String,
        transport: String,
    },
    HelperUrl {
        url: String,
        scheme: String,
    },
    Refspec {
        spec: String,
    },
    Strategy {
        name: String,
        allowed: &'static [&'static str],
    },
    PullInteractive,
    AmStates,
    ConfigOutside {
        option: String,
    },
    ConfigKey {
        key: String,
        allowed: &'static [&'static str],
    },
    ConfigInteractive {
        setting: String,
    },
    DeleteHead,
    NotFullRef {
        reference: String,
    },
    WorktreeNotIgnored {
        path: String,
    },
}

impl Refusal {
    /// What is refused and why, in the current language.
    pub fn reason(&self) -> String {
        match self {
            Refusal::Global { option, why } => fill(
                Key::VcsGlobalRefused,
                &[("option", option), ("why", &text(*why))],
            ),
            Refusal::Subcommand { shown, why, .. } => fill(
                Key::VcsSubcommandRefused,
                &[("shown", shown), ("why", &text(*why))],
            ),
            Refusal::NotOffered { sub } => fill(Key::VcsNotOffered, &[("sub", sub)]),
            Refusal::UnknownOption { word, shown } => {
                fill(Key::VcsUnknownOption, &[("word", word), ("shown", shown)])
            }
            Refusal::OptionRunsProgram {
                spelled,
                shown,
                why,
            }
            | Refusal::OptionRefused {
                spelled,
                shown,
                why,
            } => fill(
                Key::VcsOptionRefused,
                &[("spelled", spelled), ("shown", shown), ("why", &text(*why))],
            ),
            Refusal::PathOutside { spec } => fill(Key::VcsPathOutside, &[("spec", spec)]),
            Refusal::OpenedOutside { what, path } => {
                fill(Key::VcsOpenedOutside, &[("what", what), ("path", path)])
            }
            Refusal::FileOutside { what, path } => {
                fill(Key::VcsFileOutside, &[("what", what), ("path", path)])
            }
            Refusal::TransportUrl { url, transport } => fill(
                Key::VcsTransportUrl,
                &[("url", url), ("transport", transport)],
            ),
            Refusal::HelperUrl { url, scheme } => {
                fill(Key::VcsHelperUrl, &[("url", url), ("scheme", scheme)])
            }
            Refusal::Refspec { spec } => fill(Key::VcsRefspec, &[("spec", spec)]),
            Refusal::Strategy { name, .. } => fill(Key::VcsStrategy, &[("name", name)]),
            Refusal::PullInteractive => text(Key::VcsPullInteractive).to_owned(),
            Refusal::AmStates => text(Key::VcsAmStates).to_owned(),
            Refusal::ConfigOutside { option } => fill(Key::VcsConfigOutside, &[("option", option)]),
            Refusal::ConfigKey { key, allowed } => fill(
                Key::VcsConfigKey,
                &[("key", key), ("keys", &allowed.join(", "))],
            ),
            Refusal::ConfigInteractive { setting } => {
                fill(Key::VcsConfigInteractive, &[("setting", setting)])
            }
            Refusal::DeleteHead => text(Key::VcsDeleteHead).to_owned(),
            Refusal::NotFullRef { reference } => {
                fill(Key::VcsNotFullRef, &[("reference", reference)])
            }
            Refusal::WorktreeNotIgnored { path } => {
                fill(Key::VcsWorktreeNotIgnored, &[("path", path)])
            }
        }
    }

    /// What to do instead, in the current language.
    pub fn hint(&self) -> String {
        let key = match self {
            Refusal::Global { .. } => Key::VcsHintGlobal,
            Refusal::Subcommand { hint, .. } => *hint,
            Refusal::NotOffered { .. } => Key::VcsHintAllowList,
            Refusal::UnknownOption { shown, .. } => {
                return fill(Key::VcsHintSpelling, &[("shown", shown)]);
            }
            Refusal::OptionRunsProgram { .. } => Key::VcsHintNoPrograms,
            Refusal::OptionRefused { .. } | Refusal::AmStates => Key::VcsHintAskUser,
            Refusal::PathOutside { .. } => Key::VcsHintRelativePaths,
            Refusal::OpenedOutside { .. } | Refusal::FileOutside { .. } => Key::VcsHintPathInside,
            Refusal::TransportUrl { .. } | Refusal::HelperUrl { .. } => Key::VcsHintAddress,
            Refusal::Refspec { .. } => Key::VcsHintFetchThen,
            Refusal::Strategy { allowed, .. } => {
                return fill(Key::VcsHintStrategies, &[("list", &allowed.join(", "))]);
            }
            Refusal::PullInteractive => Key::VcsHintRebaseModes,
            Refusal::ConfigOutside { .. } => Key::VcsHintProjectConfig,
            Refusal::ConfigKey { .. } => Key::VcsHintUserSettings,
            Refusal::ConfigInteractive { .. } => Key::VcsHintRebaseValues,
            Refusal::DeleteHead => Key::VcsHintDeleteBranch,
            Refusal::NotFullRef { .. } => Key::VcsHintFullRef,
            Refusal::WorktreeNotIgnored { .. } => Key::VcsHintIgnoreWorktree,
        };
        text(key).to_owned()
    }
}

/// A command line `work_vcs` could not read: malformed, ambiguous, or a name that starts
/// with `-`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unread {
    NoArgs,
    EmptyArg,
    NulArg,
    LeadingGit,
    NotGitOption {
        option: String,
    },
    NoSubcommand,
    NotASubcommand {
        word: String,
        sub: String,
    },
    NameASubcommand {
        sub: String,
        choices: Vec<String>,
    },
    RemoteOptionsFirst,
    Ambiguous {
        word: String,
        shown: String,
        candidates: Vec<String>,
    },
    MissingValue {
        option: String,
    },
    UnexpectedValue {
        option: String,
    },
    EndOfOptions,
    DashName {
        arg: String,
        shown: String,
    },
    GrepPatternFirst,
    BranchAndPaths,
    OneRevision,
    NeitherRevNorFile {
        word: String,
    },
    AnnotatedTag,
}

fn quoted(words: &[String], separator: &str) -> String {
    words
        .iter()
        .map(|w| format!("`{w}`"))
        .collect::<Vec<_>>()
        .join(separator)
}

impl Unread {
    /// What could not be read, in the current language.
    pub fn reason(&self) -> String {
        let key = match self {
            Unread::NoArgs => Key::VcsNoArgs,
            Unread::EmptyArg => Key::VcsEmptyArg,
            Unread::NulArg => Key::VcsNulArg,
            Unread::LeadingGit => Key::VcsLeadingGit,
            Unread::NoSubcommand => Key::VcsNoSubcommand,
            Unread::RemoteOptionsFirst => Key::VcsRemoteOptionsFirst,
            Unread::EndOfOptions => Key::VcsEndOfOptions,
            Unread::GrepPatternFirst => Key::VcsGrepPatternFirst,
            Unread::BranchAndPaths => Key::VcsBranchAndPaths,
            Unread::OneRevision => Key::VcsOneRevision,
            Unread::AnnotatedTag => Key::VcsAnnotatedTag,
            Unread::NotGitOption { option } => {
                return fill(Key::VcsNotGitOption, &[("option", option)]);
            }
            Unread::NotASubcommand { word, sub } => {
                return fill(Key::VcsNotASubcommand, &[("word", word), ("sub", sub)]);
            }
            Unread::NameASubcommand { sub, choices } => {
                return fill(
                    Key::VcsNameASubcommand,
                    &[("sub", sub), ("choices", &quoted(choices, ", "))],
                );
            }
            Unread::Ambiguous {
                word,
                shown,
                candidates,
            } => {
                return fill(
                    Key::VcsAmbiguous,
                    &[
                        ("word", word),
                        ("shown", shown),
                        ("candidates", &quoted(candidates, text(Key::VcsOr))),
                    ],
                );
            }
            Unread::MissingValue { option } => {
                return fill(Key::VcsMissingValue, &[("option", option)]);
            }
            Unread::UnexpectedValue { option } => {
                return fill(Key::VcsUnexpectedValue, &[("option", option)]);
            }
            Unread::DashName { arg, shown } => {
                return fill(Key::VcsDashName, &[("arg", arg), ("shown", shown)]);
            }
            Unread::NeitherRevNorFile { word } => {
                return fill(Key::VcsNeitherRevNorFile, &[("word", word)]);
            }
        };
        text(key).to_owned()
    }
}
