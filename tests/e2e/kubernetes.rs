//! Tasks run as Kubernetes Jobs, end to end: the real `butler mcp` with `[runner] kind =
//! "kubernetes"` in the user's configuration talks to the test kit's stand-in API server, whose
//! kubelet emulation runs each Job's pod as the real `butler task run` with the scripted fake
//! agent; the shared destination is the world's bare repository. Success (run_implement and
//! submit_task), the task line fetched and accepted, the evidence in the ledger, the hardened
//! Job; each way a Job fails with the cluster's reason; cut streams; cancellation; eight tasks
//! at once.

// The test plays the cluster's and the user's side (git as a person runs it).
#![allow(clippy::disallowed_methods)]

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use crate::common::{Brain, StartBrain};
use butler_testkit::World;
use butler_testkit::fake_agent::{fake_agent, write_script};
use butler_testkit::kube::{KubeStandIn, PodScript};
use serde_json::{Value, json};

const BUTLER: &str = env!("CARGO_BIN_EXE_butler");

/// A published project, the stand-in cluster, and the user's `[runner]` naming it.
struct ClusterWorld {
    w: World,
    kube: KubeStandIn,
}

/// The pods' "image": the built butler with the fake agent as goose and the world's hermetic
/// git, as an image's `ENV` lines would set them.
fn image_env(w: &World, script: &std::path::Path) -> BTreeMap<String, String> {
    let mut env: BTreeMap<String, String> = w
        .env
        .iter()
        .filter(|(k, _)| k.starts_with("GIT_") || k == "LC_ALL")
        .cloned()
        .collect();
    for (k, v) in [
        ("PATH", std::env::var("PATH").expect("PATH")),
        (
            "BUTLER_GOOSE_PROGRAM",
            fake_agent().to_string_lossy().into_owned(),
        ),
        ("BUTLER_GOOSE_PROVIDER", "openai".into()),
        ("BUTLER_GOOSE_MODEL", "fake".into()),
        ("FAKE_AGENT_SCRIPT", script.to_string_lossy().into_owned()),
        ("BUTLER_AGENT_ENV_ALLOW", "FAKE_AGENT_SCRIPT".into()),
    ] {
        env.insert(k.to_owned(), v);
    }
    env
}

fn greet_attempt() -> String {
    json!([{"do": "write", "path": "src/greet.rs", "text": "pub fn greet() -> &'static str { \"hi\" }\n"}])
        .to_string()
}

async fn cluster_world(
    runner_extra: &str,
    script: impl Fn(&Value) -> PodScript + Send + Sync + 'static,
) -> ClusterWorld {
    let mut w = World::published();
    let kube = KubeStandIn::start().await;
    kube.set_pods(script);
    let kubeconfig = kube.kubeconfig(w.tmp.path());
    // The pod reaches the destination by URL (a path under `/tmp` would be the pod's own
    // `emptyDir`, as in a real pod).
    let destination = format!("file://{}", w.shared.display());
    w.user_config(&format!(
        "[runner]\nkind = \"kubernetes\"\nimage = \"registry.example.com/butler-goose:test\"\n\
         pending_timeout_s = 3\ndestination = \"{destination}\"\n{runner_extra}\n"
    ));
    w.env.push((
        "KUBECONFIG".to_owned(),
        kubeconfig.to_string_lossy().into_owned(),
    ));
    ClusterWorld { w, kube }
}

/// Pods that run the real in-pod command with the fake agent playing `attempts`.
fn running(
    w_tmp: &std::path::Path,
    env_of: &World,
    attempts: &[String],
) -> impl Fn(&Value) -> PodScript + Send + Sync + 'static {
    let script = write_script(w_tmp, attempts);
    let env = image_env(env_of, &script);
    move |_pod: &Value| PodScript::Run {
        program: PathBuf::from(BUTLER),
        args: Vec::new(),
        env: env.clone(),
    }
}

fn implement_args() -> Value {
    json!({"goal": "Add greet()", "target_paths": ["src/"], "test_commands": ["test -f src/greet.rs"], "timeout_s": 60})
}

/// The shared destination's `refs/heads/butler/*` (the private refs must be gone).
fn butler_refs(w: &World) -> String {
    w.git(
        &w.shared,
        &["for-each-ref", "--format=%(refname)", "refs/heads/butler/"],
    )
}

async fn session(cw: &ClusterWorld) -> Brain {
    cw.w.session().await
}

#[tokio::test]
async fn a_task_runs_as_a_job_and_comes_home_with_its_line_and_evidence() {
    // The pod's script needs the world's temp dir, which needs the world: build it in two steps.
    let mut cw = cluster_world("", |_| PodScript::Hang).await;
    let pods = running(cw.w.tmp.path(), &cw.w, &[greet_attempt()]);
    cw.kube.set_pods(pods);
    cw.w.env.push(("BUTLER_SANDBOX".into(), "auto".into()));
    let brain = session(&cw).await;
    let a = brain.call("run_implement", implement_args()).await;
    assert_eq!(a.status(), "ok", "{}", a.envelope);
    assert_eq!(a.data()["outcome"], "succeeded", "{}", a.envelope);
    assert_eq!(
        a.data()["attempts"][0]["changed_files"],
        json!(["src/greet.rs"])
    );
    let task = a.data()["task_id"].as_str().expect("id").to_owned();
    assert!(
        brain.client.progress().len() >= 3,
        "the pod's progress reached the Brain"
    );

    // The task line is here, descending from the base; the private refs are gone.
    let tip = cw.w.git(
        &cw.w.project,
        &["rev-parse", &format!("refs/heads/butler/task-{task}")],
    );
    assert!(!tip.trim().is_empty());
    assert_eq!(butler_refs(&cw.w).trim(), "", "private refs deleted");
    assert!(
        !cw.w.project.join("src/greet.rs").exists(),
        "the Brain's tree is untouched"
    );

    // The Job: hardened, one try, labelled.
    let jobs = cw.kube.jobs();
    assert_eq!(jobs.len(), 1);
    let job = &jobs[0];
    assert_eq!(job["spec"]["backoffLimit"], 0);
    assert_eq!(job["metadata"]["labels"]["butler.dev/task"], task.as_str());
    let pod = &job["spec"]["template"]["spec"];
    assert_eq!(pod["automountServiceAccountToken"], false);
    assert_eq!(
        pod["containers"][0]["securityContext"]["readOnlyRootFilesystem"],
        true
    );
    let env_names: Vec<&str> = pod["containers"][0]["env"]
        .as_array()
        .expect("env")
        .iter()
        .filter_map(|e| e["name"].as_str())
        .collect();
    assert!(
        !env_names
            .iter()
            .any(|n| n.contains("TOKEN") || n.starts_with("BUTLER_GITEA")),
        "Butler's own tokens never reach the pod: {env_names:?}"
    );

    // The evidence is in the ledger (`butler task show`), the log has the pod's steps.
    let show = std::process::Command::new(BUTLER)
        .args(["task", "show", &task, "--json", "--project"])
        .arg(&cw.w.project)
        .envs(cw.w.env.iter().cloned())
        .output()
        .expect("task show");
    let shown: Value = serde_json::from_slice(&show.stdout).expect("json");
    assert_eq!(
        shown["attempts"].as_array().map(Vec::len),
        Some(1),
        "{shown}"
    );
    assert_eq!(shown["status"], "succeeded", "{shown}");

    // Every call the runner made is one the documented Role grants.
    for r in cw.kube.requests() {
        let (group, resource) = if r.path.starts_with("/apis/batch/") {
            ("batch", "jobs")
        } else if r.path.ends_with("/log") {
            ("", "pods/log")
        } else {
            ("", "pods")
        };
        let named = !r.path.ends_with("/jobs") && !r.path.ends_with("/pods");
        let verb = match (r.method.as_str(), named, r.param("watch").is_some()) {
            ("POST", _, _) => "create",
            ("DELETE", _, _) => "delete",
            ("GET", true, _) => "get",
            ("GET", false, true) => "watch",
            ("GET", false, false) => "list",
            other => panic!("an unexpected call {other:?}: {r:?}"),
        };
        assert!(
            butler_maid::cluster::PERMISSIONS
                .iter()
                .any(|(g, res, verbs)| *g == group && *res == resource && verbs.contains(&verb)),
            "{verb} {resource} is not in the Role: {r:?}"
        );
    }

    // Accepted as a local task is.
    let accepted = brain.call("task_accept", json!({"task_id": task})).await;
    assert_eq!(accepted.status(), "ok", "{}", accepted.envelope);
    assert!(cw.w.project.join("src/greet.rs").exists());
}

#[tokio::test]
async fn submit_task_implement_goes_through_the_cluster_too() {
    let mut cw = cluster_world("", |_| PodScript::Hang).await;
    let pods = running(cw.w.tmp.path(), &cw.w, &[greet_attempt()]);
    cw.kube.set_pods(pods);
    cw.w.env.push(("BUTLER_SANDBOX".into(), "off".into()));
    let brain = session(&cw).await;
    let a = brain
        .call(
            "submit_task",
            json!({"contract": {"intent": "implement", "delegation_mode": "agent",
                   "target": {"goal": "Add greet()", "target_paths": ["src/"]},
                   "success_criteria": {"commands": [{"command": "test -f src/greet.rs"}]}}}),
        )
        .await;
    assert_eq!(a.status(), "ok", "{}", a.envelope);
    assert_eq!(a.data()["outcome"], "succeeded", "{}", a.envelope);
    assert_eq!(cw.kube.jobs().len(), 1, "the task went to the cluster");
    let task = a.data()["task_id"].as_str().expect("id").to_owned();
    let discarded = brain.call("task_discard", json!({"task_id": task})).await;
    assert_eq!(discarded.status(), "ok", "{}", discarded.envelope);
}

/// Runs one task whose pod does `script`; the tool's answer.
async fn failing(
    script: PodScript,
    runner_extra: &str,
) -> (ClusterWorld, butler_orchestrator::client::Answer) {
    let cw = cluster_world(runner_extra, move |_| script.clone()).await;
    let brain = session(&cw).await;
    let a = brain.call("run_implement", implement_args()).await;
    (cw, a)
}

#[tokio::test]
async fn every_way_a_job_fails_ends_with_the_clusters_reason() {
    let cases: Vec<(PodScript, &str, &str, &str)> = vec![
        (
            PodScript::ImagePullBackOff,
            "",
            "backend_error",
            "image cannot be pulled",
        ),
        (
            PodScript::Unschedulable,
            "",
            "backend_error",
            "Insufficient memory",
        ),
        (PodScript::OomKilled, "", "backend_error", "OOMKilled"),
        (PodScript::Evicted, "", "backend_error", "evicted"),
        (
            PodScript::NodeLost,
            "",
            "backend_error",
            "node no longer exists",
        ),
        (
            PodScript::Hang,
            "active_deadline_s = 2",
            "backend_error",
            "deadline",
        ),
    ];
    for (script, extra, code, words) in cases {
        let name = format!("{script:?}");
        let (cw, a) = failing(script, extra).await;
        assert_eq!(a.status(), "error", "{name}: {}", a.envelope);
        assert_eq!(a.error_code(), code, "{name}: {}", a.envelope);
        assert!(
            a.envelope.to_string().contains(words),
            "{name}: {}",
            a.envelope
        );
        assert_eq!(
            butler_refs(&cw.w).trim(),
            "",
            "{name}: private refs deleted"
        );
        // Nothing keeps running: the Job is gone or finished.
        let job = cw.kube.jobs()[0]["metadata"]["name"]
            .as_str()
            .expect("name")
            .to_owned();
        let left = cw.kube.job(&job);
        let finished = left.as_ref().is_none_or(|j| {
            j["status"]["conditions"].as_array().is_some_and(|c| {
                c.iter()
                    .any(|c| c["type"] == "Failed" || c["type"] == "Complete")
            }) || j["metadata"]["deletionTimestamp"].is_string()
        });
        assert!(finished, "{name}: {left:?}");
    }
}

#[tokio::test]
async fn a_missing_permission_is_named() {
    let cw = cluster_world("", |_| PodScript::Hang).await;
    cw.kube.forbid("create", "jobs");
    let brain = session(&cw).await;
    let a = brain.call("run_implement", implement_args()).await;
    assert_eq!(a.error_code(), "need_input", "{}", a.envelope);
    assert!(
        a.envelope.to_string().contains("`create` on `jobs.batch`"),
        "{}",
        a.envelope
    );
}

#[tokio::test]
async fn cut_watches_expired_versions_and_a_cut_log_are_survived() {
    let mut cw = cluster_world("", |_| PodScript::Hang).await;
    let pods = running(cw.w.tmp.path(), &cw.w, &[greet_attempt()]);
    cw.kube.set_pods(pods);
    cw.w.env.push(("BUTLER_SANDBOX".into(), "off".into()));
    cw.kube.cut_next_watch_after(1);
    cw.kube.expire_resource_versions();
    cw.kube.cut_next_log_after(200);
    let brain = session(&cw).await;
    let a = brain.call("run_implement", implement_args()).await;
    assert_eq!(a.status(), "ok", "{}", a.envelope);
    assert_eq!(a.data()["outcome"], "succeeded", "{}", a.envelope);
    // What was survived: the jobs listed again after the 410, the log asked again from the
    // last line's second.
    let requests = cw.kube.requests();
    let gets = |watch: bool| {
        requests
            .iter()
            .filter(|r| r.method == "GET" && !r.path.ends_with("/log"))
            .filter(|r| r.param("watch").is_some() == watch)
            .count()
    };
    assert!(gets(false) >= 3, "a re-list after 410 Gone: {requests:?}");
    assert!(gets(true) >= 3, "a watch again after the cut: {requests:?}");
    let logs: Vec<_> = requests
        .iter()
        .filter(|r| r.path.ends_with("/log"))
        .collect();
    assert!(logs.len() >= 2, "{logs:?}");
    assert!(
        logs.iter().any(|r| r.param("sinceTime").is_some()),
        "{logs:?}"
    );
    let task = a.data()["task_id"].as_str().expect("id").to_owned();
    let log = std::process::Command::new(BUTLER)
        .args(["task", "log", &task, "--project"])
        .arg(&cw.w.project)
        .envs(cw.w.env.iter().cloned())
        .output()
        .expect("task log");
    let log = String::from_utf8_lossy(&log.stdout);
    assert!(log.contains("resumed"), "{log}");
    assert!(log.contains("attempt 1"), "{log}");
}

#[tokio::test]
async fn cancelling_deletes_the_job_in_the_foreground() {
    let cw = cluster_world("", |_| PodScript::Hang).await;
    let brain = session(&cw).await;
    brain
        .client
        .call_then_cancel("run_implement", implement_args(), Duration::from_secs(2))
        .await
        .expect("cancel sent");
    assert_eq!(
        cw.kube.jobs().len(),
        1,
        "the Job was created before the cancellation"
    );
    let mut deletes = Vec::new();
    for _ in 0..200 {
        deletes = cw
            .kube
            .requests()
            .into_iter()
            .filter(|r| r.method == "DELETE")
            .collect();
        if !deletes.is_empty() && butler_refs(&cw.w).trim().is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(deletes.len(), 1, "{deletes:?}");
    assert_eq!(
        deletes[0]
            .body
            .as_ref()
            .map(|b| b["propagationPolicy"].clone()),
        Some(json!("Foreground")),
        "{deletes:?}"
    );
    assert_eq!(butler_refs(&cw.w).trim(), "", "private refs deleted");
    assert_eq!(brain.state().await, "clean_idle", "the server still serves");
}

#[tokio::test]
async fn eight_tasks_run_at_once() {
    let mut cw = cluster_world("", |_| PodScript::Hang).await;
    let pods = running(cw.w.tmp.path(), &cw.w, &[greet_attempt()]);
    cw.kube.set_pods(pods);
    cw.w.env.push(("BUTLER_SANDBOX".into(), "off".into()));
    let brain = session(&cw).await;
    let calls = (0..8).map(|_| brain.call("run_implement", implement_args()));
    let answers = futures::future::join_all(calls).await;
    for a in &answers {
        assert_eq!(a.data()["outcome"], "succeeded", "{}", a.envelope);
    }
    assert_eq!(cw.kube.jobs().len(), 8);
    for n in 1..=8 {
        let tip = cw.w.git(
            &cw.w.project,
            &["rev-parse", &format!("refs/heads/butler/task-t{n}")],
        );
        assert!(!tip.trim().is_empty(), "t{n}");
    }
    assert_eq!(butler_refs(&cw.w).trim(), "");
}

/// The same scenario against a real cluster: `KUBECONFIG` names it, `BUTLER_K8S_TEST_IMAGE` is
/// an image built from `deploy/kubernetes/Dockerfile` (its agent scripted or real), and
/// `BUTLER_K8S_TEST_DESTINATION` a git URL both this machine and the cluster's pods can push
/// to (see docs/kubernetes.md, "Try it with kind").
#[tokio::test]
#[ignore = "needs a real cluster: KUBECONFIG, BUTLER_K8S_TEST_IMAGE, BUTLER_K8S_TEST_DESTINATION"]
async fn a_task_runs_on_a_real_cluster() {
    let var = |name: &str| std::env::var(name).unwrap_or_else(|_| panic!("{name} is not set"));
    let (kubeconfig, image, destination) = (
        var("KUBECONFIG"),
        var("BUTLER_K8S_TEST_IMAGE"),
        var("BUTLER_K8S_TEST_DESTINATION"),
    );
    let mut w = World::published();
    w.git(
        &w.project,
        &["push", "-q", &destination, "HEAD:refs/heads/main"],
    );
    w.user_config(&format!(
        "[runner]\nkind = \"kubernetes\"\nimage = \"{image}\"\ndestination = \"{destination}\"\n"
    ));
    w.env.push(("KUBECONFIG".to_owned(), kubeconfig));
    let brain = w.session().await;
    let a = brain.call("run_implement", implement_args()).await;
    assert_eq!(a.status(), "ok", "{}", a.envelope);
    let task = a.data()["task_id"].as_str().expect("id").to_owned();
    let tip = w.git(
        &w.project,
        &["rev-parse", &format!("refs/heads/butler/task-{task}")],
    );
    assert!(!tip.trim().is_empty());
}

#[tokio::test]
async fn a_destination_or_a_cluster_butler_cannot_reach_is_the_users_to_fix() {
    // A destination that is neither a remote of the project nor a URL.
    let mut cw = cluster_world("", |_| PodScript::Hang).await;
    cw.w.user_config(
        "[runner]\nkind = \"kubernetes\"\nimage = \"r/b:1\"\ndestination = \"nosuch\"\n",
    );
    let brain = session(&cw).await;
    let a = brain.call("run_implement", implement_args()).await;
    assert_eq!(a.error_code(), "need_input", "{}", a.envelope);
    assert!(
        a.envelope.to_string().contains("`nosuch`"),
        "{}",
        a.envelope
    );
    assert!(cw.kube.jobs().is_empty(), "no Job without a destination");

    // A kubeconfig that is not there: nothing started, the base's private ref taken back.
    let destination = format!("file://{}", cw.w.shared.display());
    cw.w.user_config(&format!(
        "[runner]\nkind = \"kubernetes\"\nimage = \"r/b:1\"\ndestination = \"{destination}\"\n"
    ));
    cw.w.env.retain(|(k, _)| k != "KUBECONFIG");
    let missing = cw.w.tmp.path().join("no-kubeconfig");
    cw.w.env.push((
        "KUBECONFIG".to_owned(),
        missing.to_string_lossy().into_owned(),
    ));
    let brain = session(&cw).await;
    let a = brain.call("run_implement", implement_args()).await;
    assert_eq!(a.error_code(), "need_input", "{}", a.envelope);
    assert!(
        a.envelope.to_string().contains("cannot be reached"),
        "{}",
        a.envelope
    );
    assert!(cw.kube.jobs().is_empty());
    assert_eq!(
        butler_refs(&cw.w).trim(),
        "",
        "the base's private ref deleted"
    );
}
