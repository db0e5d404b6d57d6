//! Delegated steps confined and approved by what would happen, through the real `butler mcp`:
//! every spelling of destroying an uncommitted edit through a taught step either is refused by
//! the kernel (the edit untouched) or is undone exactly by one `work_undo`, with no approval
//! asked; only effects beyond the project (a declared write outside it, a listed command) ask;
//! checks and verifiers cannot write; a step cannot read Butler's environment nor write the
//! project's git data; with the sandbox off the evidence says so. And the approval count of a
//! realistic procedure run ten times (`approvals_of_a_realistic_procedure_run_ten_times`).

// Test scaffolding plays the user's side (git as a person runs it).
#![allow(clippy::disallowed_methods)]

use std::path::Path;

use crate::common;
use crate::common::{Brain, StartBrain, World, project_state};
use serde_json::{Value, json};

/// A project with recorded files at the top and in `src/`, a script and a Makefile that
/// destroy, and uncommitted edits of `a.txt` and `src/b.txt`.
fn project() -> World {
    let w = World::committed(&[
        ("a.txt", "recorded a\n"),
        ("c.txt", "other\n"),
        ("src/b.txt", "recorded b\n"),
        ("src/c.txt", "other\n"),
        ("wipe.sh", ": > a.txt\n: > src/b.txt\nrm -f src/b.txt\n"),
        ("Makefile", "clean:\n\trm -f src/b.txt a.txt\n"),
    ]);
    w.write("a.txt", "uncommitted edit of a\n");
    w.write("src/b.txt", "uncommitted edit of b\n");
    w
}

async fn teach_and_run(brain: &Brain, intent: &str, steps: Value) -> Value {
    let taught = brain
        .call(
            "teach",
            json!({"intent": intent, "target": {}, "steps": steps}),
        )
        .await;
    assert_eq!(taught.status(), "ok", "{intent}: {}", taught.envelope);
    assert!(
        taught.data().get("approval_each_run").is_none(),
        "{intent}: nothing beyond the project, nothing to ask: {}",
        taught.envelope
    );
    let ran = brain
        .call(
            "submit_task",
            json!({"contract": {"intent": intent, "target": {},
                                "delegation_mode": "known_only"}}),
        )
        .await;
    assert_eq!(ran.status(), "ok", "{intent}: {}", ran.envelope);
    ran.data().clone()
}

#[tokio::test]
async fn every_spelling_of_destruction_is_refused_or_undone_by_one_work_undo() {
    let w = project();
    let brain = w.session().await;
    let before = project_state(&w);
    let dest = w.path("outside-a.txt");
    let cases: Vec<(&str, Value)> = vec![
        (
            "colon_shell",
            json!({"kind": "cmd", "shell": ": > a.txt; : > src/b.txt"}),
        ),
        (
            "colon_sh_c",
            json!({"kind": "cmd", "argv": ["sh", "-c", ": > a.txt; : > src/b.txt"]}),
        ),
        ("echo", json!({"kind": "cmd", "shell": "echo > a.txt"})),
        (
            "cp_null",
            json!({"kind": "cmd", "argv": ["cp", "/dev/null", "a.txt"]}),
        ),
        (
            "cp_over",
            json!({"kind": "cmd", "argv": ["cp", "c.txt", "a.txt"]}),
        ),
        (
            "cp_over_src",
            json!({"kind": "cmd", "argv": ["cp", "src/c.txt", "src/b.txt"]}),
        ),
        (
            "mv_over",
            json!({"kind": "cmd", "argv": ["mv", "-f", "c.txt", "a.txt"]}),
        ),
        (
            "mv_over_src",
            json!({"kind": "cmd", "argv": ["mv", "-f", "src/c.txt", "src/b.txt"]}),
        ),
        (
            "install",
            json!({"kind": "cmd", "argv": ["install", "-m", "644", "c.txt", "a.txt"]}),
        ),
        (
            "install_src",
            json!({"kind": "cmd", "argv": ["install", "src/c.txt", "src/b.txt"]}),
        ),
        (
            "ln_sf",
            json!({"kind": "cmd", "argv": ["ln", "-sf", "c.txt", "a.txt"]}),
        ),
        (
            "ln_sf_src",
            json!({"kind": "cmd", "argv": ["ln", "-sf", "c.txt", "src/b.txt"]}),
        ),
        (
            "tee",
            json!({"kind": "cmd", "shell": "tee a.txt src/b.txt </dev/null"}),
        ),
        ("script", json!({"kind": "cmd", "argv": ["sh", "wipe.sh"]})),
        (
            "make_clean",
            json!({"kind": "cmd", "argv": ["make", "clean"]}),
        ),
        (
            "rm_rf_src",
            json!({"kind": "cmd", "argv": ["rm", "-rf", "src"]}),
        ),
        (
            "truncate",
            json!({"kind": "cmd", "argv": ["truncate", "-s", "0", "a.txt"]}),
        ),
        (
            "find_delete",
            json!({"kind": "cmd", "shell": "find src -name b.txt -delete"}),
        ),
        (
            "python",
            json!({"kind": "cmd", "shell": "python3 -c 'open(\"a.txt\", \"w\")'"}),
        ),
        (
            "runtime",
            json!({"kind": "cmd", "shell": "CMD=rm; $CMD -f src/b.txt"}),
        ),
        (
            "mv_out",
            json!({"kind": "cmd", "argv": ["mv", "a.txt", dest.display().to_string()]}),
        ),
        (
            "rm_top",
            json!({"kind": "cmd", "argv": ["rm", "-f", "a.txt"]}),
        ),
    ];
    let mut summary = Vec::new();
    for (name, step) in cases {
        let intent = format!("destroy_{name}");
        let ran = teach_and_run(&brain, &intent, json!([step])).await;
        assert_ne!(ran["status"], "need_approval", "{name}: {ran}");
        let step = &ran["steps"][0];
        assert!(step.get("unconfined").is_none(), "{name}: {step}");
        let after = project_state(&w);
        if after == before {
            assert!(
                step.get("undo").is_none(),
                "{name}: nothing changed: {step}"
            );
            summary.push(format!("{name}: refused ({})", ran["status"]));
            continue;
        }
        let id = step["undo"]
            .as_u64()
            .unwrap_or_else(|| panic!("{name}: {step}"));
        let changed: Vec<&str> = step["changed"]
            .as_array()
            .expect("changed files")
            .iter()
            .filter_map(Value::as_str)
            .collect();
        assert!(!changed.is_empty(), "{name}: {step}");
        let undone = brain.call("work_undo", json!({"operation": id})).await;
        assert_eq!(undone.status(), "ok", "{name}: {}", undone.envelope);
        assert_eq!(
            project_state(&w),
            before,
            "{name}: one work_undo gives the edits back"
        );
        summary.push(format!("{name}: undone ({})", changed.join(", ")));
    }
    assert!(!dest.exists(), "nothing left the project");
    eprintln!("{}", summary.join("\n"));
    assert!(summary.iter().any(|s| s.contains("undone")));
    assert!(
        summary.iter().any(|s| s.starts_with("mv_out: refused")),
        "{summary:?}"
    );
}

#[tokio::test]
async fn only_effects_beyond_the_project_ask_for_approval() {
    let w = project();
    w.user_config("[delegation]\ndestructive_commands = [\"echo stop\"]\n");
    let brain = w.session().await;
    let outside = w.path("cache");
    std::fs::create_dir_all(&outside).expect("cache");
    let taught = brain
        .call(
            "teach",
            json!({"intent": "deploy", "target": {},
                   "steps": [
                       {"kind": "cmd", "shell": "mkdir -p dist && cp a.txt dist/a", "writes": ["dist/"]},
                       {"kind": "cmd", "shell": format!("echo cached > {}/x", outside.display()), "writes": [outside.display().to_string()]},
                       {"kind": "cmd", "argv": ["echo", "stop", "api"]}
                   ]}),
        )
        .await;
    assert_eq!(taught.status(), "ok", "{}", taught.envelope);
    let data = taught.data();
    let each: Vec<&str> = data["approval_each_run"]
        .as_array()
        .expect("listed")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(each.len(), 2, "{each:?}");
    assert!(
        each[0].starts_with("step 2: writes outside the project"),
        "{each:?}"
    );
    assert!(each[1].starts_with("step 3:"), "{each:?}");
    assert_eq!(
        data["procedure"]["writes"],
        json!(["step 1: dist/", format!("step 2: {}", outside.display())])
    );
    let asked = brain
        .call(
            "submit_task",
            json!({"contract": {"intent": "deploy", "target": {}, "delegation_mode": "known_only"}}),
        )
        .await;
    let asked = asked.data().clone();
    assert_eq!(asked["status"], "need_approval", "{asked}");
    assert_eq!(asked["approval"]["step"], 2, "{asked}");
    assert_eq!(
        std::fs::read_to_string(w.project.join("dist/a")).expect("dist"),
        "uncommitted edit of a\n",
        "a new top-level directory, declared, ran without asking"
    );
    assert!(asked["steps"][0]["undo"].is_u64(), "{asked}");
    let task = asked["task_id"].as_str().expect("id").to_owned();
    let next = brain
        .call("approve", json!({"task_id": task, "decision": "approve"}))
        .await;
    let next = next.data().clone();
    assert_eq!(next["status"], "need_approval", "{next}");
    assert_eq!(next["approval"]["step"], 3, "{next}");
    let done = brain
        .call("approve", json!({"task_id": task, "decision": "approve"}))
        .await;
    assert_eq!(done.data()["status"], "ok", "{}", done.envelope);
}

#[tokio::test]
async fn checks_and_verifiers_only_look() {
    let w = project();
    let brain = w.session().await;
    let before = project_state(&w);
    let taught = brain
        .call(
            "teach",
            json!({"intent": "look", "target": {},
                   "steps": [
                       {"kind": "check", "command": "echo scratch > \"$TMPDIR/x\" && cat \"$TMPDIR/x\"", "output_contains": "scratch"},
                       {"kind": "check", "command": ": > a.txt", "exit_code": 0}
                   ]}),
        )
        .await;
    assert_eq!(taught.status(), "ok", "{}", taught.envelope);
    let ran = brain
        .call(
            "submit_task",
            json!({"contract": {"intent": "look", "target": {}, "delegation_mode": "known_only"}}),
        )
        .await;
    let ran = ran.data().clone();
    assert_eq!(
        ran["steps"][0]["outcome"], "passed",
        "its own temp dir: {ran}"
    );
    assert_eq!(ran["steps"][1]["outcome"], "failed", "{ran}");
    assert!(
        ran["steps"][1]["output_tail"]
            .as_str()
            .is_some_and(|o| o.contains("Permission denied")),
        "{ran}"
    );
    assert_eq!(project_state(&w), before);

    // The contract's verifiers too.
    teach_and_run(&brain, "noop", json!([{"kind": "cmd", "argv": ["true"]}])).await;
    let verified = brain
        .call(
            "submit_task",
            json!({"contract": {"intent": "noop", "target": {}, "delegation_mode": "known_only",
                                "success_criteria": {"commands": [{"command": "echo x > src/b.txt"}]}}}),
        )
        .await;
    let verified = verified.data().clone();
    assert_eq!(verified["status"], "failed", "{verified}");
    assert_eq!(verified["verify"]["commands"][0]["passed"], false);
    assert_eq!(project_state(&w), before);
}

#[tokio::test]
async fn a_step_reads_nothing_of_butlers_environment_or_the_users_credentials_and_cannot_write_git_data()
 {
    let w = project();
    let token = "gitea-token-5f2a9c";
    let mut env = w.env.clone();
    env.push(("BUTLER_GITEA_TOKEN".into(), token.into()));
    env.push(("BUTLER_HTTP_TOKEN".into(), "http-token-77e1".into()));
    let brain = Brain::spawn(&w.project, &env).await;
    brain
        .ok("work_session_start", json!({"project_root": w.root()}))
        .await;
    let config = std::fs::read(w.project.join(".git/config")).expect("config");
    // The user's credential stores, which no step may read either.
    let home = w.home();
    for (rel, secret) in [
        (".ssh/id_ed25519", "ssh-secret-d41c"),
        (".git-credentials", "https://me:git-secret-93be@example.com"),
        (".netrc", "machine example.com password netrc-secret-0a7f"),
        (".config/gh/hosts.yml", "oauth_token: gh-secret-66c2"),
    ] {
        let path = home.join(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, secret).expect("secret");
    }
    // Every ancestor's environment: the reaper, then Butler itself.
    let script = r#"
for f in .ssh/id_ed25519 .git-credentials .netrc .config/gh/hosts.yml; do
  cat "$HOME/$f" 2>/dev/null || echo "$f refused"
done
p=$$
for i in 1 2 3 4; do
  p=$(awk '/^PPid:/{print $2}' /proc/$p/status)
  [ "$p" -gt 1 ] || break
  if tr '\0' '\n' < /proc/$p/environ > "$TMPDIR/env" 2>/dev/null; then
    echo "pid $p: read $(wc -l < "$TMPDIR/env") variables"; cat "$TMPDIR/env"
  else
    echo "pid $p ($(cat /proc/$p/comm)): environ refused"
  fi
done
echo x >> .git/config && echo "wrote .git/config"
echo x > .git/hooks/pre-commit && echo "wrote a hook"
echo x > .git/butler/planted && echo "wrote Butler's state"
exit 0
"#;
    let ran = teach_and_run(&brain, "peek", json!([{"kind": "cmd", "shell": script}])).await;
    let out = ran["steps"][0]["output_tail"]
        .as_str()
        .expect("output")
        .to_owned();
    assert!(!out.contains(token), "{out}");
    assert!(!out.contains("http-token-77e1"), "{out}");
    for (store, secret) in [
        (".ssh/id_ed25519", "ssh-secret"),
        (".git-credentials", "git-secret"),
        (".netrc", "netrc-secret"),
        (".config/gh/hosts.yml", "gh-secret"),
    ] {
        assert!(!out.contains(secret), "{store} was read: {out}");
        assert!(out.contains(&format!("{store} refused")), "{out}");
    }
    assert!(
        out.contains("butler): environ refused"),
        "Butler's own environment: {out}"
    );
    assert!(!out.contains("wrote"), "{out}");
    assert_eq!(
        std::fs::read(w.project.join(".git/config")).expect("config"),
        config
    );
    assert!(!w.project.join(".git/hooks/pre-commit").exists());
    assert!(!w.project.join(".git/butler/planted").exists());
}

#[tokio::test]
async fn with_the_sandbox_off_a_step_says_it_ran_unconfined_and_file_commands_ask_again() {
    let w = project();
    let mut env = w.env.clone();
    env.push(("BUTLER_SANDBOX".into(), "off".into()));
    let brain = Brain::spawn(&w.project, &env).await;
    brain
        .ok("work_session_start", json!({"project_root": w.root()}))
        .await;
    let ran = teach_and_run(&brain, "hello", json!([{"kind": "cmd", "argv": ["true"]}])).await;
    assert_eq!(ran["status"], "ok", "{ran}");
    assert!(
        ran["steps"][0]["unconfined"]
            .as_str()
            .is_some_and(|why| why.contains("off")),
        "{ran}"
    );
    let taught = brain
        .call(
            "teach",
            json!({"intent": "clean", "target": {},
                   "steps": [{"kind": "cmd", "argv": ["rsync", "-a", "--delete-after", "x/", "src/"]}]}),
        )
        .await;
    assert_eq!(
        taught.data()["approval_each_run"],
        json!(["step 1: `rsync --delete` deletes, overwrites or stops things"]),
        "{}",
        taught.envelope
    );
}

/// The approvals a realistic procedure — build, format, clean old artifacts, rotate a log,
/// test, restart a service — and a `commit_push` ask over ten runs. `BUTLER_BEFORE=<butler
/// built from main>` runs the same on that build (without `writes`, which it does not know).
#[tokio::test]
async fn approvals_of_a_realistic_procedure_run_ten_times() {
    let (after, asked) = approvals_over_ten_runs(Path::new(common::BUTLER), true).await;
    eprintln!("approvals over 10 runs, this build: {after}; the first run asked:\n{asked}");
    if let Some(before) = std::env::var_os("BUTLER_BEFORE") {
        let (before, asked) = approvals_over_ten_runs(Path::new(&before), false).await;
        eprintln!("approvals over 10 runs, BUTLER_BEFORE: {before}; the first run asked:\n{asked}");
        assert!(after < before, "{after} < {before}");
    }
    assert_eq!(after, 20, "the restart and the push, each run");
}

/// How many approvals ten runs asked, and the questions of the first run.
async fn approvals_over_ten_runs(program: &Path, declares: bool) -> (usize, String) {
    let w = World::published();
    std::fs::create_dir_all(w.project.join("src")).expect("src");
    std::fs::create_dir_all(w.project.join("logs")).expect("logs");
    w.write("src/app.sh", "echo hello   \n");
    w.write(".gitignore", "target/\nlogs/\n");
    w.write("logs/app.log", "old lines\n");
    w.commit(&w.project, "app");
    let run_dir = w.path("run");
    std::fs::create_dir_all(&run_dir).expect("run");
    let svc = w.path("svc");
    butler_testkit::write_executable(&svc, "#!/bin/sh\necho \"$1 $2\" >> \"$RUN_DIR/svc.log\"\n");
    w.user_config(
        "[delegation]\ndestructive_commands = [\"svc restart\"]\nenv_allow = [\"RUN_DIR\"]\n",
    );
    let mut env = w.env.clone();
    env.push(("RUN_DIR".into(), run_dir.display().to_string()));
    let brain = Brain::spawn_program(program, &w.project, &env).await;
    brain
        .ok("work_session_start", json!({"project_root": w.root()}))
        .await;
    let with_writes = |mut step: Value, writes: Value| {
        if declares {
            step["writes"] = writes;
        }
        step
    };
    let steps = json!([
        with_writes(
            json!({"kind": "cmd", "shell": "mkdir -p target/old && cp src/app.sh target/app"}),
            json!(["target/"])
        ),
        {"kind": "cmd", "argv": ["sed", "-i", "s/[[:space:]]*$//", "src/app.sh"]},
        {"kind": "cmd", "argv": ["rm", "-rf", "target/old"]},
        {"kind": "cmd", "argv": ["truncate", "-s", "0", "logs/app.log"]},
        {"kind": "check", "command": "sh target/app", "output_contains": "hello"},
        with_writes(
            json!({"kind": "cmd", "argv": [svc.display().to_string(), "restart", "api"]}),
            json!([run_dir.display().to_string()])
        ),
    ]);
    let taught = brain
        .call(
            "teach",
            json!({"intent": "ship", "target": {}, "steps": steps}),
        )
        .await;
    assert_eq!(taught.status(), "ok", "{}", taught.envelope);
    let mut approvals = 0;
    let mut asked = Vec::new();
    for run in 0..10 {
        w.write("src/app.sh", &format!("echo hello {run}   \n"));
        let mut answer = brain
            .call(
                "submit_task",
                json!({"contract": {"intent": "ship", "target": {}, "delegation_mode": "known_only"}}),
            )
            .await
            .data()
            .clone();
        while answer["status"] == "need_approval" {
            approvals += 1;
            if run == 0 {
                asked.push(answer["approval"]["operation"].to_string());
            }
            let task = answer["task_id"].as_str().expect("id").to_owned();
            answer = brain
                .call("approve", json!({"task_id": task, "decision": "approve"}))
                .await
                .data()
                .clone();
        }
        assert_eq!(answer["status"], "ok", "run {run}: {answer}");
        let mut shared = brain
            .call(
                "submit_task",
                json!({"contract": {"intent": "commit_push", "target": {"message": format!("Ship {run}")},
                                    "delegation_mode": "known_only"}}),
            )
            .await
            .data()
            .clone();
        while shared["status"] == "need_approval" {
            approvals += 1;
            if run == 0 {
                asked.push(shared["approval"]["operation"].to_string());
            }
            let task = shared["task_id"].as_str().expect("id").to_owned();
            shared = brain
                .call("approve", json!({"task_id": task, "decision": "approve"}))
                .await
                .data()
                .clone();
        }
        assert_eq!(shared["status"], "ok", "run {run}: {shared}");
        if declares {
            // The capability's run is logged as a step is: its record can be undone.
            let last = shared["steps"]
                .as_array()
                .and_then(|s| s.last())
                .expect("steps");
            assert!(last["undo"].is_u64(), "run {run}: {shared}");
        }
    }
    (approvals, asked.join("\n"))
}
