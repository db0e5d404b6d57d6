//! What the Brain is told about a wrong contract or wrong taught steps, for many wrong inputs at
//! once: every problem's place and reason, in order. Read into written forms field by field
//! (`contract/written.rs`), the answers are those of the hand-written checkers they replaced
//! (this snapshot was taken from both, and was the same).

use std::collections::BTreeSet;

use insta::assert_json_snapshot;
use serde_json::{Value, json};

use crate::contract::{FieldProblem, TaskSubmission, parse_steps};
use crate::time::Timestamp;

fn answer<T>(result: Result<T, Vec<FieldProblem>>) -> Value {
    match result {
        Ok(_) => json!("accepted"),
        Err(problems) => json!(problems),
    }
}

#[test]
fn every_problem_of_wrong_contracts_is_named_in_order() {
    let now = Timestamp::parse("2026-04-15T10:00:00+09:00").expect("time");
    let contracts = vec![
        json!("x"),
        json!({}),
        json!(null),
        json!([]),
        json!({"intent": "Restart!", "target": {"Service": "api", "env": 3, "host": "-rf"}, "delegation_mode": "whenever",
               "constraints": {"timeout_s": 0, "retries": 2}, "success_criteria": {"commands": [{"command": "x", "output_matches": "("}],
               "file_checks": [{"path": "../etc/passwd", "exists": true}]}, "requested_at": "yesterday", "colour": "blue"}),
        json!({"colour": 1, "intent": "Restart", "target": {"service": 3}, "delegation_mode": "x"}),
        json!({"intent": 3, "target": null, "delegation_mode": null, "task_id": 5, "requested_by": "", "requested_at": 3, "issue_id": 0}),
        json!({"intent": "x", "target": [], "delegation_mode": "agent", "task_id": "t5", "requested_by": "me", "issue_id": -1}),
        json!({"intent": "x", "target": {}, "delegation_mode": "known_only", "task_id": "-bad", "issue_id": 1.5, "constraints": 3, "success_criteria": "x"}),
        json!({"intent": "x", "target": {}, "delegation_mode": "known_only", "constraints": {"timeout_s": "x", "require_approval_for": [1, "git_push", "Bad"], "agent": "claude", "allow_test_changes": true}}),
        json!({"intent": "x", "target": {}, "delegation_mode": "known_only", "constraints": {"timeout_s": 100000, "require_approval_for": "x", "agent": 3, "allow_test_changes": "y"}}),
        json!({"intent": "x", "target": {}, "delegation_mode": "known_only", "constraints": {"timeout_s": null, "require_approval_for": null, "agent": null, "allow_test_changes": null, "z": 1}}),
        json!({"intent": "implement", "target": {}, "delegation_mode": "agent", "constraints": {"timeout_s": 5, "agent": "cursor", "allow_test_changes": 1}}),
        json!({"intent": "implement", "target": {"goal": "g", "target_paths": ["src/"]}, "delegation_mode": "agent", "constraints": {"timeout_s": 600, "agent": "Claude-Code", "allow_test_changes": true, "require_approval_for": ["x"]}}),
        json!({"intent": "implement", "target": null, "delegation_mode": "agent"}),
        json!({"intent": "implement", "target": 3, "delegation_mode": "known_only"}),
        json!({"intent": "implement", "delegation_mode": "agent"}),
        json!({"intent": "implement", "target": {"goal": "g", "target_paths": ["src/"], "extra": 1}, "delegation_mode": "agent"}),
        json!({"intent": "implement", "target": {"goal": "", "target_paths": ["/etc"]}, "delegation_mode": "agent", "success_criteria": {"commands": [{"command": "x", "exit_code": 2}]}}),
        json!({"intent": "x", "target": {}, "delegation_mode": "known_only", "success_criteria": {"commands": [{"command": ""}, {"command": "a", "extra": 1}, {"cmd": 1}, 3, {"command": "ok", "exit_code": null}],
               "file_checks": [{"path": "a"}, {"path": "a", "exists": true, "x": 1}, {"path": "src/", "exists": true}, 3, {"path": "b", "contains": ""}], "other": 1}}),
        json!({"intent": "x", "target": {}, "delegation_mode": "known_only", "success_criteria": {"commands": 3, "file_checks": null}}),
        json!({"intent": "x", "target": {"a": "*", "b": "", "c": "x\u{1}", "D": "x", "e": null}, "delegation_mode": "teach_if_unknown", "requested_at": "2026-04-15T10:00:00+09:00", "requested_by": " me ", "issue_id": 4}),
        json!({"intent": "x", "target": {}, "delegation_mode": "known_only", "task_id": "deploy-7"}),
    ];
    let answers: Vec<Value> = contracts
        .into_iter()
        .map(|c| json!({"contract": c.clone(), "answer": answer(TaskSubmission(c).validate(now))}))
        .collect();
    // serde_json keeps an object's keys sorted or as written, by the features of the build.
    insta::with_settings!({sort_maps => true}, {
        assert_json_snapshot!("contract_problems", answers);
    });
}

#[test]
fn every_problem_of_wrong_steps_is_named_in_order() {
    let keys: BTreeSet<String> = ["service".to_owned()].into();
    let servers: BTreeSet<String> = ["kb".to_owned()].into();
    let steps = vec![
        json!([]),
        json!([1, "x", null]),
        json!([{"kind": "ssh", "host": "x"}, {}, {"kind": 3}, {"kind": "Cmd"}]),
        json!([{"kind": "cmd"}, {"kind": "cmd", "argv": null}, {"kind": "cmd", "shell": null}, {"kind": "cmd", "argv": null, "shell": "x"}, {"kind": "cmd", "argv": ["a"], "shell": "x"}, {"kind": "cmd", "shell": 3}, {"kind": "cmd", "shell": " "}]),
        json!([{"kind": "cmd", "argv": []}, {"kind": "cmd", "argv": [" "]}, {"kind": "cmd", "argv": ["a", 3]}, {"kind": "cmd", "argv": "ls"}, {"kind": "cmd", "argv": ["{target.service}", "{target.x}"]}]),
        json!([{"kind": "cmd", "argv": ["ls"], "cwd": "../x", "timeout_s": 0, "exit_code": "x", "writes": "x", "extra": 1, "more": 2}]),
        json!([{"kind": "cmd", "argv": ["ls"], "cwd": 3, "timeout_s": 3601, "exit_code": 5000000000i64, "writes": null}]),
        json!([{"kind": "cmd", "argv": ["ls"], "cwd": "src/*", "timeout_s": 1.5, "exit_code": -1, "writes": ["../up", ".git/hooks", "/", "~", "{target.service}", "/a/../b", "src/*", "~x/y", 3, ".", null, "dist/", "/var/x", "~/.cache"]}]),
        json!([{"kind": "cmd", "argv": ["ls"], "cwd": null, "timeout_s": null, "exit_code": null, "writes": (0..40).map(|i| format!("d{i}/")).collect::<Vec<_>>()}]),
        json!([{"kind": "cmd", "shell": "echo {target.service}", "cwd": "{target.nope}"}]),
        json!([{"kind": "check"}, {"kind": "check", "command": "true", "colour": 1}, {"kind": "check", "path": "a", "exists": true, "writes": ["x"]}, {"kind": "check", "command": ""}, {"kind": "check", "command": "x", "output_matches": "("}]),
        json!([{"kind": "check", "path": "/etc/passwd", "exists": true}, {"kind": "check", "path": "a"}, {"kind": "check", "path": "{target.x}", "contains": "{target.y}"}, {"kind": "check", "command": "echo {target.service}"}, {"kind": "check", "command": 3}, {"kind": "check", "path": 3, "exists": true}]),
        json!([{"kind": "wait"}, {"kind": "wait", "until": null}, {"kind": "wait", "until": 3}, {"kind": "wait", "until": {}}, {"kind": "wait", "until": {"path": "/etc/passwd", "exists": true}}, {"kind": "wait", "until": {"command": "x", "z": 1}, "timeout_s": 0, "interval_s": 61, "q": 1}]),
        json!([{"kind": "wait", "until": {"path": "a", "contains": "{target.zz}"}, "interval_s": null}, {"kind": "wait", "until": {"command": "echo {target.service}"}}]),
        json!([{"kind": "mcp_call"}, {"kind": "mcp_call", "server": "tracker", "tool": 3}, {"kind": "mcp_call", "server": 3, "tool": "", "params": 3, "timeout_s": 601, "output_contains": ""}, {"kind": "mcp_call", "server": "kb", "tool": "x", "params": {"a": ["{target.nope}"]}, "output_contains": 3, "z": 1}]),
        json!([{"kind": "mcp_call", "server": "kb", "tool": "x", "params": null, "output_contains": null, "timeout_s": 600}]),
        json!([{"kind": "cmd", "argv": ["systemctl", "restart", "{target.service}"]}, {"kind": "cmd", "shell": "echo \"$TARGET_SERVICE\"", "cwd": "deploy/", "timeout_s": 5}, {"kind": "check", "command": "curl", "output_matches": "^ok"}, {"kind": "wait", "until": {"path": "run/ready", "exists": true}, "timeout_s": 30}, {"kind": "mcp_call", "server": "kb", "tool": "note", "params": {"text": "{target.service}"}}]),
    ];
    let answers: Vec<Value> = steps
        .into_iter()
        .map(|s| {
            let raw = s.as_array().cloned().unwrap_or_default();
            json!({"steps": s, "answer": answer(parse_steps(&raw, &keys, &servers))})
        })
        .collect();
    // serde_json keeps an object's keys sorted or as written, by the features of the build.
    insta::with_settings!({sort_maps => true}, {
        assert_json_snapshot!("step_problems", answers);
    });
}
