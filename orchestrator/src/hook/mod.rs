//! `butler git-hook`: Claude Code's `PreToolUse` hook for the Bash tool. The policy — what is
//! blocked, what passes, the wrappers known, code in other languages, command words computed at
//! run time — is written out in `docs/hook.md`.
//!
//! It reads the hook JSON on stdin and denies any Bash command that would start git anywhere in
//! it, naming the Butler tool to use instead ("`git status` was blocked. Use work_observe()
//! instead."). Everything else passes untouched: other tools, and commands where `git` is only
//! data (`echo git`, `grep -r git src`, a quoted here-doc written to a file).
//!
//! # The parser: brush-parser
//!
//! Commands are parsed with [`brush_parser`], the parser of the brush shell (a bash clone in
//! Rust). It was chosen over the alternatives because:
//! - it covers bash, not only POSIX sh: `[[ … ]]`, `$'…'`, process substitution, `coproc`,
//!   `function f { }`, arithmetic commands, here-strings (yash-syntax is POSIX-only and its
//!   API is async; conch-parser has been unmaintained since 2017 and lacks much of bash);
//! - it fails loudly: a syntax error is an `Err`, where tree-sitter-bash recovers silently
//!   into `ERROR` nodes and would need a C toolchain;
//! - it is pure Rust, and its word parser splits a word into quoted text, escapes, parameter
//!   expansions and command substitutions, which is exactly what de-quoting `g\it` and finding
//!   `$(git …)` inside `"…"` need.
//!
//! brush-parser is a recursive PEG parser, so inputs that are very large or very deeply nested
//! are not handed to it: they go to the linear [`fallback`] scan, and the parse runs on a thread
//! with a large stack and a deadline. A command that cannot be parsed is blocked only when a
//! de-quoted `git` word stands where a command could start.
//!
//! # Fail-closed output
//!
//! Claude Code lets the command run when the hook exits 1 or prints something that is not JSON.
//! So every internal failure still ends in a decision: a panic or a timeout falls back to the
//! scan, and a deny found that way is given as exit 2 with the reason on stderr.

mod braces;
mod fallback;
mod getopt;
pub mod git_cli;
mod glob;
mod interpreters;
mod output;
mod parameter;
pub(crate) mod programs;
mod runs;
mod suggest;
pub(crate) mod walk;
mod wrappers;

use std::io::{Read, Write};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::mpsc;
use std::time::Duration;

pub use suggest::{replacement_call, work_vcs_call};

/// Hook input larger than this is not parsed as JSON; it is scanned as text.
const MAX_STDIN_BYTES: u64 = 16 * 1024 * 1024;
/// The parse of one command gets this long before the scan decides instead.
const ANALYSIS_DEADLINE: Duration = Duration::from_secs(2);
/// Stack of the parsing thread: the parser recurses once per nesting level.
const PARSER_STACK_BYTES: usize = 256 * 1024 * 1024;

/// What the hook decides about one Bash command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// The command does not start git: let it run.
    Allow,
    /// The command would start git.
    Deny {
        /// What was blocked.
        blocked: Blocked,
        /// The message for the Brain, naming the Butler tool to use instead.
        reason: String,
    },
}

/// What a denied command would have run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Blocked {
    /// git. `subcommand` is named after git's global options (`git -C x log` → `log`); empty
    /// for a bare `git`; `…` when it is only known at run time.
    Git { subcommand: String },
    /// A command word known only at run time (`$GIT status`), on a line that mentions git.
    DynamicCommand { word: String },
}

/// Decide whether running `command` in bash would start git anywhere in it.
pub fn analyze(command: &str) -> Decision {
    analyze_reporting_failure(command).0
}

/// The decision, and whether it came from the fallback after an internal failure (panic or
/// deadline) rather than from a finished analysis.
fn analyze_reporting_failure(command: &str) -> (Decision, bool) {
    let (tx, rx) = mpsc::channel();
    let owned = command.to_owned();
    let spawned = std::thread::Builder::new()
        .name("git-hook-parse".to_owned())
        .stack_size(PARSER_STACK_BYTES)
        .spawn(move || {
            let result = catch_unwind(AssertUnwindSafe(|| walk::find_git(&owned)));
            // The receiver may have given up after the deadline; nothing to do then.
            let _ = tx.send(result);
        });
    let outcome = match spawned {
        Ok(_) => rx.recv_timeout(ANALYSIS_DEADLINE).ok().and_then(Result::ok),
        Err(_) => None,
    };
    match outcome {
        Some(found) => (decision_for(found), false),
        None => (
            decision_for(scan_without_parsing(command).map(walk::Found::Git)),
            true,
        ),
    }
}

fn scan_without_parsing(text: &str) -> Option<Vec<String>> {
    programs::new_analysis();
    catch_unwind(|| fallback::git_in_command_position(text)).unwrap_or_else(|_| {
        // Even the scan failed: the plainest test left.
        text.split(|c: char| !c.is_ascii_alphanumeric() && c != '-' && c != '_')
            .any(|w| w == "git")
            .then(Vec::new)
    })
}

fn decision_for(found: Option<walk::Found>) -> Decision {
    match found {
        None => Decision::Allow,
        Some(walk::Found::Git(args)) => {
            let inv = git_cli::parse(&args);
            Decision::Deny {
                blocked: Blocked::Git {
                    subcommand: inv.subcommand.clone().unwrap_or_default(),
                },
                reason: suggest::deny_reason(&inv),
            }
        }
        Some(walk::Found::Dynamic(word)) => Decision::Deny {
            reason: suggest::dynamic_reason(&word),
            blocked: Blocked::DynamicCommand { word },
        },
    }
}

/// Run the hook on this process's stdin/stdout: read the `PreToolUse` JSON (at most 16 MiB),
/// write a deny JSON or nothing, and return the exit code (0, or 2 for a deny after an internal
/// failure, with the reason on stderr). The reason is in the project's language (the hook has
/// no session: the project's file, else `BUTLER_LANG`).
pub fn run_stdio() -> i32 {
    let mut input = Vec::new();
    let read = std::io::stdin()
        .lock()
        .take(MAX_STDIN_BYTES + 1)
        .read_to_end(&mut input);
    // Unreadable or too long: scanned without parsing, and answered on stderr.
    let unread = read.is_err() || input.len() as u64 > MAX_STDIN_BYTES;
    let decide = || {
        if unread {
            let text = String::from_utf8_lossy(&input);
            (
                decision_for(scan_without_parsing(&text).map(walk::Found::Git)),
                true,
            )
        } else {
            decide_input(&input)
        }
    };
    // Most commands are allowed: the project's language (a file read) is looked up only to
    // word a denial, by deciding again in that language (decisions are pure).
    if !matches!(decide().0, Decision::Deny { .. }) {
        return 0;
    }
    let project = std::env::var_os("CLAUDE_PROJECT_DIR")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_default();
    let lang = crate::catalogue::Lang::configured(&project);
    let (decision, failed) = crate::catalogue::sync_scope(lang, decide);
    let Decision::Deny { reason, .. } = decision else {
        return 0;
    };
    if !failed {
        let mut stdout = std::io::stdout().lock();
        let written = stdout
            .write_all(deny_json(&reason).as_bytes())
            .and_then(|()| stdout.flush());
        if written.is_ok() {
            return 0;
        }
    }
    let mut stderr = std::io::stderr().lock();
    // Exit 2 blocks whether or not the reason reached stderr.
    let _ = writeln!(stderr, "{reason}");
    2
}

/// The decision for one hook input, and whether it came from a failure path.
fn decide_input(input: &[u8]) -> (Decision, bool) {
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(input) else {
        let text = String::from_utf8_lossy(input);
        return (
            decision_for(scan_without_parsing(&text).map(walk::Found::Git)),
            true,
        );
    };
    if value.get("tool_name").and_then(|t| t.as_str()) != Some("Bash") {
        return (Decision::Allow, false);
    }
    let command = value
        .get("tool_input")
        .and_then(|i| i.get("command"))
        .and_then(|c| c.as_str());
    match command {
        Some(command) => analyze_reporting_failure(command),
        None => (Decision::Allow, false),
    }
}

/// The JSON document that denies the tool call, with a trailing newline.
pub fn deny_json(reason: &str) -> String {
    let doc = serde_json::json!({
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        }
    });
    format!("{doc}\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deny_names_subcommand_and_tool() {
        let Decision::Deny { blocked, reason } = analyze("cd /tmp && git -C x --no-pager status")
        else {
            panic!("git status must be denied");
        };
        assert_eq!(
            blocked,
            Blocked::Git {
                subcommand: "status".into()
            }
        );
        assert_eq!(
            reason,
            "`git status` was blocked. Use work_observe() instead."
        );
    }

    #[test]
    fn other_tools_and_data_pass() {
        let input = br#"{"tool_name":"Read","tool_input":{"file_path":"/x/git"}}"#;
        assert_eq!(decide_input(input), (Decision::Allow, false));
        assert_eq!(analyze("echo git"), Decision::Allow);
    }

    #[test]
    fn unknown_fields_are_ignored() {
        let input = br#"{"session_id":"s","effort":{"level":"x"},"tool_name":"Bash",
            "tool_input":{"command":"git log -3","description":"d","timeout":5},"new":1}"#;
        let (decision, failed) = decide_input(input);
        assert!(!failed);
        assert!(matches!(decision, Decision::Deny {
            blocked: Blocked::Git { subcommand }, ..
        } if subcommand == "log"));
    }

    #[test]
    fn deny_json_has_the_protocol_shape() {
        let doc: serde_json::Value = serde_json::from_str(&deny_json("r")).expect("valid JSON");
        assert_eq!(doc["hookSpecificOutput"]["permissionDecision"], "deny");
        assert_eq!(doc["hookSpecificOutput"]["hookEventName"], "PreToolUse");
        assert_eq!(doc["hookSpecificOutput"]["permissionDecisionReason"], "r");
    }

    #[test]
    fn invalid_json_input_falls_back_to_scanning() {
        let (decision, failed) = decide_input(b"not json; git status");
        assert!(failed);
        assert!(matches!(decision, Decision::Deny { .. }));
        assert_eq!(decide_input(b"not json"), (Decision::Allow, true));
    }
}
