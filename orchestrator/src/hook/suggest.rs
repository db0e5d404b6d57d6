//! What to tell the Brain instead of running git: the Butler call that replaces a git command.
//!
//! The tool names come from [`crate::equivalents`]; this module only maps arguments
//! (`git log -5 -- src/` → `work_history(n=5, path="src/")`). Every message the hook gives the
//! Brain is built here (and only here), so that they can move to a message catalogue together.

use super::git_cli::GitInvocation;
use crate::catalogue::{Key, fill, text};
use crate::equivalents;
use crate::tool::Tool;

/// The Butler call that replaces `inv`, written as the Brain would type it, e.g.
/// `work_diff(path="src/a.rs")` or `work_vcs(["branch", "-a"])`.
pub fn replacement_call(inv: &GitInvocation) -> String {
    let sub = inv.subcommand.as_deref().unwrap_or("");
    let Some(decl) = equivalents::proper_tool(sub, &inv.rest) else {
        return work_vcs_call(&inv.command_args());
    };
    let params = match decl.tool {
        Tool::WorkDiff if sub == "show" => show_params(&inv.rest),
        Tool::WorkDiff => diff_params(&inv.rest),
        Tool::WorkHistory => history_params(&inv.rest),
        Tool::WorkRecord if sub == "commit" => commit_params(&inv.rest),
        Tool::WorkRecord => vec![("message", quote("…"))],
        Tool::WorkNewLine | Tool::WorkSwitchLine | Tool::WorkMergeLine => {
            equivalents::suggested_params(decl.tool, &inv.rest)
        }
        _ => Vec::new(),
    };
    let params: Vec<String> = params
        .into_iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    format!("{}({})", decl.tool, params.join(", "))
}

/// `work_vcs([...])` with the arguments as a JSON list.
pub fn work_vcs_call(args: &[String]) -> String {
    let list = serde_json::to_string(args).expect("a list of strings always serializes");
    format!("{}({})", Tool::WorkVcs, list.replace("\",\"", "\", \""))
}

/// The full deny reason for the Brain.
pub fn deny_reason(inv: &GitInvocation) -> String {
    let shown = shown_command(inv);
    let sub = inv.subcommand.as_deref().unwrap_or("");
    if sub.is_empty() || sub.contains('…') {
        return fill(
            Key::HookDirectGit,
            &[("shown", &shown), ("overview", &tool_overview())],
        );
    }
    let call = replacement_call(inv);
    if equivalents::proper_tool(sub, &inv.rest).is_some() {
        fill(Key::HookUseInstead, &[("shown", &shown), ("call", &call)])
    } else {
        fill(
            Key::HookNoDedicatedTool,
            &[("shown", &shown), ("sub", &sub), ("call", &call)],
        )
    }
}

/// The deny reason for a command word known only at run time on a line that mentions git.
pub fn dynamic_reason(word: &str) -> String {
    let mut word = word.replace('`', "'");
    if word.chars().count() > 80 {
        word = word.chars().take(77).collect::<String>() + "...";
    }
    fill(
        Key::HookDynamic,
        &[("word", &word), ("overview", &tool_overview())],
    )
}

/// `work_observe() for status, work_diff() for diff/show, …, work_vcs([...]) for other git
/// commands`, from the registry of git equivalents.
fn tool_overview() -> String {
    let mut parts: Vec<String> = equivalents::REGISTRY
        .iter()
        .map(|decl| {
            fill(
                Key::HookOverviewItem,
                &[("tool", &decl.tool), ("git", &decl.git.join("/"))],
            )
        })
        .collect();
    parts.push(text(Key::HookOverviewOther).to_owned());
    parts.join(", ")
}

fn shown_command(inv: &GitInvocation) -> String {
    let mut shown = String::from("git");
    for arg in inv.command_args() {
        shown.push(' ');
        if arg.is_empty() || arg.contains(char::is_whitespace) {
            shown.push_str(&format!("\"{arg}\""));
        } else {
            shown.push_str(&arg);
        }
        if shown.len() > 120 {
            let cut = shown
                .char_indices()
                .map(|(i, _)| i)
                .take_while(|&i| i <= 117)
                .last();
            shown.truncate(cut.unwrap_or(0));
            shown.push_str("...");
            break;
        }
    }
    shown.replace('`', "'")
}

fn quote(s: &str) -> String {
    serde_json::to_string(s).expect("a string always serializes")
}

/// Paths after `--`, or arguments that look like paths rather than revisions.
fn paths(rest: &[String]) -> Vec<&str> {
    if let Some(pos) = rest.iter().position(|a| a == "--") {
        return rest[pos + 1..].iter().map(String::as_str).collect();
    }
    rest.iter()
        .map(String::as_str)
        .filter(|a| !a.starts_with('-') && looks_like_path(a))
        .collect()
}

fn looks_like_path(arg: &str) -> bool {
    if arg.contains("..") || arg.contains('~') || arg.contains('^') || arg.contains('@') {
        return false;
    }
    if arg == "HEAD" || arg.starts_with("HEAD") || looks_like_sha(arg) {
        return false;
    }
    arg.contains('/') || arg.contains('.')
}

fn looks_like_sha(arg: &str) -> bool {
    arg.len() >= 7 && arg.len() <= 64 && arg.chars().all(|c| c.is_ascii_hexdigit())
}

fn diff_params(rest: &[String]) -> Vec<(&'static str, String)> {
    let summary = [
        "--stat",
        "--shortstat",
        "--numstat",
        "--name-only",
        "--name-status",
    ];
    if let Some(path) = paths(rest).first() {
        return vec![("path", quote(path))];
    }
    if rest
        .iter()
        .any(|a| summary.iter().any(|s| a.starts_with(s)))
    {
        return Vec::new();
    }
    vec![("level", quote("full"))]
}

/// `git show <commit>` → the record of that commit; record ids accept commit ids, and names
/// such as `HEAD~2` have none, so they become a placeholder the Brain fills from work_history.
fn show_params(rest: &[String]) -> Vec<(&'static str, String)> {
    let commit = rest
        .iter()
        .find(|a| !a.starts_with('-'))
        .map(String::as_str)
        .unwrap_or("");
    let commit = commit.split(':').next().unwrap_or(commit);
    if looks_like_sha(commit) {
        vec![("record_id", quote(commit))]
    } else {
        vec![("record_id", quote("…"))]
    }
}

fn history_params(rest: &[String]) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    if let Some(n) = max_count(rest) {
        out.push(("n", n.to_string()));
    }
    if let Some(path) = paths(rest).first() {
        out.push(("path", quote(path)));
    }
    out
}

fn max_count(rest: &[String]) -> Option<u64> {
    let mut iter = rest.iter().take_while(|a| a.as_str() != "--");
    while let Some(arg) = iter.next() {
        let value = if arg == "-n" || arg == "--max-count" {
            iter.next().map(String::as_str)
        } else if let Some(v) = arg.strip_prefix("--max-count=") {
            Some(v)
        } else if let Some(v) = arg.strip_prefix("-n") {
            Some(v)
        } else {
            arg.strip_prefix('-')
        };
        if let Some(n) = value.and_then(|v| v.parse::<u64>().ok()) {
            return Some(n);
        }
    }
    None
}

fn commit_params(rest: &[String]) -> Vec<(&'static str, String)> {
    let mut messages = Vec::new();
    let mut iter = rest.iter().take_while(|a| a.as_str() != "--");
    while let Some(arg) = iter.next() {
        if arg == "--message" {
            messages.extend(iter.next().cloned());
        } else if let Some(m) = arg.strip_prefix("--message=") {
            messages.push(m.to_owned());
        } else if arg.starts_with('-') && !arg.starts_with("--") {
            // A short-option cluster: `-m x`, `-mx`, `-am x`.
            if let Some(pos) = arg.find('m') {
                let attached = &arg[pos + 1..];
                if attached.is_empty() {
                    messages.extend(iter.next().cloned());
                } else {
                    messages.push(attached.to_owned());
                }
            }
        }
    }
    let message = if messages.is_empty() {
        "…".to_owned()
    } else {
        messages.join("\n\n")
    };
    vec![("message", quote(&message))]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hook::git_cli;

    fn call(args: &[&str]) -> String {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        replacement_call(&git_cli::parse(&args))
    }

    #[test]
    fn maps_arguments_to_butler_parameters() {
        assert_eq!(
            call(&["log", "-5", "--", "src/"]),
            r#"work_history(n=5, path="src/")"#
        );
        assert_eq!(call(&["log", "-n", "3"]), "work_history(n=3)");
        assert_eq!(call(&["log", "--oneline", "-10"]), "work_history(n=10)");
        assert_eq!(call(&["log", "--max-count=7"]), "work_history(n=7)");
        assert_eq!(call(&["diff", "src/a.rs"]), r#"work_diff(path="src/a.rs")"#);
        assert_eq!(call(&["diff", "--stat"]), "work_diff()");
        assert_eq!(call(&["diff"]), r#"work_diff(level="full")"#);
        assert_eq!(
            call(&["show", "abc1234"]),
            r#"work_diff(record_id="abc1234")"#
        );
        assert_eq!(call(&["show"]), r#"work_diff(record_id="…")"#);
        assert_eq!(call(&["show", "HEAD~2"]), r#"work_diff(record_id="…")"#);
        assert_eq!(call(&["commit", "-m", "x"]), r#"work_record(message="x")"#);
        assert_eq!(
            call(&["commit", "-am", "fix it"]),
            r#"work_record(message="fix it")"#
        );
        assert_eq!(call(&["add", "."]), r#"work_record(message="…")"#);
        assert_eq!(call(&["push"]), "work_publish()");
        assert_eq!(call(&["status"]), "work_observe()");
        assert_eq!(call(&["branch", "-a"]), r#"work_vcs(["branch", "-a"])"#);
        assert_eq!(call(&["switch", "-c", "x"]), r#"work_new_line(name="x")"#);
        assert_eq!(
            call(&["checkout", "main"]),
            r#"work_switch_line(name="main")"#
        );
        assert_eq!(
            call(&["merge", "topic"]),
            r#"work_merge_line(name="topic")"#
        );
        assert_eq!(
            call(&["merge", "--abort"]),
            r#"work_vcs(["merge", "--abort"])"#
        );
    }

    #[test]
    fn reason_names_command_and_tool() {
        let inv = git_cli::parse(&["status".to_owned()]);
        assert_eq!(
            deny_reason(&inv),
            "`git status` was blocked. Use work_observe() instead."
        );
        let inv = git_cli::parse(&["stash".to_owned(), "list".to_owned()]);
        assert!(deny_reason(&inv).contains(r#"work_vcs(["stash", "list"])"#));
    }

    #[test]
    fn unknown_commands_get_the_overview() {
        let inv = git_cli::parse(&["…".to_owned()]);
        let reason = deny_reason(&inv);
        assert!(reason.starts_with("`git …` was blocked"), "{reason}");
        assert!(reason.contains("work_observe() for status"), "{reason}");
        assert!(reason.contains("work_vcs([...])"), "{reason}");
        assert!(deny_reason(&git_cli::parse(&[])).starts_with("`git` was blocked"));
        let reason = dynamic_reason("$GIT status");
        assert!(reason.starts_with("`$GIT status` was blocked"), "{reason}");
        assert!(reason.contains("work_diff() for diff"), "{reason}");
    }
}
