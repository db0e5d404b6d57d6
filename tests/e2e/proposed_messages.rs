//! `work_record` without a message, through the real binary: `need_input` with a message
//! proposed from the change (no model), for a few representative changes; passing it back
//! records it.

use crate::common::{Brain, StartBrain, World};
use insta::{assert_json_snapshot, assert_snapshot};
use serde_json::json;

/// What `work_record()` proposes for the current change (and that nothing was recorded).
async fn proposal(w: &World, brain: &Brain) -> String {
    let head = w.git(&w.project, &["rev-parse", "HEAD"]);
    let a = brain.call("work_record", json!({})).await;
    assert_eq!(a.error_code(), "need_input", "{}", a.envelope);
    assert_eq!(
        w.git(&w.project, &["rev-parse", "HEAD"]),
        head,
        "nothing is recorded without a message"
    );
    a.data()["proposed_message"]
        .as_str()
        .expect("proposed_message")
        .to_owned()
}

#[tokio::test]
async fn a_rust_change_with_a_test_is_proposed_and_recorded_as_proposed() {
    let w = World::published();
    w.write(
        "src/lib.rs",
        "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n",
    );
    w.git(&w.project, &["add", "-A"]);
    w.git(&w.project, &["commit", "-q", "-m", "Add add"]);
    w.write(
        "src/lib.rs",
        "pub fn add(a: i64, b: i64) -> i64 {\n    a + b\n}\n\npub struct Calculator;\n\npub fn sub(a: i64, b: i64) -> i64 {\n    a - b\n}\n",
    );
    w.write(
        "tests/math.rs",
        "#[test]\nfn sub_works() {\n    assert_eq!(mylib::sub(3, 1), 2);\n}\n",
    );
    let brain = w.session().await;
    let a = brain.call("work_record", json!({})).await;
    assert_json_snapshot!("need_input_with_a_proposal", a.envelope);
    let proposed = a.data()["proposed_message"]
        .as_str()
        .expect("proposal")
        .to_owned();
    let recorded = brain
        .call("work_record", json!({"message": proposed, "issue_ids": []}))
        .await;
    assert_eq!(recorded.status(), "ok", "{}", recorded.envelope);
    let saved = w.git(&w.project, &["log", "-1", "--format=%B"]);
    assert!(saved.starts_with(&proposed), "{saved}");
}

#[tokio::test]
async fn documentation_sections_are_named() {
    let w = World::published();
    w.write(
        "README.md",
        "# project\n\n## Lines of work\n\nStart one with `work_new_line`.\n\n```sh\n# a shell comment, not a heading\n```\n\n## Proposed messages\n\nOmit the message.\n",
    );
    let brain = w.session().await;
    assert_snapshot!("markdown_sections", proposal(&w, &brain).await);
}

#[tokio::test]
async fn a_new_directory_of_several_languages_is_summarised() {
    let w = World::published();
    w.write(
        "tools/fetch.py",
        "import json\n\nclass Fetcher:\n    def fetch(self, url):\n        return url\n\nasync def main():\n    pass\n",
    );
    w.write(
        "tools/web/app.ts",
        "export interface Props { name: string }\nexport const render = (p: Props) => p.name;\nexport default function App() {}\n",
    );
    w.write(
        "tools/cmd/main.go",
        "package main\n\ntype Config struct{}\n\nfunc (c *Config) Load() error { return nil }\n\nfunc main() {}\n",
    );
    w.write("tools/web/app.test.ts", "test('renders', () => {});\n");
    let brain = w.session().await;
    assert_snapshot!("several_languages", proposal(&w, &brain).await);
}

#[tokio::test]
async fn removed_files_and_binary_files_speak_for_themselves() {
    let w = World::published();
    w.write("old/a.txt", "a\n");
    w.write("old/b.txt", "b\n");
    w.git(&w.project, &["add", "-A"]);
    w.git(&w.project, &["commit", "-q", "-m", "old files"]);
    std::fs::remove_dir_all(w.project.join("old")).expect("remove");
    let brain = w.session().await;
    assert_snapshot!("removed_files", proposal(&w, &brain).await);
    brain
        .call(
            "work_record",
            json!({"message": "Remove old", "issue_ids": []}),
        )
        .await;
    std::fs::write(w.project.join("logo.png"), [0u8, 159, 146, 150, 0, 1]).expect("write");
    assert_snapshot!("one_binary_file", proposal(&w, &brain).await);
}

#[tokio::test]
async fn nothing_to_record_needs_no_message() {
    let w = World::published();
    let brain = w.session().await;
    let a = brain.call("work_record", json!({})).await;
    assert_eq!(a.status(), "ok", "{}", a.envelope);
    assert_eq!(a.data()["record_id"], json!(null));
}
