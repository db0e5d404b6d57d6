//! Secrets stay home, through the real binary and real git: what `work_record` would save
//! (staged or not, new or modified, whatever the file name) and what `work_publish` would share
//! (records made outside Butler too) is scanned; Butler's own token is refused in messages,
//! files and issue text. Findings name the file and the rule, never the secret.
//!
//! Every secret here is generated at run time, so this file holds none.

use crate::common::{StartBrain, World};
use serde_json::json;

/// Butler's tracker token in these tests (40 hex digits, like a Gitea token).
fn tracker_token() -> String {
    generated(40, 17, "0123456789abcdef")
}

/// A deterministic, random-looking string of `n` characters from `alphabet`.
fn generated(n: usize, seed: u64, alphabet: &str) -> String {
    let chars: Vec<char> = alphabet.chars().collect();
    let mut x = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            chars[((x >> 33) % chars.len() as u64) as usize]
        })
        .collect()
}

const B62: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/// A PEM private key block (header, 6 lines of key material, footer).
fn key_block() -> String {
    let dashes = "-".repeat(5);
    let mut text = format!("{dashes}BEGIN RSA PRIVATE KEY{dashes}\n");
    for i in 0..6 {
        text.push_str(&generated(64, i, &format!("{B62}+/")));
        text.push('\n');
    }
    text.push_str(&format!("{dashes}END RSA PRIVATE KEY{dashes}\n"));
    text
}

/// No 12-character piece of `secret` appears in `answer`.
fn assert_not_quoted(answer: &serde_json::Value, secret: &str) {
    let text = answer.to_string();
    let chars: Vec<char> = secret.chars().filter(|c| !c.is_whitespace()).collect();
    for window in chars.windows(12).step_by(4) {
        let piece: String = window.iter().collect();
        if piece.contains('-') {
            continue;
        }
        assert!(
            !text.contains(&piece),
            "the answer quotes the secret: {text}"
        );
    }
}

fn head(w: &World) -> String {
    w.git(&w.project, &["rev-parse", "HEAD"])
}

fn shared_main(w: &World) -> String {
    w.git(&w.shared, &["rev-parse", "main"])
}

/// Commits everything as the user would in a terminal, outside Butler.
fn commit_outside(w: &World, message: &str) {
    w.git(&w.project, &["add", "-A"]);
    w.git(&w.project, &["commit", "-q", "-m", message]);
}

#[tokio::test]
async fn a_staged_private_key_under_an_innocent_name_is_refused() {
    let w = World::published();
    let key = key_block();
    w.write("docs/notes.txt", &format!("Meeting notes\n\n{key}"));
    w.write("src/lib.rs", "pub fn ok() {}\n");
    w.git(&w.project, &["add", "-A"]); // the user staged everything in a terminal
    let before = head(&w);
    let brain = w.session().await;

    let a = brain
        .call(
            "work_record",
            json!({"message": "Add notes", "issue_ids": []}),
        )
        .await;

    assert_eq!(a.error_code(), "policy_blocked", "{}", a.envelope);
    assert_eq!(
        a.data()["files"],
        json!([{"path": "docs/notes.txt", "rule": "private-key", "line": 3}])
    );
    assert_eq!(a.data()["paths"], json!(["docs/notes.txt"]));
    assert!(
        a.envelope["summary"]
            .as_str()
            .expect("summary")
            .contains("private-key")
    );
    assert_not_quoted(&a.envelope, &key);
    assert_eq!(head(&w), before, "nothing was recorded");
    assert_eq!(brain.state().await, "dirty");
}

#[tokio::test]
async fn a_high_entropy_setting_added_to_a_tracked_file_is_refused_until_the_user_clears_it() {
    let w = World::published();
    w.write("config/app.conf", "name = widgets\nport = 8080\n");
    commit_outside(&w, "Add config");
    let value = generated(32, 7, B62);
    w.write(
        "config/app.conf",
        &format!("name = widgets\nport = 8080\nAPI_KEY = {value}\n"),
    );
    let brain = w.session().await;

    let a = brain
        .call(
            "work_record",
            json!({"message": "Configure the API", "issue_ids": []}),
        )
        .await;

    assert_eq!(a.error_code(), "policy_blocked", "{}", a.envelope);
    assert_eq!(
        a.data()["files"],
        json!([{"path": "config/app.conf", "rule": "secret-assignment", "line": 3}])
    );
    assert!(
        a.envelope["hint"]
            .as_str()
            .expect("hint")
            .contains("allow_sensitive")
    );
    assert_not_quoted(&a.envelope, &value);

    let b = brain
        .call(
            "work_record",
            json!({"message": "Configure the API", "issue_ids": [],
                   "allow_sensitive": ["config/app.conf"]}),
        )
        .await;
    assert_eq!(b.status(), "ok", "{}", b.envelope);
    assert_eq!(brain.state().await, "recorded_unpublished");
}

#[tokio::test]
async fn placeholders_and_lines_already_recorded_are_not_refused() {
    let w = World::published();
    // A secret-looking line recorded long ago is history already: editing the file elsewhere
    // does not report it again.
    let old = generated(40, 3, B62);
    w.write(
        "settings.py",
        &format!("SECRET_KEY = '{old}'\nDEBUG = False\n"),
    );
    commit_outside(&w, "Settings");
    w.write(
        "settings.py",
        &format!("SECRET_KEY = '{old}'\nDEBUG = True\n"),
    );
    w.write(
        ".env.example",
        "KEY=changeme\nAPI_KEY=changeme\nPASSWORD=\nTOKEN=<your token>\nSECRET=${SECRET}\n\
         AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE\nGITHUB_TOKEN=ghp_XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX\n",
    );
    w.write(
        "docs/setup.md",
        "Connect with `postgres://user:password@localhost/app` and set `api_key: <key>`.\n\
         let token = read_token(path)?;\nmax_tokens = 4096\n",
    );
    let brain = w.session().await;

    let a = brain
        .call(
            "work_record",
            json!({"message": "Document the setup", "issue_ids": []}),
        )
        .await;

    assert_eq!(a.status(), "ok", "{}", a.envelope);
}

#[tokio::test]
async fn butlers_own_token_is_refused_in_a_message_and_in_a_file_even_when_allowed() {
    let mut w = World::published();
    let token = tracker_token();
    w.env.push(("BUTLER_GITEA_TOKEN".into(), token.clone()));
    w.write("src/lib.rs", "pub fn ok() {}\n");
    let brain = w.session().await;

    let a = brain
        .call(
            "work_record",
            json!({"message": format!("Use token {token} for deploys"), "issue_ids": []}),
        )
        .await;
    assert_eq!(a.error_code(), "policy_blocked", "{}", a.envelope);
    assert_eq!(a.data()["field"], "message");
    assert_eq!(a.data()["rule"], "butler-tracker-token");
    assert!(!a.envelope.to_string().contains(&token));

    w.write(
        "deploy.sh",
        &format!("curl -H 'Authorization: token {token}' https://tracker/\n"),
    );
    let b = brain
        .call(
            "work_record",
            json!({"message": "Deploy script", "issue_ids": [], "allow_sensitive": ["deploy.sh"]}),
        )
        .await;
    assert_eq!(b.error_code(), "policy_blocked", "{}", b.envelope);
    assert_eq!(
        b.data()["files"],
        json!([{"path": "deploy.sh", "rule": "butler-tracker-token", "line": 1}])
    );
    assert!(!b.envelope.to_string().contains(&token));
    assert_eq!(brain.state().await, "dirty");
}

#[tokio::test]
async fn butlers_own_token_in_issue_text_is_refused_and_nothing_is_written() {
    let mut w = World::published();
    let token = tracker_token();
    w.env.push(("BUTLER_GITEA_TOKEN".into(), token.clone()));
    let brain = w.session().await;
    let created = brain
        .call(
            "issue_create",
            json!({"title": "Deploys", "current_state": "open", "next_action": "write it",
                   "blockers": "none"}),
        )
        .await;
    assert_eq!(created.status(), "ok", "{}", created.envelope);

    let cases = [
        (
            "issue_comment",
            json!({"issue_id": 1, "body": format!("the token is {token}")}),
            "body",
        ),
        (
            "issue_update_title",
            json!({"issue_id": 1, "title": format!("Deploy with {token}")}),
            "title",
        ),
        (
            "issue_create",
            json!({"title": "x", "current_state": format!("uses {token}"),
                   "next_action": "a", "blockers": "b"}),
            "body",
        ),
    ];
    for (tool, args, field) in cases {
        let a = brain.call(tool, args).await;
        assert_eq!(a.error_code(), "policy_blocked", "{tool}: {}", a.envelope);
        assert_eq!(a.data()["field"], field, "{tool}");
        assert!(!a.envelope.to_string().contains(&token), "{tool}");
    }
    let read = brain
        .call("issue_read", json!({"issue_id": 1, "last_n_comments": 5}))
        .await;
    assert_eq!(read.data()["comments"], json!([]));
    assert_eq!(read.data()["issue"]["title"], "Deploys");
    let list = brain.call("issue_list", json!({"state": "all"})).await;
    assert_eq!(list.data()["issues"].as_array().expect("issues").len(), 1);
}

#[tokio::test]
async fn publishing_an_outside_commit_that_carries_a_token_is_refused() {
    let w = World::published();
    let published = shared_main(&w);
    let token = format!("ghp_{}", generated(36, 11, B62));
    w.write("scripts/deploy.sh", &format!("export GH={token}\n"));
    commit_outside(&w, "Deploy script");
    let leaking = w.git(&w.project, &["rev-parse", "--short=12", "HEAD"]);
    // Deleting it in a later commit does not help: the first one would still be shared.
    std::fs::remove_file(w.project.join("scripts/deploy.sh")).expect("rm");
    commit_outside(&w, "Remove the deploy script");
    let brain = w.session().await;

    let a = brain.call("work_publish", json!({})).await;

    assert_eq!(a.error_code(), "policy_blocked", "{}", a.envelope);
    assert_eq!(a.data()["records"], json!([leaking.trim()]));
    assert_eq!(
        a.data()["findings"],
        json!([{"record": leaking.trim(), "path": "scripts/deploy.sh",
                "rule": "github-token", "line": 1}])
    );
    assert_not_quoted(&a.envelope, &token);
    assert_eq!(shared_main(&w), published, "nothing was shared");

    let b = brain
        .call(
            "work_publish",
            json!({"allow_sensitive": ["scripts/deploy.sh"]}),
        )
        .await;
    assert_eq!(b.status(), "ok", "{}", b.envelope);
    assert_eq!(shared_main(&w), head(&w));
}

#[tokio::test]
async fn a_secret_in_an_outside_commits_message_is_refused_by_record() {
    let w = World::published();
    let key_id = format!(
        "AKIA{}",
        generated(16, 5, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
    );
    w.write("NOTES.md", "rotated\n");
    commit_outside(&w, &format!("Rotate the key to {key_id}"));
    let record = w.git(&w.project, &["rev-parse", "--short=12", "HEAD"]);
    let record = record.trim();
    let brain = w.session().await;

    let a = brain.call("work_publish", json!({})).await;

    assert_eq!(a.error_code(), "policy_blocked", "{}", a.envelope);
    assert_eq!(
        a.data()["findings"],
        json!([{"record": record, "rule": "aws-access-key-id"}])
    );
    assert!(!a.envelope.to_string().contains(&key_id[4..]));
    let b = brain
        .call("work_publish", json!({"allow_sensitive": [record]}))
        .await;
    assert_eq!(b.status(), "ok", "{}", b.envelope);
}

#[tokio::test]
async fn binary_files_are_not_read_as_text_and_huge_files_are_read_in_part() {
    let w = World::published();
    let mut binary = vec![0u8, 1, 2, 3];
    binary.extend_from_slice(format!("ghp_{}", generated(36, 2, B62)).as_bytes());
    std::fs::write(w.project.join("image.bin"), binary).expect("binary");
    let line = "ordinary text of a large generated file\n";
    let mut huge = line.repeat((5 << 20) / line.len());
    huge.push_str(&format!("API_KEY={}\n", generated(32, 9, B62)));
    w.write("data/big.txt", &huge);
    let brain = w.session().await;

    let a = brain
        .call(
            "work_record",
            json!({"message": "Add data", "issue_ids": []}),
        )
        .await;

    assert_eq!(a.status(), "ok", "{}", a.envelope);
    let notes = a.data()["notes"].to_string();
    assert!(
        notes.contains("data/big.txt") && notes.contains("first 4 MiB only"),
        "{notes}"
    );
}
