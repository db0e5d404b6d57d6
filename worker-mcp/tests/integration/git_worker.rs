//! The git worker against real repositories in the test kit's hermetic world (git's global and
//! system configuration shut out, fixed identities and dates).

// Test scaffolding plays the user's side of the world (git as a person runs it, chmod, kill,
// building a helper binary); Butler's own children go through `butler_worker::process`.
#![allow(clippy::disallowed_methods)]

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use butler_testkit::{World, write_file as write};
use butler_worker::git::{Change, GitError, GitRepo, InProgress, RepoPath};

/// Opens `path` with git's children in the world's environment.
fn open(s: &World, path: &Path) -> GitRepo {
    GitRepo::discover(path)
        .expect("discover")
        .with_command_env(s.env.clone())
}

fn entries(repo: &GitRepo) -> Vec<(String, Change)> {
    let status = repo.status().expect("status");
    status
        .entries
        .iter()
        .map(|e| (e.path.display(), e.change))
        .collect()
}

/// A repository with one commit holding `a.txt` (two lines) and `keep.txt`.
fn with_one_commit(s: &World) -> (PathBuf, GitRepo) {
    let path = s.init("work");
    write(&path.join("a.txt"), "one\ntwo\n");
    write(&path.join("keep.txt"), "keep\n");
    s.commit(&path, "first");
    let repo = open(s, &path);
    (path, repo)
}

// ---------------------------------------------------------------- discover

#[test]
fn discover_from_a_subdirectory_finds_the_top() {
    let s = World::new();
    let path = s.init("r");
    std::fs::create_dir_all(path.join("src/deep")).expect("mkdir");
    let repo = GitRepo::discover(&path.join("src/deep")).expect("discover");
    assert_eq!(repo.workdir(), path.canonicalize().expect("canonical"));
    assert_eq!(
        repo.git_dir(),
        path.join(".git").canonicalize().expect("canonical")
    );
    assert_eq!(repo.common_dir(), repo.git_dir());
}

#[test]
fn discover_refuses_plain_directories_and_bare_repositories() {
    let s = World::new();
    let plain = s.path("plain");
    std::fs::create_dir(&plain).expect("mkdir");
    assert!(matches!(
        GitRepo::discover(&plain),
        Err(GitError::NotARepository)
    ));
    assert!(matches!(
        GitRepo::discover(&s.path("missing")),
        Err(GitError::NotARepository)
    ));
    let bare = s.bare("bare.git");
    assert!(matches!(
        GitRepo::discover(&bare),
        Err(GitError::BareRepository)
    ));
    if !Path::new("/.git").exists() {
        let root = GitRepo::discover(Path::new("/"));
        assert!(matches!(root, Err(GitError::NotARepository)), "{root:?}");
    }
}

#[test]
fn linked_worktree_has_its_own_git_dir_and_the_shared_common_dir() {
    let s = World::new();
    let (path, _) = with_one_commit(&s);
    let wt = s.path("wt");
    s.git(
        &path,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "side",
            wt.to_str().expect("utf8"),
        ],
    );
    let repo = open(&s, &wt);
    assert_eq!(repo.workdir(), wt.canonicalize().expect("canonical"));
    assert_eq!(
        repo.common_dir(),
        path.join(".git").canonicalize().expect("canonical")
    );
    assert_ne!(repo.git_dir(), repo.common_dir());
    assert_eq!(repo.head().expect("head").branch.as_deref(), Some("side"));
    write(&wt.join("w.txt"), "w\n");
    assert_eq!(entries(&repo), vec![("w.txt".into(), Change::Untracked)]);
}

// ---------------------------------------------------------------- head & state

#[test]
fn unborn_head_is_reported_with_its_branch() {
    let s = World::new();
    let path = s.init("r");
    let repo = open(&s, &path);
    let head = repo.head().expect("head");
    assert_eq!(head.branch.as_deref(), Some("main"));
    assert!(head.unborn && !head.detached && head.oid.is_none());
    assert!(repo.status().expect("status").is_clean());
    assert!(repo.recent_commits(5, None).expect("log").is_empty());
    assert_eq!(repo.destination().expect("destination"), None);
}

#[test]
fn detached_head_has_no_branch() {
    let s = World::new();
    let (path, repo) = with_one_commit(&s);
    let sha = s.git(&path, &["rev-parse", "HEAD"]).trim().to_string();
    s.git(&path, &["checkout", "-q", "--detach"]);
    let head = repo.head().expect("head");
    assert_eq!(head.branch, None);
    assert!(head.detached && !head.unborn);
    assert_eq!(head.oid.as_deref(), Some(sha.as_str()));
    s.git(&path, &["remote", "add", "origin", "/nowhere"]);
    assert_eq!(repo.destination().expect("destination"), None);
}

/// Two branches that change the same line of `a.txt`.
fn diverged(s: &World) -> (PathBuf, GitRepo) {
    let (path, repo) = with_one_commit(s);
    s.git(&path, &["checkout", "-q", "-b", "other"]);
    write(&path.join("a.txt"), "one\nother\n");
    s.commit(&path, "other side");
    s.git(&path, &["checkout", "-q", "main"]);
    write(&path.join("a.txt"), "one\nmain\n");
    s.commit(&path, "main side");
    (path, repo)
}

#[test]
fn merge_conflict_is_in_progress_and_conflicted() {
    let s = World::new();
    let (path, repo) = diverged(&s);
    assert_eq!(repo.operation_in_progress(), None);
    let out = s.git_output(&path, &["merge", "other"]);
    assert!(!out.status.success());
    assert_eq!(repo.operation_in_progress(), Some(InProgress::Merge));
    let status = repo.status().expect("status");
    assert_eq!(status.conflicted, vec![RepoPath::from_bytes("a.txt")]);
    assert!(
        status
            .entries
            .iter()
            .any(|e| e.change == Change::Conflicted)
    );
}

#[test]
fn rebase_conflict_is_in_progress() {
    let s = World::new();
    let (path, repo) = diverged(&s);
    let out = s.git_output(&path, &["rebase", "other"]);
    assert!(!out.status.success());
    assert_eq!(repo.operation_in_progress(), Some(InProgress::Rebase));
    assert_eq!(repo.status().expect("status").conflicted.len(), 1);
    assert!(repo.head().expect("head").detached);
}

// ---------------------------------------------------------------- status

#[test]
fn status_lists_every_kind_of_change_and_leaves_ignored_files_out() {
    let s = World::new();
    let (path, repo) = with_one_commit(&s);
    write(&path.join(".gitignore"), "*.log\nbuild/\n");
    write(&path.join("a.txt"), "one\ntwo\nthree\n");
    std::fs::remove_file(path.join("keep.txt")).expect("rm");
    write(&path.join("staged.txt"), "s\n");
    s.git(&path, &["add", "staged.txt"]);
    write(&path.join("newdir/inner/x.txt"), "x\n");
    write(&path.join("debug.log"), "noise\n");
    write(&path.join("build/out.bin"), "bin\n");
    let mut got = entries(&repo);
    got.sort();
    assert_eq!(
        got,
        vec![
            (".gitignore".into(), Change::Untracked),
            ("a.txt".into(), Change::Modified),
            ("keep.txt".into(), Change::Deleted),
            ("newdir/inner/x.txt".into(), Change::Untracked),
            ("staged.txt".into(), Change::Added),
        ]
    );
    let mut untracked: Vec<String> = repo
        .untracked_files()
        .expect("untracked")
        .iter()
        .map(RepoPath::display)
        .collect();
    untracked.sort();
    assert_eq!(untracked, vec![".gitignore", "newdir/inner/x.txt"]);
}

#[test]
fn type_change_is_reported() {
    let s = World::new();
    let (path, repo) = with_one_commit(&s);
    std::fs::remove_file(path.join("keep.txt")).expect("rm");
    std::os::unix::fs::symlink("a.txt", path.join("keep.txt")).expect("symlink");
    assert_eq!(
        entries(&repo),
        vec![("keep.txt".into(), Change::TypeChanged)]
    );
}

// ---------------------------------------------------------------- record

#[test]
fn record_all_saves_everything_but_ignored_files_and_keeps_the_message() {
    let s = World::new();
    let (path, repo) = with_one_commit(&s);
    write(&path.join(".gitignore"), "secret.env\n");
    write(&path.join("secret.env"), "TOKEN=1\n");
    write(&path.join("a.txt"), "changed\n");
    std::fs::remove_file(path.join("keep.txt")).expect("rm");
    write(&path.join("dir/new.txt"), "new\n");
    let message = "Fix the parser\n\n#50 was the cause\nRecord: 20260612-001";
    let sha = repo.record_all(message).expect("recorded");
    assert_eq!(sha, s.git(&path, &["rev-parse", "HEAD"]).trim());
    let files = s.git(&path, &["ls-tree", "-r", "--name-only", "HEAD"]);
    assert_eq!(files, ".gitignore\na.txt\ndir/new.txt\n");
    assert_eq!(
        s.git(&path, &["log", "-1", "--format=%B"]).trim_end(),
        message
    );
    assert!(repo.status().expect("status").is_clean());
    assert!(matches!(
        repo.record_all("again"),
        Err(GitError::NothingToRecord)
    ));
}

#[test]
fn record_all_works_in_an_unborn_repository() {
    let s = World::new();
    let path = s.init("r");
    let repo = open(&s, &path);
    assert!(matches!(
        repo.record_all("nothing"),
        Err(GitError::NothingToRecord)
    ));
    write(&path.join("first.txt"), "1\n");
    let sha = repo.record_all("first").expect("recorded");
    let head = repo.head().expect("head");
    assert_eq!(head.oid.as_deref(), Some(sha.as_str()));
    assert!(!head.unborn);
}

#[test]
fn refusing_pre_commit_hook_is_named_with_its_output() {
    let s = World::new();
    let (path, repo) = with_one_commit(&s);
    let hook = path.join(".git/hooks/pre-commit");
    butler_testkit::write_executable(
        &hook,
        "#!/bin/sh\necho 'lint: trailing whitespace in a.txt' >&2\nexit 1\n",
    );
    write(&path.join("a.txt"), "changed \n");
    match repo.record_all("try") {
        Err(GitError::HookRejected { hook, output_tail }) => {
            assert_eq!(hook.as_deref(), Some("pre-commit"));
            assert!(
                output_tail.contains("lint: trailing whitespace"),
                "{output_tail}"
            );
        }
        other => panic!("expected HookRejected, got {other:?}"),
    }
    assert_eq!(s.git(&path, &["rev-list", "--count", "HEAD"]).trim(), "1");
}

#[test]
fn refusing_commit_msg_hook_is_named() {
    let s = World::new();
    let (path, repo) = with_one_commit(&s);
    let hook = path.join(".git/hooks/commit-msg");
    butler_testkit::write_executable(
        &hook,
        "#!/bin/sh\necho 'message must mention an issue'\nexit 1\n",
    );
    write(&path.join("a.txt"), "changed\n");
    match repo.record_all("no issue") {
        Err(GitError::HookRejected { hook, output_tail }) => {
            assert_eq!(hook.as_deref(), Some("commit-msg"));
            assert!(
                output_tail.contains("must mention an issue"),
                "{output_tail}"
            );
        }
        other => panic!("expected HookRejected, got {other:?}"),
    }
}

#[test]
fn missing_identity_is_no_identity() {
    let s = World::new();
    let (path, _) = with_one_commit(&s);
    // Without this git may guess an identity from the user name and host name.
    s.git(&path, &["config", "user.useConfigOnly", "true"]);
    let repo = GitRepo::discover(&path)
        .expect("discover")
        .with_command_env(s.env_without_identity());
    write(&path.join("a.txt"), "changed\n");
    let result = repo.record_all("who");
    assert!(matches!(result, Err(GitError::NoIdentity)), "{result:?}");
}

#[test]
fn index_lock_blocks_recording_and_can_be_removed_only_unchanged() {
    let s = World::new();
    let (path, repo) = with_one_commit(&s);
    assert_eq!(repo.index_lock(), None);
    let lock_path = path.join(".git/index.lock");
    write(&lock_path, "");
    write(&path.join("a.txt"), "changed\n");
    let lock = repo.index_lock().expect("lock seen");
    assert!(matches!(
        repo.record_all("x"),
        Err(GitError::IndexLocked { .. })
    ));
    // Someone takes the lock anew: the old sighting must not remove it.
    std::fs::remove_file(&lock_path).expect("rm");
    write(&lock_path, "");
    let held = repo.lock_tree().expect("Butler's lock");
    assert!(matches!(
        repo.remove_index_lock(&held, &lock),
        Err(GitError::IndexLocked { .. })
    ));
    assert!(lock_path.exists());
    let fresh = repo.index_lock().expect("lock seen");
    repo.remove_index_lock(&held, &fresh).expect("removed");
    assert!(!lock_path.exists());
    repo.remove_index_lock(&held, &fresh).expect("gone is fine");
    repo.record_all_held(&held, "x")
        .expect("recorded after the lock went");
}

// ---------------------------------------------------------------- non-UTF-8 names

#[test]
fn non_utf8_file_name_round_trips_through_status_display_parse_and_diff() {
    let s = World::new();
    let (path, repo) = with_one_commit(&s);
    let name = OsStr::from_bytes(b"caf\xe9 \\x41.txt");
    write(&path.join(name), "bytes\n");
    let status = repo.status().expect("status");
    let entry = &status.entries[0];
    assert_eq!(entry.path.as_bytes(), b"caf\xe9 \\x41.txt");
    let shown = entry.path.display();
    assert_eq!(shown, "caf\\xe9 \\\\x41.txt");
    assert_eq!(
        serde_json::to_value(&entry.path).expect("json"),
        serde_json::json!(shown)
    );
    let parsed = repo.path_in_repo(&shown).expect("inside");
    assert_eq!(parsed, entry.path);
    let stats = repo.diff_overview(Some(&parsed)).expect("overview");
    assert_eq!(stats.len(), 1);
    assert_eq!((stats[0].change, stats[0].added), (Change::Added, 1));
    repo.record_all("add a latin-1 name").expect("recorded");
    let stats = repo.diff_overview(Some(&parsed)).expect("overview");
    assert!(stats.is_empty());
    let commits = repo.recent_commits(5, Some(&parsed)).expect("log");
    assert_eq!(commits.len(), 1);
    assert_eq!(commits[0].message, "add a latin-1 name");
    let sha = commits[0].sha.clone();
    let stats = repo
        .commit_overview(&sha, Some(&parsed))
        .expect("commit overview");
    assert_eq!(stats[0].path, parsed);
}

// ---------------------------------------------------------------- paths

#[test]
fn paths_that_leave_the_project_are_refused() {
    let s = World::new();
    let (path, repo) = with_one_commit(&s);
    let outside = s.path("outside");
    std::fs::create_dir(&outside).expect("mkdir");
    write(&outside.join("secret.txt"), "s\n");
    std::os::unix::fs::symlink(&outside, path.join("link")).expect("symlink");
    for bad in [
        "../x",
        "/etc/passwd",
        "link/secret.txt",
        "a/../../x",
        ".git/config",
        ".git",
    ] {
        assert!(
            matches!(repo.path_in_repo(bad), Err(GitError::OutsideProject)),
            "{bad} must be refused"
        );
    }
    let abs_outside = outside.join("secret.txt");
    assert!(matches!(
        repo.path_in_repo(abs_outside.to_str().expect("utf8")),
        Err(GitError::OutsideProject)
    ));
}

#[test]
fn paths_inside_the_project_are_normalised() {
    let s = World::new();
    let (path, repo) = with_one_commit(&s);
    std::fs::create_dir(path.join("src")).expect("mkdir");
    let rel = |p: &str| repo.path_in_repo(p).expect("inside").display();
    assert_eq!(rel("a.txt"), "a.txt");
    assert_eq!(rel("./src/../a.txt"), "a.txt");
    assert_eq!(rel("src/not-yet.rs"), "src/not-yet.rs");
    assert_eq!(
        rel(path.join("src/x.rs").to_str().expect("utf8")),
        "src/x.rs"
    );
    assert_eq!(rel("link-to-itself"), "link-to-itself");
    assert!(repo.path_in_repo(".").expect("top").is_root());
}

// ---------------------------------------------------------------- history

#[test]
fn recent_commits_are_newest_first_with_offset_times() {
    let s = World::new();
    let (path, repo) = with_one_commit(&s);
    write(&path.join("b.txt"), "b\n");
    s.commit(&path, "second\n\nwith a body");
    write(&path.join("a.txt"), "changed\n");
    s.commit(&path, "third");
    let all = repo.recent_commits(10, None).expect("log");
    let messages: Vec<&str> = all.iter().map(|c| c.message.as_str()).collect();
    assert_eq!(messages, vec!["third", "second\n\nwith a body", "first"]);
    assert_eq!(all[0].author_name, "Ada Author");
    assert_eq!(all[2].time, "2026-06-12T12:23:47+09:00");
    assert_eq!(repo.recent_commits(1, None).expect("log").len(), 1);
    let touching_a = repo
        .recent_commits(10, Some(&RepoPath::from_bytes("a.txt")))
        .expect("log");
    let messages: Vec<&str> = touching_a.iter().map(|c| c.message.as_str()).collect();
    assert_eq!(messages, vec!["third", "first"]);
    assert_eq!(
        touching_a,
        vec![all[0].clone(), all[2].clone()],
        "CLI and libgit2 agree"
    );
}

#[test]
fn commits_since_stops_at_known_commits_and_their_ancestors() {
    let s = World::new();
    let (path, repo) = with_one_commit(&s);
    let known = s.commit(&path, "known");
    s.git(&path, &["checkout", "-q", "-b", "side", "HEAD~1"]);
    let side = s.commit(&path, "side");
    s.git(&path, &["checkout", "-q", "main"]);
    let after = s.commit(&path, "after");
    s.git(
        &path,
        &["merge", "-q", "--no-ff", "-m", "merge side", "side"],
    );
    let merge = s.git(&path, &["rev-parse", "HEAD"]).trim().to_string();
    let is_known = |sha: &str| sha == known;
    let found: Vec<String> = repo
        .commits_since(&is_known, 100)
        .expect("walk")
        .into_iter()
        .map(|c| c.sha)
        .collect();
    // "first" is an ancestor of the known commit: hidden even though "side" leads to it.
    assert_eq!(found, vec![merge.clone(), after, side]);
    let limited = repo.commits_since(&is_known, 1).expect("walk");
    assert_eq!(limited.len(), 1);
    assert_eq!(limited[0].sha, merge);
    let nothing_known = repo.commits_since(&|_| false, 100).expect("walk");
    assert_eq!(nothing_known.len(), 5);
}

// ---------------------------------------------------------------- publish

/// A work repository cloned from a bare one that has one commit.
fn cloned(s: &World) -> (PathBuf, PathBuf, GitRepo) {
    let bare = s.bare("shared.git");
    let seed = s.init("seed");
    write(&seed.join("a.txt"), "a\n");
    s.commit(&seed, "seed");
    s.git(&seed, &["push", "-q", bare.to_str().expect("utf8"), "main"]);
    s.git(
        s.dir(),
        &["clone", "-q", bare.to_str().expect("utf8"), "work"],
    );
    let work = s.path("work");
    let repo = open(s, &work);
    (bare, work, repo)
}

#[test]
fn publish_to_a_local_bare_repository() {
    let s = World::new();
    let (bare, work, repo) = cloned(&s);
    let dest = repo
        .destination()
        .expect("destination")
        .expect("configured");
    assert_eq!(dest.remote, "origin");
    assert_eq!(dest.branch, "main");
    assert_eq!(dest.tracking_ref, "refs/remotes/origin/main");
    assert!(dest.configured);
    let none = repo.unpublished(&dest, 10).expect("unpublished");
    assert_eq!((none.count, none.behind), (0, 0));

    write(&work.join("b.txt"), "b\n");
    let first = repo.record_all("one").expect("recorded");
    write(&work.join("c.txt"), "c\n");
    let second = repo.record_all("two").expect("recorded");
    let pending = repo.unpublished(&dest, 1).expect("unpublished");
    assert_eq!(pending.count, 2);
    assert_eq!(pending.shas, vec![second.clone()]);
    let _ = first;

    let outcome = repo.publish(&dest).expect("published");
    assert!(!outcome.up_to_date && !outcome.upstream_set);
    assert_eq!(s.git(&bare, &["rev-parse", "main"]).trim(), second);
    assert_eq!(repo.unpublished(&dest, 10).expect("unpublished").count, 0);
    assert!(repo.publish(&dest).expect("published").up_to_date);
}

#[test]
fn publish_when_the_destination_moved_on_is_rejected() {
    let s = World::new();
    let (bare, work, repo) = cloned(&s);
    s.git(
        s.dir(),
        &["clone", "-q", bare.to_str().expect("utf8"), "other"],
    );
    let other = s.path("other");
    write(&other.join("theirs.txt"), "t\n");
    s.commit(&other, "theirs");
    s.git(&other, &["push", "-q", "origin", "main"]);

    write(&work.join("mine.txt"), "m\n");
    repo.record_all("mine").expect("recorded");
    let dest = repo
        .destination()
        .expect("destination")
        .expect("configured");
    assert!(matches!(repo.publish(&dest), Err(GitError::Rejected)));
    s.git(&work, &["fetch", "-q"]);
    let state = repo.unpublished(&dest, 10).expect("unpublished");
    assert_eq!((state.count, state.behind), (1, 1));
}

#[test]
fn publishing_a_new_branch_sets_its_upstream() {
    let s = World::new();
    let (bare, work, repo) = cloned(&s);
    s.git(&work, &["checkout", "-q", "-b", "feature"]);
    let dest = repo.destination().expect("destination").expect("inferred");
    assert_eq!(dest.branch, "feature");
    assert!(!dest.configured);
    // No tracking ref yet: unpublished counts what no origin ref has.
    assert_eq!(repo.unpublished(&dest, 10).expect("unpublished").count, 0);
    write(&work.join("f.txt"), "f\n");
    let sha = repo.record_all("feature work").expect("recorded");
    assert_eq!(repo.unpublished(&dest, 10).expect("unpublished").count, 1);
    let outcome = repo.publish(&dest).expect("published");
    assert!(outcome.upstream_set);
    assert_eq!(s.git(&bare, &["rev-parse", "feature"]).trim(), sha);
    assert_eq!(
        s.git(&work, &["config", "branch.feature.remote"]).trim(),
        "origin"
    );
    let now = repo
        .destination()
        .expect("destination")
        .expect("configured");
    assert!(now.configured);
    assert_eq!(now.tracking_ref, "refs/remotes/origin/feature");
}

#[test]
fn remote_hook_refusal_and_missing_remote_are_classified() {
    let s = World::new();
    let (bare, work, repo) = cloned(&s);
    let hook = bare.join("hooks/pre-receive");
    butler_testkit::write_executable(
        &hook,
        "#!/bin/sh\necho 'pushes are frozen today' >&2\nexit 1\n",
    );
    write(&work.join("x.txt"), "x\n");
    repo.record_all("x").expect("recorded");
    let dest = repo
        .destination()
        .expect("destination")
        .expect("configured");
    match repo.publish(&dest) {
        Err(GitError::HookRejected { hook, output_tail }) => {
            assert_eq!(hook.as_deref(), Some("pre-receive"));
            assert!(
                output_tail.contains("pushes are frozen today"),
                "{output_tail}"
            );
        }
        other => panic!("expected HookRejected, got {other:?}"),
    }
    s.git(
        &work,
        &[
            "remote",
            "set-url",
            "origin",
            s.path("gone.git").to_str().expect("utf8"),
        ],
    );
    assert!(matches!(repo.publish(&dest), Err(GitError::Unreachable)));
}

#[test]
fn destination_falls_back_to_origin_or_the_only_remote() {
    let s = World::new();
    let (path, repo) = with_one_commit(&s);
    assert_eq!(repo.destination().expect("destination"), None);
    s.git(&path, &["remote", "add", "upstream", "/somewhere"]);
    let dest = repo
        .destination()
        .expect("destination")
        .expect("only remote");
    assert_eq!((dest.remote.as_str(), dest.configured), ("upstream", false));
    s.git(&path, &["remote", "add", "mirror", "/elsewhere"]);
    assert_eq!(
        repo.destination().expect("destination"),
        None,
        "two remotes, no origin"
    );
    s.git(&path, &["remote", "add", "origin", "/origin"]);
    assert_eq!(
        repo.destination()
            .expect("destination")
            .expect("origin")
            .remote,
        "origin"
    );
}

#[test]
fn remote_url_expands_instead_of_and_hides_credentials() {
    let s = World::new();
    let (path, repo) = with_one_commit(&s);
    s.git(
        &path,
        &[
            "remote",
            "add",
            "origin",
            "https://user:tok3n@git.example.com/o/r.git",
        ],
    );
    s.git(&path, &["remote", "add", "short", "gh:o/r.git"]);
    s.git(
        &path,
        &[
            "config",
            "url.ssh://git@git.example.com:2222/.insteadOf",
            "gh:",
        ],
    );
    assert_eq!(
        repo.remote_url("origin").expect("url").as_deref(),
        Some("https://git.example.com/o/r.git")
    );
    assert_eq!(
        repo.remote_url("short").expect("url").as_deref(),
        Some("ssh://git@git.example.com:2222/o/r.git")
    );
    assert_eq!(repo.remote_url("nope").expect("url"), None);
}

// ---------------------------------------------------------------- diff

#[test]
fn diff_overview_counts_tracked_and_untracked_changes() {
    let s = World::new();
    let (path, repo) = with_one_commit(&s);
    write(&path.join("a.txt"), "one\nTWO\nthree\n");
    std::fs::remove_file(path.join("keep.txt")).expect("rm");
    write(&path.join("new/n.txt"), "1\n2\n3");
    write(&path.join("blob.bin"), b"\x00\x01\x02");
    write(&path.join("ignored.log"), "x\n");
    write(&path.join(".gitignore"), "*.log\n");
    let stats = repo.diff_overview(None).expect("overview");
    let got: Vec<(String, Change, usize, usize, bool)> = stats
        .iter()
        .map(|f| (f.path.display(), f.change, f.added, f.deleted, f.binary))
        .collect();
    assert_eq!(
        got,
        vec![
            (".gitignore".into(), Change::Added, 1, 0, false),
            ("a.txt".into(), Change::Modified, 2, 1, false),
            ("blob.bin".into(), Change::Added, 0, 0, true),
            ("keep.txt".into(), Change::Deleted, 0, 1, false),
            ("new/n.txt".into(), Change::Added, 3, 0, false),
        ]
    );
    let only_a = repo
        .diff_overview(Some(&RepoPath::from_bytes("a.txt")))
        .expect("overview");
    assert_eq!(only_a.len(), 1);
    let under_new = repo
        .diff_overview(Some(&RepoPath::from_bytes("new")))
        .expect("overview");
    assert_eq!(under_new.len(), 1);
}

#[test]
fn diff_in_an_unborn_repository_shows_everything_added() {
    let s = World::new();
    let path = s.init("r");
    let repo = open(&s, &path);
    write(&path.join("staged.txt"), "s\n");
    s.git(&path, &["add", "staged.txt"]);
    write(&path.join("loose.txt"), "l\nl\n");
    let stats = repo.diff_overview(None).expect("overview");
    let got: Vec<(String, usize)> = stats.iter().map(|f| (f.path.display(), f.added)).collect();
    assert_eq!(got, vec![("loose.txt".into(), 2), ("staged.txt".into(), 1)]);
    let patch = repo.diff_patch(None, 10_000).expect("patch");
    assert!(
        patch.text.contains("+++ b/staged.txt\n@@ -0,0 +1 @@\n+s\n"),
        "{}",
        patch.text
    );
    assert!(
        patch
            .text
            .contains("+++ b/loose.txt\n@@ -0,0 +1,2 @@\n+l\n+l\n"),
        "{}",
        patch.text
    );
    assert!(!patch.truncated);
}

#[test]
fn diff_patch_is_cut_at_a_line_boundary_within_the_limit() {
    let s = World::new();
    let (path, repo) = with_one_commit(&s);
    let body: String = (0..200).map(|i| format!("line number {i}\n")).collect();
    write(&path.join("a.txt"), &body);
    write(&path.join("z-new.txt"), &body);
    let full = repo.diff_patch(None, 1 << 20).expect("patch");
    assert!(!full.truncated);
    assert_eq!(full.total_bytes, full.text.len() as u64);
    assert!(
        full.text
            .contains("diff --git a/z-new.txt b/z-new.txt\nnew file mode 100644\n")
    );
    let cut = repo.diff_patch(None, 1000).expect("patch");
    assert!(cut.truncated);
    assert!(
        cut.text.len() <= 1000 && cut.text.len() > 900,
        "{}",
        cut.text.len()
    );
    assert!(cut.text.ends_with('\n'));
    assert!(full.text.starts_with(&cut.text));
    assert_eq!(cut.total_bytes, full.total_bytes);
    // A cut falling inside the untracked part is counted the same way.
    let tracked_len = full
        .text
        .find("diff --git a/z-new.txt")
        .expect("untracked part");
    let mid = repo.diff_patch(None, tracked_len + 100).expect("patch");
    assert!(mid.truncated && mid.text.len() > tracked_len);
    assert_eq!(mid.total_bytes, full.total_bytes);
}

#[test]
fn commit_diffs_compare_against_the_first_parent_or_nothing() {
    let s = World::new();
    let (path, repo) = with_one_commit(&s);
    let root = s.git(&path, &["rev-parse", "HEAD"]).trim().to_string();
    write(&path.join("a.txt"), "one\nchanged\n");
    let second = s.commit(&path, "second");
    let stats = repo.commit_overview(&second, None).expect("overview");
    assert_eq!(stats.len(), 1);
    assert_eq!((stats[0].added, stats[0].deleted), (1, 1));
    let root_stats = repo.commit_overview(&root[..8], None).expect("overview");
    assert_eq!(root_stats.len(), 2);
    assert!(root_stats.iter().all(|f| f.change == Change::Added));
    let patch = repo.commit_patch(&second, None, 10_000).expect("patch");
    assert!(patch.text.contains("-two\n+changed\n"), "{}", patch.text);
    let small = repo.commit_patch(&second, None, 40).expect("patch");
    assert!(small.truncated && small.text.len() <= 40);
    let missing = "0123456789abcdef0123456789abcdef01234567";
    assert!(matches!(
        repo.commit_overview(missing, None),
        Err(GitError::UnknownCommit)
    ));
    assert!(matches!(
        repo.commit_patch("HEAD", None, 100),
        Err(GitError::UnknownCommit)
    ));
}

#[test]
fn resolve_commit_takes_unique_hex_prefixes_only() {
    let s = World::new();
    let (path, repo) = with_one_commit(&s);
    let sha = s.git(&path, &["rev-parse", "HEAD"]).trim().to_string();
    assert_eq!(
        repo.resolve_commit(&sha[..7]).expect("resolve"),
        Some(sha.clone())
    );
    assert_eq!(
        repo.resolve_commit(&sha).expect("resolve"),
        Some(sha.clone())
    );
    assert_eq!(repo.resolve_commit("HEAD").expect("resolve"), None);
    assert_eq!(repo.resolve_commit("main").expect("resolve"), None);
    assert_eq!(repo.resolve_commit("--all").expect("resolve"), None);
    let tree = s
        .git(&path, &["rev-parse", "HEAD^{tree}"])
        .trim()
        .to_string();
    assert_eq!(
        repo.resolve_commit(&tree).expect("resolve"),
        None,
        "a tree is not a commit"
    );
    assert_eq!(repo.resolve_commit(&tree[..10]).expect("resolve"), None);
}

/// Publishing through a fake `ssh` that answers like a real server would.
fn publish_through_fake_ssh(ssh_says: &str, exit: i32) -> Result<(), GitError> {
    let s = World::new();
    let (_, work, _) = cloned(&s);
    let ssh = s.path("fake-ssh");
    butler_testkit::write_executable(
        &ssh,
        format!("#!/bin/sh\necho '{ssh_says}' >&2\nexit {exit}\n"),
    );
    s.git(
        &work,
        &[
            "remote",
            "set-url",
            "origin",
            "ssh://git@git.example.com/o/r.git",
        ],
    );
    let repo = open(&s, &work).with_command_env([("GIT_SSH_COMMAND", ssh.as_os_str())]);
    write(&work.join("x.txt"), "x\n");
    repo.record_all("x").expect("recorded");
    let dest = repo
        .destination()
        .expect("destination")
        .expect("configured");
    repo.publish(&dest).map(|_| ())
}

#[test]
fn refused_credentials_are_auth_failed() {
    let result =
        publish_through_fake_ssh("git@git.example.com: Permission denied (publickey).", 255);
    assert!(matches!(result, Err(GitError::AuthFailed)), "{result:?}");
}

#[test]
fn unknown_host_is_unreachable() {
    let result = publish_through_fake_ssh(
        "ssh: Could not resolve hostname git.example.com: Name or service not known",
        255,
    );
    assert!(matches!(result, Err(GitError::Unreachable)), "{result:?}");
}

#[test]
fn a_commit_an_amend_left_behind_is_not_reachable_and_a_lookalike_line_clashes() {
    let s = World::new();
    let (path, repo) = with_one_commit(&s);
    let first = s.git(&path, &["rev-parse", "HEAD"]).trim().to_owned();
    write(&path.join("b.txt"), "b\n");
    let second = s.commit(&path, "second");
    s.git(
        &path,
        &["commit", "-q", "--amend", "-m", "second, reworded"],
    );
    let amended = s.git(&path, &["rev-parse", "HEAD"]).trim().to_owned();
    assert!(repo.is_reachable(&first).expect("reach"));
    assert!(repo.is_reachable(&amended).expect("reach"));
    assert!(!repo.is_reachable(&second).expect("reach"), "left behind");
    assert!(!repo.is_reachable("not a sha").expect("reach"));
    // A tag keeps it in history again.
    s.git(&path, &["tag", "kept", &second]);
    assert!(repo.is_reachable(&second).expect("reach"));
    assert_eq!(
        repo.commit(&second).expect("read").map(|c| c.sha),
        Some(second.clone())
    );

    use butler_worker::git::LineClash;
    s.git(
        &path,
        &["remote", "add", "upstream", "https://example.invalid/x.git"],
    );
    assert_eq!(repo.line_name_clash("topic").expect("clash"), None);
    assert_eq!(
        repo.line_name_clash("Upstream/topic").expect("clash"),
        Some(LineClash::Shared {
            remote: "upstream".into()
        })
    );
    assert_eq!(
        repo.line_name_clash("mаin").expect("clash"),
        Some(LineClash::LooksLike {
            existing: "main".into()
        })
    );
}
