//! Delegated operations through the real `butler mcp` binary: a Task Contract submitted, a
//! procedure taught once and reused until it is active, the approval gate relayed by the Brain,
//! `mcp_call` to a real stdio MCP server, `implement` handed to the ImplementMaid, cancellation
//! mid-step, and every bad input answered with a clear envelope and nothing left running.

// Test scaffolding plays the user's side of the world (git as a person runs it, reading
// `/proc`, running the `butler task show` command).
#![allow(clippy::disallowed_methods)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::common;
use crate::common::{BUTLER, Brain, StartBrain, World, normalize};
use insta::assert_json_snapshot;
use serde_json::{Value, json};

/// The user's own Butler configuration (where `[mcp_servers.*]` and `[delegation] env_allow`
/// come from; the other `[delegation]` settings may also be the project's).
fn configure(w: &World, toml: &str) {
    w.user_config(toml);
}

/// A shape for a snapshot: times, durations, approval references and temp paths replaced.
fn shape(value: Value, w: &World) -> Value {
    fn walk(v: &mut Value) {
        match v {
            Value::Object(map) => {
                for (k, item) in map.iter_mut() {
                    match k.as_str() {
                        "duration_ms" => *item = json!("<ms>"),
                        "expires_at" | "requested_at" | "updated_at" => *item = json!("<time>"),
                        "reference" => *item = json!("<approval>"),
                        _ => walk(item),
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(walk),
            Value::String(s) => {
                if let Some(i) = s.find("apr-") {
                    let end = s[i..].find(|c: char| !c.is_ascii_alphanumeric() && c != '-');
                    let end = end.map_or(s.len(), |e| i + e);
                    s.replace_range(i..end, "<approval>");
                }
            }
            _ => {}
        }
    }
    let mut value = normalize(value, w);
    walk(&mut value);
    value
}

/// The stamp procedure: writes the target's name into `out/stamp.txt` and checks it.
fn stamp_steps() -> Value {
    json!([
        {"kind": "cmd", "argv": ["mkdir", "-p", "out"], "writes": ["out/"]},
        {"kind": "cmd", "shell": "printf '%s\\n' \"$TARGET_NAME\" > out/stamp.txt"},
        {"kind": "check", "path": "out/stamp.txt", "contains": "{target.name}"}
    ])
}

fn stamp_contract(mode: &str, name: &str) -> Value {
    json!({"contract": {
        "intent": "write_stamp",
        "target": {"name": name},
        "delegation_mode": mode,
        "success_criteria": {
            "commands": [{"command": "cat out/stamp.txt", "output_matches": format!("^{name}$")}],
            "file_checks": [{"path": "out/stamp.txt", "exists": true}]
        }
    }})
}

#[tokio::test]
async fn a_taught_procedure_runs_verifies_and_becomes_active_after_the_configured_successes() {
    let w = World::published();
    configure(&w, "[delegation]\npromote_after = 2\n");
    let brain = w.session().await;

    let asked = brain
        .call("submit_task", stamp_contract("teach_if_unknown", "alpha"))
        .await;
    assert_eq!(asked.status(), "ok", "{}", asked.envelope);
    assert_eq!(asked.data()["status"], "need_input");
    assert_eq!(asked.data()["needs"]["signature"], "name=alpha");
    let task = asked.data()["task_id"]
        .as_str()
        .expect("task id")
        .to_owned();
    assert_json_snapshot!("need_input", shape(asked.envelope.clone(), &w));

    let taught = brain
        .call(
            "teach",
            json!({"task_id": task, "target": {"name": "*"}, "steps": stamp_steps()}),
        )
        .await;
    assert_eq!(taught.status(), "ok", "{}", taught.envelope);
    let data = taught.data();
    assert_eq!(data["procedure"]["status"], "candidate", "{data}");
    assert_eq!(data["procedure"]["target"], "name=*");
    let result = &data["result"];
    assert_eq!(result["status"], "ok", "{result}");
    assert_eq!(result["steps"].as_array().map(Vec::len), Some(3));
    assert_eq!(result["verify"]["commands"][0]["passed"], true);
    assert_eq!(result["by"]["status"], "candidate");
    assert_eq!(
        std::fs::read_to_string(w.project.join("out/stamp.txt")).expect("stamp"),
        "alpha\n"
    );
    assert_json_snapshot!("taught_and_ran", shape(taught.envelope.clone(), &w));

    // The same procedure, known now, for another name: the second verified run makes it active.
    let again = brain
        .call("submit_task", stamp_contract("known_only", "beta"))
        .await;
    assert_eq!(again.data()["status"], "ok", "{}", again.envelope);
    assert_eq!(again.data()["by"]["status"], "active", "{}", again.envelope);
    assert!(
        brain
            .client
            .progress()
            .iter()
            .any(|m| m.starts_with("step 2/3"))
    );

    let skills = brain.call("list_skills", json!({})).await;
    let listed = skills.data()["skills"].as_array().expect("skills").clone();
    assert!(
        listed.iter().any(|s| s["intent"] == "write_stamp"
            && s["status"] == "active"
            && s["successes"] == 2)
    );
    assert!(
        listed
            .iter()
            .any(|s| s["intent"] == "git_push" && s["by"] == "capability")
    );
    assert_json_snapshot!("list_skills", shape(skills.envelope.clone(), &w));
    let usage = brain
        .call("get_skill_usage", json!({"name": "write_stamp"}))
        .await;
    assert_eq!(
        usage.data()["targets"],
        json!(["name=*"]),
        "{}",
        usage.envelope
    );
    let common = brain
        .call("get_skill_usage", json!({"name": "butler"}))
        .await;
    assert_eq!(common.status(), "ok");
    assert_json_snapshot!("usage_butler", common.envelope.clone());

    // A verifier that fails makes the task fail, whatever the steps said.
    let wrong = brain
        .call(
            "submit_task",
            json!({"contract": {"intent": "write_stamp", "target": {"name": "gamma"},
                   "delegation_mode": "known_only",
                   "success_criteria": {"file_checks": [{"path": "out/other.txt", "exists": true}]}}}),
        )
        .await;
    assert_eq!(wrong.data()["status"], "failed", "{}", wrong.envelope);
    assert_eq!(wrong.data()["verify"]["file_checks"][0]["passed"], false);

    // The evidence is in the ledger, readable from a terminal.
    let shown = task_show(&w, &task);
    assert_eq!(shown["result"]["steps"][1]["kind"], "cmd", "{shown}");
    assert!(shown["result"]["steps"][0]["duration_ms"].is_u64());
}

#[tokio::test]
async fn known_only_with_an_unknown_intent_is_refused_and_creates_no_task() {
    let w = World::published();
    let brain = w.session().await;
    let a = brain
        .call(
            "submit_task",
            json!({"contract": {"intent": "restart", "target": {"service": "api"},
                                "delegation_mode": "known_only"}}),
        )
        .await;
    assert_eq!(a.error_code(), "not_found", "{}", a.envelope);
    assert_json_snapshot!("unknown_known_only", shape(a.envelope.clone(), &w));
    let none = brain.call("get_status", json!({"task_id": "t1"})).await;
    assert_eq!(none.error_code(), "not_found");

    let bad = brain
        .call(
            "submit_task",
            json!({"contract": {"intent": "Restart", "target": {"service": 3},
                                "delegation_mode": "sometimes", "colour": "red"}}),
        )
        .await;
    assert_eq!(bad.error_code(), "need_input");
    let fields: Vec<&str> = bad.data()["fields"]
        .as_array()
        .expect("fields")
        .iter()
        .filter_map(|f| f["field"].as_str())
        .collect();
    for field in ["colour", "intent", "delegation_mode"] {
        assert!(fields.contains(&field), "{field} not named: {fields:?}");
    }
    assert_json_snapshot!("contract_fields", shape(bad.envelope.clone(), &w));
}

/// `butler task show <id> --json` as a person runs it in the project; the text form (without
/// `--json`) names the task and every step the JSON lists.
fn task_show(w: &World, task: &str) -> Value {
    let shown: Value = task_show_as(w, task, true);
    let text = task_show_as(w, task, false);
    let text = text.as_str().expect("text");
    assert!(text.starts_with(&format!("task {task} — ")), "{text}");
    let steps = shown["progress"]["steps"]
        .as_array()
        .or(shown["result"]["steps"].as_array())
        .cloned()
        .unwrap_or_default();
    for step in steps {
        let what = step["what"].as_str().expect("what");
        assert!(text.contains(what), "{what} missing in {text}");
    }
    shown
}

fn task_show_as(w: &World, task: &str, json: bool) -> Value {
    let mut args = vec!["task", "show", task];
    if json {
        args.push("--json");
    }
    let shown = std::process::Command::new(BUTLER)
        .args(&args)
        .arg("--project")
        .arg(&w.project)
        .envs(w.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .output()
        .expect("butler task show");
    assert!(
        shown.status.success(),
        "{}",
        String::from_utf8_lossy(&shown.stderr)
    );
    if json {
        serde_json::from_slice(&shown.stdout).expect("json")
    } else {
        Value::String(String::from_utf8_lossy(&shown.stdout).into_owned())
    }
}

fn shared_head(w: &World) -> String {
    w.git(&w.shared, &["rev-parse", "refs/heads/main"])
        .trim()
        .to_owned()
}

fn local_head(w: &World) -> String {
    w.git(&w.project, &["rev-parse", "HEAD"]).trim().to_owned()
}

#[tokio::test]
async fn git_push_waits_for_approval_runs_after_approve_and_does_nothing_after_deny() {
    let w = World::published();
    let brain = w.session().await;
    w.write("note.txt", "to share\n");
    brain
        .ok("work_record", json!({"message": "Add a note"}))
        .await;
    let before = shared_head(&w);
    assert_ne!(before, local_head(&w));
    let push = json!({"contract": {"intent": "git_push", "target": {},
                                   "delegation_mode": "known_only"}});

    let asked = brain.call("submit_task", push.clone()).await;
    assert_eq!(
        asked.data()["status"],
        "need_approval",
        "{}",
        asked.envelope
    );
    let approval = &asked.data()["approval"];
    assert!(
        approval["reference"]
            .as_str()
            .is_some_and(|r| r.starts_with("apr-"))
    );
    assert!(
        approval["operation"]
            .as_str()
            .is_some_and(|o| o.contains("origin/main"))
    );
    assert_json_snapshot!("need_approval", shape(asked.envelope.clone(), &w), {
        ".data.approval.details[1]" => "<unpublished records>",
    });
    assert_eq!(
        shared_head(&w),
        before,
        "nothing is shared before the approval"
    );
    let task = asked.data()["task_id"].as_str().expect("id").to_owned();

    let denied = brain
        .call("approve", json!({"task_id": task, "decision": "deny"}))
        .await;
    assert_eq!(denied.data()["status"], "cancelled", "{}", denied.envelope);
    assert_eq!(denied.data()["stopped"]["reason"], "denied");
    assert_eq!(shared_head(&w), before, "a denied push does nothing");
    let again = brain
        .call("approve", json!({"task_id": task, "decision": "approve"}))
        .await;
    assert_eq!(again.error_code(), "policy_blocked", "{}", again.envelope);
    assert_eq!(shared_head(&w), before, "a used approval never works again");

    let asked = brain.call("submit_task", push).await;
    let task = asked.data()["task_id"].as_str().expect("id").to_owned();
    let word = brain
        .call("approve", json!({"task_id": task, "decision": "approved"}))
        .await;
    assert_eq!(word.error_code(), "need_input", "{}", word.envelope);
    assert_eq!(word.data()["field"], "decision");
    assert_eq!(shared_head(&w), before);
    let done = brain
        .call("approve", json!({"task_id": task, "decision": "approve"}))
        .await;
    assert_eq!(done.data()["status"], "ok", "{}", done.envelope);
    assert_eq!(done.data()["output"]["published_records"], 1);
    assert_eq!(
        shared_head(&w),
        local_head(&w),
        "the approved push shared the record"
    );
    let status = brain.call("get_status", json!({"task_id": task})).await;
    assert_eq!(status.data()["state"], "succeeded", "{}", status.envelope);
}

#[tokio::test]
async fn a_destructive_step_needs_approval_on_every_run_even_when_active() {
    let w = World::published();
    configure(
        &w,
        "[delegation]\npromote_after = 1\ndestructive_commands = [\"rm\"]\n",
    );
    std::fs::create_dir_all(w.project.join("tmp")).expect("tmp");
    w.write("tmp/.keep", "");
    let brain = w.session().await;
    // Butler's list no longer has `rm` (a confined step's deletions are undone by the operation
    // log); the user's own list does, and asks every time.
    let taught = brain
        .call(
            "teach",
            json!({"intent": "clean", "target": {},
                   "steps": [{"kind": "cmd", "shell": "touch tmp/junk.txt"},
                             {"kind": "cmd", "argv": ["rm", "-f", "tmp/junk.txt"]}]}),
        )
        .await;
    assert_eq!(taught.status(), "ok", "{}", taught.envelope);
    assert_eq!(
        taught.data()["approval_each_run"].as_array().map(Vec::len),
        Some(1)
    );
    let contract =
        json!({"contract": {"intent": "clean", "target": {}, "delegation_mode": "known_only"}});
    for run in 0..2 {
        let asked = brain.call("submit_task", contract.clone()).await;
        assert_eq!(
            asked.data()["status"],
            "need_approval",
            "run {run}: {}",
            asked.envelope
        );
        assert_eq!(asked.data()["approval"]["step"], 2);
        assert_eq!(
            asked.data()["steps"].as_array().map(Vec::len),
            Some(1),
            "step 1 ran"
        );
        assert!(w.project.join("tmp/junk.txt").exists());
        let task = asked.data()["task_id"].as_str().expect("id").to_owned();
        let done = brain
            .call("approve", json!({"task_id": task, "decision": "approve"}))
            .await;
        assert_eq!(done.data()["status"], "ok", "{}", done.envelope);
        assert_eq!(done.data()["steps"].as_array().map(Vec::len), Some(2));
        assert!(!w.project.join("tmp/junk.txt").exists());
        assert_eq!(done.data()["by"]["status"], "active");
    }
    // A task waiting for approval is ended by cancel_task; its approval never works after.
    let asked = brain.call("submit_task", contract).await;
    let task = asked.data()["task_id"].as_str().expect("id").to_owned();
    let cancelled = brain.call("cancel_task", json!({"task_id": task})).await;
    assert_eq!(
        cancelled.data()["state"],
        "cancelled",
        "{}",
        cancelled.envelope
    );
    assert_eq!(
        cancelled.data()["result"]["stopped"],
        json!({"step": 2, "reason": "cancelled"})
    );
    let late = brain
        .call("approve", json!({"task_id": task, "decision": "approve"}))
        .await;
    assert_eq!(late.error_code(), "policy_blocked", "{}", late.envelope);
    assert!(
        w.project.join("tmp/junk.txt").exists(),
        "the cancelled step never ran"
    );
}

#[tokio::test]
async fn a_git_step_is_judged_as_work_vcs_judges_it_and_run_by_the_git_worker() {
    let w = World::committed(&[("a.txt", "recorded\n")]);
    let brain = w.session().await;
    let taught = brain
        .call(
            "teach",
            json!({"intent": "reset_file", "target": {"path": "*"},
                   "steps": [{"kind": "cmd", "argv": ["git", "branch", "--list"]},
                             {"kind": "cmd", "argv": ["git", "checkout", "--", "{target.path}"]}]}),
        )
        .await;
    assert_eq!(taught.status(), "ok", "{}", taught.envelope);
    let contract = json!({"contract": {"intent": "reset_file", "target": {"path": "a.txt"},
                                       "delegation_mode": "known_only"}});
    // Nothing to lose: it runs without asking.
    let clean = brain.call("submit_task", contract.clone()).await;
    assert_eq!(clean.data()["status"], "ok", "{}", clean.envelope);
    assert!(
        clean.data()["steps"][0]["output_tail"]
            .as_str()
            .is_some_and(|o| o.contains("main"))
    );
    // Edits it would throw away: the user decides, shown exactly what would be lost.
    w.write("a.txt", "edited\n");
    let asked = brain.call("submit_task", contract).await;
    assert_eq!(
        asked.data()["status"],
        "need_approval",
        "{}",
        asked.envelope
    );
    assert_eq!(
        asked.data()["approval"]["details"],
        json!(["uncommitted edits in a.txt"])
    );
    assert_eq!(
        std::fs::read_to_string(w.project.join("a.txt")).expect("read"),
        "edited\n"
    );
    let task = asked.data()["task_id"].as_str().expect("id").to_owned();
    let done = brain
        .call("approve", json!({"task_id": task, "decision": "approve"}))
        .await;
    assert_eq!(done.data()["status"], "ok", "{}", done.envelope);
    assert_eq!(
        std::fs::read_to_string(w.project.join("a.txt")).expect("read"),
        "recorded\n"
    );
}

/// A task file for `butler worker-mcp`, the real stdio MCP server the test configures.
fn worker_mcp_config(w: &World) -> PathBuf {
    use butler_worker::contract::{ImplementRequest, TaskContract, TaskId};
    use butler_worker::time::Timestamp;
    let dir = w.tmp.path();
    let request = ImplementRequest {
        goal: "Keep notes".into(),
        target_paths: vec!["notes/".into()],
        ..Default::default()
    };
    let at = Timestamp::parse("2026-04-15T10:00:00+09:00").expect("time");
    let contract = TaskContract::from_request(request, TaskId::new("t9").expect("id"), "brain", at)
        .expect("valid");
    let task_file = dir.join("task.json");
    std::fs::write(&task_file, serde_json::to_string(&contract).expect("json")).expect("write");
    // The server is confined as a step is: it writes its notes in a tree the user lets
    // confined commands write.
    let notes_dir = dir.join("notes");
    std::fs::create_dir_all(&notes_dir).expect("notes dir");
    let notes = notes_dir.join("notes.jsonl");
    configure(
        w,
        &format!(
            "[agent]\nsandbox_writable = [{:?}]\n[mcp_servers.notes]\ncommand = {:?}\nargs = [\"worker-mcp\", \"--task-file\", {:?}, \"--notes\", {:?}]\n",
            notes_dir.to_string_lossy(),
            BUTLER,
            task_file.to_string_lossy(),
            notes.to_string_lossy()
        ),
    );
    notes
}

#[tokio::test]
async fn mcp_call_reaches_a_real_stdio_server_named_in_the_configuration() {
    let w = World::published();
    let notes = worker_mcp_config(&w);
    let brain = w.session().await;
    let taught = brain
        .call(
            "teach",
            json!({"intent": "leave_note", "target": {"text": "*"},
                   "steps": [{"kind": "mcp_call", "server": "notes", "tool": "leave_note",
                              "params": {"text": "{target.text}"}, "output_contains": "ok"}]}),
        )
        .await;
    assert_eq!(taught.status(), "ok", "{}", taught.envelope);
    let done = brain
        .call(
            "submit_task",
            json!({"contract": {"intent": "leave_note", "target": {"text": "deployed v2"},
                                "delegation_mode": "known_only"}}),
        )
        .await;
    assert_eq!(done.data()["status"], "ok", "{}", done.envelope);
    assert_eq!(done.data()["steps"][0]["kind"], "mcp_call");
    assert_eq!(done.data()["steps"][0]["what"], "notes.leave_note");
    let written = std::fs::read_to_string(&notes).expect("the server wrote its notes");
    assert!(written.contains("deployed v2"), "{written}");

    let refused = brain
        .call(
            "teach",
            json!({"intent": "ask", "target": {},
                   "steps": [{"kind": "mcp_call", "server": "tracker", "tool": "x"}]}),
        )
        .await;
    assert_eq!(refused.error_code(), "need_input", "{}", refused.envelope);
    assert_eq!(refused.data()["fields"][0]["field"], "steps[0].server");
}

fn delegating_world() -> World {
    let mut w = World::published();
    let tmp = w.tmp.path().to_string_lossy().into_owned();
    let attempt = json!([
        {"do": "write", "path": "src/greet.rs", "text": "pub fn greet() -> &'static str { \"hi\" }\n"}
    ])
    .to_string()
    .replace("{tmp}", &tmp);
    let script = butler_testkit::fake_agent::write_script(w.tmp.path(), &[attempt]);
    common::fake_goose(&mut w, &script);
    w.env.push(("BUTLER_SANDBOX".to_owned(), "off".into()));
    w
}

#[tokio::test]
async fn implement_is_delegated_to_the_maid_with_the_scripted_agent() {
    let w = delegating_world();
    let brain = w.session().await;
    let a = brain
        .call(
            "submit_task",
            json!({"contract": {"intent": "implement", "delegation_mode": "agent",
                   "target": {"goal": "Add greet()", "target_paths": ["src/"]},
                   "success_criteria": {"commands": [{"command": "test -f src/greet.rs"}]}}}),
        )
        .await;
    assert_eq!(a.status(), "ok", "{}", a.envelope);
    assert_eq!(a.data()["status"], "ok", "{}", a.envelope);
    assert_eq!(a.data()["intent"], "implement");
    assert_eq!(a.data()["outcome"], "succeeded");
    assert_eq!(
        a.data()["attempts"][0]["changed_files"],
        json!(["src/greet.rs"])
    );
    assert!(brain.client.progress().len() >= 3, "progress notifications");
    assert!(
        !w.project.join("src/greet.rs").exists(),
        "the Brain's tree is untouched"
    );
    let task = a.data()["task_id"].as_str().expect("id").to_owned();
    let status = brain.call("get_status", json!({"task_id": task})).await;
    assert_eq!(status.data()["state"], "succeeded", "{}", status.envelope);
    let accepted = brain.call("task_accept", json!({"task_id": task})).await;
    assert_eq!(accepted.status(), "ok", "{}", accepted.envelope);
    assert!(w.project.join("src/greet.rs").exists());
}

/// Waits until `path` holds a process id and returns it.
async fn pid_in(path: &Path) -> u32 {
    for _ in 0..200 {
        if let Ok(text) = std::fs::read_to_string(path)
            && let Ok(pid) = text.trim().parse()
        {
            return pid;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{} never held a pid", path.display());
}

async fn gone(pid: u32) -> bool {
    for _ in 0..100 {
        if !Path::new(&format!("/proc/{pid}")).exists() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    false
}

async fn teach_sleeper(brain: &Brain) {
    let taught = brain
        .call(
            "teach",
            json!({"intent": "sleep_long", "target": {},
                   "steps": [{"kind": "cmd", "argv": ["mkdir", "-p", "run"], "writes": ["run/"]},
                             {"kind": "cmd", "shell": "echo $$ > run/pid; exec sleep 300",
                              "timeout_s": 600},
                             {"kind": "cmd", "argv": ["touch", "run/after"]}]}),
        )
        .await;
    assert_eq!(taught.status(), "ok", "{}", taught.envelope);
}

#[tokio::test]
async fn a_daemon_a_step_leaves_running_is_ended_with_the_step_and_named_in_its_evidence() {
    let w = World::published();
    let brain = w.session().await;
    // A double fork, a session of its own, an empty environment, SIGTERM ignored.
    let daemon = "(setsid env -i /bin/sh -c \"trap '' TERM; echo \\$\\$ > run/daemon; \
                  while :; do date +%s%N > run/marker; sleep 0.05; done\" \
                  </dev/null >/dev/null 2>&1 &); sleep 0.3";
    let taught = brain
        .call(
            "teach",
            json!({"intent": "start_daemon", "target": {},
                   "steps": [{"kind": "cmd", "argv": ["mkdir", "-p", "run"], "writes": ["run/"]},
                             {"kind": "cmd", "shell": daemon}]}),
        )
        .await;
    assert_eq!(taught.status(), "ok", "{}", taught.envelope);
    let done = brain
        .call(
            "submit_task",
            json!({"contract": {"intent": "start_daemon", "target": {},
                                "delegation_mode": "known_only"}}),
        )
        .await;
    let pid = pid_in(&w.project.join("run/daemon")).await;
    let alive = Path::new(&format!("/proc/{pid}")).exists();
    let marker = || std::fs::read_to_string(w.project.join("run/marker")).unwrap_or_default();
    let before = marker();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let after = marker();
    if alive {
        let _ = std::process::Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status();
    }
    assert!(!alive, "the step's daemon {pid} outlived the step");
    assert_eq!(before, after, "the daemon still writes");
    let step = &done.data()["steps"][1];
    assert_eq!(step["outcome"], "passed", "{step}");
    assert_eq!(step["leftovers"]["ended"][0]["pid"], pid, "{step}");
    assert_eq!(step["leftovers"]["ended"][0]["command"], "sh", "{step}");
    assert_eq!(step["leftovers"]["ended"][0]["signal"], "SIGKILL", "{step}");
}

#[tokio::test]
async fn cancel_task_from_another_call_ends_the_running_step_and_says_where() {
    let w = World::published();
    let brain = w.session().await;
    teach_sleeper(&brain).await;
    let pid_file = w.project.join("run/pid");
    let submit = brain.call(
        "submit_task",
        json!({"contract": {"intent": "sleep_long", "target": {}, "delegation_mode": "known_only"}}),
    );
    let cancel = async {
        let pid = pid_in(&pid_file).await;
        // While it runs, a terminal sees its evidence so far.
        let shown = task_show(&w, "t1");
        assert_eq!(shown["status"], "running", "{shown}");
        assert_eq!(
            shown["progress"]["steps"][0]["outcome"], "passed",
            "{shown}"
        );
        let c = brain.call("cancel_task", json!({"task_id": "t1"})).await;
        (pid, c)
    };
    let (done, (pid, cancelled)) = tokio::join!(submit, cancel);
    assert_eq!(done.data()["status"], "cancelled", "{}", done.envelope);
    assert_eq!(
        done.data()["stopped"],
        json!({"step": 2, "reason": "cancelled"})
    );
    assert_eq!(done.data()["steps"][1]["ending"]["kind"], "cancelled");
    assert_eq!(
        cancelled.data()["state"],
        "cancelled",
        "{}",
        cancelled.envelope
    );
    assert!(
        gone(pid).await,
        "the step's process {pid} outlived the cancellation"
    );
    assert!(
        !w.project.join("run/after").exists(),
        "nothing after the step ran"
    );
    assert_json_snapshot!("cancelled", shape(done.envelope.clone(), &w));
}

#[tokio::test]
async fn cancelling_the_request_ends_the_running_step_too() {
    let w = World::published();
    let brain = w.session().await;
    teach_sleeper(&brain).await;
    let pid_file = w.project.join("run/pid");
    brain
        .client
        .call_then_cancel(
            "submit_task",
            json!({"contract": {"intent": "sleep_long", "target": {}, "delegation_mode": "known_only"}}),
            Duration::from_secs(2),
        )
        .await
        .expect("cancel sent");
    let pid = pid_in(&pid_file).await;
    assert!(
        gone(pid).await,
        "the step's process {pid} outlived the cancellation"
    );
    let mut state = Value::Null;
    for _ in 0..50 {
        let status = brain.call("get_status", json!({"task_id": "t1"})).await;
        state = status.envelope.clone();
        if status.data()["state"] == "cancelled" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(state["data"]["state"], "cancelled", "{state}");
    assert_eq!(state["data"]["result"]["stopped"]["step"], 2);
}

#[tokio::test]
async fn cancel_task_reaches_a_task_another_butler_process_runs() {
    let w = World::published();
    let runner = w.session().await;
    let other = w.session().await;
    teach_sleeper(&runner).await;
    let pid_file = w.project.join("run/pid");
    let submit = runner.call(
        "submit_task",
        json!({"contract": {"intent": "sleep_long", "target": {}, "delegation_mode": "known_only"}}),
    );
    let cancel = async {
        let pid = pid_in(&pid_file).await;
        let c = other.call("cancel_task", json!({"task_id": "t1"})).await;
        (pid, c)
    };
    let (done, (pid, cancelled)) = tokio::join!(submit, cancel);
    assert_eq!(done.data()["status"], "cancelled", "{}", done.envelope);
    assert_eq!(
        cancelled.data()["state"],
        "cancelled",
        "{}",
        cancelled.envelope
    );
    assert!(
        gone(pid).await,
        "the step's process {pid} outlived the cancellation"
    );
}

#[tokio::test]
async fn bad_steps_are_clear_envelopes_and_a_hanging_step_is_ended_at_its_limit() {
    let w = World::published();
    let brain = w.session().await;
    for (steps, field, code) in [
        (
            json!([{"kind": "ssh", "host": "x"}]),
            "steps[0].kind",
            "need_input",
        ),
        (
            json!([{"kind": "cmd", "argv": ["ls"], "cwd": "../.."}]),
            "steps[0].cwd",
            "need_input",
        ),
        (
            json!([{"kind": "mcp_call", "server": "nowhere", "tool": "x"}]),
            "steps[0].server",
            "need_input",
        ),
        (
            json!([{"kind": "cmd", "shell": "cd src && git push"}]),
            "steps[0]",
            "policy_blocked",
        ),
    ] {
        let a = brain
            .call(
                "teach",
                json!({"intent": "bad", "target": {}, "steps": steps}),
            )
            .await;
        assert_eq!(a.error_code(), code, "{steps}: {}", a.envelope);
        assert_eq!(a.data()["fields"][0]["field"], field, "{}", a.envelope);
    }
    let unknown_kind = brain
        .call(
            "teach",
            json!({"intent": "bad", "target": {}, "steps": [{"kind": "ssh"}]}),
        )
        .await;
    assert_json_snapshot!(
        "teach_unknown_kind",
        shape(unknown_kind.envelope.clone(), &w)
    );
    let skills = brain.call("list_skills", json!({})).await;
    assert!(
        !skills.data()["skills"].to_string().contains("\"bad\""),
        "nothing was stored"
    );

    let taught = brain
        .call(
            "teach",
            json!({"intent": "hang", "target": {},
                   "steps": [{"kind": "cmd", "shell": "mkdir -p run; echo $$ > run/hang; exec sleep 300",
                              "timeout_s": 1, "writes": ["run/"]}]}),
        )
        .await;
    assert_eq!(taught.status(), "ok", "{}", taught.envelope);
    let hung = brain
        .call(
            "submit_task",
            json!({"contract": {"intent": "hang", "target": {}, "delegation_mode": "known_only"}}),
        )
        .await;
    assert_eq!(hung.data()["status"], "failed", "{}", hung.envelope);
    assert_eq!(
        hung.data()["steps"][0]["ending"],
        json!({"kind": "wall_clock_limit", "limit_s": 1})
    );
    let pid = pid_in(&w.project.join("run/hang")).await;
    assert!(
        gone(pid).await,
        "the hanging step's process {pid} is still running"
    );
}

/// Three Brains answer the same question at once, thirty times: the approved step runs once
/// each time, and the other two answers find the task taken.
#[tokio::test]
async fn concurrent_approvals_run_an_approved_step_at_most_once() {
    let w = World::published();
    configure(&w, "[delegation]\ndestructive_commands = [\"rm\"]\n");
    let brains = [w.session().await, w.session().await, w.session().await];
    let taught = brains[0]
        .call(
            "teach",
            json!({"intent": "sweep", "target": {},
                   "steps": [{"kind": "cmd", "argv": ["rm", "-f", "run/junk.txt"], "writes": ["run/"]},
                             {"kind": "cmd", "shell": "echo ran >> run/runs.txt"}]}),
        )
        .await;
    assert_eq!(taught.status(), "ok", "{}", taught.envelope);
    let contract =
        json!({"contract": {"intent": "sweep", "target": {}, "delegation_mode": "known_only"}});
    for round in 1..=30 {
        let asked = brains[0].call("submit_task", contract.clone()).await;
        assert_eq!(
            asked.data()["status"],
            "need_approval",
            "{}",
            asked.envelope
        );
        let task = asked.data()["task_id"].as_str().expect("id").to_owned();
        let approve = json!({"task_id": task, "decision": "approve"});
        let (a, b, c) = tokio::join!(
            brains[0].call("approve", approve.clone()),
            brains[1].call("approve", approve.clone()),
            brains[2].call("approve", approve.clone()),
        );
        let ran = [&a, &b, &c]
            .iter()
            .filter(|r| r.status() == "ok" && r.data()["status"] == "ok")
            .count();
        assert_eq!(
            ran, 1,
            "round {round}: {} {} {}",
            a.envelope, b.envelope, c.envelope
        );
        let runs = std::fs::read_to_string(w.project.join("run/runs.txt")).expect("runs");
        assert_eq!(
            runs.lines().count(),
            round,
            "round {round}: the step ran twice"
        );
    }
}

/// A target value is data: never the program a step runs (through any wrapper), never text
/// spliced into code a shell or interpreter reads; refused at `teach` with the place named.
#[tokio::test]
async fn placeholders_never_become_programs_or_code() {
    let w = World::published();
    let brain = w.session().await;
    for argv in [
        json!(["sh", "-c", "echo {target.x}"]),
        json!(["bash", "-c", "ls {target.x}"]),
        json!(["env", "A=1", "{target.x}", "arg"]),
        json!(["sudo", "-u", "nobody", "{target.x}"]),
        json!(["xargs", "{target.x}"]),
        json!(["python3", "-c", "print('{target.x}')"]),
        json!(["nice", "-n", "5", "sh", "-c", "cat {target.x}.txt"]),
    ] {
        let taught = brain
            .call(
                "teach",
                json!({"intent": "probe", "target": {"x": "a"},
                       "steps": [{"kind": "cmd", "argv": argv}]}),
            )
            .await;
        assert_ne!(taught.status(), "ok", "{argv} → {}", taught.envelope);
        assert!(
            taught.envelope.to_string().contains("steps[0].argv"),
            "{argv}: the place is named: {}",
            taught.envelope
        );
    }
    let fine = brain
        .call(
            "teach",
            json!({"intent": "probe", "target": {"x": "a"},
                   "steps": [{"kind": "cmd", "argv": ["cat", "{target.x}"]},
                             {"kind": "cmd", "argv": ["sh", "-c", "cat \"$1\"", "sh", "{target.x}"]}]}),
        )
        .await;
    assert_eq!(fine.status(), "ok", "{}", fine.envelope);
}

/// A contract with several things wrong is told all of them at once: a bad intent hides
/// nothing in the target, and a verifier that would need approval is named with the rest.
#[tokio::test]
async fn every_problem_of_a_contract_is_named_at_once() {
    let w = World::published();
    let brain = w.session().await;
    let refused = brain
        .call(
            "submit_task",
            json!({"contract": {
                "intent": "Restart!",
                "target": {"Service": "api", "env": 3},
                "delegation_mode": "known_only",
                "success_criteria": {"commands": [{"command": "kubectl delete pod web"}]}
            }}),
        )
        .await;
    assert_ne!(refused.status(), "ok");
    let text = refused.envelope.to_string();
    for field in [
        "intent",
        "target.Service",
        "target.env",
        "success_criteria.commands[0]",
    ] {
        assert!(text.contains(field), "{field} is not named: {text}");
    }
}

/// `commit_push` asks with the files it would record, by content; a file that appears after
/// the question is not shared under that answer: it asks again.
#[tokio::test]
async fn a_file_appearing_after_a_commit_push_approval_asks_again() {
    let w = World::published();
    let brain = w.session().await;
    w.write("seen.txt", "the user saw this\n");
    let contract = json!({"contract": {"intent": "commit_push", "target": {"message": "Share"},
                                       "delegation_mode": "known_only"}});
    let asked = brain.call("submit_task", contract).await;
    assert_eq!(
        asked.data()["status"],
        "need_approval",
        "{}",
        asked.envelope
    );
    let details = asked.data()["approval"]["details"].to_string();
    assert!(details.contains("to record: seen.txt"), "{details}");
    let task = asked.data()["task_id"].as_str().expect("id").to_owned();
    let before = shared_head(&w);
    w.write("unseen.txt", "appeared after the question\n");
    let again = brain
        .call("approve", json!({"task_id": task, "decision": "approve"}))
        .await;
    assert_eq!(
        again.data()["status"],
        "need_approval",
        "{}",
        again.envelope
    );
    assert!(
        again.data()["approval"]["details"]
            .to_string()
            .contains("to record: unseen.txt")
    );
    assert_eq!(shared_head(&w), before, "nothing was shared");
}

/// Settings that confine procedure steps are read before any task is made: a mode no one knows,
/// an unreadable network, and the agents' egress proxy asked of steps (which have none) are
/// settings problems named by their setting, for every delegation tool until they are fixed.
#[tokio::test]
async fn step_confinement_settings_that_cannot_be_used_are_named_before_any_task() {
    let contract = json!({"contract": {"intent": "git_pull", "delegation_mode": "known_only"}});
    for (toml, env, setting) in [
        (
            "[delegation]\nnetwork = \"proxy\"\n",
            None,
            "[delegation] network",
        ),
        (
            "[delegation]\nnetwork = \"sometimes\"\n",
            None,
            "[delegation] network",
        ),
        ("", Some(("BUTLER_SANDBOX", "maybe")), "BUTLER_SANDBOX"),
    ] {
        let mut w = World::published();
        configure(&w, toml);
        if let Some((name, value)) = env {
            w.env.push((name.into(), value.into()));
        }
        let brain = w.session().await;
        let answer = brain.call("submit_task", contract.clone()).await;
        assert_eq!(answer.error_code(), "need_input", "{}", answer.envelope);
        let said = answer.envelope["summary"].as_str().expect("summary");
        assert!(
            said.starts_with("Butler's settings are not usable: ") && said.contains(setting),
            "{setting}: {said}"
        );
        let status = brain.call("get_status", json!({"task_id": "t1"})).await;
        assert_eq!(status.error_code(), "need_input", "{}", status.envelope);
    }
}
