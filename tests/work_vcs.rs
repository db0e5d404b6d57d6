//! `work_vcs` and its approval gate, end to end through the MCP server.

mod common;

use common::{StartBrain, World};
use serde_json::json;

#[tokio::test]
async fn runs_operations_without_a_proper_tool() {
    let w = World::published();
    let brain = w.session().await;
    let a = brain
        .call("work_vcs", json!({"args": ["branch", "feature"]}))
        .await;
    assert_eq!(a.status(), "ok", "{}", a.envelope);
    let b = brain
        .call("work_vcs", json!({"args": ["branch", "--list"]}))
        .await;
    assert_eq!(b.data()["succeeded"], json!(true));
    let out = b.data()["output"].as_str().expect("output");
    assert!(out.contains("feature") && out.contains("main"), "{out}");
}

#[tokio::test]
async fn proper_tools_and_dangerous_options_are_refused_and_nothing_runs() {
    let w = World::published();
    let brain = w.session().await;
    let status = brain.call("work_vcs", json!({"args": ["status"]})).await;
    assert_eq!(status.error_code(), "use_proper_tool");
    assert!(
        status.envelope["hint"]
            .as_str()
            .expect("hint")
            .contains("work_observe")
    );
    let log = brain
        .call("work_vcs", json!({"args": ["--no-pager", "log", "-3"]}))
        .await;
    assert_eq!(log.error_code(), "use_proper_tool");
    assert!(
        log.envelope["hint"]
            .as_str()
            .expect("hint")
            .contains("work_history")
    );
    let marker = w.tmp.path().join("pwned");
    let m = marker.to_string_lossy();
    for args in [
        json!(["-c", format!("core.pager=touch {m}"), "branch"]),
        json!(["config", "core.fsmonitor", format!("touch {m}")]),
        json!(["--exec-path=/tmp", "branch"]),
        json!(["-C", "/", "branch"]),
        json!(["fetch", "--upload-pack", format!("touch {m}"), "origin"]),
    ] {
        let a = brain.call("work_vcs", json!({"args": args})).await;
        assert_eq!(a.error_code(), "policy_blocked", "{args} → {}", a.envelope);
    }
    let empty = brain.call("work_vcs", json!({"args": []})).await;
    assert_eq!(empty.error_code(), "need_input");
    let injected = brain
        .call(
            "work_vcs",
            json!({"args": ["branch", format!("$(touch {m})")]}),
        )
        .await;
    assert_eq!(injected.status(), "ok", "{}", injected.envelope);
    assert_eq!(injected.data()["succeeded"], json!(false));
    assert!(!marker.exists(), "nothing ran through a shell");
    let config = w.git(&w.project, &["config", "--list", "--local"]);
    assert!(!config.contains("fsmonitor"), "{config}");
}

#[tokio::test]
async fn discarding_work_needs_the_users_approval_once() {
    let w = World::published();
    w.write("README.md", "# precious unrecorded edit\n");
    let brain = w.session().await;
    let first = brain
        .call("work_vcs", json!({"args": ["reset", "--hard"]}))
        .await;
    assert_eq!(first.error_code(), "need_input", "{}", first.envelope);
    let reference = first.data()["approval"]
        .as_str()
        .expect("reference")
        .to_string();
    assert!(
        first.data()["would_discard"]
            .as_str()
            .expect("loss")
            .contains("README.md")
    );
    assert!(
        first.envelope["hint"]
            .as_str()
            .expect("hint")
            .contains("ask the user")
    );
    assert!(
        std::fs::read_to_string(w.project.join("README.md"))
            .expect("file")
            .contains("precious")
    );

    let wrong = brain
        .call(
            "work_vcs",
            json!({"args": ["reset", "--hard", "HEAD~0"], "approval": reference}),
        )
        .await;
    assert_eq!(
        wrong.error_code(),
        "policy_blocked",
        "other args, same reference"
    );
    let forged = brain
        .call(
            "work_vcs",
            json!({"args": ["reset", "--hard"], "approval": "apr-000000000000"}),
        )
        .await;
    assert_eq!(forged.error_code(), "policy_blocked");
    assert!(
        std::fs::read_to_string(w.project.join("README.md"))
            .expect("file")
            .contains("precious")
    );

    let approved = brain
        .call(
            "work_vcs",
            json!({"args": ["reset", "--hard"], "approval": reference}),
        )
        .await;
    assert_eq!(approved.status(), "ok", "{}", approved.envelope);
    assert_eq!(
        std::fs::read_to_string(w.project.join("README.md")).expect("file"),
        "# project\n"
    );
    let reused = brain
        .call(
            "work_vcs",
            json!({"args": ["reset", "--hard"], "approval": reference}),
        )
        .await;
    assert_eq!(
        reused.error_code(),
        "policy_blocked",
        "a reference works once"
    );
}
