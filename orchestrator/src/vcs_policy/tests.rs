//! Decisions over hand-written command lines, against a table of repository facts: every
//! rule's own examples (in `allow.rs`, beside the rule), and the command lines no single rule
//! holds (global options, refused subcommands, the reader's general rules). The spellings
//! generated from git's own option lists run in `tests/e2e/work_vcs_spellings.rs`.

use std::collections::BTreeSet;

use butler_worker::git::{LossQuery, Source};

use super::*;

/// A repository described by a table.
struct Table {
    commits: BTreeSet<&'static str>,
    remote_branches: Vec<(&'static str, &'static str)>,
    ignored: BTreeSet<&'static str>,
}

impl Default for Table {
    fn default() -> Self {
        Table {
            commits: [
                "HEAD",
                "HEAD~1",
                "main",
                "feature",
                "v1",
                "origin/main",
                "@{-1}",
            ]
            .into_iter()
            .collect(),
            remote_branches: vec![("only-remote", "refs/remotes/origin/only-remote")],
            ignored: ["build", "build/wt", "target/wt"].into_iter().collect(),
        }
    }
}

impl RepoFacts for Table {
    fn is_commit(&self, rev: &str) -> bool {
        self.commits.contains(rev)
    }
    fn guessed_remote_branch(&self, name: &str) -> Option<String> {
        self.remote_branches
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, r)| (*r).to_owned())
    }
    fn inside(&self, path: &str) -> bool {
        !path.starts_with('/') && !path.split('/').any(|p| p == "..") && !path.starts_with(".git")
    }
    fn is_ignored(&self, path: &str) -> bool {
        self.ignored.contains(path.trim_end_matches('/'))
    }
    fn exists(&self, path: &str) -> bool {
        matches!(path, "a" | "a.txt" | "b.txt" | "c.txt" | "src/a.rs" | ".")
    }
    fn head_ref(&self) -> Option<String> {
        Some("refs/heads/main".to_owned())
    }
    fn config_bool(&self, _key: &str) -> Option<bool> {
        None
    }
}

fn v(args: &str) -> Verdict {
    let args: Vec<String> = args.split_whitespace().map(str::to_owned).collect();
    vet(&args, &Table::default())
}

fn refused(args: &str) -> bool {
    matches!(v(args), Verdict::Refused { .. })
}

fn ran(args: &str) -> Vec<String> {
    match v(args) {
        Verdict::Run { args } => args,
        other => panic!("`{args}` must run, got {other:?}"),
    }
}

fn loss(args: &str) -> (Vec<String>, Vec<LossQuery>) {
    match v(args) {
        Verdict::RunUnlessLoss { args, loss, .. } => (args, loss),
        other => panic!("`{args}` must weigh a loss, got {other:?}"),
    }
}

/// Every rule's examples (beside the rule in `allow.rs`) decide as written, and are command
/// lines of that rule's command path.
#[test]
fn every_rule_decides_its_examples_as_written() {
    use allow::Expect;
    let mut problems = Vec::new();
    let mut checked = 0;
    for entry in allow::ENTRIES {
        for ex in entry.examples {
            checked += 1;
            let args: Vec<String> = ex.line.split_whitespace().map(str::to_owned).collect();
            let inv = git_cli::parse(&args);
            let path = inv
                .subcommand
                .as_deref()
                .and_then(|sub| decide::resolve_path(sub, &inv.rest).ok().flatten())
                .map(|r| r.path);
            if path.as_deref() != Some(entry.path) {
                problems.push(format!(
                    "{:?}: `{}` is a command line of {path:?}",
                    entry.path, ex.line
                ));
            }
            let verdict = v(ex.line);
            let (got, ran) = match &verdict {
                Verdict::Run { args } => (Expect::Run, Some(args.join(" "))),
                Verdict::RunUnlessLoss { args, .. } => (Expect::Weigh, Some(args.join(" "))),
                Verdict::Refused { .. } => (Expect::Refuse, None),
                Verdict::Invalid { .. } => (Expect::Invalid, None),
                Verdict::UseProperTool { tool, .. } => (Expect::Tool(tool.as_str()), None),
            };
            if got != ex.expect {
                problems.push(format!(
                    "{:?}: `{}` should be {:?}, is {verdict:?}",
                    entry.path, ex.line, ex.expect
                ));
            }
            if let Some(want) = ex.runs_as
                && ran.as_deref() != Some(want)
            {
                problems.push(format!(
                    "{:?}: `{}` should run as `{want}`, is {verdict:?}",
                    entry.path, ex.line
                ));
            }
        }
    }
    assert!(checked > 250, "{checked} examples");
    let bare: Vec<_> = allow::ENTRIES
        .iter()
        .filter(|e| e.examples.is_empty())
        .map(|e| e.path)
        .collect();
    assert!(bare.is_empty(), "rules without an example: {bare:?}");
    assert!(
        problems.is_empty(),
        "{} problem(s):\n{}",
        problems.len(),
        problems.join("\n")
    );
}

#[test]
fn malformed_arguments_are_invalid() {
    assert!(matches!(
        vet(&[], &Table::default()),
        Verdict::Invalid { .. }
    ));
    assert!(matches!(
        vet(&["".to_owned()], &Table::default()),
        Verdict::Invalid { .. }
    ));
    assert!(matches!(v("git branch"), Verdict::Invalid { .. }));
    assert!(matches!(v("--frobnicate branch"), Verdict::Invalid { .. }));
    assert!(matches!(v("--no-pager"), Verdict::Invalid { .. }));
    assert!(
        matches!(v("reset --m"), Verdict::Invalid { .. }),
        "ambiguous"
    );
    assert!(matches!(v("branch -- --x"), Verdict::Invalid { .. }));
    assert!(matches!(
        v("branch --end-of-options x"),
        Verdict::Invalid { .. }
    ));
    assert!(matches!(v("worktree"), Verdict::Invalid { .. }));
    assert!(matches!(v("stash frobnicate"), Verdict::Invalid { .. }));
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
    assert_eq!(
        (tool.as_str(), subcommand.as_str()),
        ("work_history", "log")
    );
    assert_eq!(suggestion, r#"work_history(n=5, path="src/")"#);
    for (args, tool) in [
        ("--no-pager status", "work_observe"),
        ("push origin", "work_publish"),
        ("-P diff", "work_diff"),
        ("commit -m x", "work_record"),
        ("shortlog", "work_history"),
    ] {
        assert!(
            matches!(v(args), Verdict::UseProperTool { tool: t, .. } if t.as_str() == tool),
            "{args}"
        );
    }
}

#[test]
fn globals_that_run_programs_or_move_the_repository_are_refused() {
    for args in [
        "-c core.pager=x branch",
        "-C /etc branch",
        "-C sub branch",
        "--git-dir=/x branch",
        "--work-tree /x branch",
        "--exec-path=/x branch",
        "--namespace x branch",
        "--config-env=core.editor=E branch",
        "-p branch",
        "--paginate branch",
        "--bare branch",
        "--shallow-file x branch",
        "-- branch",
    ] {
        assert!(refused(args), "`{args}` must be refused, got {:?}", v(args));
    }
    assert_eq!(
        ran("--literal-pathspecs --no-pager branch"),
        ["--literal-pathspecs", "--no-pager", "branch"]
    );
}

#[test]
fn sharing_work_goes_through_work_publish() {
    for args in [
        "send-pack x",
        "bundle create x.bundle --all",
        "format-patch -1",
        "request-pull x y",
        "send-email x",
        "archive HEAD",
    ] {
        let Verdict::Refused { why } = v(args) else {
            panic!("`{args}` must be refused");
        };
        let hint = why.hint();
        assert!(hint.contains("work_publish"), "{args}: {hint}");
    }
}

#[test]
fn config_writes_only_allow_listed_keys() {
    for key in [
        "core.fsmonitor",
        "core.pager",
        "core.editor",
        "core.sshCommand",
        "core.hooksPath",
        "core.bare",
        "core.worktree",
        "core.repositoryformatversion",
        "extensions.objectFormat",
        "include.path",
        "includeIf.gitdir:/x.path",
        "credential.helper",
        "filter.lfs.clean",
        "diff.x.textconv",
        "merge.x.driver",
        "gpg.program",
        "sequence.editor",
        "uploadpack.packObjectsHook",
        "receive.denyCurrentBranch",
        "remote.origin.uploadpack",
        "remote.origin.url",
        "remote.origin.fetch",
        "url.x.insteadOf",
        "alias.st",
        "difftool.x.cmd",
        "fetch.pruneTags",
        "push.default",
    ] {
        for form in [
            format!("config {key} x"),
            format!("config --add {key} x"),
            format!("config --replace-all {key} x"),
            format!("config set {key} x"),
            format!("config --unset {key}"),
            format!("config unset {key}"),
        ] {
            assert!(
                refused(&form),
                "`{form}` must be refused, got {:?}",
                v(&form)
            );
        }
    }
}

/// What `checkout <path>` would lose is the edits not in the index.
#[test]
fn checkout_of_a_path_weighs_the_edits_against_the_index() {
    let (_, loss_) = loss("checkout a.txt");
    assert!(matches!(&loss_[..], [LossQuery::Files(f)] if f.source == Source::Index && f.edits));
}

#[test]
fn not_offered_subcommands_are_refused() {
    for args in [
        "clone https://example.invalid/x",
        "init",
        "update-index --assume-unchanged x",
        "read-tree HEAD",
        "prune",
        "repack -a",
        "replace a b",
        "notes add -m x",
        "symbolic-ref HEAD refs/heads/x",
        "my-alias",
        "stash save x",
        "stash create",
        "config rename-section a b",
        // Subcommands whose job is to run programs.
        "config edit",
        "difftool",
        "mergetool",
        "filter-branch --tree-filter x",
        "submodule foreach ls",
        "bisect run make",
        "bisect visualize",
        "help log",
        "--help log",
        "credential fill",
        "hook run pre-commit",
    ] {
        assert!(refused(args), "`{args}` must be refused, got {:?}", v(args));
    }
}

#[test]
fn odd_words_never_panic() {
    const POOL: &[&str] = &[
        "-",
        "--",
        "-x",
        "--=",
        "=",
        "--no-",
        "--no",
        "--n",
        "-é",
        "é",
        "..",
        "/",
        "~",
        ":(top)",
        ":!x",
        "::",
        "a::b",
        "-1",
        "-9z",
        "(",
        ")",
        "stash@{0}",
        "HEAD",
        "--help",
        "-h",
    ];
    let mut paths: Vec<Vec<String>> = allow::ENTRIES
        .iter()
        .map(|e| e.path.iter().map(|s| (*s).to_owned()).collect())
        .collect();
    paths.push(vec![]);
    for path in &paths {
        for a in POOL {
            for b in POOL {
                let mut args = path.clone();
                args.push((*a).to_owned());
                args.push((*b).to_owned());
                let _ = vet(&args, &Table::default());
            }
        }
    }
}

#[test]
fn losses_behind_a_dropped_dashdash_are_weighed() {
    let refs = |args: &str, name: &str| {
        let (ran, loss) = loss(args);
        assert!(
            loss.iter().any(
                |q| matches!(q, LossQuery::Refs { names, .. } if names.iter().any(|n| n == name))
            ),
            "{args}: {loss:?}"
        );
        assert!(!ran.iter().any(|a| a == "--"), "{args} runs {ran:?}");
    };
    refs("branch -D -- feature", "refs/heads/feature");
    refs("branch -d -f -- feature", "refs/heads/feature");
    refs("branch -f -- feature HEAD~1", "refs/heads/feature");
    refs("branch -M -- feature main", "refs/heads/main");
    refs(
        "update-ref -- refs/heads/feature HEAD~1",
        "refs/heads/feature",
    );
    refs("update-ref -d -- refs/heads/feature", "refs/heads/feature");
    refs("tag -d -- v1", "refs/tags/v1");
    refs("tag -f -- v1 HEAD~1", "refs/tags/v1");
    refs("worktree add -B feature -- build/wt", "refs/heads/feature");
    let (_, l) = loss("switch --discard-changes -- feature");
    assert!(matches!(l[0], LossQuery::Files(_)), "{l:?}");
    let (_, l) = loss("mv -f -- a.txt b.txt");
    assert!(matches!(l[0], LossQuery::MoveOnto { .. }), "{l:?}");
    let (_, l) = loss("worktree remove --force -- build/wt");
    assert!(matches!(l[0], LossQuery::Worktree { .. }), "{l:?}");
    let (_, l) = loss("remote remove -- origin");
    assert!(matches!(l[0], LossQuery::RemoteRefs { .. }), "{l:?}");
}

#[test]
fn a_dashdash_before_a_subcommand_leaves_no_subcommand() {
    for args in [
        "remote -- remove origin",
        "worktree -- add build/wt",
        "bisect -- bad",
    ] {
        assert!(
            matches!(v(args), Verdict::Refused { .. } | Verdict::Invalid { .. }),
            "{args}: {:?}",
            v(args)
        );
    }
    // `stash -- x` is `stash push -- x`, as git reads it.
    assert_eq!(ran("stash -- a.txt"), ["stash", "push", "--", "a.txt"]);
}

/// Whether `text` has kana or kanji in it.
fn japanese(text: &str) -> bool {
    text.chars()
        .any(|c| ('\u{3040}'..='\u{30ff}').contains(&c) || ('\u{4e00}'..='\u{9fff}').contains(&c))
}

/// The English the Brain reads is unchanged by the typed reasons.
#[test]
fn refusals_read_as_before_in_english() {
    let Verdict::Refused { why } = v("rebase --exec=make HEAD~1") else {
        panic!("--exec must be refused");
    };
    assert_eq!(
        why.reason(),
        "`--exec=make` is refused for `git rebase`: it runs a shell command after each commit"
    );
    assert_eq!(
        why.hint(),
        "leave the option out; work_vcs never runs editors, pagers, signing programs or \
         commands of the caller's choosing"
    );
    let Verdict::Invalid { why } = v("reset --m") else {
        panic!("--m is ambiguous");
    };
    assert!(
        why.reason()
            .starts_with("`--m` is ambiguous for `git reset`: it could be `--"),
        "{}",
        why.reason()
    );
    let Verdict::Refused { why } = v("merge -s mine x") else {
        panic!("a foreign strategy must be refused");
    };
    assert_eq!(
        why.hint(),
        "use one of ort, recursive, resolve, octopus, ours, subtree"
    );
}

/// A Japanese session reads every kind of refusal and every reading problem in Japanese: the
/// reason and the hint, the command's words kept as given.
#[test]
fn refusals_read_japanese_in_a_japanese_session() {
    use crate::catalogue::{Lang, sync_scope};
    // One command line per kind of refusal / problem.
    let refused = [
        "-c core.pager=x status",
        "send-email x",
        "stash save",
        "frobnicate",
        "branch --frobnicate",
        "rebase --exec=make HEAD~1",
        "clean -i",
        "worktree add ../w",
        "worktree add w",
        "checkout -- ../x",
        "blame --contents ../x x",
        "config --file=../x --list",
        "fetch ext::sh",
        "fetch foo://h/r",
        "fetch origin main:main",
        "merge -s mine x",
        "pull --rebase=interactive",
        "am x",
        "config --global user.name x",
        "config core.pager less",
        "config pull.rebase interactive",
        "update-ref -d HEAD",
        "update-ref main HEAD",
    ];
    let unread = [
        "",
        "git status",
        "--frobnicate branch",
        "--no-pager",
        "stash frobnicate",
        "worktree",
        "reset --m",
        "branch -- --x",
        "branch -u",
        "grep -- foo",
        "reset nothere",
        "tag -a v2",
    ];
    sync_scope(Lang::Ja, || {
        let mut wrong = Vec::new();
        for args in refused {
            match v(args) {
                Verdict::Refused { why } if japanese(&why.reason()) && japanese(&why.hint()) => {}
                other => wrong.push(format!("{args}: {other:?}")),
            }
        }
        for args in unread {
            match v(args) {
                Verdict::Invalid { why } if japanese(&why.reason()) => {}
                other => wrong.push(format!("{args}: {other:?}")),
            }
        }
        assert!(wrong.is_empty(), "{wrong:#?}");
        let Verdict::Refused { why } = v("rebase --exec=make HEAD~1") else {
            unreachable!()
        };
        assert!(why.reason().contains("`--exec=make`"), "{}", why.reason());
    });
}
