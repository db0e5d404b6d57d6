//! Ledger scenarios over real SQLite files in temporary directories.

// These tests start this test binary again as a second process opening the same ledger, and a
// short-lived process for a pid that is surely dead: plain spawns, not Butler's children.
#![allow(clippy::disallowed_methods)]

use std::collections::HashSet;
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Barrier};
use std::time::Duration;

use rusqlite::{Transaction, TransactionBehavior};

use super::*;

fn at(rfc3339: &str) -> Timestamp {
    Timestamp::parse(rfc3339).expect("test date")
}

fn fresh() -> (tempfile::TempDir, Ledger) {
    let dir = tempfile::tempdir().expect("tempdir");
    let ledger = Ledger::open(dir.path()).expect("open");
    (dir, ledger)
}

fn id(s: &str) -> RecordId {
    RecordId::parse(s).expect("test id")
}

/// `day_seq` (`20260612-001`) with the ledger's own clone mark.
fn own(ledger: &Ledger, day_seq: &str) -> String {
    format!("{day_seq}-{}", ledger.clone_mark())
}

fn claiming<'a>(sha: &'a str, id: &'a RecordId, issue_ids: &'a [u64]) -> ClaimingCommit<'a> {
    ClaimingCommit {
        sha,
        message: "fetched",
        issue_ids,
        created_at: at("2026-06-12T11:00:00+09:00"),
        id,
    }
}

#[test]
fn open_creates_the_file_in_wal_mode_with_the_current_schema() {
    let (dir, ledger) = fresh();
    let file = dir.path().join("butler").join("ledger.db");
    assert_eq!(ledger.path(), file);
    assert!(file.is_file());
    let conn = ledger.conn();
    let mode: String = conn
        .pragma_query_value(None, "journal_mode", |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    let fk: i64 = conn
        .pragma_query_value(None, "foreign_keys", |r| r.get(0))
        .unwrap();
    assert_eq!(fk, 1);
    let version: i64 = conn
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    assert_eq!(version, schema::VERSION);
    drop(ledger);
    // Reopening keeps the data and does not migrate again.
    let again = Ledger::open(dir.path()).expect("reopen");
    let labels: i64 = again
        .conn()
        .query_row("SELECT count(*) FROM labels", [], |r| r.get(0))
        .unwrap();
    assert_eq!(labels, 5);
}

#[test]
fn ids_follow_the_local_day_of_creation() {
    let (_dir, ledger) = fresh();
    let a = ledger
        .reserve_record(at("2026-06-12T10:20:00+09:00"), "a", &[50], None)
        .unwrap();
    let b = ledger
        .reserve_record(at("2026-06-12T23:59:59+09:00"), "b", &[], None)
        .unwrap();
    // 2026-06-12T16:00Z is already the 13th in Tokyo, still the 12th in UTC.
    let c = ledger
        .reserve_record(at("2026-06-13T01:00:00+09:00"), "c", &[], None)
        .unwrap();
    let d = ledger
        .reserve_record(at("2026-06-12T16:00:00+00:00"), "d", &[], None)
        .unwrap();
    assert_eq!(
        [a.as_str(), b.as_str(), c.as_str(), d.as_str()].map(str::to_owned),
        [
            "20260612-001",
            "20260612-002",
            "20260613-001",
            "20260612-003"
        ]
        .map(|s| own(&ledger, s))
    );
    let pending = ledger.pending_records().unwrap();
    assert_eq!(pending.len(), 4);
    assert_eq!(
        pending[0].created_at.to_string(),
        "2026-06-12T10:20:00+09:00"
    );
    assert_eq!(pending[0].issue_ids, [50]);
    assert_eq!(pending[3].id, c, "oldest first, by day then sequence");
}

#[test]
fn the_daily_sequence_grows_to_four_digits_and_sorts_after_999() {
    let (_dir, ledger) = fresh();
    ledger
        .conn()
        .execute(
            "INSERT INTO record_days (day, last_seq) VALUES ('20260612', 998)",
            [],
        )
        .unwrap();
    let now = at("2026-06-12T09:00:00+09:00");
    let a = ledger.reserve_record(now, "a", &[], None).unwrap();
    let b = ledger.reserve_record(now, "b", &[], None).unwrap();
    assert_eq!(a.as_str(), own(&ledger, "20260612-999"));
    assert_eq!(b.as_str(), own(&ledger, "20260612-1000"));
    assert_eq!(b.seq(), 1000);
    assert!(a < b, "chronological order, not string order");
    assert!(id("20260611-5000") < a);
}

#[test]
fn a_reserved_record_is_completed_once() {
    let (_dir, ledger) = fresh();
    let now = at("2026-06-12T10:20:00+09:00");
    let rid = ledger
        .reserve_record(now, "work_observe added", &[50, 123, 50], Some("main"))
        .unwrap();
    assert_eq!(
        ledger.record_by_id(rid.as_str()).unwrap(),
        None,
        "pending is not a record yet"
    );
    assert!(!ledger.is_known_sha("aaa").unwrap());

    ledger.complete_record(&rid, "aaa").unwrap();
    ledger
        .complete_record(&rid, "aaa")
        .expect("same sha again is a no-op");
    let err = ledger.complete_record(&rid, "bbb").unwrap_err();
    assert!(matches!(err, LedgerError::Conflict { .. }), "{err:?}");
    assert!(matches!(
        ledger.abandon_record(&rid),
        Err(LedgerError::Conflict { .. })
    ));

    let record = ledger
        .record_by_id(rid.as_str())
        .unwrap()
        .expect("complete");
    assert_eq!(record.sha, "aaa");
    assert_eq!(record.message, "work_observe added");
    assert_eq!(
        record.issue_ids,
        [50, 123],
        "order kept, duplicates dropped"
    );
    assert_eq!(record.created_at.to_string(), "2026-06-12T10:20:00+09:00");
    assert_eq!(record.line.as_deref(), Some("main"));
    assert!(ledger.is_known_sha("aaa").unwrap());
    assert!(ledger.pending_records().unwrap().is_empty());

    let other = ledger.reserve_record(now, "other", &[], None).unwrap();
    let err = ledger.complete_record(&other, "aaa").unwrap_err();
    assert!(
        matches!(err, LedgerError::Conflict { .. }),
        "one commit, one record: {err:?}"
    );

    let unknown = id("20990101-001");
    assert!(matches!(
        ledger.complete_record(&unknown, "c"),
        Err(LedgerError::NotFound { .. })
    ));
    assert!(matches!(
        ledger.abandon_record(&unknown),
        Err(LedgerError::NotFound { .. })
    ));
    assert_eq!(ledger.record_by_id("not-an-id").unwrap(), None);
}

#[test]
fn an_abandoned_id_is_never_handed_out_again() {
    let (_dir, ledger) = fresh();
    let now = at("2026-06-12T10:00:00+09:00");
    let first = ledger
        .reserve_record(now, "failed commit", &[], None)
        .unwrap();
    ledger.abandon_record(&first).unwrap();
    ledger.abandon_record(&first).expect("twice is harmless");
    assert!(ledger.pending_records().unwrap().is_empty());
    let second = ledger.reserve_record(now, "next", &[], None).unwrap();
    assert_eq!(second.as_str(), own(&ledger, "20260612-002"));
}

#[test]
fn records_by_sha_returns_only_known_commits() {
    let (_dir, ledger) = fresh();
    let now = at("2026-06-12T10:00:00+09:00");
    for (i, sha) in ["s1", "s2", "s3"].iter().enumerate() {
        let rid = ledger
            .reserve_record(now, &format!("m{i}"), &[i as u64], None)
            .unwrap();
        ledger.complete_record(&rid, sha).unwrap();
    }
    let pending = ledger.reserve_record(now, "pending", &[], None).unwrap();
    let found = ledger.records_by_sha(&["s1", "s3", "unknown"]).unwrap();
    assert_eq!(found.len(), 2);
    assert_eq!(found["s1"].message, "m0");
    assert_eq!(found["s3"].issue_ids, [2]);
    assert!(ledger.records_by_sha(&[]).unwrap().is_empty());
    assert_eq!(ledger.record_by_id(pending.as_str()).unwrap(), None);
}

#[test]
fn the_clone_mark_is_chosen_once_and_kept() {
    let (dir, ledger) = fresh();
    let mark = ledger.clone_mark().to_owned();
    assert_eq!(mark.len(), 4);
    assert!(
        mark.bytes().all(|b| b"bcdfghjkmnpqrstvwxz".contains(&b)),
        "{mark}"
    );
    drop(ledger);
    let again = Ledger::open(dir.path()).unwrap();
    assert_eq!(again.clone_mark(), mark);
}

#[test]
fn a_fetched_record_keeps_the_id_its_trailer_names() {
    let (_dir, ledger) = fresh();
    let theirs = id("20260612-001-zzzz");
    let claim = claiming("c1", &theirs, &[4, 2]);
    let Claim::Holds(record) = ledger.claim_record(&claim).unwrap() else {
        panic!("an unknown id is taken as it is");
    };
    assert_eq!(record.id, theirs);
    assert_eq!(
        (record.sha.as_str(), record.message.as_str()),
        ("c1", "fetched")
    );
    assert_eq!(record.issue_ids, [4, 2]);
    assert_eq!(record.created_at.to_string(), "2026-06-12T11:00:00+09:00");
    assert_eq!(ledger.claim_record(&claim).unwrap(), Claim::Holds(record));
    // Another commit claiming the same id is answered with the holder, never merged into it.
    let copy = claiming("c2", &theirs, &[9]);
    assert_eq!(
        ledger.claim_record(&copy).unwrap(),
        Claim::HeldBy { sha: "c1".into() }
    );
    assert!(!ledger.is_known_sha("c2").unwrap());
    // Our own first record of the day does not collide with theirs.
    let mine = ledger
        .reserve_record(at("2026-06-12T12:00:00+09:00"), "mine", &[], None)
        .unwrap();
    assert_eq!(mine.as_str(), own(&ledger, "20260612-001"));
    // The holder was rewritten: the id moves to the new commit, with its links.
    let moved = ledger.move_record(&copy).unwrap();
    assert_eq!((moved.id, moved.sha.as_str()), (theirs.clone(), "c2"));
    assert_eq!(moved.issue_ids, [9]);
    assert_eq!(ledger.records_by_sha(&["c1"]).unwrap().len(), 0);
}

#[test]
fn a_claim_with_this_clones_mark_moves_its_sequence_past_it() {
    let (_dir, ledger) = fresh();
    let found = id(&own(&ledger, "20260612-005"));
    ledger.claim_record(&claiming("c5", &found, &[])).unwrap();
    let next = ledger
        .reserve_record(at("2026-06-12T12:00:00+09:00"), "next", &[], None)
        .unwrap();
    assert_eq!(next.as_str(), own(&ledger, "20260612-006"));
    // A lower one changes nothing.
    let low = id(&own(&ledger, "20260612-002"));
    ledger.claim_record(&claiming("c2", &low, &[])).unwrap();
    let after = ledger
        .reserve_record(at("2026-06-12T12:00:00+09:00"), "after", &[], None)
        .unwrap();
    assert_eq!(after.as_str(), own(&ledger, "20260612-007"));
    // A forged trailer with a sequence no day reaches moves nothing.
    let forged = id(&own(&ledger, "20260612-999999999999999999"));
    ledger.claim_record(&claiming("cf", &forged, &[])).unwrap();
    let next = ledger
        .reserve_record(at("2026-06-12T12:00:00+09:00"), "next", &[], None)
        .unwrap();
    assert_eq!(next.as_str(), own(&ledger, "20260612-008"));
}

#[test]
fn a_commit_that_claims_a_pending_or_abandoned_id_completes_it() {
    let (_dir, ledger) = fresh();
    let rid = ledger
        .reserve_record(at("2026-06-12T10:00:00+09:00"), "saved", &[7], Some("main"))
        .unwrap();
    // The process died between the commit and complete_record; a later one finds the commit.
    let Claim::Holds(record) = ledger.claim_record(&claiming("def", &rid, &[7])).unwrap() else {
        panic!("the reservation is completed");
    };
    assert_eq!((record.id, record.sha.as_str()), (rid.clone(), "def"));
    assert_eq!(record.message, "saved", "the reserved message is kept");
    assert!(ledger.pending_records().unwrap().is_empty());

    // A claimed id that was abandoned by mistake is revived rather than duplicated.
    let lost = ledger
        .reserve_record(at("2026-06-12T12:00:00+09:00"), "lost", &[], None)
        .unwrap();
    ledger.abandon_record(&lost).unwrap();
    let Claim::Holds(revived) = ledger.claim_record(&claiming("999", &lost, &[])).unwrap() else {
        panic!("revived");
    };
    assert_eq!(revived.id, lost);
}

#[test]
fn commits_made_outside_butler_are_only_remembered_as_seen() {
    let (_dir, ledger) = fresh();
    assert!(!ledger.is_known_sha("o1").unwrap());
    assert!(ledger.note_outside("o1").unwrap());
    assert!(!ledger.note_outside("o1").unwrap(), "seen once");
    assert!(ledger.is_known_sha("o1").unwrap());
    assert!(ledger.records_by_sha(&["o1"]).unwrap().is_empty());
}

#[test]
fn two_connections_in_two_threads_never_share_an_id() {
    let dir = tempfile::tempdir().unwrap();
    Ledger::open(dir.path()).unwrap();
    let per_thread = 150;
    let barrier = Arc::new(Barrier::new(2));
    let handles: Vec<_> = (0..2)
        .map(|t| {
            let path = dir.path().to_path_buf();
            let barrier = Arc::clone(&barrier);
            std::thread::spawn(move || {
                let ledger = Ledger::open(&path).expect("own connection");
                barrier.wait();
                let now = at("2026-06-12T10:00:00+09:00");
                let mut ids = Vec::new();
                for i in 0..per_thread {
                    let rid = ledger
                        .reserve_record(now, "m", &[t], None)
                        .expect("reserve");
                    ledger
                        .complete_record(&rid, &format!("t{t}-{i}"))
                        .expect("complete");
                    ids.push(rid);
                }
                ids
            })
        })
        .collect();
    let all: Vec<RecordId> = handles
        .into_iter()
        .flat_map(|h| h.join().expect("thread"))
        .collect();
    let unique: HashSet<_> = all.iter().collect();
    assert_eq!(unique.len(), 2 * per_thread);
    let mut seqs: Vec<u64> = all.iter().map(RecordId::seq).collect();
    seqs.sort();
    assert_eq!(
        seqs,
        (1..=2 * per_thread as u64).collect::<Vec<_>>(),
        "no gaps, no repeats"
    );
}

#[test]
fn many_threads_opening_a_new_file_at_once_all_succeed() {
    let dir = tempfile::tempdir().unwrap();
    let barrier = Arc::new(Barrier::new(4));
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let path = dir.path().to_path_buf();
            let barrier = Arc::clone(&barrier);
            std::thread::spawn(move || {
                barrier.wait();
                let ledger = Ledger::open(&path).expect("open during another's migration");
                ledger
                    .reserve_record(at("2026-06-12T10:00:00Z"), "m", &[], None)
                    .expect("write")
            })
        })
        .collect();
    let ids: HashSet<_> = handles
        .into_iter()
        .map(|h| h.join().expect("thread"))
        .collect();
    assert_eq!(ids.len(), 4);
    let ledger = Ledger::open(dir.path()).unwrap();
    let labels: i64 = ledger
        .conn()
        .query_row("SELECT count(*) FROM labels", [], |r| r.get(0))
        .unwrap();
    assert_eq!(
        labels, 5,
        "the schema (and its default rows) was applied exactly once"
    );
}

#[test]
fn an_open_waits_while_another_opener_holds_the_open_lock() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("ledger.db");
    let lock_path = dir.path().join(format!("ledger.db{OPEN_LOCK_SUFFIX}"));
    let held = crate::file_lock::try_lock(&lock_path)
        .expect("lock file")
        .expect("free");
    let opener = std::thread::spawn(move || Ledger::open_file(&file).map(|_| ()));
    std::thread::sleep(Duration::from_millis(200));
    assert!(!opener.is_finished(), "the open waits for the lock");
    drop(held);
    opener.join().expect("thread").expect("opens once released");
}

/// Runs inside a child process started by `two_processes_never_share_an_id`.
#[test]
#[ignore = "helper: run by two_processes_never_share_an_id in a child process"]
fn child_reserves_records() {
    let Ok(path) = std::env::var("BUTLER_LEDGER_CHILD_FILE") else {
        panic!("only meant to run as a child process");
    };
    let ledger = Ledger::open_file(Path::new(&path)).expect("child opens");
    let now = at("2026-06-12T10:00:00+09:00");
    for _ in 0..100 {
        let rid = ledger
            .reserve_record(now, "child", &[], None)
            .expect("reserve");
        ledger
            .complete_record(&rid, &format!("{}-{}", std::process::id(), rid))
            .expect("complete");
    }
}

#[test]
fn two_processes_never_share_an_id() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("ledger.db");
    let exe = std::env::current_exe().expect("test binary");
    let children: Vec<_> = (0..2)
        .map(|_| {
            Command::new(&exe)
                .args([
                    "--ignored",
                    "--exact",
                    "ledger::tests::child_reserves_records",
                    "--quiet",
                ])
                .env("BUTLER_LEDGER_CHILD_FILE", &file)
                .stdout(std::process::Stdio::null())
                .spawn()
                .expect("spawn child")
        })
        .collect();
    for mut child in children {
        assert!(child.wait().expect("child ends").success());
    }
    let ledger = Ledger::open_file(&file).unwrap();
    let (count, distinct, max): (i64, i64, i64) = ledger
        .conn()
        .query_row(
            "SELECT count(*), count(DISTINCT id), max(seq) FROM records WHERE state = 'complete'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    assert_eq!((count, distinct, max), (200, 200, 200));
}

#[test]
fn a_writer_held_too_long_is_reported_as_busy() {
    let dir = tempfile::tempdir().unwrap();
    let holder = Ledger::open(dir.path()).unwrap();
    let waiter = Ledger::open(dir.path()).unwrap();
    waiter.set_busy_timeout(Duration::from_millis(100)).unwrap();
    let tx = Transaction::new_unchecked(holder.conn(), TransactionBehavior::Immediate).unwrap();
    let err = waiter
        .reserve_record(at("2026-06-12T10:00:00Z"), "m", &[], None)
        .unwrap_err();
    assert!(matches!(err, LedgerError::Busy), "{err:?}");
    assert!(!err.to_string().to_lowercase().contains("sqlite"));
    // Readers are not blocked by a writer in WAL mode.
    assert_eq!(waiter.active_issue("/p", "main").unwrap(), None);
    drop(tx);
    waiter
        .reserve_record(at("2026-06-12T10:00:00Z"), "m", &[], None)
        .expect("free again");
}

#[test]
fn a_damaged_file_is_reported_as_corrupt() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("ledger.db");
    std::fs::write(
        &file,
        b"this is not a database, just some text of sufficient length.....",
    )
    .unwrap();
    let err = Ledger::open_file(&file).unwrap_err();
    match &err {
        LedgerError::Corrupt { path } => assert_eq!(path, &file),
        other => panic!("expected Corrupt, got {other:?}"),
    }
    assert!(err.to_string().contains("damaged"));
    assert!(!err.to_string().to_lowercase().contains("sqlite"));
}

#[test]
fn a_file_from_a_newer_butler_is_refused() {
    let (dir, ledger) = fresh();
    ledger
        .conn()
        .pragma_update(None, "user_version", schema::VERSION + 1)
        .unwrap();
    drop(ledger);
    let err = Ledger::open(dir.path()).unwrap_err();
    assert!(matches!(err, LedgerError::TooNew { .. }), "{err:?}");
}

#[test]
fn an_unwritable_directory_is_an_io_error() {
    let dir = tempfile::tempdir().unwrap();
    let blocker = dir.path().join("butler");
    std::fs::write(&blocker, b"a file where the directory should be").unwrap();
    let err = Ledger::open(dir.path()).unwrap_err();
    assert!(matches!(err, LedgerError::Io { .. }), "{err:?}");
}

#[test]
fn the_active_issue_is_kept_per_project_and_line() {
    let (dir, ledger) = fresh();
    assert_eq!(ledger.active_issue("/w/a", "main").unwrap(), None);
    ledger.set_active_issue("/w/a", "main", Some(50)).unwrap();
    ledger.set_active_issue("/w/a", "feature", Some(7)).unwrap();
    ledger.set_active_issue("/w/b", "main", Some(9)).unwrap();
    ledger.set_active_issue("/w/a", "main", Some(51)).unwrap();
    drop(ledger);
    let ledger = Ledger::open(dir.path()).unwrap();
    assert_eq!(ledger.active_issue("/w/a", "main").unwrap(), Some(51));
    assert_eq!(ledger.active_issue("/w/a", "feature").unwrap(), Some(7));
    assert_eq!(ledger.active_issue("/w/b", "main").unwrap(), Some(9));
    assert_eq!(
        ledger.active_issues("/w/a").unwrap(),
        [("feature".to_owned(), 7), ("main".to_owned(), 51)]
    );
    ledger.set_active_issue("/w/a", "main", None).unwrap();
    ledger
        .set_active_issue("/w/a", "main", None)
        .expect("clearing twice is harmless");
    assert_eq!(ledger.active_issue("/w/a", "main").unwrap(), None);
    assert_eq!(ledger.active_issue("/w/a", "feature").unwrap(), Some(7));
    assert_eq!(
        ledger.active_issues("/w/a").unwrap(),
        [("feature".to_owned(), 7)]
    );
    assert!(ledger.active_issues("/w/none").unwrap().is_empty());
}

#[test]
fn mark_observed_returns_the_head_seen_last_time() {
    let (_dir, ledger) = fresh();
    assert_eq!(ledger.mark_observed("/w/a", "main", None).unwrap(), None);
    assert_eq!(
        ledger.mark_observed("/w/a", "main", Some("h1")).unwrap(),
        None
    );
    assert_eq!(
        ledger
            .mark_observed("/w/a", "main", Some("h2"))
            .unwrap()
            .as_deref(),
        Some("h1")
    );
    assert_eq!(
        ledger.mark_observed("/w/a", "other", Some("x")).unwrap(),
        None
    );
    assert_eq!(
        ledger
            .mark_observed("/w/a", "main", Some("h3"))
            .unwrap()
            .as_deref(),
        Some("h2")
    );
}

#[test]
fn the_journal_shows_what_a_dead_process_left_open() {
    let (_dir, ledger) = fresh();
    let mut child = Command::new("true").spawn().expect("spawn true");
    let dead_pid = child.id();
    child.wait().unwrap();
    let me = std::process::id();
    let mine = ledger.begin_operation("record", me, "index.lock").unwrap();
    let theirs = ledger
        .begin_operation("record", dead_pid, "index.lock")
        .unwrap();
    let done = ledger.begin_operation("publish", me, "").unwrap();
    ledger.end_operation(done).unwrap();
    ledger
        .end_operation(done)
        .expect("ending twice is harmless");
    assert!(matches!(
        ledger.end_operation(9999),
        Err(LedgerError::NotFound { .. })
    ));

    let open = ledger.open_operations().unwrap();
    assert_eq!(
        open.iter().map(|o| o.id).collect::<Vec<_>>(),
        [mine, theirs]
    );
    assert_eq!(open[1].pid, dead_pid);
    assert_eq!(open[1].detail, "index.lock");
    assert!(open[0].owner_alive());
    assert!(!open[1].owner_alive());
    assert!(open[0].started_at.unix() > 1_700_000_000);
}

#[test]
fn process_alive_answers_for_own_others_and_missing_processes() {
    assert!(process_alive(std::process::id()));
    assert!(process_alive(1), "pid 1 exists (EPERM or not, it is alive)");
    assert!(!process_alive(0));
    assert!(!process_alive(u32::MAX));
}

#[test]
fn an_approval_is_used_once_for_the_same_operation_within_the_hour() {
    let (_dir, ledger) = fresh();
    let r = ledger
        .create_approval("discard", "fp-1", "discard task 3")
        .unwrap();
    assert!(r.starts_with("apr-") && r.len() == 16, "{r}");
    let r2 = ledger
        .create_approval("discard", "fp-1", "discard task 3")
        .unwrap();
    assert_ne!(r, r2);
    assert!(
        !ledger.consume_approval(&r, "fp-2").unwrap(),
        "another operation"
    );
    assert!(ledger.consume_approval(&r, "fp-1").unwrap());
    assert!(!ledger.consume_approval(&r, "fp-1").unwrap(), "only once");
    assert!(!ledger.consume_approval("apr-000000000000", "fp-1").unwrap());
    let late = ledger.now().plus_seconds(APPROVAL_VALID_SECS + 5);
    assert!(
        !ledger.consume_approval_at(&r2, "fp-1", late).unwrap(),
        "expired"
    );
    assert!(
        ledger.consume_approval(&r2, "fp-1").unwrap(),
        "an expired check does not burn it"
    );
}

#[test]
fn a_ledger_moves_between_threads_and_is_shared_behind_a_mutex() {
    fn send<T: Send>() {}
    fn sync<T: Sync>() {}
    send::<Ledger>();
    sync::<std::sync::Mutex<Ledger>>();
    let (_dir, ledger) = fresh();
    let shared = Arc::new(std::sync::Mutex::new(ledger));
    let other = Arc::clone(&shared);
    std::thread::spawn(move || {
        other
            .lock()
            .unwrap()
            .set_active_issue("/p", "main", Some(3))
            .unwrap();
    })
    .join()
    .unwrap();
    assert_eq!(
        shared.lock().unwrap().active_issue("/p", "main").unwrap(),
        Some(3)
    );
}
