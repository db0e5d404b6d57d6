//! What the Brain sees before it calls anything: the tool list and the instructions. Any change
//! shows up as a reviewed snapshot diff.

use crate::common;
use crate::common::{StartBrain, World};
use insta::assert_json_snapshot;
use serde_json::{Value, json};

/// 8 KiB until the line tools (three tools and work_finish's arguments) and `work_publish`'s
/// `allow_sensitive` (the way past a false alarm of the secret scan before sharing) came in;
/// the delegated operations' seven tools add 3 KiB; the operation log's two (`work_oplog`,
/// `work_undo`) half a KiB.
const TOOLS_LIST_BUDGET: usize = 13 * 1024 + 256;

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

/// The restricted worker MCP an implementation agent is given: `butler worker-mcp` started on a
/// ledger holding one task, as an agent starts it.
mod agent_surface {
    use butler_orchestrator::client::BrainClient;

    use super::*;

    const AGENT_TOOLS_BUDGET: usize = 2 * 1024;

    /// The task file of task `t1`, as the Maid writes it for the agent's worker MCP.
    fn task_file(dir: &std::path::Path) -> std::path::PathBuf {
        use butler_worker::contract::{FileCheckSpec, ImplementRequest, TaskContract};
        use butler_worker::time::Timestamp;
        let path = dir.join("task.json");
        let request = ImplementRequest {
            goal: "Add greet()".into(),
            spec: "greet() returns \"hi\".".into(),
            target_paths: vec!["src/".into(), "README.md".into()],
            test_commands: vec!["cargo test greet".into()],
            file_checks: vec![FileCheckSpec {
                path: "src/greet.rs".into(),
                contains: Some("fn greet".into()),
                ..Default::default()
            }],
            issue_id: Some(4),
            ..Default::default()
        };
        let at = Timestamp::parse("2026-04-15T10:00:00+09:00").expect("time");
        let id = butler_worker::contract::TaskId::new("t1").expect("id");
        let contract = TaskContract::from_request(request, id, "brain", at).expect("valid");
        std::fs::write(&path, serde_json::to_string(&contract).expect("json")).expect("task file");
        path
    }

    #[tokio::test]
    async fn the_agents_tools_and_its_task_are_snapshotted() {
        let dir = tempfile::tempdir().expect("tempdir");
        let task = task_file(dir.path());
        let args: Vec<String> = vec![
            "worker-mcp".into(),
            "--task-file".into(),
            task.to_string_lossy().into_owned(),
            "--notes".into(),
            dir.path()
                .join("notes.jsonl")
                .to_string_lossy()
                .into_owned(),
        ];
        let client = BrainClient::launch(common::BUTLER.as_ref(), &args, dir.path(), &[])
            .await
            .expect("worker-mcp starts");
        let tools = client.tools().await.expect("tools/list");
        let as_json = serde_json::to_value(&tools).expect("json");
        assert_json_snapshot!("agent_tools_list", as_json);
        let bytes = serde_json::to_string(&tools).expect("json").len();
        assert!(
            bytes <= AGENT_TOOLS_BUDGET,
            "agent tools/list is {bytes} bytes"
        );

        let read = client
            .call("read_task", json!({}))
            .await
            .expect("read_task answers");
        assert!(!read.is_error, "{:?}", read.envelope);
        let task = read.envelope;
        assert_json_snapshot!("agent_read_task", task);
        client.close().await;
    }
}
