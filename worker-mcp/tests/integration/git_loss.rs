//! What an operation would lose, computed against real repositories: every query of
//! `GitRepo::would_lose`, each checked against what git then actually does where that is
//! cheap to show.

use std::path::PathBuf;

use butler_testkit::World;
use butler_worker::git::{FilesQuery, GitRepo, LossQuery, Lost, Source, Untracked};

/// The test kit's world with one project (`work`).
struct Scratch {
    w: World,
}

impl Scratch {
    /// A repository on `main` with `a.txt`, `b.txt` and `.gitignore` (ignoring `*.log`).
    fn new() -> (Scratch, GitRepo) {
        let s = Scratch { w: World::unborn() };
        s.write("a.txt", "a\n");
        s.write("b.txt", "b\n");
        s.write(".gitignore", "*.log\n");
        s.commit("first");
        let repo = GitRepo::discover(&s.work())
            .expect("discover")
            .with_command_env(s.w.env.clone());
        (s, repo)
    }

    fn work(&self) -> PathBuf {
        self.w.project.clone()
    }

    fn git(&self, args: &[&str]) -> String {
        self.w.git(&self.w.project, args)
    }

    fn write(&self, rel: &str, content: &str) {
        self.w.write(rel, content);
    }

    fn commit(&self, message: &str) -> String {
        self.w.commit(&self.w.project, message)
    }
}

fn lose(repo: &GitRepo, q: LossQuery) -> Vec<Lost> {
    repo.would_lose(&[q], &[]).expect("computes")
}

fn paths(lost: &[Lost]) -> Vec<String> {
    lost.iter()
        .map(|l| match l {
            Lost::Edits { path } => format!("edits:{path}"),
            Lost::StagedVersion { path } => format!("staged:{path}"),
            Lost::Untracked { path } => format!("untracked:{path}"),
            Lost::Ignored { path } => format!("ignored:{path}"),
            other => format!("{other:?}"),
        })
        .collect()
}

fn hard_to(rev: &str) -> LossQuery {
    LossQuery::Files(FilesQuery {
        source: Source::Tree(rev.to_owned()),
        pathspecs: None,
        worktree: true,
        index: true,
        edits: true,
        untracked: Untracked::All,
        overlay: false,
    })
}

#[test]
fn a_hard_reset_loses_edits_and_staged_files_but_not_untracked_ones() {
    let (s, repo) = Scratch::new();
    s.write("a.txt", "edited\n");
    s.write("new.txt", "staged new\n");
    s.git(&["add", "new.txt"]);
    s.write("scratch.txt", "untracked, survives\n");
    s.write("debug.log", "ignored, survives\n");
    let lost = lose(&repo, hard_to("HEAD"));
    assert_eq!(paths(&lost), ["edits:a.txt", "edits:new.txt"]);
    // What git does agrees: both are gone, the untracked files stay.
    s.git(&["reset", "-q", "--hard"]);
    assert_eq!(
        std::fs::read_to_string(s.work().join("a.txt")).unwrap(),
        "a\n"
    );
    assert!(!s.work().join("new.txt").exists());
    assert!(s.work().join("scratch.txt").exists() && s.work().join("debug.log").exists());
}

#[test]
fn a_hard_reset_overwrites_untracked_files_the_target_tracks() {
    let (s, repo) = Scratch::new();
    s.write("later.txt", "committed later\n");
    s.commit("second");
    s.git(&["rm", "-q", "later.txt"]);
    s.commit("third: later.txt gone");
    s.write("later.txt", "precious untracked\n");
    let lost = lose(&repo, hard_to("HEAD~1"));
    assert_eq!(paths(&lost), ["untracked:later.txt"]);
    assert!(
        lose(&repo, hard_to("HEAD")).is_empty(),
        "HEAD does not track it"
    );
}

#[test]
fn nothing_is_lost_when_the_tree_is_clean() {
    let (_s, repo) = Scratch::new();
    assert!(lose(&repo, hard_to("HEAD")).is_empty());
    assert!(
        lose(
            &repo,
            LossQuery::Refs {
                names: vec!["refs/heads/main".into()],
                to: Some("HEAD".into())
            }
        )
        .is_empty()
    );
}

#[test]
fn restoring_paths_loses_only_their_edits() {
    let (s, repo) = Scratch::new();
    s.write("a.txt", "edited a\n");
    s.write("b.txt", "edited b\n");
    let q = |specs: &[&str]| {
        LossQuery::Files(FilesQuery {
            source: Source::Index,
            pathspecs: Some(specs.iter().map(|s| (*s).to_owned()).collect()),
            worktree: true,
            index: false,
            edits: true,
            untracked: Untracked::None,
            overlay: true,
        })
    };
    assert_eq!(paths(&lose(&repo, q(&["a.txt"]))), ["edits:a.txt"]);
    assert_eq!(
        paths(&lose(&repo, q(&["*.txt"]))),
        ["edits:a.txt", "edits:b.txt"],
        "pathspecs match as git matches them"
    );
    s.git(&["add", "a.txt"]);
    assert!(
        lose(&repo, q(&["a.txt"])).is_empty(),
        "staged edits survive a restore from the index"
    );
}

#[test]
fn deleting_a_branch_loses_only_commits_nothing_else_reaches() {
    let (s, repo) = Scratch::new();
    s.git(&["switch", "-q", "-c", "topic"]);
    s.write("t.txt", "t\n");
    s.commit("topic work");
    s.git(&["switch", "-q", "main"]);
    s.git(&["branch", "merged"]);
    let q = |name: &str| LossQuery::Refs {
        names: vec![format!("refs/heads/{name}")],
        to: None,
    };
    let lost = lose(&repo, q("topic"));
    assert!(
        matches!(&lost[..], [Lost::Commits { count: 1, commits }] if commits[0].ends_with("topic work")),
        "{lost:?}"
    );
    assert!(
        lose(&repo, q("merged")).is_empty(),
        "main still has its commits"
    );
    assert!(lose(&repo, q("no-such-branch")).is_empty());
}

#[test]
fn moving_the_current_branch_back_loses_the_commits_above() {
    let (s, repo) = Scratch::new();
    s.commit("second");
    let lost = lose(
        &repo,
        LossQuery::Refs {
            names: vec!["refs/heads/main".into()],
            to: Some("HEAD~1".into()),
        },
    );
    assert!(
        matches!(&lost[..], [Lost::Commits { count: 1, .. }]),
        "{lost:?}"
    );
    s.git(&["branch", "keep"]);
    assert!(
        lose(
            &repo,
            LossQuery::Refs {
                names: vec!["refs/heads/main".into()],
                to: Some("HEAD~1".into()),
            }
        )
        .is_empty(),
        "another branch keeps them"
    );
}

#[test]
fn deleting_a_tag_loses_the_tag() {
    let (s, repo) = Scratch::new();
    s.git(&["tag", "v1"]);
    let lost = lose(
        &repo,
        LossQuery::Refs {
            names: vec!["refs/tags/v1".into()],
            to: None,
        },
    );
    assert!(
        matches!(&lost[..], [Lost::Tag { name, target }] if name == "v1" && target.ends_with("first")),
        "{lost:?}"
    );
}

#[test]
fn dropping_a_stash_names_its_files() {
    let (s, repo) = Scratch::new();
    s.write("a.txt", "stashed edit\n");
    s.write("u.txt", "untracked\n");
    s.git(&["stash", "push", "-q", "-u", "-m", "wip"]);
    let lost = lose(&repo, LossQuery::Stashes { which: None });
    assert!(
        matches!(&lost[..], [Lost::Stash { name, message, files }]
            if name == "stash@{0}" && message.contains("wip") && files.contains(&"a.txt".to_owned()) && files.contains(&"u.txt".to_owned())),
        "{lost:?}"
    );
    assert!(
        lose(
            &repo,
            LossQuery::Stashes {
                which: Some(vec!["stash@{3}".into()])
            }
        )
        .is_empty()
    );
}

#[test]
fn clean_lists_what_its_dry_run_would_remove() {
    let (s, repo) = Scratch::new();
    s.write("u.txt", "untracked\n");
    s.write("d/u.txt", "untracked\n");
    s.write("x.log", "ignored\n");
    let lost = lose(
        &repo,
        LossQuery::Clean {
            args: vec!["--force".into()],
        },
    );
    assert_eq!(paths(&lost), ["untracked:u.txt"]);
    let lost = lose(
        &repo,
        LossQuery::Clean {
            args: vec!["--force".into(), "-d".into(), "-x".into()],
        },
    );
    assert_eq!(
        paths(&lost),
        ["untracked:d/", "untracked:u.txt", "untracked:x.log"]
    );
    assert!(s.work().join("u.txt").exists(), "a dry run removes nothing");
}

#[test]
fn conflict_markers_are_not_work_but_resolutions_are() {
    let (s, repo) = Scratch::new();
    s.git(&["switch", "-q", "-c", "other"]);
    s.write("a.txt", "theirs\n");
    s.commit("theirs");
    s.git(&["switch", "-q", "main"]);
    s.write("a.txt", "ours\n");
    s.commit("ours");
    let merge = s.w.git_output(&s.w.project, &["merge", "-q", "other"]);
    assert!(!merge.status.success(), "conflicts");
    assert!(
        lose(&repo, LossQuery::Resolution).is_empty(),
        "only git's markers so far"
    );
    s.write("a.txt", "resolved by hand\n");
    assert_eq!(paths(&lose(&repo, LossQuery::Resolution)), ["edits:a.txt"]);
    s.git(&["add", "a.txt"]);
    assert_eq!(
        paths(&lose(&repo, LossQuery::Resolution)),
        ["edits:a.txt"],
        "staged resolutions count too"
    );
}

#[test]
fn reflog_expiry_lists_the_entries_it_would_prune() {
    let (s, repo) = Scratch::new();
    s.commit("second");
    s.git(&["reset", "-q", "--hard", "HEAD~1"]);
    let lost = lose(
        &repo,
        LossQuery::Reflog {
            args: vec![
                "expire".into(),
                "--expire-unreachable=now".into(),
                "--all".into(),
            ],
        },
    );
    assert!(
        matches!(&lost[..], [Lost::ReflogEntries { count, entries }] if *count >= 1 && entries.iter().any(|e| e.contains("second"))),
        "{lost:?}"
    );
}

#[test]
fn pruning_lists_unreachable_commits() {
    let (s, repo) = Scratch::new();
    s.commit("doomed");
    s.git(&["reset", "-q", "--hard", "HEAD~1"]);
    s.git(&["reflog", "expire", "--expire=now", "--all"]);
    let lost = lose(
        &repo,
        LossQuery::Unreachable {
            expire: "now".into(),
        },
    );
    assert!(
        matches!(&lost[..], [Lost::UnreachableObjects { commits: 1, sample, note: None, .. }] if sample[0].ends_with("doomed")),
        "{lost:?}"
    );
}

#[test]
fn removing_a_worktree_by_force_loses_what_is_in_it() {
    let (s, repo) = Scratch::new();
    s.write(".gitignore", "*.log\nwt/\n");
    s.commit("ignore wt");
    s.git(&["worktree", "add", "-q", "wt", "-b", "side"]);
    s.write("wt/a.txt", "edited in wt\n");
    s.write("wt/new.txt", "new in wt\n");
    let lost = lose(&repo, LossQuery::Worktree { path: "wt".into() });
    assert_eq!(paths(&lost), ["edits:wt/a.txt", "untracked:wt/new.txt"]);
}

#[test]
fn forced_rm_and_mv_lose_only_unrecorded_content() {
    let (s, repo) = Scratch::new();
    s.write("a.txt", "edited\n");
    let lost = lose(
        &repo,
        LossQuery::EditedPaths {
            pathspecs: vec!["a.txt".into(), "b.txt".into()],
        },
    );
    assert_eq!(paths(&lost), ["edits:a.txt"], "b.txt is recorded as it is");
    s.write("dest.txt", "untracked destination\n");
    let lost = lose(
        &repo,
        LossQuery::MoveOnto {
            sources: vec!["b.txt".into()],
            dest: "dest.txt".into(),
        },
    );
    assert_eq!(paths(&lost), ["untracked:dest.txt"]);
    let lost = lose(
        &repo,
        LossQuery::MoveOnto {
            sources: vec!["a.txt".into()],
            dest: "b.txt".into(),
        },
    );
    assert!(lost.is_empty(), "b.txt is recorded: {lost:?}");
}

#[test]
fn rebasing_onto_another_base_loses_the_commits_left_behind() {
    let (s, repo) = Scratch::new();
    let base = s.commit("base");
    s.git(&["switch", "-q", "-c", "topic"]);
    s.commit("topic 1");
    s.commit("topic 2");
    // `rebase --onto main HEAD~1`: "topic 1" is left behind.
    let lost = lose(
        &repo,
        LossQuery::Commits {
            tip: "HEAD".into(),
            gone: vec!["refs/heads/topic".into(), "HEAD".into()],
            kept: vec![base.clone()],
            replayed_from: Some("HEAD~1".into()),
        },
    );
    assert!(
        matches!(&lost[..], [Lost::Commits { count: 1, commits }] if commits[0].ends_with("topic 1")),
        "{lost:?}"
    );
    let lost = lose(
        &repo,
        LossQuery::Commits {
            tip: "HEAD".into(),
            gone: vec!["refs/heads/topic".into(), "HEAD".into()],
            kept: vec![base],
            replayed_from: Some("main".into()),
        },
    );
    assert!(
        lost.is_empty(),
        "everything above main is replayed: {lost:?}"
    );
}

#[test]
fn switching_overwrites_ignored_files_the_target_tracks() {
    let (s, repo) = Scratch::new();
    s.git(&["switch", "-q", "-c", "other"]);
    s.write("keep.log", "tracked on other\n");
    s.git(&["add", "-f", "keep.log"]);
    s.commit("track a log");
    s.git(&["switch", "-q", "main"]);
    s.write("keep.log", "my ignored notes\n");
    let lost = lose(
        &repo,
        LossQuery::Files(FilesQuery {
            source: Source::Tree("other".into()),
            pathspecs: None,
            worktree: true,
            index: true,
            edits: false,
            untracked: Untracked::IgnoredOnly,
            overlay: false,
        }),
    );
    assert_eq!(paths(&lost), ["ignored:keep.log"]);
    s.git(&["switch", "-q", "other"]);
    assert_eq!(
        std::fs::read_to_string(s.work().join("keep.log")).unwrap(),
        "tracked on other\n",
        "git did overwrite it"
    );
}

#[test]
fn pruning_and_removing_remotes_weigh_commits_only_they_reach() {
    let (s, repo) = Scratch::new();
    let remote = s.w.path("up.git");
    s.git(&["init", "-q", "--bare", remote.to_str().expect("utf-8")]);
    s.git(&["remote", "add", "up", remote.to_str().expect("utf-8")]);
    s.git(&["push", "-q", "up", "main"]);
    s.git(&["switch", "-q", "-c", "gone"]);
    s.commit("only on the remote");
    s.git(&["push", "-q", "up", "gone"]);
    s.git(&["switch", "-q", "main"]);
    s.git(&["branch", "-q", "-D", "gone"]);
    s.git(&["fetch", "-q", "up"]);
    let remove = lose(
        &repo,
        LossQuery::RemoteRefs {
            remote: "up".into(),
        },
    );
    assert!(
        matches!(&remove[..], [Lost::Commits { count: 1, commits }] if commits[0].ends_with("only on the remote")),
        "{remove:?}"
    );
    let stale = || {
        lose(
            &repo,
            LossQuery::StaleRemoteRefs {
                remotes: Some(vec!["up".into()]),
            },
        )
    };
    assert!(stale().is_empty(), "the remote still has it");
    // Deleted on the other side (not by a push from here, which would drop the tracking ref).
    s.git(&[
        "--git-dir",
        remote.to_str().expect("utf-8"),
        "branch",
        "-q",
        "-D",
        "gone",
    ]);
    assert!(
        matches!(&stale()[..], [Lost::Commits { count: 1, .. }]),
        "{:?}",
        stale()
    );
}

#[test]
fn unstaging_loses_only_a_staged_version_the_file_does_not_have() {
    let (s, repo) = Scratch::new();
    let unstage = |path: &str| {
        LossQuery::Files(FilesQuery {
            source: Source::Tree("HEAD".into()),
            pathspecs: Some(vec![path.to_owned()]),
            worktree: false,
            index: true,
            edits: true,
            untracked: Untracked::None,
            overlay: false,
        })
    };
    s.write("a.txt", "staged and in the file\n");
    s.git(&["add", "a.txt"]);
    assert!(
        lose(&repo, unstage("a.txt")).is_empty(),
        "the file keeps it"
    );
    s.write("b.txt", "staged only\n");
    s.git(&["add", "b.txt"]);
    s.write("b.txt", "edited after staging\n");
    assert_eq!(paths(&lose(&repo, unstage("b.txt"))), ["staged:b.txt"]);
    assert_eq!(
        paths(&lose(&repo, hard_to("HEAD"))),
        ["edits:a.txt", "edits:b.txt", "staged:b.txt"],
        "a hard reset loses both versions of b.txt"
    );
}
