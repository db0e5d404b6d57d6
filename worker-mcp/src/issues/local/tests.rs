//! The embedded issue store over real ledger files.

use std::collections::HashSet;
use std::pin::pin;
use std::sync::{Arc, Barrier};
use std::task::{Context, Poll, Waker};

use chrono::DateTime;

use super::*;

/// Polls a store future once: the store does its work synchronously, so it must be ready.
fn run<T>(fut: IssueFuture<'_, T>) -> Result<T, IssueError> {
    let mut cx = Context::from_waker(Waker::noop());
    match pin!(fut).poll(&mut cx) {
        Poll::Ready(out) => out,
        Poll::Pending => panic!("the local store never waits"),
    }
}

fn store() -> (tempfile::TempDir, LocalIssues) {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = LocalIssues::open(dir.path(), "demo").expect("open store");
    (dir, store)
}

fn new(title: &str, labels: &[&str]) -> NewIssue {
    NewIssue {
        title: title.into(),
        body: "## Current state\nopen\n\n## Next action\nwork\n\n## Blockers\nnone".into(),
        labels: labels.iter().map(|s| s.to_string()).collect(),
    }
}

fn audit_rows(dir: &Path) -> Vec<(u64, u64, String, Option<String>)> {
    let ledger = Ledger::open(dir).expect("open");
    let mut stmt = ledger
        .conn()
        .prepare(
            "SELECT comment_id, issue, body, reason FROM comment_deletions ORDER BY comment_id",
        )
        .expect("prepare");
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows")
}

#[test]
fn a_new_store_has_the_default_labels_and_says_it_is_local() {
    let (_dir, store) = store();
    let names: Vec<String> = run(store.labels())
        .unwrap()
        .into_iter()
        .map(|l| l.name)
        .collect();
    assert_eq!(
        names,
        ["bug", "enhancement", "documentation", "question", "chore"]
    );
    let info = store.info();
    assert_eq!(
        (info.kind, info.repo.as_str(), info.url),
        ("local", "demo", None)
    );
}

#[test]
fn issues_are_numbered_from_one_and_read_back() {
    let (_dir, store) = store();
    let first = run(store.create(&new("  First issue  ", &["BUG", "Enhancement"]))).unwrap();
    let second = run(store.create(&new("Second", &[]))).unwrap();
    assert_eq!((first.number, second.number), (1, 2));
    assert_eq!(first.title, "First issue", "stored trimmed");
    assert_eq!(
        first.labels,
        ["bug", "enhancement"],
        "canonical names, sorted"
    );
    assert_eq!(first.state, ReportedState::Open);
    assert_eq!(first.comments, 0);
    assert_eq!(first.url, None);
    DateTime::parse_from_rfc3339(&first.created_at).expect("RFC 3339 with offset");
    assert_eq!(run(store.read(1)).unwrap(), first);
    assert_eq!(
        run(store.read(3)),
        Err(IssueError::NotFound {
            what: "issue #3".into()
        })
    );
}

#[test]
fn unknown_labels_and_bad_titles_create_nothing() {
    let (_dir, store) = store();
    let err = run(store.create(&new("Has labels", &["bug", "Nope", "also-nope"]))).unwrap_err();
    assert_eq!(
        err,
        IssueError::LabelNotFound {
            names: vec!["Nope".into(), "also-nope".into()]
        }
    );
    for bad in ["", "   ", "two\nlines", &"x".repeat(256)] {
        assert_eq!(
            run(store.create(&new(bad, &[]))),
            Err(IssueError::InvalidTitle),
            "{bad:?}"
        );
    }
    let page = run(store.list(&IssueQuery {
        state: StateFilter::All,
        ..IssueQuery::default()
    }))
    .unwrap();
    assert_eq!(page.total, Some(0));
    assert_eq!(
        run(store.create(&new("Now it works", &[]))).unwrap().number,
        1
    );
}

#[test]
fn title_and_body_updates_are_checked_and_kept() {
    let (_dir, store) = store();
    run(store.create(&new("Old title", &[]))).unwrap();
    let issue = run(store.update_title(1, " New title ")).unwrap();
    assert_eq!(issue.title, "New title");
    assert_eq!(
        run(store.update_title(1, "bad\ntitle")),
        Err(IssueError::InvalidTitle)
    );
    assert_eq!(
        run(store.update_title(1, "")),
        Err(IssueError::InvalidTitle)
    );
    assert_eq!(run(store.read(1)).unwrap().title, "New title");
    let issue = run(store.update_body(1, "new body")).unwrap();
    assert_eq!(issue.body, "new body");
    assert!(matches!(
        run(store.update_title(9, "x")),
        Err(IssueError::NotFound { .. })
    ));
    assert!(matches!(
        run(store.update_body(9, "x")),
        Err(IssueError::NotFound { .. })
    ));
}

#[test]
fn comments_come_back_oldest_first_and_ids_are_global() {
    let (_dir, store) = store();
    run(store.create(&new("A", &[]))).unwrap();
    run(store.create(&new("B", &[]))).unwrap();
    let mut ids = Vec::new();
    for i in 0..4 {
        ids.push(run(store.comment(1, &format!("a{i}"))).unwrap().id);
        ids.push(run(store.comment(2, &format!("b{i}"))).unwrap().id);
    }
    assert_eq!(
        ids,
        (1..=8).collect::<Vec<u64>>(),
        "one id space for all issues"
    );
    assert_eq!(run(store.read(1)).unwrap().comments, 4);
    let last: Vec<String> = run(store.last_comments(1, 2))
        .unwrap()
        .into_iter()
        .map(|c| c.body)
        .collect();
    assert_eq!(last, ["a2", "a3"]);
    assert_eq!(run(store.last_comments(1, 100)).unwrap().len(), 4);
    assert!(run(store.last_comments(1, 0)).unwrap().is_empty());
    assert!(matches!(
        run(store.last_comments(3, 1)),
        Err(IssueError::NotFound { .. })
    ));
    assert!(matches!(
        run(store.comment(3, "x")),
        Err(IssueError::NotFound { .. })
    ));
}

#[test]
fn deleting_a_comment_checks_its_issue_and_keeps_an_audit_row() {
    let (dir, store) = store();
    run(store.create(&new("A", &[]))).unwrap();
    run(store.create(&new("B", &[]))).unwrap();
    let on_a = run(store.comment(1, "posted twice")).unwrap();
    let on_b = run(store.comment(2, "keep me")).unwrap();

    let wrong_issue = run(store.delete_comment(1, on_b.id));
    assert_eq!(
        wrong_issue,
        Err(IssueError::NotFound {
            what: format!("comment {} on issue #1", on_b.id)
        })
    );
    assert!(matches!(
        run(store.delete_comment(7, on_a.id)),
        Err(IssueError::NotFound { .. })
    ));

    run(store.delete_comment_with_reason(1, on_a.id, Some("duplicate"))).unwrap();
    assert!(run(store.last_comments(1, 10)).unwrap().is_empty());
    assert_eq!(run(store.read(1)).unwrap().comments, 0);
    assert!(matches!(
        run(store.delete_comment(1, on_a.id)),
        Err(IssueError::NotFound { .. })
    ));
    run(store.delete_comment(2, on_b.id)).unwrap();

    let audit = audit_rows(dir.path());
    assert_eq!(
        audit,
        [
            (on_a.id, 1, "posted twice".into(), Some("duplicate".into())),
            (on_b.id, 2, "keep me".into(), None)
        ]
    );
    let next = run(store.comment(1, "after")).unwrap();
    assert!(next.id > on_b.id, "deleted ids are not reused");
}

#[test]
fn closing_and_reopening_is_idempotent() {
    let (dir, store) = store();
    run(store.create(&new("A", &[]))).unwrap();
    assert_eq!(
        run(store.set_state(1, IssueState::Closed)).unwrap().state,
        ReportedState::Closed
    );
    assert_eq!(
        run(store.set_state(1, IssueState::Closed)).unwrap().state,
        ReportedState::Closed
    );
    let ledger = Ledger::open(dir.path()).unwrap();
    let closed_at: Option<String> = ledger
        .conn()
        .query_row("SELECT closed_at FROM issues", [], |r| r.get(0))
        .unwrap();
    assert!(closed_at.is_some());
    assert_eq!(
        run(store.set_state(1, IssueState::Open)).unwrap().state,
        ReportedState::Open
    );
    let closed_at: Option<String> = ledger
        .conn()
        .query_row("SELECT closed_at FROM issues", [], |r| r.get(0))
        .unwrap();
    assert_eq!(closed_at, None);
    assert!(matches!(
        run(store.set_state(2, IssueState::Open)),
        Err(IssueError::NotFound { .. })
    ));
}

#[test]
fn lists_page_newest_first_and_filter_by_state_and_labels() {
    let (_dir, store) = store();
    for i in 1..=12 {
        let labels: &[&str] = if i % 3 == 0 {
            &["bug", "question"]
        } else if i % 2 == 0 {
            &["bug"]
        } else {
            &[]
        };
        run(store.create(&new(&format!("issue {i}"), labels))).unwrap();
    }
    for n in [1, 2, 3] {
        run(store.set_state(n, IssueState::Closed)).unwrap();
    }
    let numbers = |p: &IssuePage| p.issues.iter().map(|i| i.number).collect::<Vec<_>>();

    let open = IssueQuery {
        per_page: 4,
        ..IssueQuery::default()
    };
    let p1 = run(store.list(&open)).unwrap();
    assert_eq!(
        (numbers(&p1), p1.total, p1.page, p1.has_more),
        (vec![12, 11, 10, 9], Some(9), 1, true)
    );
    let p3 = run(store.list(&IssueQuery {
        page: 3,
        ..open.clone()
    }))
    .unwrap();
    assert_eq!((numbers(&p3), p3.has_more), (vec![4], false));
    let p4 = run(store.list(&IssueQuery {
        page: 4,
        ..open.clone()
    }))
    .unwrap();
    assert!(p4.issues.is_empty() && !p4.has_more);

    let closed = run(store.list(&IssueQuery {
        state: StateFilter::Closed,
        ..IssueQuery::default()
    }))
    .unwrap();
    assert_eq!(numbers(&closed), [3, 2, 1]);
    let all = run(store.list(&IssueQuery {
        state: StateFilter::All,
        per_page: 0,
        page: 0,
        labels: vec![],
    }))
    .unwrap();
    assert_eq!(
        (all.issues.len(), all.total, all.page, all.has_more),
        (10, Some(12), 1, true)
    );

    let both = IssueQuery {
        state: StateFilter::All,
        labels: vec!["Question".into(), "BUG".into()],
        ..IssueQuery::default()
    };
    assert_eq!(
        numbers(&run(store.list(&both)).unwrap()),
        [12, 9, 6, 3],
        "all labels must match"
    );
    let unknown = IssueQuery {
        labels: vec!["wontfix".into()],
        ..IssueQuery::default()
    };
    assert_eq!(
        run(store.list(&unknown)),
        Err(IssueError::LabelNotFound {
            names: vec!["wontfix".into()]
        })
    );

    let huge = run(store.list(&IssueQuery {
        state: StateFilter::All,
        per_page: 1000,
        ..IssueQuery::default()
    }))
    .unwrap();
    assert_eq!(huge.issues.len(), 12);
}

#[test]
fn two_stores_on_one_file_never_share_a_number() {
    let dir = tempfile::tempdir().unwrap();
    LocalIssues::open(dir.path(), "demo").unwrap();
    let barrier = Arc::new(Barrier::new(2));
    let handles: Vec<_> = (0..2)
        .map(|t| {
            let path = dir.path().to_path_buf();
            let barrier = Arc::clone(&barrier);
            std::thread::spawn(move || {
                let store = LocalIssues::open(&path, "demo").expect("own connection");
                barrier.wait();
                (0..40)
                    .map(|i| {
                        let number = run(store.create(&new(&format!("t{t} {i}"), &["bug"])))
                            .unwrap()
                            .number;
                        run(store.comment(number, "c")).unwrap();
                        number
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let numbers: Vec<u64> = handles
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    assert_eq!(numbers.iter().collect::<HashSet<_>>().len(), 80);
    assert_eq!(*numbers.iter().max().unwrap(), 80);
}

#[test]
fn the_store_shares_the_ledger_file_with_records() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = Ledger::open(dir.path()).unwrap();
    let store = LocalIssues::open(dir.path(), "demo").unwrap();
    let issue = run(store.create(&new("Tracked", &[]))).unwrap();
    let now = crate::time::Timestamp::parse("2026-06-12T10:00:00+09:00").unwrap();
    let rid = ledger
        .reserve_record(now, "fix", &[issue.number], None)
        .unwrap();
    ledger.complete_record(&rid, "abc").unwrap();
    assert_eq!(
        ledger
            .record_by_id(rid.as_str())
            .unwrap()
            .unwrap()
            .issue_ids,
        [issue.number]
    );
    let store2 = LocalIssues::from_ledger(Ledger::open(dir.path()).unwrap(), "demo");
    assert_eq!(run(store2.read(1)).unwrap().title, "Tracked");
}

#[test]
fn a_damaged_store_reports_a_backend_error_without_sqlite_text() {
    let dir = tempfile::tempdir().unwrap();
    let store = LocalIssues::open(dir.path(), "demo").unwrap();
    run(store.create(&new("A", &[]))).unwrap();
    // Break a table behind the store's back.
    Ledger::open(dir.path())
        .unwrap()
        .conn()
        .execute_batch("DROP TABLE comments")
        .unwrap();
    assert!(matches!(
        run(store.comment(2, "x")),
        Err(IssueError::NotFound { .. })
    ));
    let err = run(store.comment(1, "x")).unwrap_err();
    match &err {
        IssueError::Backend { context } => assert!(!context.to_lowercase().contains("sql")),
        other => panic!("expected Backend, got {other:?}"),
    }
    assert!(!err.to_string().to_lowercase().contains("comments"));
}

#[test]
fn a_store_opened_by_file_is_named_after_its_repository() {
    let dir = tempfile::tempdir().unwrap();
    let common = dir.path().join("demo").join(".git");
    let ledger = Ledger::open(&common).unwrap();
    let store = LocalIssues::open_file(ledger.path()).unwrap();
    assert_eq!(store.info().repo, "demo");
    run(store.create(&new("Seen by both", &[]))).unwrap();
    assert_eq!(
        run(LocalIssues::open(&common, "x").unwrap().read(1))
            .unwrap()
            .title,
        "Seen by both"
    );

    let bare = Ledger::open(&dir.path().join("server.git")).unwrap();
    assert_eq!(
        LocalIssues::open_file(bare.path()).unwrap().info().repo,
        "server"
    );
    assert_eq!(repository_name(Path::new("ledger.db")), "local");
}
