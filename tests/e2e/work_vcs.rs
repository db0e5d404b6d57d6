//! `work_vcs` end to end through the MCP server: what runs, what is refused, how failures
//! look, and the approval round trip bound to what would be lost. The generated spellings of
//! every option are in `work_vcs_spellings.rs`.

use crate::common::{StartBrain, World, normalize};
use insta::assert_json_snapshot;
use serde_json::json;

#[tokio::test]
async fn runs_operations_without_a_proper_tool_and_says_what_ran() {
    let w = World::published();
    w.git(&w.project, &["switch", "-q", "-c", "side"]);
    w.git(&w.project, &["commit", "-q", "--allow-empty", "-m", "Side"]);
    w.git(&w.project, &["switch", "-q", "main"]);
    let brain = w.session().await;
    let a = brain
        .call("work_vcs", json!({"args": ["branch", "feature"]}))
        .await;
    assert_eq!(a.status(), "ok", "{}", a.envelope);
    let b = brain
        .call("work_vcs", json!({"args": ["branch", "--lis", "-v"]}))
        .await;
    assert_eq!(b.status(), "ok", "{}", b.envelope);
    assert_eq!(b.data()["ran"], json!(["branch", "--list", "--verbose"]));
    let out = b.data()["output"].as_str().expect("output");
    assert!(out.contains("feature") && out.contains("main"), "{out}");
    assert_json_snapshot!("ok_reply", normalize(b.envelope.clone(), &w), {
        ".data.output" => "<output>",
    });
    // A question git answers "no" by its exit status alone is an answer, not a failure.
    for args in [
        json!(["grep", "-q", "no-such-text-anywhere"]),
        json!(["merge-base", "--is-ancestor", "side", "main"]),
        json!(["config", "--get", "no.such.key"]),
    ] {
        let a = brain.call("work_vcs", json!({"args": args})).await;
        assert_eq!(a.status(), "ok", "{args} → {}", a.envelope);
        assert_eq!(a.data()["matched"], json!(false), "{}", a.envelope);
    }
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
    let marker = w.tmp.path().join("pwned");
    let m = marker.to_string_lossy();
    for args in [
        json!(["-c", format!("core.pager=touch {m}"), "branch"]),
        json!(["config", "core.fsmonitor", format!("touch {m}")]),
        json!(["config", "--add", "core.hooksPath", "/tmp"]),
        json!(["--exec-path=/tmp", "branch"]),
        json!(["-C", "/", "branch"]),
        json!(["fetch", "--upload-pack", format!("touch {m}"), "origin"]),
        json!(["fetch", "--upload-p", format!("touch {m}"), "origin"]),
        json!(["rebase", format!("-xtouch {m}"), "main"]),
        json!(["remote", "add", "evil", format!("ext::sh -c touch% {m}")]),
        json!(["push", "origin"]),
    ] {
        let a = brain.call("work_vcs", json!({"args": args})).await;
        assert!(
            matches!(a.error_code(), "policy_blocked" | "use_proper_tool"),
            "{args} → {}",
            a.envelope
        );
    }
    let refused = brain
        .call(
            "work_vcs",
            json!({"args": ["rebase", "--exe", "make", "main"]}),
        )
        .await;
    assert_json_snapshot!("refused", normalize(refused.envelope, &w));
    let empty = brain.call("work_vcs", json!({"args": []})).await;
    assert_eq!(empty.error_code(), "need_input");
    assert!(!marker.exists(), "nothing ran");
    let config = w.git(&w.project, &["config", "--list", "--local"]);
    assert!(
        !config.contains("fsmonitor") && !config.contains("hookspath") && !config.contains("evil"),
        "{config}"
    );
}

#[tokio::test]
async fn failures_are_error_envelopes_with_gits_words() {
    let w = World::published();
    let brain = w.session().await;
    let marker = w.tmp.path().join("pwned");
    let injected = brain
        .call(
            "work_vcs",
            json!({"args": ["branch", format!("$(touch {})", marker.display())]}),
        )
        .await;
    assert_eq!(injected.status(), "error", "{}", injected.envelope);
    assert_eq!(injected.error_code(), "need_input", "{}", injected.envelope);
    assert!(!marker.exists(), "no shell");
    let missing = brain
        .call(
            "work_vcs",
            json!({"args": ["branch", "--set-upstream-to=origin/main", "no-such-branch"]}),
        )
        .await;
    assert_eq!(missing.error_code(), "not_found", "{}", missing.envelope);
    let message = missing.data()["message"].as_str().expect("message");
    assert!(message.contains("no-such-branch"), "{message}");
    assert_json_snapshot!("failed", normalize(missing.envelope, &w));
}

#[tokio::test]
async fn nothing_to_lose_runs_without_asking() {
    let w = World::published();
    w.git(&w.project, &["branch", "merged"]);
    let brain = w.session().await;
    for args in [
        json!(["reset", "--hard"]),
        json!(["branch", "-D", "merged"]),
        json!(["clean", "-fd"]),
        json!(["stash", "clear"]),
    ] {
        let a = brain.call("work_vcs", json!({"args": args})).await;
        assert_eq!(a.status(), "ok", "{args} → {}", a.envelope);
    }
}

#[tokio::test]
async fn losing_work_needs_the_users_approval_bound_to_the_loss() {
    let w = World::published();
    w.write("README.md", "# precious unrecorded edit\n");
    w.write("notes.txt", "untracked: survives a hard reset\n");
    let brain = w.session().await;
    let first = brain
        .call("work_vcs", json!({"args": ["reset", "--har"]}))
        .await;
    assert_eq!(first.error_code(), "need_input", "{}", first.envelope);
    let data = first.data().clone();
    assert_eq!(
        data["would_lose"],
        json!(["uncommitted edits in README.md"])
    );
    assert_eq!(data["will_run"], json!(["reset", "--hard", "--"]));
    let reference = data["approval"].as_str().expect("reference").to_string();
    assert_json_snapshot!("need_input", normalize(first.envelope.clone(), &w), {
        ".data.approval" => "<reference>",
    });
    let precious = || std::fs::read_to_string(w.project.join("README.md")).expect("file");
    assert!(precious().contains("precious"));

    let other = brain
        .call(
            "work_vcs",
            json!({"args": ["reset", "--hard", "HEAD~0"], "approval": reference}),
        )
        .await;
    assert_eq!(other.error_code(), "policy_blocked", "other args");
    let forged = brain
        .call(
            "work_vcs",
            json!({"args": ["reset", "--hard"], "approval": "apr-000000000000"}),
        )
        .await;
    assert_eq!(forged.error_code(), "policy_blocked");
    assert!(precious().contains("precious"));

    // Another spelling of the same command carries the same approval.
    let approved = brain
        .call(
            "work_vcs",
            json!({"args": ["reset", "--hard"], "approval": reference}),
        )
        .await;
    assert_eq!(approved.status(), "ok", "{}", approved.envelope);
    assert_eq!(precious(), "# project\n");
    assert!(w.project.join("notes.txt").exists(), "untracked file kept");
    let reused = brain
        .call(
            "work_vcs",
            json!({"args": ["reset", "--hard"], "approval": reference}),
        )
        .await;
    assert_eq!(
        reused.status(),
        "ok",
        "nothing to lose any more: it just runs"
    );
}

#[tokio::test]
async fn an_approval_lapses_when_more_would_be_lost() {
    let w = World::published();
    w.write("README.md", "# edit one\n");
    let brain = w.session().await;
    let first = brain
        .call("work_vcs", json!({"args": ["checkout", "--", "."]}))
        .await;
    assert_eq!(first.error_code(), "need_input", "{}", first.envelope);
    let reference = first.data()["approval"].as_str().expect("ref").to_string();
    w.write("later.md", "# recorded later\n");
    w.git(&w.project, &["add", "later.md"]);
    w.write("later.md", "# and edited after the approval\n");
    let second = brain
        .call(
            "work_vcs",
            json!({"args": ["checkout", "--", "."], "approval": reference}),
        )
        .await;
    assert_eq!(second.error_code(), "policy_blocked", "{}", second.envelope);
    assert!(
        std::fs::read_to_string(w.project.join("later.md"))
            .expect("file")
            .contains("after the approval")
    );
}

#[tokio::test]
async fn lost_commits_and_tags_are_named() {
    let w = World::published();
    w.git(&w.project, &["tag", "v1"]);
    w.git(&w.project, &["switch", "-q", "-c", "topic"]);
    w.write("t.txt", "topic\n");
    w.git(&w.project, &["add", "t.txt"]);
    w.git(&w.project, &["commit", "-q", "-m", "Topic work"]);
    w.git(&w.project, &["switch", "-q", "main"]);
    let brain = w.session().await;
    let a = brain
        .call(
            "work_vcs",
            json!({"args": ["branch", "--del", "--forc", "topic"]}),
        )
        .await;
    assert_eq!(a.error_code(), "need_input", "{}", a.envelope);
    assert!(
        a.data()["would_lose"][0]
            .as_str()
            .expect("line")
            .contains("Topic work")
    );
    let t = brain
        .call("work_vcs", json!({"args": ["tag", "-d", "v1"]}))
        .await;
    assert_eq!(t.error_code(), "need_input", "{}", t.envelope);
    assert!(
        t.data()["would_lose"][0]
            .as_str()
            .expect("line")
            .starts_with("tag v1")
    );
    assert!(w.git(&w.project, &["tag"]).contains("v1"));
    assert!(w.git(&w.project, &["branch"]).contains("topic"));
}

/// `--` and options after positionals, read as git reads them: nothing after a dropped `--`
/// escapes the checks, and `config KEY --default=V` is a value, not an option.
#[tokio::test]
async fn arguments_after_dashdash_or_a_positional_are_checked_where_git_reads_them() {
    let w = World::published();
    w.git(&w.project, &["switch", "-q", "-c", "side"]);
    w.write("side.txt", "side\n");
    w.commit(&w.project, "Only on side");
    w.git(&w.project, &["switch", "-q", "main"]);
    w.git(&w.project, &["tag", "v1"]);
    w.write("README.md", "an unrecorded edit\n");
    let config_before = std::fs::read(w.project.join(".git/config")).expect("config");
    let marker = w.tmp.path().join("pwned");
    let m = marker.to_string_lossy();
    let brain = w.session().await;
    for args in [
        json!(["config", "--", "core.fsmonitor", format!("touch {m}")]),
        json!(["config", "--", "core.sshCommand", format!("touch {m}")]),
        json!(["config", "--", "protocol.ext.allow", "always"]),
        json!(["config", "--", "core.hooksPath", "hooks"]),
        json!(["config", "--", "core.bare", "true"]),
        json!(["config", "--", "core.repositoryformatversion", "1"]),
        json!(["config", "--", "alias.st", "status"]),
        json!(["config", "core.pager", format!("--default=touch {m}")]),
        json!(["config", "user.name", "--default=x"]),
        json!(["config", "set", "user.name", "--comment=x"]),
        json!(["fetch", "--", format!("ext::sh -c touch% {m}")]),
        json!(["fetch", "origin", "--", "+refs/heads/*:refs/heads/*"]),
        json!([
            "remote",
            "add",
            "--",
            "evil",
            format!("ext::sh -c touch% {m}")
        ]),
        json!(["worktree", "add", "--", "../outside"]),
        json!(["remote", "--", "remove", "origin"]),
        json!(["grep", "--", "x", "HEAD"]),
    ] {
        let a = brain.call("work_vcs", json!({"args": args})).await;
        assert_ne!(a.status(), "ok", "{args} → {}", a.envelope);
    }
    for args in [
        json!(["branch", "-D", "--", "side"]),
        json!(["branch", "-f", "--", "side", "main"]),
        json!(["update-ref", "-d", "--", "refs/heads/side"]),
        json!(["tag", "-d", "--", "v1"]),
        json!(["switch", "--discard-changes", "--", "side"]),
    ] {
        let a = brain.call("work_vcs", json!({"args": args})).await;
        assert_eq!(a.error_code(), "need_input", "{args} → {}", a.envelope);
    }
    let observe = brain.call("work_observe", json!({})).await;
    assert_eq!(observe.status(), "ok", "{}", observe.envelope);
    assert!(!marker.exists(), "a program of the caller's choosing ran");
    assert!(!w.tmp.path().join("outside").exists());
    assert_eq!(
        std::fs::read(w.project.join(".git/config")).expect("config"),
        config_before
    );
    w.git(&w.project, &["rev-parse", "--verify", "side"]);
    w.git(&w.project, &["rev-parse", "--verify", "v1"]);
    assert_eq!(
        std::fs::read_to_string(w.project.join("README.md")).expect("edit"),
        "an unrecorded edit\n"
    );
    // A dropped `--` in front of ordinary arguments runs as git reads it.
    let a = brain
        .call("work_vcs", json!({"args": ["branch", "--", "topic"]}))
        .await;
    assert_eq!(a.status(), "ok", "{}", a.envelope);
    assert_eq!(a.data()["ran"], json!(["branch", "topic"]));
}

/// An approval is bound to what the files hold, not to their names: a newer version of the
/// file the user agreed to lose is not lost under that approval.
#[tokio::test]
async fn an_approval_is_void_once_the_file_it_was_for_changes() {
    let w = World::published();
    w.write("README.md", "the version the user saw\n");
    let brain = w.session().await;
    let asked = brain
        .call("work_vcs", json!({"args": ["reset", "--hard"]}))
        .await;
    assert_eq!(asked.error_code(), "need_input", "{}", asked.envelope);
    let reference = asked.data()["approval"]
        .as_str()
        .expect("reference")
        .to_owned();
    w.write("README.md", "a newer version, written after the question\n");
    let late = brain
        .call(
            "work_vcs",
            json!({"args": ["reset", "--hard"], "approval": reference}),
        )
        .await;
    assert_eq!(late.error_code(), "policy_blocked", "{}", late.envelope);
    assert_eq!(
        std::fs::read_to_string(w.project.join("README.md")).expect("file"),
        "a newer version, written after the question\n"
    );
}
