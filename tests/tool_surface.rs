//! What the Brain sees before it calls anything: the tool list and the instructions. Any change
//! shows up as a reviewed snapshot diff.

mod common;

use common::World;
use insta::assert_json_snapshot;
use serde_json::{Value, json};

/// 8 KiB until the line tools (three tools and work_finish's arguments) came in.
const TOOLS_LIST_BUDGET: usize = 9 * 1024 + 512;

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
    use std::process::Stdio;

    use rmcp::ServiceExt;
    use rmcp::model::CallToolRequestParams;
    use rmcp::transport::TokioChildProcess;

    use super::*;

    const AGENT_TOOLS_BUDGET: usize = 2 * 1024;

    /// A ledger file with task `t1`, as `run_implement` stores it.
    fn ledger_with_a_task(dir: &std::path::Path) -> std::path::PathBuf {
        use butler_worker::contract::{FileCheckSpec, ImplementRequest, TaskContract};
        use butler_worker::time::Timestamp;
        let path = dir.join("ledger.db");
        let ledger = butler_worker::ledger::Ledger::open_file(&path).expect("ledger");
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
        ledger
            .create_task(|id| TaskContract::from_request(request, id, "brain", at).expect("valid"))
            .expect("task");
        path
    }

    #[tokio::test]
    async fn the_agents_tools_and_its_task_are_snapshotted() {
        let dir = tempfile::tempdir().expect("tempdir");
        let ledger = ledger_with_a_task(dir.path());
        let mut cmd = tokio::process::Command::new(common::BUTLER);
        cmd.arg("worker-mcp")
            .arg("--ledger")
            .arg(&ledger)
            .args(["--task", "t1"]);
        let (transport, _) = TokioChildProcess::builder(cmd)
            .stderr(Stdio::null())
            .spawn()
            .expect("worker-mcp starts");
        let client = ().serve(transport).await.expect("handshake");
        let tools = client.list_all_tools().await.expect("tools/list");
        let as_json = serde_json::to_value(&tools).expect("json");
        assert_json_snapshot!("agent_tools_list", as_json);
        let bytes = serde_json::to_string(&tools).expect("json").len();
        assert!(
            bytes <= AGENT_TOOLS_BUDGET,
            "agent tools/list is {bytes} bytes"
        );

        let read = client
            .call_tool(CallToolRequestParams::new("read_task"))
            .await
            .expect("read_task answers");
        assert_ne!(read.is_error, Some(true), "{read:?}");
        let task = read.structured_content.expect("structured answer");
        assert_json_snapshot!("agent_read_task", task);
        let _ = client.cancel().await;
    }
}
