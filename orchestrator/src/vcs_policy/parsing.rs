//! How git reads the words after each allowed command path: what `--` does, and whether
//! options are still read after the first positional.
//!
//! These are the parse-options flags each builtin passes (git 2.47.3, `builtin/*.c`), and
//! for the commands with their own parsers what those parsers do with `--`:
//! - without `PARSE_OPT_KEEP_DASHDASH`, parse-options drops `--`: the words after it are
//!   ordinary positionals of the command (branch names, config keys, URLs, refspecs,
//!   worktree paths), exactly as if `--` had not been there ([`DashDash::Ends`]);
//! - with it, the command itself sees `--` and reads the words after it as paths
//!   ([`DashDash::Separates`]);
//! - the `bisect` state commands have no notion of `--`: it is one more revision name
//!   ([`DashDash::Literal`]);
//! - with `PARSE_OPT_STOP_AT_NON_OPTION` (`config`, `ls-remote`, `grep`, `stash clear`),
//!   parse-options stops at the first positional and every word after it, however it is
//!   spelled, is a positional ([`Rules::stops_at_non_option`]): `config KEY --default=V`
//!   sets KEY to the text `--default=V`.
//!
//! `--end-of-options` is refused by the reader in every position where git would read it as
//! an option terminator (nothing needs it: positionals that start with `-` are refused).
//!
//! The test `parsing_rules_match_installed_git` checks every row against the git on the
//! machine by running it: a row that says `Ends` must behave the same with and without `--`,
//! one that says `Separates` differently, and an unknown option after a positional must be
//! refused by git exactly where the row says options are still read.

/// What git does with `--` for one command path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DashDash {
    /// `--` ends the options and is dropped; the words after it are ordinary positionals.
    Ends,
    /// `--` ends the options and stays: the words after it are paths.
    Separates,
    /// `--` is an ordinary word (a revision name) for this command.
    Literal,
}

/// The reading rules of one command path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rules {
    pub dashdash: DashDash,
    /// Options are read only up to the first positional (`PARSE_OPT_STOP_AT_NON_OPTION`).
    pub stops_at_non_option: bool,
}

const ENDS: Rules = Rules {
    dashdash: DashDash::Ends,
    stops_at_non_option: false,
};
const ENDS_STOPS: Rules = Rules {
    dashdash: DashDash::Ends,
    stops_at_non_option: true,
};
const SEPARATES: Rules = Rules {
    dashdash: DashDash::Separates,
    stops_at_non_option: false,
};
const SEPARATES_STOPS: Rules = Rules {
    dashdash: DashDash::Separates,
    stops_at_non_option: true,
};
const LITERAL: Rules = Rules {
    dashdash: DashDash::Literal,
    stops_at_non_option: false,
};

/// Every allowed command path that does not read as [`ENDS`] (parse-options' default), with
/// the flag or parser that makes it so. A test checks that every path listed is allowed.
pub const EXCEPTIONS: &[(&[&str], Rules)] = &[
    // PARSE_OPT_KEEP_DASHDASH: the command reads paths after `--`.
    (&["blame"], SEPARATES),
    (&["checkout"], SEPARATES), // accepts both refs and paths (builtin/checkout.c)
    (&["reset"], SEPARATES),
    (&["reflog", "show"], SEPARATES),
    (&["stash", "show"], SEPARATES),
    (&["stash", "push"], SEPARATES),
    // setup_revisions / rev-parse's own loop: paths after `--`.
    (&["rev-list"], SEPARATES),
    (&["rev-parse"], SEPARATES),
    (&["bisect", "start"], SEPARATES),
    // PARSE_OPT_KEEP_DASHDASH | PARSE_OPT_STOP_AT_NON_OPTION.
    (&["grep"], SEPARATES_STOPS),
    // PARSE_OPT_STOP_AT_NON_OPTION.
    (&["config"], ENDS_STOPS),
    // PARSE_OPT_SUBCOMMAND_OPTIONAL: the first positional is the subcommand or, failing
    // that, the start of the default mode's arguments; options end there either way.
    (&["remote"], ENDS_STOPS),
    (&["config", "get"], ENDS_STOPS),
    (&["config", "set"], ENDS_STOPS),
    (&["config", "unset"], ENDS_STOPS),
    (&["ls-remote"], ENDS_STOPS),
    (&["stash", "clear"], ENDS_STOPS),
    // bisect's state commands take every word as a revision.
    (&["bisect", "bad"], LITERAL),
    (&["bisect", "good"], LITERAL),
    (&["bisect", "new"], LITERAL),
    (&["bisect", "old"], LITERAL),
    (&["bisect", "skip"], LITERAL),
    (&["bisect", "reset"], LITERAL),
    (&["bisect", "log"], LITERAL),
    (&["bisect", "terms"], LITERAL),
];

/// How git reads the words after `path`.
pub fn rules(path: &[&str]) -> Rules {
    EXCEPTIONS
        .iter()
        .find(|(p, _)| *p == path)
        .map_or(ENDS, |(_, r)| *r)
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::time::Duration;

    use butler_worker::process::{ChildEnv, ChildSpec, Ending, Limits, env, run_blocking};

    use super::*;
    use crate::vcs_policy::allow;

    #[test]
    fn every_exception_is_an_allowed_path() {
        for (path, _) in EXCEPTIONS {
            assert!(allow::entry(path).is_some(), "{path:?} is not allowed");
        }
    }

    #[test]
    fn the_default_is_parse_options_default() {
        assert_eq!(rules(&["branch"]), ENDS);
        assert_eq!(rules(&["config"]), ENDS_STOPS);
        assert_eq!(rules(&["checkout"]), SEPARATES);
        assert_eq!(rules(&["switch"]), ENDS);
        assert_eq!(rules(&["restore"]), ENDS);
    }

    /// What one git run did: its exit, its output, and the repository after it.
    #[derive(Debug, PartialEq, Eq)]
    struct Outcome {
        code: Option<i32>,
        stdout: String,
        stderr: String,
        after: String,
    }

    fn git(cwd: &Path, args: &[&str]) -> (Option<i32>, String, String) {
        let mut vars = ChildEnv::new();
        vars.inherit(env::inherited(), env::BASE)
            .set("LC_ALL", "C")
            .set("LANGUAGE", "C")
            .set("GIT_CONFIG_NOSYSTEM", "1")
            .set("GIT_CONFIG_GLOBAL", "/dev/null")
            .set("GIT_PAGER", "cat")
            .set("PAGER", "cat")
            .set("GIT_EDITOR", "false")
            .set("GIT_TERMINAL_PROMPT", "0")
            .set("GIT_AUTHOR_NAME", "t")
            .set("GIT_AUTHOR_EMAIL", "t@example.invalid")
            .set("GIT_COMMITTER_NAME", "t")
            .set("GIT_COMMITTER_EMAIL", "t@example.invalid")
            .set("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z")
            .set("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z");
        let spec = ChildSpec::new("git", cwd, vars).args(args);
        let done = run_blocking(spec, Limits::new(Duration::from_secs(60)).keep(1 << 20, 0));
        let code = match done.ending {
            Ending::Exited { code } => Some(code),
            _ => None,
        };
        (code, done.stdout.text(), done.stderr.text())
    }

    /// A repository with two lines, a tag, an edit, an untracked file, a stash and a remote.
    fn scratch(top: &Path) -> std::path::PathBuf {
        let repo = top.join("repo");
        let shared = top.join("shared.git");
        std::fs::create_dir_all(&repo).expect("dir");
        let run = |args: &[&str]| {
            let (code, _, err) = git(&repo, args);
            assert_eq!(code, Some(0), "git {args:?}: {err}");
        };
        // No template: the copies below carry no sample hooks to create and delete.
        run(&["init", "-q", "-b", "main", "--template="]);
        std::fs::write(repo.join("f"), "1\n").expect("write");
        run(&["add", "f"]);
        run(&["commit", "-qm", "a"]);
        run(&["branch", "side"]);
        std::fs::write(repo.join("f"), "2\n").expect("write");
        run(&["commit", "-qam", "b"]);
        run(&["tag", "v1"]);
        std::fs::write(repo.join("f"), "s\n").expect("write");
        run(&["stash", "-q"]);
        std::fs::write(repo.join("f"), "3\n").expect("write");
        std::fs::write(repo.join("u"), "u\n").expect("write");
        let (code, _, err) = git(top, &["clone", "-q", "--bare", "repo", "shared.git"]);
        assert_eq!(code, Some(0), "{err}");
        run(&["remote", "add", "origin", &shared.to_string_lossy()]);
        run(&["fetch", "-q", "origin"]);
        // Relative, as git reads it from the repository: each copy's own remote.
        run(&["remote", "set-url", "origin", "../shared.git"]);
        repo
    }

    fn copy_tree(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).expect("dir");
        for entry in std::fs::read_dir(from).expect("read dir") {
            let entry = entry.expect("entry");
            let target = to.join(entry.file_name());
            if entry.file_type().expect("type").is_dir() {
                copy_tree(&entry.path(), &target);
            } else {
                std::fs::copy(entry.path(), &target).expect("copy");
            }
        }
    }

    /// Runs `git <path> <words>` in a fresh copy of `template` (made by [`scratch`]).
    fn outcome(template: &Path, path: &[&str], words: &[&str]) -> Outcome {
        let top = tempfile::tempdir().expect("tmp");
        copy_tree(template, top.path());
        let repo = top.path().join("repo");
        let mut args: Vec<&str> = path.to_vec();
        args.extend(words);
        let (code, stdout, stderr) = git(&repo, &args);
        let mut after = String::new();
        for probe in [
            &["for-each-ref", "--format=%(refname) %(objectname)"][..],
            &["status", "--porcelain", "--untracked-files=all"],
        ] {
            after.push_str(&git(&repo, probe).1);
        }
        // `HEAD` names its branch, or the commit when detached.
        for file in ["config", "HEAD"] {
            after.push_str(
                &std::fs::read_to_string(repo.join(".git").join(file)).unwrap_or_default(),
            );
        }
        if let Ok(dir) = std::fs::read_dir(repo.join(".git/worktrees")) {
            let mut names: Vec<String> = dir
                .filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect();
            names.sort();
            after.push_str(&names.join(","));
        }
        let top = top.path().to_string_lossy().into_owned();
        let clean = |s: String| s.replace(&top, "<top>");
        Outcome {
            code,
            stdout: clean(stdout),
            stderr: clean(stderr),
            after: clean(after),
        }
    }

    /// Positionals that make each command path do its usual thing in [`scratch`]; for the
    /// paths that keep `--`, ones that read differently as paths.
    fn positionals(path: &[&str]) -> Vec<&'static str> {
        match path {
            ["blame"] => vec!["HEAD", "f"],
            ["cat-file"] => vec!["commit", "HEAD"],
            ["check-ignore"] | ["ls-files"] | ["restore"] | ["rm"] | ["stash", "push"] => {
                vec!["f"]
            }
            ["cherry"]
            | ["checkout"]
            | ["switch"]
            | ["merge"]
            | ["rebase"]
            | ["cherry-pick"]
            | ["reset"] => vec!["side"],
            ["describe"]
            | ["ls-tree"]
            | ["name-rev"]
            | ["revert"]
            | ["rev-list"]
            | ["rev-parse"]
            | ["reflog", "show"] => vec!["HEAD"],
            ["for-each-ref"] => vec!["refs/heads"],
            ["grep"] => vec!["-e", "2", "HEAD"],
            ["bisect", "start"] => vec!["HEAD", "side"],
            ["ls-remote"] | ["fetch"] | ["remote", "get-url" | "show" | "prune" | "remove"] => {
                vec!["origin"]
            }
            ["pull"] => vec!["origin", "main"],
            ["merge-base"] => vec!["HEAD", "side"],
            ["reflog", "exists"] => vec!["refs/heads/main"],
            ["reflog", "expire"] => vec!["main"],
            ["reflog", "delete"] => vec!["main@{0}"],
            ["show-ref"] => vec!["main"],
            ["stash", "show" | "apply" | "drop"] => vec!["stash@{0}"],
            ["stash", "branch"] => vec!["sb"],
            ["branch"] => vec!["x"],
            ["tag"] => vec!["t2"],
            ["config"] | ["config", "set"] => vec!["user.name", "v"],
            ["config", "get" | "unset"] => vec!["user.name"],
            ["mv"] => vec!["f", "g"],
            ["remote", "add"] => vec!["r", "../shared.git"],
            ["remote", "rename"] => vec!["origin", "o2"],
            ["remote", "set-branches" | "set-head"] => vec!["origin", "main"],
            ["remote", "set-url"] => vec!["origin", "../other.git"],
            ["update-ref"] => vec!["refs/heads/q", "HEAD"],
            ["worktree", "add"] => vec!["../wt"],
            ["worktree", "lock" | "unlock" | "remove" | "repair"] => vec!["../wt"],
            ["worktree", "move"] => vec!["../wt", "../wt2"],
            _ => vec![],
        }
    }

    /// Every row above, run against the installed git: `--` dropped where the row says
    /// [`DashDash::Ends`] (the same run with and without it), kept where it says
    /// [`DashDash::Separates`] (the words after it read otherwise); options read after a
    /// positional exactly where the row says git does not stop (`--help-all` after a
    /// positional prints the usage only if git still reads options there).
    #[test]
    fn parsing_rules_match_installed_git() {
        let template = tempfile::tempdir().expect("tmp");
        scratch(template.path());
        let template = template.path();
        let problems: Vec<String> = std::thread::scope(|scope| {
            let workers: Vec<_> = allow::ENTRIES
                .chunks(allow::ENTRIES.len().div_ceil(4))
                .map(|chunk| {
                    scope.spawn(move || {
                        chunk
                            .iter()
                            .flat_map(|entry| check_row(template, entry))
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            workers
                .into_iter()
                .flat_map(|w| w.join().expect("worker"))
                .collect()
        });
        assert!(problems.is_empty(), "{}", problems.join("\n\n"));
    }

    fn check_row(template: &Path, entry: &allow::Entry) -> Vec<String> {
        let mut problems = Vec::new();
        let path = entry.path;
        let rules = rules(path);
        if rules.dashdash == DashDash::Literal {
            return problems; // bisect's state commands: their own parser, read from its source
        }
        let words = positionals(path);
        let plain = outcome(template, path, &words);
        let mut dashed_words = vec!["--"];
        dashed_words.extend(&words);
        let dashed = outcome(template, path, &dashed_words);
        let same = plain == dashed;
        // Commands whose positionals are all paths read them the same either way.
        let paths_only = matches!(path, ["stash", "push"]);
        match rules.dashdash {
            DashDash::Ends if !same => problems.push(format!(
                "{path:?}: `--` changes what git does, so git keeps it:\n{plain:?}\n{dashed:?}"
            )),
            DashDash::Separates if same && !paths_only => problems.push(format!(
                "{path:?}: `--` changes nothing, so git drops it: {plain:?}"
            )),
            _ => {}
        }
        if entry.probe.is_none() {
            return problems; // not parse-options: no usage to ask for
        }
        let mut late = if words.is_empty() {
            vec!["x"]
        } else {
            words.clone()
        };
        late.push("--help-all");
        let asked = outcome(template, path, &late);
        let reads_options = asked.code == Some(129) && asked.stdout.contains("usage: git");
        if reads_options == rules.stops_at_non_option {
            problems.push(format!(
                "{path:?}: the table says stops_at_non_option = {}, git read `--help-all` after a positional: {reads_options} ({asked:?})",
                rules.stops_at_non_option
            ));
        }
        problems
    }
}
