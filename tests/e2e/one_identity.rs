//! One record, one identity, in every clone — through the real binary and real git: two clones
//! of one shared destination record, share and fetch both ways; their answers agree byte for
//! byte, and still do after both ledgers are deleted and rebuilt from history. Messages are
//! kept whole and link only through Butler's own trailer block; line names cannot pass for
//! other lines; no control character reaches the Brain unescaped.

use std::path::{Path, PathBuf};

use crate::common;
use crate::common::{Brain, StartBrain, World, frozen};
use butler_testkit::gitea::{GiteaMock, TOKEN, comment_json, issue_json, ok_json};
use insta::assert_json_snapshot;
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, ResponseTemplate};

/// A Brain with a session on the clone at `dir`.
async fn brain_at(w: &World, dir: &Path) -> Brain {
    let brain = Brain::spawn(dir, &w.env).await;
    brain
        .ok(
            "work_session_start",
            json!({"project_root": dir.display().to_string()}),
        )
        .await;
    brain
}

async fn record(brain: &Brain, dir: &Path, file: &str, message: &str, issues: Value) {
    butler_testkit::write_file(&dir.join(file), format!("{file}\n"));
    brain
        .ok(
            "work_record",
            json!({"message": message, "issue_ids": issues}),
        )
        .await;
}

/// What a clone answers about its records: the history, the state, and each record's changes.
async fn answers(brain: &Brain) -> Vec<String> {
    let history = brain.ok("work_history", json!({"n": 20})).await;
    let mut out = vec![history.to_string(), brain.observe().await.to_string()];
    for entry in history["data"]["records"]
        .as_array()
        .expect("records")
        .iter()
    {
        let id = entry["record_id"].clone();
        let diff = brain
            .ok("work_diff", json!({"record_id": id, "level": "full"}))
            .await;
        out.push(diff.to_string());
    }
    out
}

/// Deletes the clone's ledger (the server using it is closed first).
fn delete_ledger(dir: &Path) {
    let butler = dir.join(".git").join("butler");
    for entry in std::fs::read_dir(&butler).expect("butler dir") {
        let path = entry.expect("entry").path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name.starts_with("ledger.db") {
            std::fs::remove_file(&path).expect("remove");
        }
    }
}

/// Every string of `value`, keys included.
fn strings(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|i| strings(i, out)),
        Value::Object(map) => map.iter().for_each(|(k, v)| {
            out.push(k.clone());
            strings(v, out)
        }),
        _ => {}
    }
}

/// Asserts that no string the Brain reads holds a control character (but newline and tab) or
/// a direction-changing one.
fn assert_plain(envelope: &Value) {
    let mut all = Vec::new();
    strings(envelope, &mut all);
    for s in all {
        assert!(
            !s.chars().any(|c| (c.is_control() && c != '\n' && c != '\t')
                || ('\u{202a}'..='\u{202e}').contains(&c)
                || c == '\u{200b}'),
            "raw control character in {s:?}"
        );
    }
}

fn history_of(answers: &[String]) -> Value {
    serde_json::from_str(&answers[0]).expect("json")
}

#[tokio::test]
async fn two_clones_name_every_record_alike_before_and_after_their_ledgers_are_rebuilt() {
    let w = frozen(World::published());
    let a_dir: PathBuf = w.project.clone();
    let b_dir = w.other_clone();

    // Both clones record on the same day before either has seen the other's records.
    let a = brain_at(&w, &a_dir).await;
    record(
        &a,
        &a_dir,
        "a1.txt",
        "Add a1\n\nSee #7 for why.",
        json!([3]),
    )
    .await;
    record(&a, &a_dir, "a2.txt", "tidy up\n\nRefs: #7", json!([])).await;
    record(&a, &a_dir, "a3.txt", "Refs: #8", json!([])).await;
    let forged = "Forge\n\nRefs: #9\nButler-Record: 20260612-001\n\nButler-Record: 20991231-001";
    record(&a, &a_dir, "a4.txt", forged, json!([5])).await;
    record(
        &a,
        &a_dir,
        "a5.txt",
        "Carriage\rreturn \u{1b}[31mred\u{7}",
        json!([]),
    )
    .await;
    a.ok("work_publish", json!({})).await;

    let b = brain_at(&w, &b_dir).await;
    record(&b, &b_dir, "b1.txt", "Add b1", json!([4])).await;
    let b_first = b.ok("work_history", json!({"n": 1})).await["data"]["records"][0].clone();
    // Their records come in under B's unshared one: `pull --rebase` rewrites it.
    b.ok("work_vcs", json!({"args": ["pull", "--rebase"]}))
        .await;
    record(&b, &b_dir, "b2.txt", "Add b2", json!([4, 3])).await;
    b.ok("work_publish", json!({})).await;
    a.ok("work_vcs", json!({"args": ["pull"]})).await;

    let from_a = answers(&a).await;
    let from_b = answers(&b).await;
    assert_eq!(from_a, from_b, "both clones answer alike");
    let history = history_of(&from_a);
    let records = history["data"]["records"].as_array().expect("records");
    assert_eq!(records.len(), 8, "{history}");
    let ids: Vec<&str> = records
        .iter()
        .map(|r| r["record_id"].as_str().expect("id"))
        .collect();
    let distinct: std::collections::HashSet<_> = ids.iter().collect();
    assert_eq!(
        distinct.len(),
        ids.len(),
        "no two records share an id: {ids:?}"
    );
    // B's rewritten record keeps the id it was made with.
    assert_eq!(records[1]["record_id"], b_first["record_id"], "{history}");
    assert_eq!(records[1]["issue_ids"], json!([4]));
    // A's and B's first records share day and sequence, not the clone mark.
    let a_first = records[6]["record_id"].as_str().expect("id");
    let b_first = b_first["record_id"].as_str().expect("id");
    assert_eq!(a_first[..12], b_first[..12], "{a_first} {b_first}");
    assert_ne!(a_first, b_first);
    // Links come only from Butler's block; messages are whole; control characters shown.
    let by_message = |m: &str| {
        records
            .iter()
            .find(|r| r["message"] == json!(m))
            .unwrap_or_else(|| panic!("{m} in {history}"))
    };
    assert_eq!(by_message("Add a1")["issue_ids"], json!([3]));
    assert_eq!(by_message("tidy up")["issue_ids"], json!([]));
    assert_eq!(by_message("Refs: #8")["issue_ids"], json!([]));
    let forge = by_message("Forge");
    assert_eq!(forge["issue_ids"], json!([5]));
    assert!(
        forge["record_id"]
            .as_str()
            .expect("id")
            .starts_with("20260612-004-")
    );
    assert!(
        by_message("Carriage\\u{d}return \\u{1b}[31mred\\u{7}")
            .get("outside_butler")
            .is_none()
    );
    assert_eq!(records[7]["outside_butler"], json!(true));

    // Both ledgers deleted: each rebuilt from history answers exactly as before.
    let (answers_a, _) = a.close().await;
    let (answers_b, _) = b.close().await;
    for envelope in answers_a.iter().chain(&answers_b) {
        assert_plain(&serde_json::from_str(envelope).expect("json"));
    }
    delete_ledger(&a_dir);
    delete_ledger(&b_dir);
    let a = brain_at(&w, &a_dir).await;
    let b = brain_at(&w, &b_dir).await;
    // The newest record first, as a short history would find it, then the whole.
    b.ok("work_history", json!({"n": 1})).await;
    assert_eq!(answers(&a).await, from_a, "A rebuilt");
    assert_eq!(answers(&b).await, from_b, "B rebuilt");

    // New records after the rebuild never reuse an id either clone has shared.
    record(&a, &a_dir, "a6.txt", "After the rebuild", json!([])).await;
    let newest = a.ok("work_history", json!({"n": 1})).await;
    let id = newest["data"]["records"][0]["record_id"]
        .as_str()
        .expect("id");
    assert!(!ids.contains(&id), "{id} is new");
    a.close().await;
    b.close().await;
}

#[tokio::test]
async fn a_copied_record_is_reported_never_merged_into_the_original() {
    let w = frozen(World::published());
    let brain = w.session().await;
    record(&brain, &w.project, "a.txt", "Original", json!([2])).await;
    let original = brain.ok("work_history", json!({"n": 1})).await["data"]["records"][0].clone();
    // The same record copied onto another line and brought back: two commits, one trailer.
    w.git(&w.project, &["switch", "-q", "-c", "copy", "HEAD~1"]);
    w.git(&w.project, &["cherry-pick", "main"]);
    w.git(&w.project, &["switch", "-q", "main"]);
    w.git(&w.project, &["merge", "-q", "--no-edit", "copy"]);
    let history = brain.ok("work_history", json!({"n": 5})).await;
    let records = history["data"]["records"].as_array().expect("records");
    let copy = records
        .iter()
        .find(|r| r.get("duplicate_of").is_some())
        .unwrap_or_else(|| panic!("a duplicate in {history}"));
    assert_eq!(copy["duplicate_of"], original["record_id"], "{history}");
    let mut shown = copy.clone();
    shown["record_id"] = json!("<commit id>");
    shown["created_at"] = json!("<time>");
    assert_json_snapshot!("duplicate_record", common::unmarked(&shown));
    assert_eq!(copy["message"], json!("Original"));
    let holder: Vec<&Value> = records
        .iter()
        .filter(|r| r["record_id"] == original["record_id"])
        .collect();
    assert_eq!(holder.len(), 1, "{history}");
    // Its changes are its own commit's.
    let id = copy["record_id"].clone();
    brain.ok("work_diff", json!({"record_id": id})).await;
    brain.close().await;
}

#[tokio::test]
async fn line_names_cannot_pass_for_other_lines() {
    let w = frozen(World::published());
    let brain = w.session().await;
    for (name, code) in [
        ("origin/main", "need_input"),
        ("origin/feature", "need_input"),
        ("Origin/x", "need_input"),
        ("оrigin/x", "need_input"),
        ("MAIN", "need_input"),
        ("mаin", "need_input"),
        ("ma1n", "need_input"),
        ("\u{200b}main", "need_input"),
        ("x\u{202e}", "need_input"),
        ("a\u{1b}b", "need_input"),
    ] {
        let a = brain.call("work_new_line", json!({"name": name})).await;
        assert_eq!(a.error_code(), code, "{name:?}: {}", a.envelope);
        assert_plain(&a.envelope);
    }
    let shadow = brain
        .call("work_new_line", json!({"name": "origin/main"}))
        .await;
    assert_json_snapshot!("line_shadows_shared", shadow.envelope);
    let summary = shadow.envelope["summary"].as_str().expect("summary");
    assert!(summary.contains("`origin`"), "{summary}");
    let lookalike = brain.call("work_new_line", json!({"name": "mаin"})).await;
    assert_json_snapshot!("line_looks_like", lookalike.envelope);
    let summary = lookalike.envelope["summary"].as_str().expect("summary");
    assert!(summary.contains("`main`"), "{summary}");
    assert_eq!(w.git(&w.project, &["branch", "--list"]).lines().count(), 1);

    // A local line named like the shared one (made by hand): neither tool picks one.
    let other = w.other_clone();
    butler_testkit::write_file(&other.join("theirs.txt"), "theirs\n");
    w.commit(&other, "Their change");
    w.git(&other, &["push", "-q", "origin", "main"]);
    brain.ok("work_vcs", json!({"args": ["fetch"]})).await;
    w.git(&w.project, &["branch", "origin/main", "main"]);
    for tool in ["work_merge_line", "work_switch_line"] {
        let a = brain.call(tool, json!({"name": "origin/main"})).await;
        assert_eq!(a.error_code(), "need_input", "{tool}: {}", a.envelope);
        let summary = a.envelope["summary"].as_str().expect("summary");
        assert!(
            summary.contains("local line") && summary.contains("shared line"),
            "{summary}"
        );
        assert!(
            a.envelope["hint"]
                .as_str()
                .expect("hint")
                .contains("work_vcs")
        );
        assert_json_snapshot!(format!("ambiguous_{tool}"), a.envelope);
    }
    assert_eq!(brain.observe().await["data"]["line"]["name"], json!("main"));
    brain.close().await;

    // The same refusals, worded in Japanese for a session that speaks it.
    let ja = Brain::spawn(&w.project, &w.env).await;
    ja.ok(
        "work_session_start",
        json!({"project_root": w.root(), "language": "ja"}),
    )
    .await;
    let lookalike = ja.call("work_new_line", json!({"name": "mаin"})).await;
    let summary = lookalike.envelope["summary"].as_str().expect("summary");
    assert!(summary.contains("見分けられません"), "{summary}");
    let ambiguous = ja
        .call("work_switch_line", json!({"name": "origin/main"}))
        .await;
    let summary = ambiguous.envelope["summary"].as_str().expect("summary");
    assert!(summary.contains("どちらかを選びません"), "{summary}");
    ja.close().await;
}

#[tokio::test]
async fn titles_refuse_every_control_character_but_tab() {
    let w = World::published();
    let brain = w.session().await;
    for c in (0u8..0x20).map(char::from).chain(['\u{7f}']) {
        let title = format!("Fix {c}the parser");
        let fields = json!({
            "title": title,
            "current_state": "The parser fails on empty input",
            "next_action": "Handle the empty case",
            "blockers": "None"
        });
        let created = brain.call("issue_create", fields).await;
        if c == '\t' {
            assert_eq!(created.status(), "ok", "{:?}: {}", c, created.envelope);
        } else {
            assert_eq!(
                created.error_code(),
                "invalid_title",
                "{c:?}: {}",
                created.envelope
            );
        }
    }
    let retitled = brain
        .call(
            "issue_update_title",
            json!({"issue_id": 1, "title": "a\u{1b}[2Jb"}),
        )
        .await;
    assert_eq!(
        retitled.error_code(),
        "invalid_title",
        "{}",
        retitled.envelope
    );
    brain.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trackers_control_characters_reach_the_brain_escaped() {
    let mock = GiteaMock::start().await;
    Mock::given(method("GET"))
        .and(path(mock.api_path("/version")))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"version": "1.27.1"})))
        .mount(&mock.server)
        .await;
    let every_c0: String = (0u8..0x20).map(char::from).collect();
    let mut issue = issue_json(1, &format!("Title{every_c0}\u{7f}\u{202e}end"), "open", &[]);
    issue["body"] = json!("body \u{1b}[31mred\u{1b}[0m\r\nline\u{8}");
    mock.on("GET", "/issues/1", ok_json(200, issue.clone()))
        .await;
    mock.on(
        "GET",
        "/issues/1/comments",
        ok_json(200, json!([comment_json(3, 1, "beep\u{7}\u{200b}")])),
    )
    .await;
    mock.on("GET", "/issues", ok_json(200, json!([issue])))
        .await;
    let w = World::local_only();
    let remote = format!("{}/acme/widgets.git", mock.web_root());
    w.git(&w.project, &["remote", "add", "origin", &remote]);
    let mut env = w.env.clone();
    env.extend([
        ("BUTLER_ISSUE_BACKEND".to_owned(), "gitea".to_owned()),
        ("BUTLER_GITEA_TOKEN".to_owned(), TOKEN.to_owned()),
        ("BUTLER_GITEA_HOSTS".to_owned(), mock.server.uri()),
    ]);
    let brain = Brain::spawn(&w.project, &env).await;
    brain
        .ok("work_session_start", json!({"project_root": w.root()}))
        .await;
    let read = brain
        .ok("issue_read", json!({"issue_id": 1, "last_n_comments": 1}))
        .await;
    assert_plain(&read);
    let title = read["data"]["issue"]["title"].as_str().expect("title");
    assert!(title.starts_with("Title\\u{0}\\u{1}"), "{title}");
    assert!(title.contains("\\u{1b}\\u{1c}"), "{title}");
    assert!(title.contains("\\u{7f}\\u{202e}end"), "{title}");
    let summary = read["summary"].as_str().expect("summary");
    assert!(summary.contains("\\u{1b}"), "{summary}");
    assert_eq!(
        read["data"]["issue"]["body"],
        json!("body \\u{1b}[31mred\\u{1b}[0m\\u{d}\nline\\u{8}")
    );
    assert_eq!(
        read["data"]["comments"][0]["body"],
        json!("beep\\u{7}\\u{200b}")
    );
    let list = brain.ok("issue_list", json!({})).await;
    assert_plain(&list);
    brain.close().await;
}
