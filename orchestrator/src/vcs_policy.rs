//! The policy of `work_vcs(args)`: which git command lines Butler runs for the Brain.
//!
//! [`vet`] is a pure decision over the argument list (without the leading `git`); the caller
//! runs the git worker for [`Verdict::Run`] and implements the approval round trip for
//! [`Verdict::NeedsApproval`]. git's global options are read with the hook's parser
//! ([`crate::hook::git_cli`]), so both name the same subcommand.
//!
//! Decisions worth stating:
//! - `git rm` needs approval only with `-f`/`--force`: without it git itself refuses to
//!   remove files whose changes are not committed.
//! - `git tag -d` needs approval: the tag name → commit link is lost and may not be
//!   recoverable from anywhere else.
//! - `--textconv` is refused like `--ext-diff`: both run programs named in config.
//! - Paths given to `-o`/`--output`, `worktree add`, `init` must stay inside the project:
//!   absolute paths, `~` and `..` components are refused (the caller runs git in the project
//!   root).

use crate::equivalents;
use crate::hook::git_cli::{self, GitInvocation};
use crate::hook::replacement_call;

/// The decision about one `work_vcs` call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Run it.
    Run,
    /// The arguments are malformed.
    Invalid {
        /// What is wrong, for the Brain.
        reason: String,
    },
    /// A Butler tool does this; `work_vcs` refuses it.
    UseProperTool {
        /// The tool to use (`work_diff`, …).
        tool: &'static str,
        /// The git subcommand that was asked for.
        subcommand: String,
        /// The call to make instead, e.g. `work_history(n=5)`.
        suggestion: String,
    },
    /// Refused: it would run other programs or reach outside the project.
    PolicyBlocked {
        /// Why, for the Brain.
        reason: String,
    },
    /// It irreversibly discards work: run it only after the user approves this exact command.
    NeedsApproval {
        /// What would be lost, for the user who approves.
        summary_of_loss: String,
        /// A stable string of the exact arguments (their JSON list): the approval is valid for
        /// this command line only.
        fingerprint: String,
    },
}

/// Decide what `work_vcs(args)` may do with `args` (the words after `git`).
pub fn vet(args: &[String]) -> Verdict {
    if let Some(reason) = invalid(args) {
        return Verdict::Invalid { reason };
    }
    let inv = git_cli::parse(args);
    if let Some(reason) = blocked_global(&inv) {
        return Verdict::PolicyBlocked { reason };
    }
    let Some(sub) = inv.subcommand.clone() else {
        return Verdict::Invalid {
            reason: "no git subcommand given".to_owned(),
        };
    };
    if let Some(option) = &inv.unknown_option {
        return Verdict::Invalid {
            reason: format!("`{option}` is not a git option"),
        };
    }
    if let Some(decl) = equivalents::proper_tool(&sub, &inv.rest) {
        return Verdict::UseProperTool {
            tool: decl.tool,
            subcommand: sub,
            suggestion: replacement_call(&inv),
        };
    }
    if let Some(reason) = blocked_command(&sub, &inv.rest) {
        return Verdict::PolicyBlocked { reason };
    }
    if let Some(summary_of_loss) = loss(&sub, &inv.rest) {
        let fingerprint = serde_json::to_string(args).expect("a list of strings serializes");
        return Verdict::NeedsApproval {
            summary_of_loss,
            fingerprint,
        };
    }
    Verdict::Run
}

fn invalid(args: &[String]) -> Option<String> {
    if args.is_empty() {
        return Some("give the git arguments as a list, e.g. [\"branch\", \"-a\"]".to_owned());
    }
    if args.iter().any(|a| a.is_empty()) {
        return Some("an argument is an empty string".to_owned());
    }
    if args.iter().any(|a| a.contains('\0')) {
        return Some("an argument contains a NUL byte".to_owned());
    }
    if args[0] == "git" {
        return Some("leave out the leading `git`: pass e.g. [\"branch\", \"-a\"]".to_owned());
    }
    None
}

/// Global options that change which repository or programs git uses.
fn blocked_global(inv: &GitInvocation) -> Option<String> {
    const BLOCKED: &[&str] = &[
        "-C",
        "-c",
        "--config-env",
        "--exec-path",
        "--git-dir",
        "--work-tree",
        "--namespace",
        "--super-prefix",
        "-p",
        "--paginate",
    ];
    inv.globals
        .iter()
        .find(|g| BLOCKED.contains(&g.name.as_str()))
        .map(|g| {
            format!(
                "`{}` is refused: work_vcs runs git in the project with its own configuration, \
             without other repositories, config overrides or programs",
                g.name
            )
        })
}

/// Subcommands that run other programs, talk to other hosts' shells, or reach outside.
const BLOCKED_SUBCOMMANDS: &[(&str, &str)] = &[
    ("clone", "clones reach outside the project"),
    ("difftool", "runs an external diff program"),
    ("mergetool", "runs an external merge program"),
    (
        "filter-branch",
        "runs shell snippets over the whole history",
    ),
    ("filter-repo", "rewrites the whole history"),
    ("daemon", "starts a server"),
    ("instaweb", "starts a web server and a browser"),
    ("web--browse", "starts a browser"),
    ("send-email", "sends mail through an external program"),
    ("imap-send", "talks to a mail server"),
    ("credential", "handles credentials"),
    ("credential-store", "handles credentials"),
    ("credential-cache", "handles credentials"),
    ("upload-pack", "is a server-side program"),
    ("receive-pack", "is a server-side program"),
    ("upload-archive", "is a server-side program"),
    ("shell", "is a login shell"),
    ("hook", "runs hook programs"),
    ("svn", "runs an external VCS bridge"),
    ("p4", "runs an external VCS bridge"),
    ("cvsimport", "runs an external VCS bridge"),
    ("cvsserver", "is a server"),
    ("archimport", "runs an external VCS bridge"),
];

/// Options that name a program to run, whatever the subcommand.
const PROGRAM_OPTIONS: &[&str] = &[
    "--upload-pack",
    "--receive-pack",
    "--exec",
    "--ext-diff",
    "--textconv",
    "--extcmd",
    "--template",
];

fn blocked_command(sub: &str, rest: &[String]) -> Option<String> {
    if let Some((_, why)) = BLOCKED_SUBCOMMANDS.iter().find(|(name, _)| *name == sub) {
        return Some(format!("`git {sub}` is refused: it {why}"));
    }
    for arg in rest.iter().take_while(|a| a.as_str() != "--") {
        let name = arg.split_once('=').map_or(arg.as_str(), |(n, _)| n);
        if PROGRAM_OPTIONS.contains(&name) {
            return Some(format!("`{name}` is refused: it runs another program"));
        }
        if arg.starts_with("ext::") || arg.contains("::ext::") {
            return Some("`ext::` URLs are refused: they run a command".to_owned());
        }
    }
    let has = |options: &[&str]| rest.iter().any(|a| options.contains(&a.as_str()));
    let positionals: Vec<&str> = rest
        .iter()
        .map(String::as_str)
        .filter(|a| !a.starts_with('-'))
        .collect();
    match sub {
        "fetch" | "pull" | "ls-remote" | "archive" if has(&["-u"]) => {
            Some("`-u` (upload-pack) is refused: it runs another program".to_owned())
        }
        "archive" if rest.iter().any(|a| a.starts_with("--remote")) => {
            Some("`archive --remote` is refused: it reaches outside the project".to_owned())
        }
        "rebase" if rest.iter().any(|a| a == "-x" || a.starts_with("--exec")) => {
            Some("`rebase --exec` is refused: it runs shell commands".to_owned())
        }
        "rebase" if rest.iter().any(|a| a.starts_with("-x")) => {
            Some("`rebase -x` is refused: it runs shell commands".to_owned())
        }
        "submodule" if positionals.first() == Some(&"foreach") => {
            Some("`submodule foreach` is refused: it runs shell commands".to_owned())
        }
        "bisect" if positionals.first() == Some(&"run") => {
            Some("`bisect run` is refused: it runs a program".to_owned())
        }
        "maintenance"
            if matches!(
                positionals.first(),
                Some(&("start" | "stop" | "register" | "unregister"))
            ) =>
        {
            Some(
                "`maintenance start/register` is refused: it edits the system scheduler".to_owned(),
            )
        }
        "help" if has(&["-w", "--web", "-i", "--info", "-m", "--man"]) => {
            Some("`help` with a viewer is refused: it starts another program".to_owned())
        }
        "config" => config_policy(rest),
        "worktree" if positionals.first() == Some(&"add") => positionals
            .get(1)
            .and_then(|p| outside_path(p, "worktree add")),
        "init" => positionals.first().and_then(|p| outside_path(p, "init")),
        _ => output_policy(rest),
    }
}

/// `-o DIR`, `--output=FILE`, `--output-directory DIR` must stay inside the project.
fn output_policy(rest: &[String]) -> Option<String> {
    let mut iter = rest.iter().take_while(|a| a.as_str() != "--");
    while let Some(arg) = iter.next() {
        let value = match arg.as_str() {
            "-o" | "--output" | "--output-directory" => iter.next().map(String::as_str),
            _ => arg
                .strip_prefix("--output=")
                .or_else(|| arg.strip_prefix("--output-directory="))
                .or_else(|| arg.strip_prefix("-o").filter(|v| !v.is_empty())),
        };
        if let Some(reason) = value.and_then(|v| outside_path(v, "output")) {
            return Some(reason);
        }
    }
    None
}

fn outside_path(path: &str, what: &str) -> Option<String> {
    let outside = path.starts_with('/')
        || path.starts_with('~')
        || path.split(['/', '\\']).any(|part| part == "..");
    outside.then(|| format!("`{what}` path `{path}` is refused: it is outside the project"))
}

/// Config keys whose value is a program, a path to programs, or a redirection of URLs or
/// configuration (all lowercase; `*` matches one dotted part).
const PROGRAM_KEYS: &[&str] = &[
    "core.fsmonitor",
    "core.sshcommand",
    "core.hookspath",
    "core.editor",
    "core.pager",
    "core.askpass",
    "core.gitproxy",
    "core.worktree",
    "core.attributesfile",
    "core.excludesfile",
    "diff.external",
    "diff.tool",
    "diff.*.textconv",
    "diff.*.command",
    "merge.tool",
    "merge.*.driver",
    "gpg.program",
    "gpg.*.program",
    "sequence.editor",
    "include.path",
    "init.templatedir",
    "interactive.difffilter",
    "ssh.variant",
    "safe.directory",
    "uploadpack.packobjectshook",
    "remote.*.uploadpack",
    "remote.*.receivepack",
    "remote.*.vcs",
];

/// Key prefixes where every key runs or redirects something.
const PROGRAM_KEY_PREFIXES: &[&str] = &[
    "alias.",
    "filter.",
    "credential.",
    "includeif.",
    "url.",
    "difftool.",
    "mergetool.",
    "pager.",
    "browser.",
    "man.",
    "web.",
    "sendemail.",
    "protocol.",
    "instaweb.",
];

fn is_program_key(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    if PROGRAM_KEY_PREFIXES.iter().any(|p| key.starts_with(p)) {
        return true;
    }
    if key.ends_with("command") || key.ends_with(".cmd") || key.ends_with(".program") {
        return true;
    }
    let parts: Vec<&str> = key.split('.').collect();
    PROGRAM_KEYS.iter().any(|pattern| {
        let pat: Vec<&str> = pattern.split('.').collect();
        if pat.len() == 3 && parts.len() >= 3 {
            // `diff.*.textconv`: first and last parts fixed, any subsection between.
            pat[0] == parts[0] && pat[2] == parts[parts.len() - 1]
        } else {
            pat == parts
        }
    })
}

/// `git config` writes of program-running keys, writes outside the project's config, and
/// the editor are refused; reads and other writes run.
fn config_policy(rest: &[String]) -> Option<String> {
    const WITH_VALUE: &[&str] = &[
        "-f",
        "--file",
        "--blob",
        "--type",
        "--default",
        "--comment",
        "--value",
        "-t",
    ];
    const WRITE_FLAGS: &[&str] = &["--add", "--replace-all"];
    const OUTSIDE: &[&str] = &["--global", "--system", "-f", "--file", "--worktree"];
    let mut positionals = Vec::new();
    let mut write_flag = false;
    let mut outside = false;
    let mut iter = rest.iter();
    while let Some(arg) = iter.next() {
        let name = arg.split_once('=').map_or(arg.as_str(), |(n, _)| n);
        if arg == "-e" || arg == "--edit" {
            return Some("`config --edit` is refused: it starts an editor".to_owned());
        }
        outside |= OUTSIDE.contains(&name) && name != "--worktree";
        write_flag |= WRITE_FLAGS.contains(&name);
        if WITH_VALUE.contains(&arg.as_str()) {
            iter.next();
        } else if !arg.starts_with('-') {
            positionals.push(arg.as_str());
        }
    }
    let (key, is_write) = match positionals.as_slice() {
        ["edit", ..] => return Some("`config edit` is refused: it starts an editor".to_owned()),
        ["set", key, ..] => (Some(*key), true),
        ["unset" | "rename-section" | "remove-section", key, ..] => (Some(*key), true),
        [
            "get" | "list" | "get-regexp" | "get-all" | "get-urlmatch" | "get-color"
            | "get-colorbool",
            ..,
        ] => (None, false),
        [key, _value, ..] => (Some(*key), true),
        [key] => (Some(*key), write_flag),
        [] => (None, false),
    };
    if !is_write {
        return None;
    }
    if outside {
        return Some("config writes outside the project's `.git/config` are refused".to_owned());
    }
    let key = key?;
    is_program_key(key).then(|| {
        format!("setting `{key}` is refused: it makes git run a program or read other config")
    })
}

/// What running `git <sub> <rest>` would irreversibly discard, if anything.
fn loss(sub: &str, rest: &[String]) -> Option<String> {
    let has = |options: &[&str]| rest.iter().any(|a| options.contains(&a.as_str()));
    let short_flag = |flag: char| {
        rest.iter()
            .any(|a| a.starts_with('-') && !a.starts_with("--") && a.contains(flag))
    };
    let positionals: Vec<&str> = rest
        .iter()
        .map(String::as_str)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let first = positionals.first().copied();
    let text = match sub {
        "reset" if has(&["--hard", "--merge"]) => {
            "discards every uncommitted change in the working tree and the index"
        }
        "clean" if !has(&["-n", "--dry-run"]) && !short_flag('n') => {
            "deletes untracked files for good (they were never recorded)"
        }
        "branch" if has(&["-D"]) || (has(&["-d", "--delete"]) && has(&["-f", "--force"])) => {
            "deletes a branch even if its commits are not merged anywhere"
        }
        "branch" if has(&["-M", "-C", "-f", "--force"]) => {
            "overwrites an existing branch, whose commits may become unreachable"
        }
        "stash" if matches!(first, Some("drop" | "clear")) => "deletes stashed changes",
        "checkout" if has(&["-f", "--force", "."]) || rest.iter().any(|a| a == "--") => {
            "overwrites uncommitted changes in the named files"
        }
        "checkout" if positionals.len() > 1 => "overwrites uncommitted changes in the named files",
        "restore" if !restores_index_only(rest) => {
            "overwrites uncommitted changes in the working tree"
        }
        "switch" if has(&["--discard-changes", "-f", "--force", "-C", "--force-create"]) => {
            "discards uncommitted changes or resets an existing branch"
        }
        "rm" if has(&["-f", "--force"]) || short_flag('f') => {
            "removes files together with their uncommitted changes"
        }
        "reflog" if matches!(first, Some("expire" | "delete")) => {
            "deletes reflog entries, the last way back to lost commits"
        }
        "gc" if rest
            .iter()
            .any(|a| a == "--prune=now" || a == "--prune=all") =>
        {
            "deletes unreachable objects at once (lost commits become unrecoverable)"
        }
        "prune" if !has(&["-n", "--dry-run"]) => "deletes unreachable objects",
        "update-ref" if has(&["-d", "--stdin"]) => "deletes or rewrites refs directly",
        "tag" if has(&["-d", "--delete"]) => "deletes a tag",
        "worktree" if first == Some("remove") && has(&["-f", "--force"]) => {
            "removes a worktree with its uncommitted changes"
        }
        "worktree" if first == Some("prune") => "forgets worktrees whose directories are gone",
        _ => return None,
    };
    Some(format!("`git {sub}` {text}"))
}

/// `restore --staged` alone only touches the index (the changes stay in the files).
fn restores_index_only(rest: &[String]) -> bool {
    let staged = rest.iter().any(|a| a == "--staged" || a == "-S");
    let worktree = rest.iter().any(|a| a == "--worktree" || a == "-W");
    staged && !worktree
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(args: &str) -> Verdict {
        vet(&args
            .split_whitespace()
            .map(str::to_owned)
            .collect::<Vec<_>>())
    }

    fn blocked(args: &str) -> bool {
        matches!(v(args), Verdict::PolicyBlocked { .. })
    }

    fn approval(args: &str) -> bool {
        matches!(v(args), Verdict::NeedsApproval { .. })
    }

    #[test]
    fn malformed_arguments_are_invalid() {
        assert!(matches!(vet(&[]), Verdict::Invalid { .. }));
        assert!(matches!(vet(&["".to_owned()]), Verdict::Invalid { .. }));
        assert!(matches!(
            vet(&["branch".to_owned(), "a\0b".to_owned()]),
            Verdict::Invalid { .. }
        ));
        assert!(matches!(v("git branch"), Verdict::Invalid { .. }));
        assert!(matches!(v("--frobnicate branch"), Verdict::Invalid { .. }));
        assert!(matches!(v("--no-pager"), Verdict::Invalid { .. }));
    }

    #[test]
    fn proper_tools_are_named() {
        let Verdict::UseProperTool {
            tool,
            subcommand,
            suggestion,
        } = v("log -5 -- src/")
        else {
            panic!("log has a proper tool");
        };
        assert_eq!((tool, subcommand.as_str()), ("work_history", "log"));
        assert_eq!(suggestion, r#"work_history(n=5, path="src/")"#);
        assert!(matches!(
            v("--no-pager status"),
            Verdict::UseProperTool {
                tool: "work_observe",
                ..
            }
        ));
        assert!(matches!(
            v("push origin"),
            Verdict::UseProperTool {
                tool: "work_publish",
                ..
            }
        ));
        for (args, line_tool) in [
            ("checkout main", "work_switch_line"),
            ("switch main", "work_switch_line"),
            ("checkout -b topic", "work_new_line"),
            ("switch -c topic", "work_new_line"),
            ("merge topic", "work_merge_line"),
        ] {
            assert!(
                matches!(v(args), Verdict::UseProperTool { tool, .. } if tool == line_tool),
                "`{args}` has {line_tool}: {:?}",
                v(args)
            );
        }
    }

    #[test]
    fn options_that_run_programs_or_leave_the_project_are_blocked() {
        for args in [
            "-c core.pager=x branch",
            "-C /etc branch",
            "--git-dir=/x branch",
            "--work-tree /x branch",
            "--exec-path=/x branch",
            "--namespace x branch",
            "--config-env=core.editor=E branch",
            "fetch --upload-pack=/bin/x origin",
            "fetch -u /bin/x origin",
            "ls-remote --upload-pack x origin",
            "archive --remote=x HEAD",
            "archive --exec=x --remote=y HEAD",
            "blame --textconv x",
            "grep --ext-diff x",
            "difftool",
            "mergetool",
            "filter-branch --tree-filter x",
            "submodule foreach ls",
            "bisect run make",
            "rebase --exec make main",
            "rebase -x make main",
            "clone https://example.invalid/x",
            "remote add x ext::sh",
            "format-patch -o /tmp/out -1",
            "format-patch --output-directory=../out -1",
            "worktree add /tmp/wt",
            "worktree add ../wt",
            "init /tmp/x",
            "init --template=x",
            "config core.fsmonitor x",
            "config core.sshCommand x",
            "config core.hooksPath x",
            "config core.editor vim",
            "config --add core.pager less",
            "config alias.x !sh",
            "config diff.foo.textconv x",
            "config filter.lfs.clean x",
            "config credential.helper store",
            "config gpg.program x",
            "config sequence.editor x",
            "config url.x.insteadOf y",
            "config include.path /x",
            "config includeIf.gitdir:/x.path y",
            "config set core.editor vim",
            "config --global user.name x",
            "config -e",
            "credential fill",
            "hook run pre-commit",
            "help -w log",
        ] {
            assert!(
                blocked(args),
                "`{args}` must be policy-blocked, got {:?}",
                v(args)
            );
        }
    }

    #[test]
    fn destructive_operations_need_approval() {
        for args in [
            "reset --hard",
            "reset --hard HEAD~1",
            "clean -fd",
            "clean -f",
            "clean -xdf",
            "branch -D topic",
            "branch --delete --force topic",
            "branch -f main HEAD~2",
            "stash drop",
            "stash clear",
            "checkout -- src/a.rs",
            "checkout .",
            "checkout -f main",
            "checkout HEAD src/a.rs",
            "restore src/a.rs",
            "restore --staged --worktree src/a.rs",
            "switch --discard-changes main",
            "switch -f main",
            "rm -f a",
            "rm -rf dir",
            "reflog expire --expire=now --all",
            "reflog delete HEAD@{1}",
            "gc --prune=now",
            "prune",
            "update-ref -d refs/heads/x",
            "tag -d v1",
            "worktree remove --force wt",
        ] {
            assert!(
                approval(args),
                "`{args}` must need approval, got {:?}",
                v(args)
            );
        }
    }

    #[test]
    fn fingerprint_is_the_exact_argument_list() {
        let Verdict::NeedsApproval {
            fingerprint,
            summary_of_loss,
        } = v("reset --hard HEAD")
        else {
            panic!("reset --hard needs approval");
        };
        assert_eq!(fingerprint, r#"["reset","--hard","HEAD"]"#);
        assert!(summary_of_loss.contains("reset"));
        let Verdict::NeedsApproval {
            fingerprint: other, ..
        } = v("reset --hard HEAD~1")
        else {
            panic!("reset --hard needs approval");
        };
        assert_ne!(fingerprint, other);
    }

    #[test]
    fn ordinary_operations_run() {
        for args in [
            "branch",
            "branch -a",
            "branch topic",
            "branch -d topic",
            "stash list",
            "stash push -m wip",
            "stash pop",
            "fetch origin",
            "pull --rebase",
            "remote -v",
            "blame src/lib.rs",
            "rev-parse HEAD",
            "switch -",
            "switch --detach HEAD~1",
            "merge --abort",
            "merge --ff-only topic",
            "restore --staged src/a.rs",
            "clean -n",
            "clean -nd",
            "clean --dry-run",
            "rm --cached a",
            "rebase main",
            "cherry-pick abc123",
            "tag v1",
            "config user.name",
            "config --get core.editor",
            "config --global --get user.name",
            "config user.name Someone",
            "format-patch -o out -1",
            "worktree add wt",
            "worktree list",
            "gc",
            "reflog",
            "--no-pager branch",
            "describe --tags",
            "version",
        ] {
            assert_eq!(v(args), Verdict::Run, "`{args}` must run");
        }
    }
}
