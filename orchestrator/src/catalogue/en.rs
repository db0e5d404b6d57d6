//! The English texts (the default). Keep each the way the Brain reads it: short, the next
//! tool named, literals in backticks.

use super::Key;

pub(super) fn text(key: Key) -> &'static str {
    match key {
        Key::Instructions => {
            "\
Start: work_session_start, then work_observe (again whenever unsure). In the shell, git is \
blocked; work_vcs(args) runs what no other tool covers."
        }
        Key::ClaudeBlock => {
            "\
## Butler
This project's version control goes through Butler's MCP tools, not the shell.
- Start with `work_session_start`, then `work_observe()` to see where the work stands.
- Do not run `git` in Bash (a hook blocks it). Use `work_diff`, `work_history`, \
`work_record` and `work_publish`; for any other git operation use `work_vcs([\"branch\", \"-a\"])`."
        }
        Key::UninitSummary => "No session yet. Call work_session_start(project_root).",
        Key::UninitReason => "The session is not initialised",
        Key::UnknownSummary => "The work state cannot be determined: {why}.",
        Key::UnknownUnreadable => "the project could not be read",
        Key::BlockedSummary => "Blocked: {what}. {hint}.",
        Key::DirtySummary => "{n} unrecorded change(s). Save them with work_record{linked}.",
        Key::DirtyLinked => " (linked to #{issue})",
        Key::DirtyReason => "Unrecorded changes",
        Key::DirtyNoIssueHint => "No active issue; link with issue_ids",
        Key::DirtyUnpublishedSummary => {
            "{n} unrecorded change(s) and {unpublished} unshared record(s). Save with work_record first, then work_publish."
        }
        Key::UnpublishedSummary => "{n} record(s) not yet shared. Share them with work_publish.",
        Key::UnpublishedReason => "There are unshared records",
        Key::DoneSharedReason => "All work on #{issue} is recorded and shared",
        Key::DoneLocalReason => {
            "All work on #{issue} is recorded; no shared destination is configured"
        }
        Key::DoneSummary => "{reason}. Close it out with work_finish.",
        Key::IdleSummary => "No work in progress.",
        Key::OutsideRecords => {
            " {n} record(s) were made outside Butler since you last looked; see recent_records."
        }
        Key::IssueMissingNote => "Issue #{issue} was not found in the issue tracker.",
        Key::TrackerSilentNote => {
            "The issue tracker did not answer; the active issue's title is unknown."
        }
        Key::BlockInProgress => "a {what} is in progress",
        Key::BlockConflicts => "{n} file(s) have unresolved conflicts",
        Key::BlockDetached => "work is not on a named line of work",
        Key::BlockInProgressHint => {
            "finish or abort it with work_vcs (e.g. work_vcs([\"merge\", \"--abort\"])), then call work_observe"
        }
        Key::BlockConflictsHint => {
            "resolve the conflicted files (see work_observe changed_files), then call work_record"
        }
        Key::BlockDetachedHint => {
            "switch to a line of work with work_switch_line(name=…) or start one here with work_new_line(name=…)"
        }
        Key::SessionStarted => "Session started for {repo}. Next: work_observe.",
        Key::SessionUntrustedConfig => {
            "The project's {file} is not trusted, so its settings of what runs and where it may reach are ignored ({settings}). Tell the user; if they want them, they review the file and run `{command}`, then call work_session_start again."
        }
        Key::BackendConfigured => "{kind} issues of {repo}{version} (configured)",
        Key::BackendDetected => "{kind} issues of {repo}{version} (detected)",
        Key::BackendVersion => " (version {version})",
        Key::BackendNoToken => "embedded issue store (no `{variable}` set)",
        Key::BackendNoRemote => "embedded issue store (no remote tracker found)",
        Key::BackendNotGitea => "embedded issue store (the remote's host does not answer as Gitea)",
        Key::BackendTokenNotBound => {
            "embedded issue store (the tracker token is not bound to {host}; to use that tracker, the user adds it to `{variable}`)"
        }
        Key::StartLinked => "Working on #{issue}; work_record links it by default.",
        Key::StartUnlinked => "No active issue; records are not linked by default.",
        Key::StartUncheckedNote => "The issue tracker did not answer; the issue was set unchecked.",
        Key::Recorded => "Recorded as {id}.",
        Key::NothingRecorded => "Nothing to record.",
        Key::Published => "Shared {n} record(s) to {destination}.",
        Key::NothingPublished => "Already published: nothing to share.",
        Key::FinishBlocked => "The work is blocked: {what}.",
        Key::FinishUnrecorded => "Unrecorded work remains: record it first.",
        Key::FinishUnrecordedReason => "{n} unrecorded change(s)",
        Key::FinishNoDestination => {
            "No shared destination is configured, so it is unknown whether the work is shared."
        }
        Key::FinishNoDestinationHint => {
            "Ask the user for the shared destination, then add it with work_vcs([\"remote\", \"add\", \"origin\", \"<url>\"])"
        }
        Key::FinishUnshared => "Recorded work is not shared yet.",
        Key::FinishUnsharedReason => "{n} unshared record(s)",
        Key::FinishNoIssue => "All work is recorded and shared; no active issue to close.",
        Key::FinishCommentReason => "Leave a summary of the work on issue #{issue}",
        Key::FinishCloseReason => "The work looks done. Close issue #{issue}?",
        Key::FinishProposals => "All work is recorded and shared. Check the proposals below.",
        Key::FinishOptionsNeedAuto => "message, comment and close apply only with auto=true",
        Key::ErrNoSession => "No session has been started",
        Key::ErrNoSessionHint => "call work_session_start(project_root) first",
        Key::ErrInvalidArgument => "Invalid `{field}`: {reason}",
        Key::ErrInvalidArgumentHint => "call {tool} again with a valid `{field}`",
        Key::ErrUnrecorded => "There are unrecorded changes, so nothing can be shared yet",
        Key::ErrUnrecordedHint => "record first with work_record, then call work_publish",
        Key::ErrBlocked => "The project is blocked: {what}",
        Key::ErrNoDestination => {
            "No shared destination is configured, so published state cannot be known"
        }
        Key::ErrNoDestinationHint => {
            "ask the user for the shared destination and add it with work_vcs([\"remote\", \"add\", \"origin\", \"<url>\"])"
        }
        Key::ErrMessageNeeded => "No message given; one is proposed from the changes",
        Key::ErrMessageNeededHint => {
            "call work_record again with message set to data.proposed_message or your own words"
        }
        Key::ErrNothingToRecord => "There is nothing to record",
        Key::ErrNothingToRecordHint => {
            "make changes first, then call work_record; work_observe shows the state"
        }
        Key::ErrRejected => "The shared destination has work that is not here yet",
        Key::ErrRejectedHint => {
            "bring it in with work_vcs([\"pull\", \"--rebase\"]); if that stops on conflicts, edit the conflicted files and call work_record to continue; then call work_publish again"
        }
        Key::ErrInvalidBody => "The issue body lacks required sections",
        Key::ErrInvalidBodyHint => {
            "call {tool} again with a body that has `## Current state`, `## Next action` and `## Blockers` sections"
        }
        Key::ErrInternal => "Butler hit an internal error",
        Key::ObserveHint => "call work_observe to see the current state",
        Key::ErrRecordNotFound => "No record `{id}`",
        Key::FindRecordsHint => "find record ids with work_history",
        Key::ErrUseProperTool => "`{subcommand}` has a proper Butler tool",
        Key::ErrUseProperToolHint => "use {suggestion} instead",
        Key::ErrLineNotFound => "No line `{name}`",
        Key::ErrLineNotFoundHint => {
            "choose one of data.lines, or start it with work_new_line(name={quoted})"
        }
        Key::ErrLineExists => "A line `{name}` already exists",
        Key::ErrLineExistsHint => {
            "switch to it with work_switch_line(name={quoted}), or call work_new_line with another name"
        }
        Key::ErrLineShadowsShared => {
            "A line `{name}` would read as a shared line of the remote `{remote}`"
        }
        Key::ErrLineNameHint => {
            "call work_new_line with a name that does not start with a remote's name and `/`"
        }
        Key::ErrLineLooksLike => {
            "`{name}` can be taken for the line `{existing}` (same letters up to case or lookalikes)"
        }
        Key::ErrLineLooksLikeHint => {
            "switch to it with work_switch_line(name={quoted}), or call work_new_line with a name that reads differently"
        }
        Key::ErrLineAmbiguous => {
            "`{name}` names both a local line and the shared line `{name}`; Butler does not pick one"
        }
        Key::ErrLineAmbiguousHint => {
            "rename the local line with work_vcs([\"branch\", \"-m\", {quoted}, \"<new name>\"]), then call again"
        }
        Key::ErrLineNeeded => "It is not known which line this one came from",
        Key::ErrLineNeededHint => {
            "call work_merge_line(name=…) with the line to bring in (see data.lines)"
        }
        Key::ErrLineNeedsRecord => {
            "{n} unrecorded change(s) ({names}): record them before changing lines"
        }
        Key::ErrLineNeedsRecordHint => {
            "save them with work_record (or ask the user what to do with them), then call {tool} again"
        }
        Key::ErrMergeConflicted => {
            "Bringing in `{from}` stopped on conflicts in {n} file(s); the project is blocked until they are resolved"
        }
        Key::ErrMergeConflictedHint => {
            "edit the files to resolve the conflicts and save with work_record{again}; or give up with work_vcs([\"merge\", \"--abort\"])"
        }
        Key::ErrMergeAgainTask => ", then task_accept again to close the task",
        Key::ErrFinishStopped => "work_finish stopped at `{step}`{after}; nothing is half-done",
        Key::ErrFinishDone => " (done: {steps})",
        Key::ErrTaskNeedsRecord => {
            "{n} unrecorded change(s) ({names}): a task starts from a record"
        }
        Key::ErrTaskToolConfig => {
            "Not brought in yet: task {task} changes {n} file(s) that configure tools or run code ({names})"
        }
        Key::ErrTaskToolConfigHint => {
            "show the user these files as the task changed them (work_diff(record_id=…) with the records its evidence lists); once they have seen them, call task_accept(task_id=\"{task}\", confirm_paths=[…]) listing them, or task_discard"
        }
        Key::TaskToolConfigNote => {
            " {n} changed file(s) configure tools or run code ({names}): task_accept asks to confirm them."
        }
        Key::ErrTaskNeedsRecordHint => {
            "save them with work_record (or ask the user what to do with them), then call run_implement again"
        }
        Key::ErrTaskNotFound => "No open task `{id}`",
        Key::ErrTaskNotFoundHint => "task ids come from run_implement's answer",
        Key::ErrNotARepository => "That directory is not inside a git project",
        Key::ErrNotARepositoryHint => "call work_session_start with the project's root directory",
        Key::ErrNoIdentity => {
            "No author name and email are configured, so records cannot be signed"
        }
        Key::ErrNoIdentityHint => {
            "ask the user for their name and email and set them with work_vcs([\"config\", \"user.name\", \"<name>\"]) and work_vcs([\"config\", \"user.email\", \"<email>\"]), then call work_record again"
        }
        Key::ErrPublishAuth => "The shared destination refused the credentials",
        Key::ErrPublishAuthHint => {
            "ask the user to check their access to the shared destination, then call work_publish again"
        }
        Key::ErrUnreachable => "The shared destination could not be reached",
        Key::ErrUnreachableHint => {
            "check the network or the destination with work_vcs([\"remote\", \"-v\"]), then call work_publish again"
        }
        Key::ErrTimeout => "The operation did not finish in time",
        Key::ErrTimeoutHint => "call {tool} again; if it keeps timing out, ask the user",
        Key::ErrIssueNotFound => "Not found: {what}",
        Key::ErrIssueNotFoundHint => "find issue numbers with issue_list",
        Key::ErrIssueUnreachable => "The issue tracker did not answer",
        Key::ErrIssueUnreachableHint => {
            "call {tool} again later; work_observe and work_record still work"
        }
        Key::ErrSecretInText => "Refused: `{field}` contains what looks like a secret ({rule})",
        Key::ErrSecretInTextHint => {
            "take the secret out of `{field}` (name it instead of quoting it) and call {tool} again"
        }
        Key::ErrTokenRefused => "Butler did not send the tracker token to {host}: {why}",
        Key::ErrTokenPlainHttp => "it would travel unencrypted (plain http)",
        Key::ErrTokenPlainHttpHint => {
            "ask the user to give the tracker's https address, or to set BUTLER_GITEA_INSECURE_HTTP=1 in Butler's environment if they accept an unencrypted token; then call work_session_start again"
        }
        Key::ErrTokenUnnamedHost => "the user has not named that server for it",
        Key::ErrTokenUnnamedHostHint => {
            "ask the user whether {host} is their tracker: if so, they add it to BUTLER_GITEA_HOSTS in Butler's environment (the project's files cannot), or they choose the embedded store with BUTLER_ISSUE_BACKEND=local; then call work_session_start again"
        }
        Key::ErrBodyFieldsNeeded => {
            "An issue body needs the current state, the next action and the blockers"
        }
        Key::ErrBodyFieldsNeededHint => {
            "call issue_create again with body, or with current_state, next_action and blockers"
        }
        Key::ErrNeedsApproval => "This would irreversibly lose work ({total} item(s)): {lost}",
        Key::ErrNeedsApprovalHint => {
            "show the user data.would_lose; only if they approve, call work_vcs again with the same args and approval set to data.approval"
        }
        Key::ErrAgentUnavailable => "The implementation agent cannot be started: {reason}",
        Key::ErrAgentUnavailableHint => {
            "ask the user to install or configure the agent, or call run_implement with another agent"
        }
        Key::ErrTaskRunner => "The task could not run where Butler's runner sends it: {reason}",
        Key::ErrTaskRunnerSetupHint => {
            "ask the user to fix the runner's settings or permissions ([runner] in their configuration; docs/kubernetes.md), then call run_implement again"
        }
        Key::ErrTaskRunnerHint => {
            "tell the user what the cluster said; call run_implement again once it can take the task"
        }
        Key::ErrConfig => "Butler's settings are not usable: {problem}",
        Key::ErrConfigHint => {
            "ask the user to fix the settings (.butler/config.toml or BUTLER_* variables), then call work_session_start again"
        }
        Key::ErrSecretsInWork => "Not recorded: {n} file(s) may hold secrets ({rules})",
        Key::ErrOwnTokenInWorkHint => {
            "take Butler's tracker token out of the files (it can never be recorded), remove any other secret (or ignore the file in .gitignore), then call work_record again"
        }
        Key::ErrSecretsInWorkHint => {
            "take the secrets out (or ignore the files in .gitignore) and call work_record again; only if the user confirms a file holds no real secret, call work_record with allow_sensitive listing it"
        }
        Key::ErrSecretsInRecords => {
            "Not shared: {n} record(s) about to be shared may hold secrets ({rules})"
        }
        Key::ErrSecretsInRecordsHint => {
            "ask the user. Sharing sends these records whole, so a later record that deletes a secret does not help: a real secret must be revoked and taken out of those records by the user (Butler never rewrites them). Only if the user confirms there is no real secret, call work_publish with allow_sensitive listing the paths (or the record ids, for a message)"
        }
        Key::ErrVcsConflict => "The operation conflicts with the project's current state",
        Key::ErrVcsConflictHint => {
            "work_observe names the operation and the conflicted files: edit them to resolve the conflicts, then call work_record to finish it; or give it up as work_observe says"
        }
        Key::ErrVcsAuth => "The other side refused the credentials",
        Key::ErrVcsAuthHint => "ask the user to check their access, then call work_vcs again",
        Key::ErrVcsUnreachable => "The other side could not be reached",
        Key::ErrVcsUnreachableHint => {
            "check the address with work_vcs([\"remote\", \"-v\"]) or the network, then call work_vcs again"
        }
        Key::ErrVcsIdentity => {
            "No author name and email are configured, so new commits cannot be made"
        }
        Key::ErrVcsIdentityHint => {
            "ask the user for their name and email and set them with work_vcs([\"config\", \"user.name\", \"<name>\"]) and work_vcs([\"config\", \"user.email\", \"<email>\"]), then call work_vcs again"
        }
        Key::ErrVcsArguments => "The operation's arguments do not fit together",
        Key::ErrVcsArgumentsHint => {
            "read data.message, fix the arguments, then call work_vcs again"
        }
        Key::ErrVcsNotFound => "What the operation names does not exist",
        Key::ErrVcsNotFoundHint => {
            "read data.message; list what exists (e.g. work_vcs([\"branch\", \"-a\"]), work_vcs([\"tag\"]), work_history), then call work_vcs again"
        }
        Key::ErrVcsFailed => "The version-control operation did not succeed",
        Key::ErrVcsFailedHint => {
            "read data.message (the version-control tool's own words), then fix the arguments or the project's state and call work_vcs again"
        }
        Key::ErrBareRepository => "That project has no working files (a bare repository)",
        Key::ErrBareRepositoryHint => {
            "call work_session_start with a project that has a working tree"
        }
        Key::ErrOutsideProject => "Paths must stay inside the project",
        Key::ErrOutsideProjectHint => {
            "give a path relative to the project root (see work_observe changed_files)"
        }
        Key::ErrHookRejectedHint => {
            "fix what the check reports (see data.output), then call work_record again; if the check changed files itself (a formatter), calling work_record again saves them"
        }
        Key::ErrNoSuchRecord => "No such record",
        Key::ErrGitMissing => "git is not installed on this machine",
        Key::ErrGitMissingHint => "ask the user to install git, then call work_session_start again",
        Key::ErrGitFailed => "The version-control operation failed",
        Key::ErrLedgerBusy => "Another Butler is busy with this project's records",
        Key::ErrLedgerUnusable => "Butler's record store for this project cannot be used",
        Key::ErrLedgerUnusableHint => {
            "ask the user to check .git/butler/ledger.db (moving it aside makes Butler start a new one)"
        }
        Key::ErrLedgerConflict => "The record store disagrees with the request",
        Key::ErrLedgerFailed => "Butler's record store failed",
        Key::ErrLabelNotFoundHint => {
            "use existing label names (see issue_list) or omit label_names"
        }
        Key::ErrInvalidTitle => "The title must be one non-empty line without control characters",
        Key::ErrIssueAuth => "The issue tracker refused Butler's credentials",
        Key::ErrIssueConflict => "The issue changed meanwhile or does not allow this now",
        Key::ErrIssueConflictHint => "read it again with issue_read, then retry",
        Key::ErrWriteUnconfirmed => {
            "The issue tracker did not confirm the change, so it may have been applied"
        }
        Key::ErrRateLimited => "The issue tracker is limiting how often Butler may call it",
        Key::ErrWaitAMinute => "wait a minute",
        Key::CheckIssueCreated => "check with issue_list whether the issue exists",
        Key::CheckCommentThere => {
            "check with issue_read(issue_id, last_n_comments=5) whether the comment is there"
        }
        Key::CheckCommentGone => {
            "check with issue_read(issue_id, last_n_comments=5) whether the comment is gone"
        }
        Key::CheckChangeThere => "check with issue_read(issue_id) whether the change is there",
        Key::ErrHookRejected => "The project's {hook} check refused the record",
        Key::ErrIndexLocked => "Another tool is changing the repository (lock held for {secs} s)",
        Key::ErrIndexLockedHint => {
            "wait and call {tool} again; if it persists and nothing else runs, ask the user to remove .git/index.lock"
        }
        Key::ErrButlerBusy => "Another Butler kept this project's files busy for {secs} s",
        Key::AgainInAMoment => "call {tool} again in a moment",
        Key::ErrLabelNotFound => "Unknown label(s): {names}",
        Key::ErrInvalidTitleHint => "call {tool} again with a short one-line title",
        Key::ErrIssueAuthHint => {
            "ask the user to check Butler's tracker token, then call {tool} again"
        }
        Key::ErrWaitSecs => "wait {secs} s",
        Key::ErrRateLimitedHint => {
            "{wait}, then call {tool} again; work_observe and work_record still work"
        }
        Key::CheckBeforeRepeating => {
            "{check} before calling {tool} again, so nothing is done twice"
        }
        Key::ErrTooLarge => "The issue tracker's answer is larger than Butler reads ({mib} MiB)",
        Key::ErrTooLargeHint => {
            "ask the user to read it in the tracker itself; issue_list with a label filter gives smaller answers"
        }
        Key::ErrIssueFailed => "The issue tracker failed",
        Key::IssueCreated => "Created issue #{issue}.",
        Key::IssueCommented => "Commented on #{issue}.",
        Key::IssueCommentDeleted => "Deleted comment {comment} on #{issue}.",
        Key::IssueRetitled => "Retitled #{issue}.",
        Key::IssueBodyUpdated => "Updated the body of #{issue}.",
        Key::IssueReopened => "Reopened #{issue}.",
        Key::IssueClosed => "Closed #{issue}.",
        Key::IssuesPageOf => "{n} of {total} issue(s), page {page}.",
        Key::IssuesPage => "{n} issue(s), page {page}.",
        Key::NoRecordsYet => "No records yet.",
        Key::NoRecordsTouch => "No records touch {path}.",
        Key::RecordsTouching => "{n} record(s) touching {path}.",
        Key::RecentRecords => "{n} most recent record(s).",
        Key::NothingUnrecordedNote => "Nothing to record: there are no unrecorded changes.",
        Key::AlreadyRecordedNote => "Nothing to record: the work was already recorded.",
        Key::ClearedLockNote => "Cleared a lock left by an interrupted earlier save.",
        Key::AlreadyOnLine => "Already on `{line}`.",
        Key::SwitchedFrom => "Switched to `{line}` (from `{from}`).",
        Key::Switched => "Switched to `{line}`.",
        Key::LineStarted => "Started line `{line}`.",
        Key::LineStartedFrom => "Started line `{line}` from `{from}`.",
        Key::LineCarried => " {n} unrecorded change(s) came along.",
        Key::LineAlreadyIn => "`{line}` already has everything of `{merged}`.",
        Key::LineBroughtIn => "Brought {n} record(s) of `{merged}` into `{line}`.",
        Key::LineMerged => {
            "Merged `{merged}` into `{line}` ({n} record(s)); the merge is record {id}."
        }
        Key::PatchCut => {
            "Cut at {shown} of {total} bytes; narrow it with work_diff(path=…, level=\"full\")."
        }
        Key::PatchTruncated => "Patch of {of} (truncated).",
        Key::Patch => "Patch of {of}.",
        Key::AutoRecorded => "recorded {id}",
        Key::AutoShared => "shared {n} record(s)",
        Key::AutoCommented => "commented on #{issue}",
        Key::AutoClosed => "closed #{issue}",
        Key::AutoJoin => ", ",
        Key::AutoDone => "{steps}.",
        Key::AutoNothing => "Nothing was left to record, share or comment.",
        Key::AutoStaysOpen => " #{issue} stays open (close=true closes it).",
        Key::AutoNoIssue => " No active issue.",
        Key::HookUseInstead => "`{shown}` was blocked. Use {call} instead.",
        Key::HookNoDedicatedTool => {
            "`{shown}` was blocked: direct git is not used in this project. Butler has no dedicated tool for `git {sub}`; use {call} instead."
        }
        Key::HookDirectGit => {
            "`{shown}` was blocked: direct git is not used in this project. Use Butler's tools instead: {overview}."
        }
        Key::HookDynamic => {
            "`{word}` was blocked: the program it runs is only known when it runs, and this command line mentions git. Spell the command out, or use Butler's tools instead: {overview}."
        }
        Key::HookOverviewItem => "{tool}() for {git}",
        Key::HookOverviewOther => "work_vcs([...]) for other git commands",
        Key::BlockOpConflicts => "a {op} stopped on conflicts in {n} file(s)",
        Key::GoalContinueRebase => "continue the rebase",
        Key::GoalContinueAm => "continue applying the patches",
        Key::GoalFinishOp => "finish the {op}",
        Key::GoalSaveResolution => "save the resolution",
        Key::HintBisectReset => "end it with work_vcs([\"bisect\", \"reset\"]) before recording",
        Key::HintEditConflicts => {
            "edit the conflicted files to keep the right content and remove the conflict markers, then call work_record to {goal}"
        }
        Key::HintConflictsResolved => "the conflicts look resolved: call work_record to {goal}",
        Key::HintCallRecordTo => "call work_record to {goal}",
        Key::HintOrGiveUp => "{first}; or give it up with {call}",
        Key::OpFinishedAsRecord => "Finished the {op} as record {id}.",
        Key::OpFinished => "Finished the {op}.",
        Key::OpPausedAgain => "The {op} went on and paused again; call work_record to continue.",
        Key::ErrHookRejectedPublish => "The project's {hook} check refused sharing",
        Key::ErrHookRejectedOther => "The project's {hook} check refused the operation",
        Key::ErrHookRejectedPublishHint => {
            "fix what the check reports (see data.output) and save the fix with work_record, then call work_publish again"
        }
        Key::ErrHookRejectedOtherHint => {
            "fix what the check reports (see data.output), then call {tool} again"
        }
        Key::ReqResolveConflicts => {
            "Resolve the conflicts in {n} file(s) (edit out the markers: {list}), then work_record will {goal}"
        }
        Key::ReqConflictsResolved => "The conflicts look resolved: work_record will {goal}",
        Key::ReqRecordWill => "work_record will {goal}",
        Key::ReqGiveUpInstead => "to give it up instead: {call}",
        Key::ReqBisect => "A bisect is in progress: end it before recording",
        Key::ReqBisectHint => "end it with work_vcs([\"bisect\", \"reset\"])",
        Key::ReqDetached => {
            "The work is not on a line of work: start one here (unrecorded work comes along)"
        }
        Key::ReqDetachedHint => "or go back to an existing line with work_switch_line(name=…)",
        Key::ErrMarkersRemain => "Not recorded: conflict markers remain in {n} file(s): {list}",
        Key::ErrMarkersRemainHint => {
            "edit those files to keep the right content and remove the <<<<<<< ======= >>>>>>> lines, then call work_record again to {goal}"
        }
        Key::WarnStrayMarkers => {
            "Warning: {files} recorded file(s) hold conflict markers (<<<<<<< ======= >>>>>>>) and no conflict is under way: {list}{more}. If they are leftovers, edit them out and record again."
        }
        Key::ErrContractFields => "The Task Contract has {n} wrong field(s): {problems}",
        Key::ErrContractFieldsHint => {
            "fix the fields named in data.fields and call submit_task again; get_skill_usage(\"butler\") shows the contract"
        }
        Key::ErrStepsRefused => "Refused: {n} step problem(s): {problems}",
        Key::ErrStepsNotTaught => "Not taught: {n} step problem(s): {problems}",
        Key::ErrStepsHint => {
            "fix the places named in data.fields and call teach again; get_skill_usage(\"butler\") shows the step kinds"
        }
        Key::ErrUnknownSkill => {
            "Butler knows no procedure or capability for `{intent}` with target `{target}`"
        }
        Key::ErrUnknownSkillHint => {
            "list_skills shows what Butler knows; submit with delegation_mode \"teach_if_unknown\" to teach it"
        }
        Key::ErrNoTask => "No task `{id}`",
        Key::ErrNoTaskHint => "task ids come from submit_task's answer",
        Key::ErrTaskWrongState => "Task {task} is {status}, not {expected}",
        Key::ErrTaskWrongStateHint => "get_status(task_id=\"{task}\") shows where it is",
        Key::ErrNoSkill => "No skill `{name}`",
        Key::ErrNoSkillHint => {
            "list_skills shows the skills; get_skill_usage(\"butler\") the common contract"
        }
        Key::ErrOperationFailed => "The operation could not run",
        Key::ErrDelegationConfig => "Butler's delegation settings are not usable: {problem}",
        Key::ErrDelegationConfigHint => {
            "ask the user to fix [delegation] or [mcp_servers] in .butler/config.toml"
        }
        Key::ErrOpStoppedAgain => {
            "The resolution was saved{saved} and the {op} went on, then stopped on conflicts in {n} file(s)"
        }
        Key::ErrOpStoppedAgainSaved => " (record {id})",
        Key::ErrOpStoppedAgainHint => {
            "edit those files to resolve the conflicts, then call work_record again to continue; or give it up with {call}"
        }
        Key::ErrLineWouldLose => "Changing lines would overwrite {total} ignored file(s): {list}",
        Key::ErrLineWouldLoseHint => {
            "show the user data.would_lose: they can move those files aside, or remove them with work_vcs({args}) (which asks for their approval); then call {tool} again"
        }
        Key::GuardWeakened => "{n} weakened test line(s)",
        Key::GuardStubs => "{n} stub(s)",
        Key::GuardAnd => "{a} and {b}",
        Key::TaskPassedAllowed => {
            "Task {task} passed its checks in {n} attempt(s), with {guards} the task allowed (see weakened_tests and stubs); its work is recorded on line {line}. Read the evidence before task_accept, or drop it with task_discard."
        }
        Key::TaskSucceeded => {
            "Task {task} succeeded in {n} attempt(s); its work is recorded on line {line}. Read the evidence, then accept it with task_accept or drop it with task_discard."
        }
        Key::TaskFailedGuards => {
            "Task {task} failed after {n} attempt(s): its last attempt left {guards} (see weakened_tests and stubs in the evidence). Ask again, do it yourself, or drop it with task_discard."
        }
        Key::TaskFailed => {
            "Task {task} failed after {n} attempt(s); the evidence says why. Ask again, do it yourself, or drop it with task_discard."
        }
        Key::TaskCancelled => {
            "Task {task} was cancelled; its line {line} is kept until task_discard."
        }
        Key::TaskAcceptedMerged => {
            "Task {task} accepted: its {n} record(s) joined the current line with a merge record."
        }
        Key::TaskAccepted => "Task {task} accepted: its {n} record(s) are now on the current line.",
        Key::TaskDiscarded => "Task {task} discarded; its work is kept aside and can be recovered.",
        Key::TaskNotesBody => "Notes from the implementation agent of task {task}:",
        Key::OpApprovalStale => {
            "The approval no longer matches what would happen now (it changed, or the approval expired), so nothing ran. {summary}"
        }
        Key::SkillCommonUsage => "The contract every task shares and the step kinds teach takes.",
        Key::SkillUsage => {
            "How to submit `{name}`: fill in data.example and pass it to submit_task."
        }
        Key::OpAtStep => " at step {n}",
        Key::OpSucceeded => "Task {task} (`{intent}`) succeeded: {n} step(s) passed{verifiers}.",
        Key::OpVerifiersPassed => ", and so did the verifiers",
        Key::OpProcedureStatus => " Procedure {id} is {status}.",
        Key::OpWhyTimedOut => "its time limit ran out",
        Key::OpWhyRefused => "Butler refused a step",
        Key::OpWhyStepFailed => "`{what}` did not pass",
        Key::OpWhyAStepFailed => "a step did not pass",
        Key::OpWhyVerifiers => "its verifiers did not pass",
        Key::OpFailed => {
            "Task {task} (`{intent}`) failed{at}: {why}. The evidence says why; teach a better procedure or do it another way."
        }
        Key::OpDenied => {
            "Task {task} (`{intent}`) ended: the user denied the approval, so nothing more ran."
        }
        Key::OpCancelled => "Task {task} (`{intent}`) was cancelled{at}; nothing after it ran.",
        Key::OpNoProcedure => {
            "Butler knows no procedure for `{intent}` with target `{target}`. Teach one: teach(task_id=\"{task}\", steps=[…]) (get_skill_usage(\"butler\") shows the step kinds); the task then runs."
        }
        Key::OpNeedsInput => "Task {task} (`{intent}`) needs input.",
        Key::OpWaitsApproval => {
            "Task {task} waits for the user's approval ({reference}): {operation}. Ask the user; then approve(task_id=\"{task}\", decision=\"approve\") or decision=\"deny\"."
        }
        Key::OpWaitsApprovalBare => "Task {task} waits for the user's approval.",
        Key::NoteLargeFiles => {
            "Very large file(s): {list}{more}. Once recorded and shared they stay in history for good; if they are generated or data, add them to .gitignore before work_record."
        }
        Key::NoteAndMore => " and {n} more",
        Key::NoteNestedRepository => {
            "{names} is a separate repository inside the project (it has its own .git); records never include it. To keep it out of view, add it to .gitignore; to record its files here, ask the user to remove its .git (its own history is lost) or to make it a submodule."
        }
        Key::NoteSubmoduleWork => {
            "{names} has unrecorded work inside: it is a submodule with its own history, which records of this project do not save. Record it there (work_session_start on its directory), then record here to save the submodule's new commit."
        }
        Key::NotePreparedMessage => {
            "Recorded with the message git prepared for the {op}: \"{subject}\"."
        }
        Key::ErrTaskLine => {
            "`butler/task-{task}` is task {task}'s line; its agent works on it elsewhere"
        }
        Key::ErrTaskLineHint => {
            "bring it in with task_accept(task_id=\"{task}\") or drop it with task_discard"
        }
        Key::ErrLineNoRecords => "The current line has no records yet",
        Key::ErrLineNoRecordsHint => {
            "save work with work_record first, then call work_merge_line again"
        }
        Key::NoteScanPartial => {
            "Only the newest {scanned} of {total} records were checked for secrets before sharing."
        }
        Key::ErrApprovalMismatch => {
            "That approval does not match these arguments and what they would lose now, was used already, or expired"
        }
        Key::ErrApprovalMismatchHint => {
            "call work_vcs again without approval to see what would be lost now, and ask the user again"
        }
        Key::NoteVcsConfigPutBack => "Put back configuration work_vcs may not change: {keys}.",
        Key::SkipNothingToRecord => "nothing to record",
        Key::SkipNoActiveIssue => "no active issue",
        Key::SkipNoNewRecords => "no new records to summarise",
        Key::NoteUndoable => "Undo with work_undo(operation={id}).",
        Key::OplogListed => {
            "{n} operations, newest first; work_undo(operation) restores the project to before one."
        }
        Key::OplogEmpty => "No operations logged yet.",
        Key::Undone => {
            "Undid operation {id} ({tool}): files, index and references are as before it. Undo this with work_undo(operation={undo})."
        }
        Key::UndoneAlready => {
            "Operation {id} ({tool}) left nothing to undo: the project already is as before it."
        }
        Key::UndoneAlso => "Later operations undone with it: {ids}.",
        Key::ErrUndoChangedSince => {
            "Nothing undone: work since operation {id} would be lost ({names})"
        }
        Key::ErrUndoChangedSinceHint => {
            "record that work first (work_record, then undo both), or ask the user whether it may go"
        }
        Key::ErrUndoNoOperation => "No operation {id} in the log",
        Key::ErrUndoNoOperationHint => "work_oplog lists the operations that can be undone",
        Key::ErrUndoUnfinished => "Operation {id} is still running or never finished",
        Key::ErrUndoUnfinishedHint => {
            "wait for it and try again; work_observe shows where the project stands"
        }
        Key::ArgOutOfRange => "{n} is out of range; use {min} to {max}",
        Key::ArgNotBetween => "{n} is not between {min} and {max}",
        Key::ArgMessageEmpty => "it is empty; say in one line what the work does",
        Key::ArgLongerThanChars => "it is longer than {max} characters",
        Key::ArgLongerThanBytes => "it is longer than {max} bytes",
        Key::ArgNulCharacter => "it contains a NUL character",
        Key::ArgNul => "it contains NUL",
        Key::ArgEmpty => "it is empty",
        Key::ArgTooManyIssues => "at most {max} issues can be linked",
        Key::ArgNotIssueNumber => "{n} is not an issue number (a positive integer)",
        Key::ArgNotOperationId => "{n} is not an operation id (a positive integer)",
        Key::ArgNotPage => "{p} is not a page number",
        Key::ArgRecordId => "use a record id such as 20260612-001-kqrt (see work_history)",
        Key::ArgMergeCurrentLine => "`{name}` is the current line; name another line to merge",
        Key::ArgGiveMessage => "give the record's message (what the work does, in one line)",
        Key::NoteSparseRecorded => {
            "{n} file(s) outside the sparse checkout's directories were recorded too: {list}."
        }
        Key::NoteHookChangedMeanwhile => {
            "The project's {hooks} hook changed {n} file(s) while recording without saving the change: {list}. The record holds them as they were; the hook's changes are unrecorded now (save them with work_record)."
        }
        Key::NoteMessageRewritten => {
            "The project's commit-msg hook rewrote the message; history and the record show the rewritten one."
        }
        Key::NoteTrailerDropped => {
            " It dropped Butler's record trailer: Butler still knows the record by its commit."
        }
        Key::NoteIssueRefsDropped => {
            " It dropped the issue reference(s) {refs}: the tracker will not link them to this record."
        }
        Key::AndMore => " and {more} more",
        Key::ArgProjectPath => "give the project's absolute path",
        Key::ArgNotAbsolute => "`{root}` is not an absolute path",
        Key::VcsWhyOverridesConfig => {
            "overrides configuration, which can name programs for git to run"
        }
        Key::VcsWhyExecPath => "points git at other programs",
        Key::VcsWhyStartsPager => "starts a pager",
        Key::VcsWhyPointsElsewhere => {
            "points git at another repository, directory or view of this one: work_vcs always runs in the project"
        }
        Key::VcsWhyNotGlobal => "is not a git option before the subcommand",
        Key::VcsWhyNotOfferedOption => "is not offered by work_vcs",
        Key::VcsWhyShares => "shares or exports work outside work_publish",
        Key::VcsWhyRunsPrograms => "runs other programs",
        Key::VcsWhyCreatesRepository => {
            "creates a repository, outside the project or nested inside it"
        }
        Key::VcsWhyRunsEveryStep => "runs a program at every step",
        Key::VcsWhyHistoryViewer => "starts a history viewer",
        Key::VcsWhyReplaysLog => "replays a log file",
        Key::VcsWhyOldSpelling => "is the old spelling",
        Key::VcsWhyOpensEditor => "opens an editor",
        Key::VcsWhyRewritesSections => "rewrites whole sections",
        Key::VcsWhyNotAmongOffered => "is not among the operations work_vcs offers",
        Key::VcsWhyNotClassified => "is not classified",
        Key::VcsWhyGpg => "runs gpg to sign or verify",
        Key::VcsWhyTextconv => "runs text conversion programs",
        Key::VcsWhyExtDiff => "runs an external diff program",
        Key::VcsWhyUploadPack => "names a program to run on the other side",
        Key::VcsWhyShowPatch => {
            "shows the patch through the diff programs configured for people's terminals; use work_diff"
        }
        Key::VcsWhyInteractive => "is interactive: it waits for a person at a terminal",
        Key::VcsWhySubmodules => {
            "also changes the submodules' files, whose edits Butler does not account for"
        }
        Key::VcsWhyShallow => "makes the repository shallow (it changes what the repository is)",
        Key::VcsWhyFromFile => "reads the paths from a file: give them as arguments instead",
        Key::VcsWhyWritesFile => "writes a file",
        Key::VcsWhyCustomFormat => {
            "custom formats can verify signatures with gpg; use --oneline or the default"
        }
        Key::VcsWhyFetchForce => {
            "overwrites local tags and references without asking: ask the user"
        }
        Key::VcsWhyPruneTags => "deletes local tags the other side does not have",
        Key::VcsWhyRefmap => "maps fetched references onto local ones",
        Key::VcsWhyConfigSections => "rewrites whole sections: set or unset single keys instead",
        Key::VcsWhyConfigOutside => "writes configuration outside the project's own (.git/config)",
        Key::VcsWhyBisectTerms => "renames the bisect verbs; use good/bad",
        Key::VcsWhyFilters => "runs content filter programs",
        Key::VcsWhyPager => "opens the files in a pager",
        Key::VcsWhyInternal => "is internal to git",
        Key::VcsWhyMovesHead => "may move the checked-out branch under its files",
        Key::VcsWhyPartialClone => "turns the repository into a partial clone",
        Key::VcsWhyShellAfterCommit => "runs a shell command after each commit",
        Key::VcsWhyMirror => "makes later fetches overwrite local branches and tags",
        Key::VcsWhyStdin => "reads its instructions from input, which work_vcs does not give",
        Key::VcsHintAskUser => {
            "if it is really needed, ask the user to run it themselves; see docs/work-vcs.md for what work_vcs offers"
        }
        Key::VcsHintGlobal => {
            "leave out the option; work_vcs runs git in the project with the project's own configuration, and paths are relative to the project's top"
        }
        Key::VcsHintShare => "share recorded work with work_publish",
        Key::VcsHintStashPush => "use work_vcs([\"stash\", \"push\", \"-m\", \"<message>\"])",
        Key::VcsHintSingleKeys => "set or unset single keys instead",
        Key::VcsHintAllowList => {
            "see docs/work-vcs.md for the allow-list; aliases and external commands are never run"
        }
        Key::VcsHintSpelling => {
            "check the spelling: work_vcs accepts the options the installed git has for `{shown}` (any unambiguous prefix), except those docs/work-vcs.md lists as refused"
        }
        Key::VcsHintNoPrograms => {
            "leave the option out; work_vcs never runs editors, pagers, signing programs or commands of the caller's choosing"
        }
        Key::VcsHintRelativePaths => {
            "give paths relative to the project's top, without `..` above it, `~` or absolute paths"
        }
        Key::VcsHintPathInside => "give a path inside the project, relative to its top",
        Key::VcsHintAddress => "use an https://, ssh:// or git:// address, or a path",
        Key::VcsHintFetchThen => {
            "fetch the remote (work_vcs([\"fetch\", \"<remote>\"])), then use branch, merge or switch"
        }
        Key::VcsHintStrategies => "use one of {list}",
        Key::VcsHintRebaseModes => "use --rebase or --rebase=merges",
        Key::VcsHintProjectConfig => "write to the project's configuration (leave the option out)",
        Key::VcsHintUserSettings => {
            "other settings (programs, hooks, pagers, URL rewrites, includes, repository format) are the user's to change"
        }
        Key::VcsHintRebaseValues => "use true, false or merges",
        Key::VcsHintDeleteBranch => {
            "delete a branch with work_vcs([\"branch\", \"-d\", \"<name>\"])"
        }
        Key::VcsHintFullRef => "e.g. refs/heads/<branch> or refs/tags/<tag>",
        Key::VcsHintIgnoreWorktree => {
            "add the directory to .gitignore first, or ask the user to create the worktree elsewhere"
        }
        Key::VcsGlobalRefused => "`{option}` is refused: it {why}",
        Key::VcsSubcommandRefused => "`git {shown}` is refused: it {why}",
        Key::VcsNotOffered => "`git {sub}` is not among the operations work_vcs offers",
        Key::VcsUnknownOption => "`{word}` is not an option `git {shown}` accepts here",
        Key::VcsOptionRefused => "`{spelled}` is refused for `git {shown}`: it {why}",
        Key::VcsPathOutside => "the path `{spec}` is outside the project",
        Key::VcsOpenedOutside => {
            "`{what}`: `{path}` is outside the project once its symbolic links are followed"
        }
        Key::VcsFileOutside => "`{what}`: the file `{path}` is outside the project",
        Key::VcsTransportUrl => {
            "`{url}` is refused: `{transport}::` addresses run a transport program"
        }
        Key::VcsHelperUrl => "`{url}` is refused: `{scheme}://` addresses run a helper program",
        Key::VcsRefspec => "the refspec `{spec}` is refused: it writes local references directly",
        Key::VcsStrategy => {
            "the merge strategy `{name}` is refused: strategies other than git's own are programs"
        }
        Key::VcsPullInteractive => {
            "`--rebase=interactive` is refused: it is interactive: it waits for a person at a terminal"
        }
        Key::VcsAmStates => {
            "`git am` is offered only to continue, skip, abort or quit a patch series in progress"
        }
        Key::VcsConfigOutside => {
            "`--{option}` is refused for writing: it writes configuration outside the project's own (.git/config)"
        }
        Key::VcsConfigKey => "setting `{key}` is refused: work_vcs writes only these keys: {keys}",
        Key::VcsConfigInteractive => {
            "`{setting}` is refused: interactive rebases wait for a person at a terminal"
        }
        Key::VcsDeleteHead => {
            "deleting HEAD with update-ref is refused: it leaves the project without a current branch"
        }
        Key::VcsNotFullRef => "`{reference}` is refused: name a full reference (refs/…) or HEAD",
        Key::VcsWorktreeNotIgnored => {
            "the worktree path `{path}` is refused: inside the project it must be an ignored directory, or it would be recorded as part of the project"
        }
        Key::VcsNoArgs => "give the git arguments as a list, e.g. [\"branch\", \"-a\"]",
        Key::VcsEmptyArg => "an argument is an empty string",
        Key::VcsNulArg => "an argument contains a NUL byte",
        Key::VcsLeadingGit => "leave out the leading `git`: pass e.g. [\"branch\", \"-a\"]",
        Key::VcsNotGitOption => "`{option}` is not a git option",
        Key::VcsNoSubcommand => "no git subcommand given",
        Key::VcsNotASubcommand => "`{word}` is not a `{sub}` subcommand",
        Key::VcsNameASubcommand => "name a `{sub}` subcommand (one of {choices})",
        Key::VcsRemoteOptionsFirst => "only `remote`'s own options may come before its subcommand",
        Key::VcsAmbiguous => "`{word}` is ambiguous for `git {shown}`: it could be {candidates}",
        Key::VcsOr => " or ",
        Key::VcsMissingValue => "`{option}` needs a value",
        Key::VcsUnexpectedValue => "`{option}` takes no value",
        Key::VcsEndOfOptions => {
            "`--end-of-options` is not supported: arguments that start with `-` are not accepted as names"
        }
        Key::VcsDashName => {
            "`{arg}` is not an option of `git {shown}`, and names starting with `-` are not accepted"
        }
        Key::VcsGrepPatternFirst => {
            "give the pattern before `--` (or with -e): after `--` come paths"
        }
        Key::VcsBranchAndPaths => "a new branch and paths cannot be given together",
        Key::VcsOneRevision => "give at most one revision before `--`",
        Key::VcsNeitherRevNorFile => {
            "`{word}` is neither a revision nor a file here; put paths that do not exist after `--`"
        }
        Key::VcsAnnotatedTag => "an annotated tag needs its message: add -m \"<message>\"",
        Key::StepGitProperWay => {
            "`git {subcommand}` has a proper way: submit the `git_commit`, `git_push`, `commit_push` or `git_pull` intent, or leave it to the Brain's work_* tools"
        }
        Key::StepGitRefused => "{reason} ({hint})",
        Key::CfgSetting => "{setting}: {detail}",
        Key::CfgSandboxMode => "`{value}` is not one of {choices}",
        Key::CfgUnknownAgent => "`agent` = `{name}` is unknown (known: {known})",
        Key::CfgDenyRead => "`{entry}` is neither an absolute path nor one starting with `~/`",
        Key::CfgNetworkProxy => "`proxy` is for agents; procedures take `open` or a list of ports",
        Key::CfgTrackerToken => {
            "the issue backend is set to `gitea` but no token is set; set `{variable}`"
        }
        Key::CfgTrackerUrl => {
            "the issue backend is set to `gitea` but the server is unknown; set `{variable}` or add a git remote on the server"
        }
        Key::ListJoin => ", ",
        Key::CfgTrackerRepo => {
            "the issue backend is set to `gitea` but the repository is unknown; set `repo` in `.butler/config.toml` or add a git remote on the server"
        }
        Key::ProcedureStored => {
            "Procedure {id} for `{intent}` ({target}) stored as {status}{replacing}."
        }
        Key::ProcedureNoTarget => "no target",
        Key::ProcedureReplacing => ", replacing procedure {old}",
        Key::ProcedureApprovalEachRun => {
            " {n} step(s) will wait for the user's approval on every run."
        }
        Key::DelegatedTaskIs => "Task {task} is {state}{more}.",
        Key::DelegatedTaskIsThen => "Task {task} is {state}. {summary}",
        Key::DelegatedStepsDone => " ({n} step(s) done so far)",
        Key::SkillsListed => {
            "{capabilities} capabilit(y/ies) and {procedures} taught procedure(s). get_skill_usage(name) shows one's contract."
        }
        Key::UsageGitCommit => "Saves all current work as one record (as work_record does).",
        Key::UsageGitPush => {
            "Shares recorded work with the shared destination (as work_publish does)."
        }
        Key::UsageCommitPush => {
            "Records all current work, then shares every record with the shared destination."
        }
        Key::UsageGitPull => {
            "Brings in the shared destination's new records when that loses nothing (fast-forward only)."
        }
        Key::UsageImplement => {
            "An implementation agent changes the target paths under supervision; verified by the success_criteria; then task_accept or task_discard."
        }
        Key::UsageContext => {
            "Where the work stands, the open delegated tasks and what Butler can run, in one small answer."
        }
        Key::UsageFieldMessage => "what the work does, one line",
        Key::UsageFieldGoal => "what to achieve",
        Key::UsageFieldSpec => "behaviour, interfaces, constraints",
        Key::UsageFieldTargetPaths => "files, directories or globs it may change (a list)",
        Key::UsageApprovalListed => "when listed in require_approval_for",
        Key::UsageApprovalAlways => "always: the user approves each time",
        Key::PlanRecord => "record all current work as \"{message}\"",
        Key::PlanShare => "share the recorded work with {destination}",
        Key::PlanRecordShare => {
            "record all current work as \"{message}\", then share every record with {destination}"
        }
        Key::PlanImplement => "implement: {subject}",
        Key::PlanReadContext => "read where the work stands",
        Key::StepPull => "bring in the shared destination's new records (fast-forward only)",
        Key::StepToRecord => "to record: {path} ({id})",
        Key::StepDestination => "destination: {destination}",
        Key::StepUnpublished => "{n} record(s) now unpublished{list}",
        Key::StepNoDestination => "no shared destination",
        Key::StepRecordAll => "record all current work: {message}",
        Key::StepRecordedAs => "recorded as {id} ({n} changed path(s))",
        Key::StepNothingToRecord => "nothing to record",
        Key::StepShareWith => "share records with {destination}",
        Key::StepShared => "{n} record(s) shared",
        Key::StepShareRecords => "share records",
        Key::StepSharingProgress => "sharing the records",
        Key::OpWhatRecord => "record",
        Key::OpWhatFinish => "finish the work",
        Key::OpWhatNewLine => "new line {name}",
        Key::OpWhatSwitchLine => "switch to line {name}",
        Key::OpWhatMergeLine => "merge line {name}",
        Key::OpWhatMergeBack => "merge this line into the one it came from",
        Key::OpWhatAccept => "accept the task",
        Key::OpWhatDiscard => "discard the task",
        Key::OpWhatUndo => "undo operation {id}",
        Key::OpWhatUndoNewest => "undo the newest operation",
        Key::ContractEmptyGoal => "`goal` is empty: say what the task must achieve",
        Key::ContractTooLong => "`{field}` is too long ({len} characters, at most {max})",
        Key::ContractNoTargets => {
            "`target_paths` is empty: name the files, directories or globs the task may change"
        }
        Key::ContractTooMany => "`{field}` has too many entries ({len}, at most {max})",
        Key::ContractBadPath => "target path `{path}` is not allowed: {reason}",
        Key::ContractBadTimeout => "`timeout_s` = {n} is out of range ({min}..={max} seconds)",
        Key::ContractEmptyTestCommand => "`test_commands` entry {index} is empty",
        Key::ContractBadFileCheck => "`file_checks` entry {index} ({path}): {reason}",
        Key::ContractBadTaskId => "task id `{id}` is not usable in a branch name",
        Key::ContractBadIntent => {
            "intent `{intent}` is not a name (lower-case letters, digits and `_`)"
        }
        Key::ContractNotImplementation => {
            "the task's intent is `{intent}`; only `implement` tasks are run by an agent here"
        }
        Key::AgentCannotLaunch => "agent `{agent}` cannot be launched: {reason}",
        Key::AgentNeedsSetting => {
            "agent `{agent}` needs `{what}`: set it in Butler's config or `{env}`"
        }
        Key::AgentWorkerCommand => "the worker MCP command cannot be passed to the agent: {detail}",
        Key::AgentSandboxUnavailable => {
            "the sandbox is required but cannot be applied: {detail}; set `[agent] sandbox = \"auto\"` to run unconfined"
        }
        Key::NoteOpPausedAgain => {
            "The {op} paused again without a conflict; call work_record to go on."
        }
        Key::NoteStepSkipped => {
            "Once resolved, this step of the {op} changes nothing: it was skipped."
        }
        Key::NoteReplayKeepsMessages => {
            "A {op} keeps each record's own message: the message given was not used."
        }
        Key::NoteSparseSaved => {
            "{n} file(s) outside the sparse checkout's directories were saved too: {list}."
        }
        Key::VcsDone => "work_vcs([{args}]) done.",
        Key::VcsNothingMatched => "work_vcs([{args}]): nothing matched.",
        Key::MarkersAtLine => "{path} (line {lines})",
        Key::MarkersAtLines => "{path} (lines {lines})",
        Key::ArgLineEmpty => "it is empty; name a line",
        Key::ArgLineDash => "a line name does not start with `-`",
        Key::ArgNotLineName => "that is not a line name",
    }
}
