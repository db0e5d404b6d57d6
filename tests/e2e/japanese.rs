//! Japanese, end to end through the real binary: a session started with `language = "ja"`
//! walks the work-state cycle with every state, summary, reason and hint snapshotted like the
//! English ones (`work_states.rs`); the project's `.butler/config.toml` and `BUTLER_LANG` set
//! the instructions, the session's own choice wins over them; the hook denies in the project's
//! language. Field names and enum values stay English.

// The hook is started the way Claude Code starts it.
#![allow(clippy::disallowed_methods)]

use std::io::Write;
use std::process::{Command, Stdio};

use crate::common;
use crate::common::{BUTLER, Brain, StartBrain, World, frozen};
use insta::assert_json_snapshot;
use serde_json::{Value, json};

/// Whether `text` has kana or kanji in it.
fn japanese(text: &str) -> bool {
    text.chars()
        .any(|c| ('\u{3040}'..='\u{30ff}').contains(&c) || ('\u{4e00}'..='\u{9fff}').contains(&c))
}

fn summary(answer: &Value) -> &str {
    answer["summary"].as_str().expect("a summary")
}

async fn session_in(w: &World, language: &str) -> Brain {
    let brain = w.brain().await;
    let started = brain
        .call(
            "work_session_start",
            json!({"project_root": w.root(), "language": language}),
        )
        .await;
    assert_eq!(started.status(), "ok", "{}", started.envelope);
    brain
}

#[tokio::test]
async fn the_work_states_cycle_in_japanese() {
    let w = frozen(World::published());
    let brain = w.brain().await;
    let uninit = brain.observe().await;
    // No session yet and nothing configured: English.
    assert!(!japanese(summary(&uninit)), "{uninit}");
    let started = brain
        .call(
            "work_session_start",
            json!({"project_root": w.root(), "language": "ja"}),
        )
        .await;
    assert!(japanese(summary(&started.envelope)), "{}", started.envelope);
    assert_json_snapshot!("ja_clean_idle", common::unmarked(&brain.observe().await));

    w.write("src/lib.rs", "pub fn hello() {}\n");
    assert_json_snapshot!(
        "ja_dirty_without_issue",
        common::unmarked(&brain.observe().await)
    );

    let created = brain
        .call(
            "issue_create",
            json!({"title": "挨拶する", "body": "## Current state\nなし\n\n## Next action\nhello を足す\n\n## Blockers\nなし"}),
        )
        .await;
    let number = created.data()["issue"]["number"]
        .as_u64()
        .expect("issue number");
    let started = brain.call("work_start", json!({"issue_id": number})).await;
    assert!(japanese(summary(&started.envelope)), "{}", started.envelope);
    assert_json_snapshot!("ja_dirty", common::unmarked(&brain.observe().await));

    let proposal = brain.call("work_record", json!({})).await;
    assert_eq!(proposal.error_code(), "need_input");
    assert!(
        japanese(summary(&proposal.envelope)),
        "{}",
        proposal.envelope
    );
    let recorded = brain
        .call("work_record", json!({"message": "hello を追加"}))
        .await;
    assert!(
        japanese(summary(&recorded.envelope)),
        "{}",
        recorded.envelope
    );
    assert_json_snapshot!(
        "ja_recorded_unpublished",
        common::unmarked(&brain.observe().await)
    );

    w.write("src/lib.rs", "pub fn hello() { }\npub fn bye() {}\n");
    assert_json_snapshot!(
        "ja_dirty_and_unpublished",
        common::unmarked(&brain.observe().await)
    );
    let blocked = brain.call("work_publish", json!({})).await;
    assert_json_snapshot!("ja_publish_blocked", common::unmarked(&blocked.envelope));

    brain
        .call(
            "work_record",
            json!({"message": "bye を追加", "issue_ids": []}),
        )
        .await;
    let published = brain.call("work_publish", json!({})).await;
    assert!(
        japanese(summary(&published.envelope)),
        "{}",
        published.envelope
    );
    assert_json_snapshot!(
        "ja_clean_with_active_issue",
        common::unmarked(&brain.observe().await)
    );
    let finish = brain.call("work_finish", json!({})).await;
    assert_json_snapshot!("ja_finish_proposals", common::unmarked(&finish.envelope));
}

#[tokio::test]
async fn the_project_file_sets_the_language_and_a_session_overrides_it() {
    let w = World::published();
    w.write(".butler/config.toml", "language = \"ja\"\n");
    let brain = w.brain().await;
    let instructions = brain.client.instructions().expect("instructions");
    assert!(japanese(instructions), "{instructions}");
    assert!(instructions.contains("work_session_start") && instructions.contains("work_vcs"));
    let uninit = brain.observe().await;
    assert!(japanese(summary(&uninit)), "{uninit}");
    // Field names and values do not change with the language.
    assert_eq!(uninit["data"]["work_state"], json!("uninitialized"));
    assert_eq!(
        uninit["data"]["required_action"]["tool"],
        json!("work_session_start")
    );

    // Without a language of its own, the session takes the project's.
    let brain = w.session().await;
    let obs = brain.observe().await;
    assert!(japanese(summary(&obs)), "{obs}");

    // A session's own choice wins, errors included.
    let english = session_in(&w, "en").await;
    let obs = english.observe().await;
    assert!(!japanese(summary(&obs)), "{obs}");
    let refused = english.call("work_publish", json!({})).await;
    assert_eq!(refused.error_code(), "policy_blocked");
    assert!(
        !japanese(summary(&refused.envelope)),
        "{}",
        refused.envelope
    );
}

#[tokio::test]
async fn butler_lang_sets_the_language_when_the_project_does_not() {
    let mut w = World::published();
    w.env.push(("BUTLER_LANG".into(), "ja".into()));
    let brain = w.session().await;
    assert!(japanese(brain.client.instructions().expect("instructions")));
    w.write("a.txt", "a\n");
    let obs = brain.observe().await;
    assert!(japanese(summary(&obs)), "{obs}");
    assert!(
        japanese(
            obs["data"]["required_action"]["policy_hint"]
                .as_str()
                .expect("hint")
        ),
        "{obs}"
    );

    // The project's file wins over the environment.
    w.write(".butler/config.toml", "language = \"en\"\n");
    let brain = w.session().await;
    let obs = brain.observe().await;
    assert!(!japanese(summary(&obs)), "{obs}");
}

#[test]
fn the_hook_denies_in_the_projects_language() {
    let w = World::published();
    w.write(".butler/config.toml", "language = \"ja\"\n");
    let input = json!({
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "cwd": w.root(),
        "tool_input": {"command": "git status"},
    })
    .to_string();
    let mut child = Command::new(BUTLER)
        .arg("git-hook")
        .env_remove("BUTLER_LANG")
        .env("CLAUDE_PROJECT_DIR", &w.project)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("the hook starts");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input.as_bytes())
        .expect("write");
    let out = child.wait_with_output().expect("the hook ends");
    assert_eq!(out.status.code(), Some(0));
    let doc: Value = serde_json::from_slice(&out.stdout).expect("a deny JSON");
    let reason = doc["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .expect("reason");
    assert!(japanese(reason), "{reason}");
    assert!(reason.contains("work_observe()"), "{reason}");
}

/// The answers of the later tools speak the session's language too: a delegated operation
/// Butler cannot do yet, a wrong Task Contract, and an unfinished merge's way on.
#[tokio::test]
async fn delegation_and_conflict_answers_in_japanese() {
    let w = frozen(World::published());
    let brain = session_in(&w, "ja").await;
    let unknown = brain
        .call(
            "submit_task",
            json!({"contract": {"intent": "restart", "target": {"service": "api"},
                                "delegation_mode": "teach_if_unknown"}}),
        )
        .await;
    assert_eq!(unknown.status(), "ok", "{}", unknown.envelope);
    assert!(japanese(summary(&unknown.envelope)), "{}", unknown.envelope);
    let wrong = brain
        .call(
            "submit_task",
            json!({"contract": {"intent": "restart", "colour": "red"}}),
        )
        .await;
    assert_eq!(
        wrong.envelope["error_code"], "need_input",
        "{}",
        wrong.envelope
    );
    assert!(japanese(summary(&wrong.envelope)), "{}", wrong.envelope);
    // Field names stay English.
    assert!(
        wrong.envelope.to_string().contains("colour"),
        "{}",
        wrong.envelope
    );

    // A merge stopped on a conflict: blocked, with the way on in Japanese.
    w.git(&w.project, &["checkout", "-q", "-b", "other"]);
    w.write("README.md", "other\n");
    w.git(&w.project, &["commit", "-qam", "other"]);
    w.git(&w.project, &["checkout", "-q", "main"]);
    w.write("README.md", "main\n");
    w.git(&w.project, &["commit", "-qam", "main"]);
    let _ = w.git_output(&w.project, &["merge", "other"]);
    let observed = brain.observe().await;
    assert_eq!(observed["data"]["work_state"], "blocked", "{observed}");
    assert!(japanese(summary(&observed)), "{observed}");
    let action = &observed["data"]["required_action"];
    assert_eq!(action["tool"], "work_record", "{observed}");
    assert!(
        japanese(action["reason"].as_str().expect("reason")),
        "{observed}"
    );
}

/// `submit_task`'s arguments for recording all work as `message` and sharing it.
fn share(message: &str) -> Value {
    json!({"contract": {"intent": "commit_push", "target": {"message": message},
                        "delegation_mode": "known_only"}})
}

/// What the user approves is the plan, not its wording: a share asked for in a Japanese session
/// and approved from an English one (a restarted Brain, another terminal) runs once. The asking
/// session's status, skills and cancellation answers stay Japanese.
#[tokio::test]
async fn an_approval_relayed_by_a_session_in_another_language_opens_the_same_plan() {
    let w = World::published();
    let asking = session_in(&w, "ja").await;
    w.write("seen.txt", "the user saw this\n");
    let asked = asking.call("submit_task", share("Share")).await;
    assert_eq!(
        asked.data()["status"],
        "need_approval",
        "{}",
        asked.envelope
    );
    assert!(
        japanese(&asked.data()["approval"].to_string()),
        "{}",
        asked.envelope
    );
    let task = asked.data()["task_id"].as_str().expect("id").to_owned();
    let relaying = session_in(&w, "en").await;
    let done = relaying
        .call("approve", json!({"task_id": task, "decision": "approve"}))
        .await;
    assert_eq!(done.data()["status"], "ok", "{}", done.envelope);
    let shared = w.git(&w.shared, &["log", "-1", "--format=%s", "refs/heads/main"]);
    assert_eq!(shared.trim(), "Share");

    // The asking session reads the rest of the delegation in its own language.
    let status = asking.call("get_status", json!({"task_id": task})).await;
    assert_eq!(status.status(), "ok", "{}", status.envelope);
    assert!(japanese(summary(&status.envelope)), "{}", status.envelope);
    let skills = asking.call("list_skills", json!({})).await;
    assert_eq!(skills.status(), "ok", "{}", skills.envelope);
    assert!(japanese(summary(&skills.envelope)), "{}", skills.envelope);
    w.write("later.txt", "later\n");
    let asked = asking.call("submit_task", share("Later")).await;
    let later = asked.data()["task_id"].as_str().expect("id").to_owned();
    let cancelled = asking.call("cancel_task", json!({"task_id": later})).await;
    assert_eq!(
        cancelled.data()["state"],
        "cancelled",
        "{}",
        cancelled.envelope
    );
    assert!(
        japanese(summary(&cancelled.envelope)),
        "{}",
        cancelled.envelope
    );
}
