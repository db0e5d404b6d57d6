//! Decisions over hand-written command lines, against a table of repository facts. The
//! spellings generated from git's own option lists run in `tests/e2e/work_vcs_spellings.rs`.

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

fn canonical(args: &str) -> Vec<String> {
    match v(args) {
        Verdict::Run { args } | Verdict::RunUnlessLoss { args, .. } => args,
        other => panic!("`{args}` must run, got {other:?}"),
    }
}

fn loss(args: &str) -> (Vec<String>, Vec<LossQuery>) {
    match v(args) {
        Verdict::RunUnlessLoss { args, loss, .. } => (args, loss),
        other => panic!("`{args}` must weigh a loss, got {other:?}"),
    }
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
    assert_eq!((tool, subcommand.as_str()), ("work_history", "log"));
    assert_eq!(suggestion, r#"work_history(n=5, path="src/")"#);
    for (args, tool) in [
        ("--no-pager status", "work_observe"),
        ("push origin", "work_publish"),
        ("-P diff", "work_diff"),
        ("commit -m x", "work_record"),
        ("shortlog", "work_history"),
    ] {
        assert!(
            matches!(v(args), Verdict::UseProperTool { tool: t, .. } if t == tool),
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
fn options_that_run_programs_are_refused_in_every_spelling() {
    for args in [
        "rebase --exec make main",
        "rebase --exe=make main",
        "rebase -x make main",
        "rebase -xmake main",
        "rebase --interactive main",
        "rebase -i main",
        "rebase --edit-todo",
        "fetch --upload-pack=/bin/x origin",
        "fetch --upload-p /bin/x origin",
        "fetch --upl=/bin/x origin",
        "pull --upload-pack x",
        "ls-remote --exec=x origin",
        "ls-remote --exe x origin",
        "merge -e main",
        "merge --ed main",
        "merge --verify-sig main",
        "merge -S main",
        "merge -Skey main",
        "merge --gpg-s main",
        "cherry-pick -xe main",
        "cherry-pick --edi main",
        "revert -e main",
        "tag -s v2",
        "tag -ukey v2",
        "tag --local-u=key v2",
        "tag -v v1",
        "tag -e v2",
        "grep -Oless x",
        "grep --open-files-in-pager=less x",
        "grep --open x",
        "grep --textconv x",
        "cat-file --textconv HEAD:x",
        "cat-file --filt HEAD:x",
        "blame --textconv x",
        "branch --edit-d",
        "config -e",
        "config --ed",
        "config edit",
        "pull --rebase=interactive",
        "pull -ri",
        "pull -rinteractive",
        "merge -s custom main",
        "merge --strategy=custom main",
        "pull -scustom",
        "stash show --ext-diff",
        "stash list --show-signature",
        "reflog show --format=%G?",
        "checkout -p x",
        "restore --patch x",
        "stash push -p",
        "clean -i",
        "am -i",
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
    // A negation turns the program off.
    assert_eq!(
        canonical("merge --no-edit --no-gpg-sign main"),
        ["merge", "--no-edit", "--no-gpg-sign", "main"]
    );
}

#[test]
fn transports_that_run_programs_are_refused() {
    for args in [
        "remote add x ext::sh",
        "remote add x ext::sh%20-c%20touch%20x",
        "remote set-url origin fd::3",
        "fetch foo::bar",
        "fetch weird://x",
        "ls-remote ext::sh",
        "pull ext::sh main",
        "fetch origin main:main",
        "fetch origin +refs/heads/*:refs/heads/*",
        "pull origin +main",
        "fetch --force origin",
        "fetch -P origin",
        "fetch --depth=1 origin",
        "fetch --refmap=x origin",
        "remote add --mirror=fetch x https://example.invalid/x",
    ] {
        assert!(refused(args), "`{args}` must be refused, got {:?}", v(args));
    }
    ran("remote add x https://example.invalid/x.git");
    ran("remote add x git@example.invalid:o/x.git");
    ran("fetch origin");
    canonical("fetch --prune origin main");
}

#[test]
fn files_outside_the_project_are_refused() {
    for args in [
        "blame --contents=/etc/passwd x",
        "blame --contents ../x x",
        "ls-files -X ../x",
        "ls-files --exclude-from=/x",
        "merge -F ~/msg main",
        "merge --file=/tmp/m main",
        "tag -a -F /etc/hostname v2",
        "worktree add /tmp/x",
        "worktree add ../x",
        "worktree add wt",
        "worktree move build/wt ../y",
        "worktree remove ../other",
        "checkout -- ../x",
        "checkout main -- /etc/passwd",
        "restore /etc/passwd",
        "restore :(top)../x",
        "rm -- ../x",
        "config --file=../x --list",
        "config --file ../x user.name",
        "config --global user.name x",
        "config set --system user.name x",
        "reset --pathspec-from-file=/etc/x",
        "grep foo -- /etc",
        "grep foo ../..",
        "stash push -- ../x",
    ] {
        assert!(refused(args), "`{args}` must be refused, got {:?}", v(args));
    }
    ran("worktree add build/wt");
    ran("config --global --get user.name");
    ran("config get --global user.name");
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
        let Verdict::Refused { hint, .. } = v(args) else {
            panic!("`{args}` must be refused");
        };
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
    for args in [
        "config user.name Someone",
        "config User.Email a@b",
        "config set user.email a@b",
        "config branch.topic.remote origin",
        "config branch.my.dotted.name.merge refs/heads/x",
        "config pull.rebase true",
        "config --unset branch.topic.remote",
        "config advice.detachedHead false",
        "config core.pager",
        "config --get core.pager",
        "config --list",
        "config get alias.st",
    ] {
        ran(args);
    }
    assert!(refused("config pull.rebase interactive"));
    assert!(refused("config branch.x.rebase i"));
}

#[test]
fn loss_is_weighed_by_effect_in_every_spelling() {
    for args in [
        "reset --hard",
        "reset --har",
        "reset --hard HEAD~1",
        "reset HEAD~1",
        "reset --merge",
        "reset --keep HEAD~1",
        "clean -f",
        "clean -fdx",
        "clean --force -d",
        "branch -D topic",
        "branch --delete --force topic",
        "branch --del --forc topic",
        "branch -df topic",
        "branch -fd topic",
        "branch -f main HEAD~1",
        "branch -M topic main",
        "branch -C topic main",
        "branch -m -f topic main",
        "stash drop",
        "stash drop stash@{1}",
        "stash clear",
        "checkout -- src/a.rs",
        "checkout .",
        "checkout a.txt",
        "checkout -f main",
        "checkout --force main",
        "checkout main a.txt",
        "checkout --ours a.txt",
        "checkout -B main HEAD~1",
        "restore src/a.rs",
        "restore --staged --worktree src/a.rs",
        "restore -s HEAD~1 a",
        "restore --source=main a",
        "switch --discard-changes main",
        "switch --disc main",
        "switch -f main",
        "switch -C main HEAD~1",
        "rm -f a",
        "rm -rf dir",
        "mv -f a b",
        "reflog expire --expire=now --all",
        "reflog delete HEAD@{1}",
        "gc --prune=now",
        "gc --prune=1.hour.ago",
        "update-ref -d refs/heads/x",
        "update-ref refs/heads/main HEAD~1",
        "tag -d v1",
        "tag --del v1",
        "tag -f v1 HEAD~1",
        "worktree remove --force build/wt",
        "worktree add -B main build/wt HEAD~1",
        "merge --abort",
        "rebase --abort",
        "rebase --skip",
        "rebase --onto main feature",
        "cherry-pick --abort",
        "revert --skip",
        "am --abort",
        "reset -- a",
        "reset HEAD~1 -- a",
        "stash pop",
        "fetch --prune origin",
        "fetch -p --all",
        "pull -p",
        "remote prune origin",
        "remote update --prune",
        "remote remove origin",
        "remote rm origin",
        "branch -d -r origin/x",
        "update-ref -d refs/stash",
        "rebase --autostash main",
        "merge --autostash feature",
        "pull --autostash",
    ] {
        loss(args);
    }
    for args in [
        "branch -d topic",
        "branch topic",
        "clean -n",
        "clean -nd",
        "clean --dry-run -f",
        "clean -d",
        "rm --cached a",
        "rm a",
        "gc",
        "gc --prune",
        "stash pop --index",
        "stash push -m wip",
        "stash",
        "tag v2",
        "tag -a -m msg v2",
        "reflog expire -n --expire=now --all",
        "worktree remove build/wt",
        "worktree prune",
        "rebase main",
        "merge --no-overwrite-ignore feature",
        "cherry-pick feature",
        "fetch origin",
        "pull --rebase",
        "remote prune -n origin",
        "remote update",
    ] {
        assert!(
            matches!(v(args), Verdict::Run { .. }),
            "`{args}` must run, got {:?}",
            v(args)
        );
    }
}

#[test]
fn checkout_and_reset_are_written_without_ambiguity() {
    assert_eq!(ran("checkout").len(), 1);
    // Switching lines has its own tool; `work_vcs` keeps the spellings it does not cover.
    for (args, tool) in [
        ("checkout main", "work_switch_line"),
        ("checkout only-remote", "work_switch_line"),
        ("switch main", "work_switch_line"),
        ("switch -c topic", "work_new_line"),
        ("checkout -b topic", "work_new_line"),
        ("merge feature", "work_merge_line"),
    ] {
        assert!(
            matches!(v(args), Verdict::UseProperTool { tool: t, .. } if t == tool),
            "`{args}` has {tool}: {:?}",
            v(args)
        );
    }
    let (args, loss_) = loss("checkout a.txt");
    assert_eq!(args, ["checkout", "--", "a.txt"]);
    assert!(matches!(&loss_[..], [LossQuery::Files(f)] if f.source == Source::Index && f.edits));
    let (args, _) = loss("checkout main a.txt");
    assert_eq!(args, ["checkout", "main", "--", "a.txt"]);
    let (args, _) = loss("checkout -");
    assert_eq!(args, ["checkout", "-", "--"]);
    let (args, _) = loss("reset --har");
    assert_eq!(args, ["reset", "--hard", "--"]);
    let (args, _) = loss("reset HEAD~1");
    assert_eq!(args, ["reset", "HEAD~1", "--"]);
    assert_eq!(canonical("reset a.txt"), ["reset", "--", "a.txt"]);
    assert_eq!(ran("stash -m wip"), ["stash", "push", "--message=wip"]);
    assert_eq!(ran("stash"), ["stash", "push"]);
    assert_eq!(
        ran("reflog -5"),
        ["reflog", "show", "--no-ext-diff", "--no-textconv", "-5"]
    );
    assert_eq!(ran("remote -v"), ["remote", "--verbose"]);
    assert_eq!(
        ran("remote -v show origin"),
        ["remote", "--verbose", "show", "origin"]
    );
    assert_eq!(
        canonical("remote rm origin"),
        ["remote", "remove", "origin"]
    );
}

#[test]
fn names_starting_with_a_dash_are_not_names() {
    assert!(
        matches!(v("checkout -- -x"), Verdict::RunUnlessLoss { .. }),
        "after checkout's --: a path"
    );
    for args in [
        "merge -x",
        "tag -zz",
        "checkout -q -x",
        "branch -- -x",
        "config user.name --default=x",
        "config set user.name --comment=x",
    ] {
        assert!(
            matches!(v(args), Verdict::Refused { .. } | Verdict::Invalid { .. }),
            "{args}"
        );
    }
}

#[test]
fn ordinary_operations_run() {
    for args in [
        "branch",
        "branch -a",
        "branch -vv",
        "branch --list 'f*'",
        "branch --contains",
        "branch topic",
        "stash list",
        "stash show -p",
        "stash show --stat stash@{1}",
        "stash apply --index",
        "fetch origin",
        "pull --rebase origin main",
        "remote -v",
        "remote show origin",
        "remote get-url origin",
        "blame src/lib.rs",
        "blame -L 1,5 HEAD -- src/lib.rs",
        "rev-parse HEAD",
        "rev-parse --abbrev-ref HEAD",
        "rev-parse --show-toplevel",
        "rev-list --count HEAD",
        "describe --tags",
        "ls-files -m",
        "ls-tree -r HEAD",
        "cat-file -p HEAD",
        "show-ref",
        "for-each-ref --format=%(refname)",
        "merge-base HEAD main",
        "name-rev HEAD",
        "count-objects -v",
        "cherry main",
        "grep -n foo",
        "grep -e foo -- src",
        "check-ignore -v build",
        "ls-remote origin",
        "reflog",
        "reflog list",
        "worktree list",
        "switch --detach HEAD~1",
        "merge --squash feature",
        "merge --continue",
        "rebase --continue",
        "cherry-pick --continue",
        "tag -l",
        "tag -n",
        "version",
        "bisect start",
        "bisect bad HEAD",
        "bisect good HEAD~1",
        "bisect reset",
        "bisect log",
        "am --continue",
        "update-ref refs/heads/new HEAD",
        "mv a b",
        "gc --aggressive",
    ] {
        assert!(
            matches!(v(args), Verdict::Run { .. } | Verdict::RunUnlessLoss { .. }),
            "`{args}` must run, got {:?}",
            v(args)
        );
    }
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
        "am patch.mbox",
        "update-ref FOO HEAD",
        "update-ref -d HEAD",
        "update-ref --stdin",
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

/// git drops `--` for most commands and reads the words after it as ordinary arguments: every
/// check sees them, wherever they stand.
#[test]
fn words_after_a_dropped_dashdash_are_checked_like_any_other() {
    for args in [
        "config -- core.fsmonitor touch-marker",
        "config -- core.sshCommand x",
        "config -- protocol.ext.allow always",
        "config -- core.hooksPath hooks",
        "config -- core.bare true",
        "config -- alias.x !sh",
        "config --add -- core.pager x",
        "config set -- core.fsmonitor x",
        "config core.fsmonitor -- x",
        "fetch -- ext::sh",
        "fetch -- origin +refs/heads/*:refs/heads/*",
        "fetch origin -- refs/heads/main:refs/heads/main",
        "remote add -- x ext::sh",
        "remote set-url -- origin ext::sh",
        "ls-remote -- ext::sh",
        "pull -- ext::sh",
        "update-ref -- main HEAD",
        "worktree add -- ../out",
        "worktree add -- src",
    ] {
        assert!(
            matches!(v(args), Verdict::Refused { .. } | Verdict::Invalid { .. }),
            "{args}: {:?}",
            v(args)
        );
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

/// `config`, `ls-remote`, `grep` and `stash clear` stop reading options at the first
/// positional: what follows is a value, never an option.
#[test]
fn options_after_a_positional_are_values_where_git_stops() {
    for args in [
        "config user.name --default=x",
        "config user.name --comment=x",
        "config core.pager --default=x",
        "ls-remote origin --upload-pack=x",
        "grep foo --open-files-in-pager=x",
        "stash clear --quiet",
    ] {
        assert!(
            matches!(v(args), Verdict::Refused { .. } | Verdict::Invalid { .. }),
            "{args}: {:?}",
            v(args)
        );
    }
    // Options before the first positional are still options.
    assert_eq!(
        ran("config --get user.name"),
        ["config", "--get", "user.name"]
    );
    // Elsewhere git permutes: options after positionals are options.
    assert_eq!(ran("branch x --quiet"), ["branch", "x", "--quiet"]);
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
