//! The protocol against a real repository and ledger: the Brain's kind of record (everything in
//! the tree) and the ImplementMaid's (named paths, with its task) are written and read back by
//! the same code.

use std::path::Path;
use std::sync::Arc;

use butler_testkit::World;

use super::*;
use crate::git::{GitRepo, TaskGit};
use crate::time::{FixedClock, Timestamp};

struct Scratch {
    _world: World,
    repo: GitRepo,
    ledger: Ledger,
}

fn scratch() -> Scratch {
    let world = World::new();
    let root = world.init("p");
    let repo = GitRepo::discover(&root)
        .expect("discover")
        .with_command_env(world.env.clone());
    let clock = Arc::new(FixedClock::new(
        Timestamp::parse("2026-04-15T10:00:00+09:00").expect("time"),
    ));
    let ledger = Ledger::open(repo.common_dir())
        .expect("ledger")
        .with_clock(clock);
    Scratch {
        _world: world,
        repo,
        ledger,
    }
}

fn write(root: &Path, name: &str, text: &str) {
    std::fs::write(root.join(name), text).expect("write");
}

fn head(repo: &GitRepo) -> Option<String> {
    repo.head().expect("head").oid
}

fn id(s: &str) -> RecordId {
    RecordId::parse(s).expect("record id")
}

impl Scratch {
    /// `day_seq` under this ledger's clone mark.
    fn own(&self, day_seq: &str) -> RecordId {
        id(&format!("{day_seq}-{}", self.ledger.clone_mark()))
    }
}

#[test]
fn a_maid_record_and_a_brain_record_parse_back_identically() {
    let s = scratch();
    let root = s.repo.workdir().to_path_buf();

    // The Brain's `work_record`: everything in the tree, linked to an issue.
    write(&root, "a.txt", "a\n");
    let brain = Draft {
        message: "Add a\n\nWith a body.",
        issue_ids: &[7, 9],
        line: Some("main"),
        task: None,
    };
    let reservation = reserve(&s.ledger, &brain).expect("reserve");
    let sha = s.repo.record_all(reservation.text()).expect("commit");
    let brain_id = reservation.complete(&s.ledger, &sha).expect("complete");

    // The ImplementMaid's attempt: the paths in scope, with its task.
    write(&root, "b.txt", "b\n");
    let task = TaskId::new("t3").expect("task id");
    let maid = Draft {
        message: "Add b\n\nWith a body.",
        issue_ids: &[7, 9],
        line: Some("butler/task-t3"),
        task: Some(&task),
    };
    let reservation = reserve(&s.ledger, &maid).expect("reserve");
    let git = TaskGit::from_repo(s.repo.clone());
    let sha = git
        .commit_paths(&["b.txt".to_owned()], reservation.text())
        .expect("commit");
    let maid_id = reservation.complete(&s.ledger, &sha).expect("complete");

    assert_eq!(brain_id, s.own("20260415-001"));
    assert_eq!(maid_id, s.own("20260415-002"));
    let commits = s.repo.recent_commits(2, None).expect("history");
    let read: Vec<RecordMessage> = commits
        .iter()
        .map(|c| RecordMessage::parse(&c.message))
        .collect();
    assert_eq!(
        read[1],
        RecordMessage {
            text: "Add a\n\nWith a body.".into(),
            issue_ids: vec![7, 9],
            record_id: Some(brain_id),
            task_id: None,
        }
    );
    assert_eq!(
        read[0],
        RecordMessage {
            text: "Add b\n\nWith a body.".into(),
            issue_ids: vec![7, 9],
            record_id: Some(maid_id),
            task_id: Some(task),
        }
    );
    // The ledger holds the same message and links under the same ids.
    for (parsed, commit) in read.iter().zip(&commits) {
        let id = parsed.record_id.as_ref().expect("record id");
        let record = s
            .ledger
            .record_by_id(id.as_str())
            .expect("read")
            .expect("complete");
        assert_eq!(record.sha, commit.sha);
        assert_eq!(record.issue_ids, parsed.issue_ids);
        assert_eq!(record.message.trim_end(), parsed.text);
        assert_eq!(record.created_at.to_string(), "2026-04-15T10:00:00+09:00");
    }
}

#[test]
fn a_commit_that_did_not_happen_gives_its_id_back() {
    let s = scratch();
    let root = s.repo.workdir().to_path_buf();
    write(&root, "a.txt", "a\n");
    let draft = Draft {
        message: "Add a",
        issue_ids: &[],
        line: Some("main"),
        task: None,
    };
    let before = head(&s.repo);
    let reservation = reserve(&s.ledger, &draft).expect("reserve");
    assert_eq!(reservation.id(), &s.own("20260415-001"));
    // A hook refuses: nothing was written, HEAD did not move.
    let hooks = s.repo.common_dir().join("hooks");
    std::fs::create_dir_all(&hooks).expect("hooks");
    let hook = hooks.join("pre-commit");
    butler_testkit::write_executable(&hook, "#!/bin/sh\nexit 1\n");
    assert!(s.repo.record_all(reservation.text()).is_err());
    assert_eq!(head(&s.repo), before, "nothing was committed");
    reservation
        .fail(&s.ledger, before.as_deref(), head(&s.repo).as_deref())
        .expect("give back");
    std::fs::remove_file(&hook).expect("hook gone");

    // The next record gets the same id: the day's ids stay consecutive.
    let reservation = reserve(&s.ledger, &draft).expect("reserve");
    assert_eq!(reservation.id(), &s.own("20260415-001"));
    let sha = s.repo.record_all(reservation.text()).expect("commit");
    reservation.complete(&s.ledger, &sha).expect("complete");

    // When HEAD moved, a commit may carry the id: it is never handed out again.
    let unknown = reserve(&s.ledger, &draft).expect("reserve");
    assert_eq!(unknown.id(), &s.own("20260415-002"));
    unknown
        .fail(&s.ledger, before.as_deref(), head(&s.repo).as_deref())
        .expect("abandon");
    let next = reserve(&s.ledger, &draft).expect("reserve");
    assert_eq!(next.id(), &s.own("20260415-003"));

    // A later reservation keeps an earlier failed one from being given back.
    let later = reserve(&s.ledger, &draft).expect("reserve");
    assert_eq!(later.id(), &s.own("20260415-004"));
    next.release(&s.ledger).expect("release");
    later.release(&s.ledger).expect("release");
    let after = reserve(&s.ledger, &draft).expect("reserve");
    assert_eq!(
        after.id(),
        &s.own("20260415-004"),
        "003 stays abandoned, 004 came back"
    );
    after.release(&s.ledger).expect("release");
    let pending = s.ledger.pending_records().expect("pending");
    assert!(pending.is_empty(), "nothing is left pending: {pending:?}");
}

#[test]
fn a_rewritten_message_is_what_the_record_keeps_and_lost_trailers_are_named() {
    let given = RecordMessage::compose("Add a\n\n\nbody  ", &[7], None, &id("20260415-001"));
    // git's whitespace cleanup alone is no rewrite.
    let cleaned = "Add a\n\nbody\n\nRefs: #7\nButler-Record: 20260415-001\n";
    assert_eq!(Rewrite::between(&given, cleaned), None);
    // A hook that prefixes the subject and drops the trailers.
    let rewrite = Rewrite::between(&given, "[JIRA-1] Add a\n\nbody\n").expect("rewritten");
    assert_eq!(
        rewrite,
        Rewrite {
            text_changed: true,
            lost_record_id: true,
            lost_issue_ids: vec![7],
        }
    );
    // A hook that keeps the trailers but rewords.
    let reworded = "Add a.\n\nbody\n\nRefs: #7\nButler-Record: 20260415-001\n";
    let rewrite = Rewrite::between(&given, reworded).expect("rewritten");
    assert!(rewrite.text_changed && !rewrite.lost_record_id && rewrite.lost_issue_ids.is_empty());
}
