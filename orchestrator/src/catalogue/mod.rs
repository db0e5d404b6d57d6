//! The catalogue: every text Butler shows the Brain — summaries, hints, reasons, policy hints,
//! notes, the server's instructions, the hook's denial messages — and the block `butler init`
//! writes into `CLAUDE.md`, in each language Butler speaks. Field names, enum values, tool
//! names and argument names never change with the language; only these texts do.
//!
//! # Adding a text
//! 1. Add a variant to the `keys!` list below, named after what the text says.
//! 2. Add its English template to the `match` in `en.rs` and its Japanese one to `ja.rs`. Both
//!    matches are exhaustive (no `_` arm): a text missing in one language does not compile,
//!    and `every_key_has_the_same_placeholders_in_every_language` fails when the templates of
//!    one key do not name the same `{placeholders}`.
//! 3. Use it where the literal was: `text(Key::X)` for a fixed text, or
//!    `fill(Key::X, &[("n", &n)])` for a template with `{n}` in it.
//!
//! # The language of a call
//! Chosen once, at the edge, and never below it: the MCP server runs each tool call in its
//! session's language ([`scope`]; `session::blocking` carries it onto blocking threads), the
//! hook and `butler init` use the project's file or the environment ([`Lang::configured`]).
//! Outside any scope (unit tests, libraries) texts are English. Which language a session
//! speaks: `work_session_start(language)`, else `language` in `.butler/config.toml`, else
//! `BUTLER_LANG`, else English — the most specific choice wins: a session's own word over its
//! project's file, the project's file (shared with the team) over the machine's environment.

mod en;
mod ja;

use std::fmt::Display;
use std::future::Future;
use std::path::Path;

use serde::{Deserialize, Serialize};

/// The languages Butler speaks.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
#[schemars(inline)]
pub enum Lang {
    #[default]
    En,
    Ja,
}

/// Every language, for the tests that compare them.
pub const LANGS: [Lang; 2] = [Lang::En, Lang::Ja];

impl Lang {
    /// `en`, `ja`, also with a region or encoding (`ja_JP.UTF-8`, `en-GB`); any case.
    pub fn parse(value: &str) -> Option<Lang> {
        let lower = value.trim().to_ascii_lowercase();
        let base = lower.split(['_', '-', '.']).next().unwrap_or("");
        match base {
            "en" | "english" => Some(Lang::En),
            "ja" | "japanese" => Some(Lang::Ja),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::Ja => "ja",
        }
    }

    /// The language configured for `project` without a session: `language` in its
    /// `.butler/config.toml`, else `BUTLER_LANG`, else English. An unreadable file or an
    /// unknown value counts as unset (logged): the texts' language never stops Butler.
    pub fn configured(project: &Path) -> Lang {
        Self::from_sources(project, |name| std::env::var(name).ok())
    }

    /// [`Lang::configured`] with the environment looked up through `env`.
    pub fn from_sources(project: &Path, env: impl Fn(&str) -> Option<String>) -> Lang {
        let file = match butler_worker::config::file_language(project) {
            Ok(value) => value,
            Err(err) => {
                tracing::warn!(error = %err, "the language setting could not be read");
                None
            }
        };
        let env = env(butler_worker::config::ENV_LANG);
        [file, env]
            .into_iter()
            .flatten()
            .filter(|v| !v.trim().is_empty())
            .find_map(|v| {
                let lang = Lang::parse(&v);
                if lang.is_none() {
                    tracing::warn!(value = %v, "unknown language; using the next setting");
                }
                lang
            })
            .unwrap_or_default()
    }
}

macro_rules! keys {
    ($($key:ident),* $(,)?) => {
        /// One Brain-facing text (see the module's documentation for adding one).
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum Key { $($key),* }

        /// Every key, for the tests that check each of them in each language.
        pub const ALL: &[Key] = &[$(Key::$key),*];
    };
}

keys! {
    // The server's instructions, the CLAUDE.md block.
    Instructions,
    ClaudeBlock,
    // work_observe's states (state.rs) and notes (observe.rs).
    UninitSummary,
    UninitReason,
    UnknownSummary,
    UnknownUnreadable,
    BlockedSummary,
    DirtySummary,
    DirtyLinked,
    DirtyReason,
    DirtyNoIssueHint,
    DirtyUnpublishedSummary,
    UnpublishedSummary,
    UnpublishedReason,
    DoneSharedReason,
    DoneLocalReason,
    DoneSummary,
    IdleSummary,
    OutsideRecords,
    IssueMissingNote,
    TrackerSilentNote,
    // Why a project is blocked (error.rs `BlockReason`).
    BlockInProgress,
    BlockConflicts,
    BlockDetached,
    BlockInProgressHint,
    BlockConflictsHint,
    BlockDetachedHint,
    // Answers of work_session_start, work_start, work_record, work_publish.
    SessionStarted,
    SessionUntrustedConfig,
    // Why the session's issue backend was chosen (`issue_backend_note`; none when the user
    // asked for the embedded store).
    BackendConfigured,
    BackendDetected,
    BackendVersion,
    BackendNoToken,
    BackendNoRemote,
    BackendNotGitea,
    BackendTokenNotBound,
    StartLinked,
    StartUnlinked,
    StartUncheckedNote,
    Recorded,
    NothingRecorded,
    Published,
    NothingPublished,
    // work_finish's checklist.
    FinishBlocked,
    FinishUnrecorded,
    FinishUnrecordedReason,
    FinishNoDestination,
    FinishNoDestinationHint,
    FinishUnshared,
    FinishUnsharedReason,
    FinishNoIssue,
    FinishCommentReason,
    FinishCloseReason,
    FinishProposals,
    FinishOptionsNeedAuto,
    // Errors (error.rs `ToolError::from_work`).
    ErrNoSession,
    ErrNoSessionHint,
    ErrInvalidArgument,
    ErrInvalidArgumentHint,
    ErrUnrecorded,
    ErrUnrecordedHint,
    ErrBlocked,
    ErrNoDestination,
    ErrNoDestinationHint,
    ErrMessageNeeded,
    ErrMessageNeededHint,
    ErrNothingToRecord,
    ErrNothingToRecordHint,
    ErrRejected,
    ErrRejectedHint,
    ErrInvalidBody,
    ErrInvalidBodyHint,
    ErrInternal,
    ObserveHint,
    ErrRecordNotFound,
    FindRecordsHint,
    ErrUseProperTool,
    ErrUseProperToolHint,
    ErrLineNotFound,
    ErrLineNotFoundHint,
    ErrLineExists,
    ErrLineExistsHint,
    ErrLineShadowsShared,
    ErrLineNameHint,
    ErrLineLooksLike,
    ErrLineLooksLikeHint,
    ErrLineAmbiguous,
    ErrLineAmbiguousHint,
    ErrLineNeeded,
    ErrLineNeededHint,
    ErrLineNeedsRecord,
    ErrLineNeedsRecordHint,
    ErrMergeConflicted,
    ErrMergeConflictedHint,
    ErrMergeAgainTask,
    ErrFinishStopped,
    ErrFinishDone,
    ErrTaskNeedsRecord,
    ErrTaskNeedsRecordHint,
    ErrTaskToolConfig,
    ErrTaskToolConfigHint,
    TaskToolConfigNote,
    ErrTaskNotFound,
    ErrTaskNotFoundHint,
    ErrNotARepository,
    ErrNotARepositoryHint,
    ErrNoIdentity,
    ErrNoIdentityHint,
    ErrPublishAuth,
    ErrPublishAuthHint,
    ErrUnreachable,
    ErrUnreachableHint,
    ErrTimeout,
    ErrTimeoutHint,
    ErrIssueNotFound,
    ErrIssueNotFoundHint,
    ErrIssueUnreachable,
    ErrIssueUnreachableHint,
    ErrSecretInText,
    ErrSecretInTextHint,
    ErrTokenRefused,
    ErrTokenPlainHttp,
    ErrTokenPlainHttpHint,
    ErrTokenUnnamedHost,
    ErrTokenUnnamedHostHint,
    ErrBodyFieldsNeeded,
    ErrBodyFieldsNeededHint,
    ErrNeedsApproval,
    ErrNeedsApprovalHint,
    ErrAgentUnavailable,
    ErrAgentUnavailableHint,
    ErrTaskRunner,
    ErrTaskRunnerSetupHint,
    ErrTaskRunnerHint,
    ErrConfig,
    ErrConfigHint,
    ErrSecretsInWork,
    ErrOwnTokenInWorkHint,
    ErrSecretsInWorkHint,
    ErrSecretsInRecords,
    ErrSecretsInRecordsHint,
    ErrVcsConflict,
    ErrVcsConflictHint,
    ErrVcsAuth,
    ErrVcsAuthHint,
    ErrVcsUnreachable,
    ErrVcsUnreachableHint,
    ErrVcsIdentity,
    ErrVcsIdentityHint,
    ErrVcsArguments,
    ErrVcsArgumentsHint,
    ErrVcsNotFound,
    ErrVcsNotFoundHint,
    ErrVcsFailed,
    ErrVcsFailedHint,
    ErrBareRepository,
    ErrBareRepositoryHint,
    ErrOutsideProject,
    ErrOutsideProjectHint,
    ErrHookRejectedHint,
    ErrNoSuchRecord,
    ErrGitMissing,
    ErrGitMissingHint,
    ErrGitFailed,
    ErrLedgerBusy,
    ErrLedgerUnusable,
    ErrLedgerUnusableHint,
    ErrLedgerConflict,
    ErrLedgerFailed,
    ErrLabelNotFoundHint,
    ErrInvalidTitle,
    ErrIssueAuth,
    ErrIssueConflict,
    ErrIssueConflictHint,
    ErrWriteUnconfirmed,
    ErrRateLimited,
    ErrWaitAMinute,
    CheckIssueCreated,
    CheckCommentThere,
    CheckCommentGone,
    CheckChangeThere,
    ErrHookRejected,
    ErrIndexLocked,
    ErrIndexLockedHint,
    ErrButlerBusy,
    AgainInAMoment,
    ErrLabelNotFound,
    ErrInvalidTitleHint,
    ErrIssueAuthHint,
    ErrWaitSecs,
    ErrRateLimitedHint,
    CheckBeforeRepeating,
    ErrTooLarge,
    ErrTooLargeHint,
    ErrIssueFailed,
    // Answers of the issue tools, work_history, work_record notes, work_switch_line.
    IssueCreated,
    IssueCommented,
    IssueCommentDeleted,
    IssueRetitled,
    IssueBodyUpdated,
    IssueReopened,
    IssueClosed,
    IssuesPageOf,
    IssuesPage,
    NoRecordsYet,
    NoRecordsTouch,
    RecordsTouching,
    RecentRecords,
    NothingUnrecordedNote,
    AlreadyRecordedNote,
    ClearedLockNote,
    AlreadyOnLine,
    SwitchedFrom,
    Switched,
    // work_new_line, work_merge_line, work_diff.
    LineStarted,
    LineStartedFrom,
    LineCarried,
    LineAlreadyIn,
    LineBroughtIn,
    LineMerged,
    PatchCut,
    PatchTruncated,
    Patch,
    // work_finish(auto=true)'s account of what it did.
    AutoRecorded,
    AutoShared,
    AutoCommented,
    AutoClosed,
    AutoJoin,
    AutoDone,
    AutoNothing,
    AutoStaysOpen,
    AutoNoIssue,
    // The hook's denial messages (hook/suggest.rs).
    HookUseInstead,
    HookNoDedicatedTool,
    HookDirectGit,
    HookDynamic,
    HookOverviewItem,
    HookOverviewOther,
    // Unfinished git operations and conflicts (conclude.rs, error.rs).
    BlockOpConflicts,
    GoalContinueRebase,
    GoalContinueAm,
    GoalFinishOp,
    GoalSaveResolution,
    HintBisectReset,
    HintEditConflicts,
    HintConflictsResolved,
    HintCallRecordTo,
    HintOrGiveUp,
    OpFinishedAsRecord,
    OpFinished,
    OpPausedAgain,
    ErrHookRejectedPublish,
    ErrHookRejectedOther,
    ErrHookRejectedPublishHint,
    ErrHookRejectedOtherHint,
    // What finishing an unfinished operation takes (state.rs, error.rs, record.rs).
    ReqResolveConflicts,
    ReqConflictsResolved,
    ReqRecordWill,
    ReqGiveUpInstead,
    ReqBisect,
    ReqBisectHint,
    ReqDetached,
    ReqDetachedHint,
    ErrMarkersRemain,
    ErrMarkersRemainHint,
    WarnStrayMarkers,
    // Delegated operations' errors, a continued operation that stopped again, line changes that would overwrite ignored files (error.rs).
    ErrContractFields,
    ErrContractFieldsHint,
    ErrStepsRefused,
    ErrStepsNotTaught,
    ErrStepsHint,
    ErrUnknownSkill,
    ErrUnknownSkillHint,
    ErrNoTask,
    ErrNoTaskHint,
    ErrTaskWrongState,
    ErrTaskWrongStateHint,
    ErrNoSkill,
    ErrNoSkillHint,
    ErrOperationFailed,
    ErrDelegationConfig,
    ErrDelegationConfigHint,
    ErrOpStoppedAgain,
    ErrOpStoppedAgainSaved,
    ErrOpStoppedAgainHint,
    ErrLineWouldLose,
    ErrLineWouldLoseHint,
    // The ImplementMaid's and the delegated operations' answers (implement.rs, delegate/).
    GuardWeakened,
    GuardStubs,
    GuardAnd,
    TaskPassedAllowed,
    TaskSucceeded,
    TaskFailedGuards,
    TaskFailed,
    TaskCancelled,
    TaskAcceptedMerged,
    TaskAccepted,
    TaskDiscarded,
    TaskNotesBody,
    OpApprovalStale,
    SkillCommonUsage,
    SkillUsage,
    OpAtStep,
    OpSucceeded,
    OpVerifiersPassed,
    OpProcedureStatus,
    OpWhyTimedOut,
    OpWhyRefused,
    OpWhyStepFailed,
    OpWhyAStepFailed,
    OpWhyVerifiers,
    OpFailed,
    OpDenied,
    OpCancelled,
    OpNoProcedure,
    OpNeedsInput,
    OpWaitsApproval,
    OpWaitsApprovalBare,
    // Notes about repository shapes, large files, prepared messages, task lines and approvals (observe.rs, conclude.rs, line.rs, sensitive.rs, vcs.rs).
    NoteLargeFiles,
    NoteAndMore,
    NoteNestedRepository,
    NoteSubmoduleWork,
    NotePreparedMessage,
    ErrTaskLine,
    ErrTaskLineHint,
    ErrLineNoRecords,
    ErrLineNoRecordsHint,
    NoteScanPartial,
    ErrApprovalMismatch,
    ErrApprovalMismatchHint,
    NoteVcsConfigPutBack,
    // Why work_finish(auto=true) skipped a step (auto_finish.rs).
    SkipNothingToRecord,
    SkipNoActiveIssue,
    SkipNoNewRecords,
    // The operation log and undo (work/oplog.rs).
    NoteUndoable,
    OplogListed,
    OplogEmpty,
    Undone,
    UndoneAlready,
    UndoneAlso,
    ErrUndoChangedSince,
    ErrUndoChangedSinceHint,
    ErrUndoNoOperation,
    ErrUndoNoOperationHint,
    ErrUndoUnfinished,
    ErrUndoUnfinishedHint,
    // Why an argument is refused (the `reason` of `ErrInvalidArgument`).
    ArgOutOfRange,
    ArgNotBetween,
    ArgMessageEmpty,
    ArgLongerThanChars,
    ArgLongerThanBytes,
    ArgNulCharacter,
    ArgNul,
    ArgEmpty,
    ArgTooManyIssues,
    ArgNotIssueNumber,
    ArgNotOperationId,
    ArgNotPage,
    ArgRecordId,
    ArgMergeCurrentLine,
    ArgGiveMessage,
    ArgProjectPath,
    ArgNotAbsolute,
    // Notes of a record (`work/save.rs`).
    NoteSparseRecorded,
    NoteHookChangedMeanwhile,
    NoteMessageRewritten,
    NoteTrailerDropped,
    NoteIssueRefsDropped,
    AndMore,
    // Why work_vcs refuses or cannot read a command line (vcs_policy/why.rs): the `it …` phrases, hints, reasons.
    VcsWhyOverridesConfig,
    VcsWhyExecPath,
    VcsWhyStartsPager,
    VcsWhyPointsElsewhere,
    VcsWhyNotGlobal,
    VcsWhyNotOfferedOption,
    VcsWhyShares,
    VcsWhyRunsPrograms,
    VcsWhyCreatesRepository,
    VcsWhyRunsEveryStep,
    VcsWhyHistoryViewer,
    VcsWhyReplaysLog,
    VcsWhyOldSpelling,
    VcsWhyOpensEditor,
    VcsWhyRewritesSections,
    VcsWhyNotAmongOffered,
    VcsWhyNotClassified,
    VcsWhyGpg,
    VcsWhyTextconv,
    VcsWhyExtDiff,
    VcsWhyUploadPack,
    VcsWhyShowPatch,
    VcsWhyInteractive,
    VcsWhySubmodules,
    VcsWhyShallow,
    VcsWhyFromFile,
    VcsWhyWritesFile,
    VcsWhyCustomFormat,
    VcsWhyFetchForce,
    VcsWhyPruneTags,
    VcsWhyRefmap,
    VcsWhyConfigSections,
    VcsWhyConfigOutside,
    VcsWhyBisectTerms,
    VcsWhyFilters,
    VcsWhyPager,
    VcsWhyInternal,
    VcsWhyMovesHead,
    VcsWhyPartialClone,
    VcsWhyShellAfterCommit,
    VcsWhyMirror,
    VcsWhyStdin,
    VcsHintAskUser,
    VcsHintGlobal,
    VcsHintShare,
    VcsHintStashPush,
    VcsHintSingleKeys,
    VcsHintAllowList,
    VcsHintSpelling,
    VcsHintNoPrograms,
    VcsHintRelativePaths,
    VcsHintPathInside,
    VcsHintAddress,
    VcsHintFetchThen,
    VcsHintStrategies,
    VcsHintRebaseModes,
    VcsHintProjectConfig,
    VcsHintUserSettings,
    VcsHintRebaseValues,
    VcsHintDeleteBranch,
    VcsHintFullRef,
    VcsHintIgnoreWorktree,
    VcsGlobalRefused,
    VcsSubcommandRefused,
    VcsNotOffered,
    VcsUnknownOption,
    VcsOptionRefused,
    VcsPathOutside,
    VcsOpenedOutside,
    VcsFileOutside,
    VcsTransportUrl,
    VcsHelperUrl,
    VcsRefspec,
    VcsStrategy,
    VcsPullInteractive,
    VcsAmStates,
    VcsConfigOutside,
    VcsConfigKey,
    VcsConfigInteractive,
    VcsDeleteHead,
    VcsNotFullRef,
    VcsWorktreeNotIgnored,
    VcsNoArgs,
    VcsEmptyArg,
    VcsNulArg,
    VcsLeadingGit,
    VcsNotGitOption,
    VcsNoSubcommand,
    VcsNotASubcommand,
    VcsNameASubcommand,
    VcsRemoteOptionsFirst,
    VcsAmbiguous,
    VcsOr,
    VcsMissingValue,
    VcsUnexpectedValue,
    VcsEndOfOptions,
    VcsDashName,
    VcsGrepPatternFirst,
    VcsBranchAndPaths,
    VcsOneRevision,
    VcsNeitherRevNorFile,
    VcsAnnotatedTag,
    // A taught step's git command refused by work_vcs's policy (delegate/judge.rs).
    StepGitProperWay,
    StepGitRefused,
    // Why Butler's settings are not usable (error.rs `ConfigProblem`).
    CfgSetting,
    CfgSandboxMode,
    CfgUnknownAgent,
    CfgDenyRead,
    CfgNetworkProxy,
    CfgTrackerToken,
    CfgTrackerUrl,
    CfgTrackerRepo,
    ListJoin,
    // The delegated operations' answers: teach, get_status, cancel_task, list_skills (delegate/mod.rs).
    ProcedureStored,
    ProcedureNoTarget,
    ProcedureReplacing,
    ProcedureApprovalEachRun,
    DelegatedTaskIs,
    DelegatedTaskIsThen,
    DelegatedStepsDone,
    SkillsListed,
    // Butler's own capabilities' usage, plans and step evidence (delegate/capabilities.rs).
    UsageGitCommit,
    UsageGitPush,
    UsageCommitPush,
    UsageGitPull,
    UsageImplement,
    UsageContext,
    UsageFieldMessage,
    UsageFieldGoal,
    UsageFieldSpec,
    UsageFieldTargetPaths,
    UsageApprovalListed,
    UsageApprovalAlways,
    PlanRecord,
    PlanShare,
    PlanRecordShare,
    PlanImplement,
    PlanReadContext,
    StepPull,
    StepToRecord,
    StepDestination,
    StepUnpublished,
    StepNoDestination,
    StepRecordAll,
    StepRecordedAs,
    StepNothingToRecord,
    StepShareWith,
    StepShared,
    StepShareRecords,
    StepSharingProgress,
    // What an operation-log entry did (its `what`, written in the session's language; server.rs, work/oplog.rs).
    OpWhatRecord,
    OpWhatFinish,
    OpWhatNewLine,
    OpWhatSwitchLine,
    OpWhatMergeLine,
    OpWhatMergeBack,
    OpWhatAccept,
    OpWhatDiscard,
    OpWhatUndo,
    OpWhatUndoNewest,
    // Why run_implement refuses a task's contract (implement.rs, by `ContractError`'s variant).
    ContractEmptyGoal,
    ContractTooLong,
    ContractNoTargets,
    ContractTooMany,
    ContractBadPath,
    ContractBadTimeout,
    ContractEmptyTestCommand,
    ContractBadFileCheck,
    ContractBadTaskId,
    ContractBadIntent,
    ContractNotImplementation,
    // Why an implementation agent cannot run (implement.rs, by `MaidError`'s variant).
    AgentCannotLaunch,
    AgentNeedsSetting,
    AgentWorkerCommand,
    AgentSandboxUnavailable,
    // Notes of finishing an unfinished operation (work/conclude.rs).
    NoteOpPausedAgain,
    NoteStepSkipped,
    NoteReplayKeepsMessages,
    NoteSparseSaved,
    // work_vcs's answer when git ran (work/vcs.rs).
    VcsDone,
    VcsNothingMatched,
    // Where conflict markers remain (error.rs `Markers::unresolved_list`).
    MarkersAtLine,
    MarkersAtLines,
    // Why a line name is refused (work/line.rs).
    ArgLineEmpty,
    ArgLineDash,
    ArgNotLineName,
}

tokio::task_local! {
    static CURRENT: Lang;
}

/// The language of the current call (English outside any [`scope`]).
pub fn current() -> Lang {
    CURRENT.try_with(|lang| *lang).unwrap_or_default()
}

/// Runs `fut` with texts in `lang`.
pub async fn scope<F: Future>(lang: Lang, fut: F) -> F::Output {
    CURRENT.scope(lang, fut).await
}

/// Runs `f` (on a blocking thread, say) with texts in `lang`.
pub fn sync_scope<R>(lang: Lang, f: impl FnOnce() -> R) -> R {
    CURRENT.sync_scope(lang, f)
}

/// The template of `key` in `lang`.
pub fn template(lang: Lang, key: Key) -> &'static str {
    match lang {
        Lang::En => en::text(key),
        Lang::Ja => ja::text(key),
    }
}

/// The text of `key` in the current language.
pub fn text(key: Key) -> &'static str {
    template(current(), key)
}

/// The text of `key` in the current language with each `{name}` replaced by its value.
pub fn fill(key: Key, values: &[(&str, &dyn Display)]) -> String {
    fill_in(current(), key, values)
}

/// [`fill`] in a given language. One pass over the template: a value that itself contains
/// `{name}` (a command the Brain wrote, say) is never filled in again.
pub fn fill_in(lang: Lang, key: Key, values: &[(&str, &dyn Display)]) -> String {
    let template = template(lang, key);
    let mut out = String::with_capacity(template.len() + 32);
    let mut used = vec![false; values.len()];
    let mut rest = template;
    while let Some(start) = rest.find('{') {
        out.push_str(&rest[..start]);
        let after = &rest[start + 1..];
        let value = after.find('}').and_then(|end| {
            let name = &after[..end];
            let found = values.iter().position(|(n, _)| *n == name);
            debug_assert!(
                found.is_some() || !is_placeholder(name),
                "{key:?} ({lang:?}): no value for {{{name}}}"
            );
            found.map(|i| {
                used[i] = true;
                (values[i].1.to_string(), end)
            })
        });
        match value {
            Some((value, end)) => {
                out.push_str(&value);
                rest = &after[end + 1..];
            }
            None => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    debug_assert!(
        used.iter().all(|u| *u),
        "{key:?} ({lang:?}) has no place for {:?}",
        values
            .iter()
            .zip(&used)
            .filter(|(_, u)| !**u)
            .map(|((n, _), _)| n)
            .collect::<Vec<_>>()
    );
    out
}

/// Whether `{name}` in a template is a placeholder (a lowercase name), not a literal brace.
fn is_placeholder(name: &str) -> bool {
    !name.is_empty() && name.chars().all(|c| c.is_ascii_lowercase() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    fn placeholders(text: &str) -> BTreeSet<String> {
        let mut found = BTreeSet::new();
        let mut rest = text;
        while let Some(start) = rest.find('{') {
            let after = &rest[start + 1..];
            match after.find('}') {
                Some(end) if is_placeholder(&after[..end]) => {
                    found.insert(after[..end].to_string());
                    rest = &after[end + 1..];
                }
                _ => rest = after,
            }
        }
        found
    }

    #[test]
    fn every_key_has_the_same_placeholders_in_every_language() {
        for &key in ALL {
            let english = placeholders(template(Lang::En, key));
            for lang in LANGS {
                assert_eq!(
                    placeholders(template(lang, key)),
                    english,
                    "{key:?} in {lang:?}"
                );
            }
        }
    }

    #[test]
    fn every_key_is_written_in_every_language() {
        for &key in ALL {
            assert!(!template(Lang::En, key).trim().is_empty(), "{key:?} en");
            let ja = template(Lang::Ja, key);
            assert!(!ja.is_empty(), "{key:?} ja");
            // A Japanese text that is the English one was not translated.
            assert_ne!(ja, template(Lang::En, key), "{key:?} is English in ja");
            // Japanese, or punctuation only (a separator): no English words left.
            let words: String = ja
                .split('{')
                .map(|part| part.split_once('}').map_or(part, |(_, after)| after))
                .collect();
            assert!(
                ja.chars().any(|c| ('\u{3040}'..='\u{30ff}').contains(&c)
                    || ('\u{4e00}'..='\u{9fff}').contains(&c))
                    || !words.chars().any(|c| c.is_ascii_alphabetic()),
                "{key:?} in ja has no Japanese"
            );
        }
    }

    #[test]
    fn the_instructions_fit_what_claude_code_shows() {
        for lang in LANGS {
            let text = template(lang, Key::Instructions);
            assert!(text.chars().count() < 2048, "{lang:?}: {}", text.len());
            // What a Brain needs to start, in every language.
            for must in ["work_session_start", "work_observe", "work_vcs", "git"] {
                assert!(text.contains(must), "{lang:?} lacks {must}");
            }
        }
    }

    #[test]
    fn languages_parse_with_regions_and_encodings() {
        assert_eq!(Lang::parse("ja"), Some(Lang::Ja));
        assert_eq!(Lang::parse("ja_JP.UTF-8"), Some(Lang::Ja));
        assert_eq!(Lang::parse("EN-gb"), Some(Lang::En));
        assert_eq!(Lang::parse("fr"), None);
        assert_eq!(Lang::parse(""), None);
    }

    #[test]
    fn the_file_wins_over_the_environment() {
        let dir = tempfile::tempdir().expect("tmp");
        let env_ja = |name: &str| (name == "BUTLER_LANG").then(|| "ja".to_string());
        assert_eq!(Lang::from_sources(dir.path(), env_ja), Lang::Ja);
        std::fs::create_dir_all(dir.path().join(".butler")).expect("mkdir");
        std::fs::write(
            dir.path().join(".butler/config.toml"),
            "language = \"en\"\n",
        )
        .expect("write");
        assert_eq!(Lang::from_sources(dir.path(), env_ja), Lang::En);
        std::fs::write(
            dir.path().join(".butler/config.toml"),
            "language = \"xx\"\n",
        )
        .expect("write");
        assert_eq!(Lang::from_sources(dir.path(), env_ja), Lang::Ja);
        assert_eq!(Lang::from_sources(dir.path(), |_| None), Lang::En);
    }

    #[tokio::test]
    async fn a_scope_sets_the_language_of_its_texts() {
        assert_eq!(text(Key::IdleSummary), en::text(Key::IdleSummary));
        let inside = scope(Lang::Ja, async { text(Key::IdleSummary) }).await;
        assert_eq!(inside, ja::text(Key::IdleSummary));
        let blocking = sync_scope(Lang::Ja, || fill(Key::Recorded, &[("id", &"r1")]));
        assert_eq!(blocking, "r1 として記録しました。");
    }

    #[test]
    fn a_value_is_never_filled_in_again() {
        let shown = fill_in(
            Lang::En,
            Key::HookUseInstead,
            &[("shown", &"git log {call}"), ("call", &"work_history()")],
        );
        assert_eq!(
            shown,
            "`git log {call}` was blocked. Use work_history() instead."
        );
    }
}
