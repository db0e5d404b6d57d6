//! What the Brain sees before it calls anything: the tool list and the instructions. Any change
//! shows up as a reviewed snapshot diff.

mod common;

use common::World;
use insta::assert_json_snapshot;
use serde_json::{Value, json};

/// 8 KiB, plus room for `work_publish`'s `allow_sensitive` (the way past a false alarm of the
/// secret scan before sharing).
const TOOLS_LIST_BUDGET: usize = 8 * 1024 + 256;

#[tokio::test]
async fn tool_surface_is_snapshotted_and_small() {
    let w = World::published();
    let brain = w.brain().await;
    let tools = brain.client.tools().await.expect("tools/list");
    let as_json: Value = serde_json::to_value(&tools).expect("json");
    assert_json_snapshot!("tools_list", as_json);
    let bytes = serde_json::to_string(&tools).expect("json").len();
    assert!(bytes <= TOOLS_LIST_BUDGET, "tools/list is {bytes} bytes");

    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    for forbidden in ["git_", "gitea_", "work_status", "issue_update\""] {
        assert!(
            !names.iter().any(|n| n.starts_with(forbidden)),
            "{forbidden} listed: {names:?}"
        );
    }
    for tool in &tools {
        let description = tool.description.as_deref().unwrap_or("");
        assert!(!description.is_empty(), "{} has no description", tool.name);
        assert!(
            description.len() <= 300,
            "{} description is long",
            tool.name
        );
        for mechanism in ["runs git", "git add -A", "PATCH", "SQLite", "libgit2"] {
            assert!(
                !description.contains(mechanism),
                "{}: {mechanism}",
                tool.name
            );
        }
        assert!(
            tool.annotations.is_some(),
            "{} has no annotations",
            tool.name
        );
    }
}

#[tokio::test]
async fn instructions_tell_the_brain_where_to_start() {
    let w = World::published();
    let brain = w.brain().await;
    let text = brain
        .client
        .instructions()
        .expect("instructions")
        .to_string();
    assert!(text.len() < 4096);
    let start = text
        .find("work_session_start")
        .expect("names work_session_start");
    let observe = text.find("work_observe").expect("names work_observe");
    assert!(start < observe);
    assert!(
        text.len() < 2048,
        "Claude Code may cut at 2 KB: {}",
        text.len()
    );
    let _ = json!(null);
}
