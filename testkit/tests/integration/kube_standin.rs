//! The stand-in Kubernetes API server, against the real client: kube's `Api` and
//! kube-runtime's watcher, as the Kubernetes runner uses them.
#![allow(
    clippy::disallowed_methods,
    reason = "the tests run the pods' scripts through the stand-in's kubelet"
)]

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use butler_testkit::kube::{ApiSubset, KubeStandIn, PodScript, ProblemKind};
use futures::{AsyncBufReadExt, StreamExt, TryStreamExt};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, DeleteParams, DynamicObject, ListParams, LogParams, PostParams};
use kube::core::{ApiResource, GroupVersionKind};
use kube::runtime::watcher::{self, Event};
use serde_json::{Value, json};

/// A client for the stand-in, through the kubeconfig it writes.
async fn client(kube: &KubeStandIn, dir: &tempfile::TempDir) -> kube::Client {
    let path = kube.kubeconfig(dir.path());
    let kubeconfig = kube::config::Kubeconfig::read_from(&path).expect("kubeconfig reads");
    let options = kube::config::KubeConfigOptions::default();
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &options)
        .await
        .expect("kubeconfig loads");
    assert_eq!(config.default_namespace, KubeStandIn::NAMESPACE);
    kube::Client::try_from(config).expect("client builds")
}

/// The Job of the design (K8S-DESIGN.md), named `name`.
fn design_job(name: &str) -> Value {
    json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "labels": {
            "app.kubernetes.io/managed-by": "butler",
            "butler.dev/project": "proj",
            "butler.dev/task": "t3",
            "butler.dev/clone": "bcdf",
        }},
        "spec": {
            "backoffLimit": 0,
            "activeDeadlineSeconds": 600,
            "ttlSecondsAfterFinished": 3600,
            "template": {
                "metadata": {"labels": {"app.kubernetes.io/managed-by": "butler", "butler.dev/task": "t3"}},
                "spec": {
                    "restartPolicy": "Never",
                    "automountServiceAccountToken": false,
                    "enableServiceLinks": false,
                    "securityContext": {
                        "runAsNonRoot": true, "runAsUser": 1000, "runAsGroup": 1000, "fsGroup": 1000,
                        "seccompProfile": {"type": "RuntimeDefault"},
                    },
                    "containers": [{
                        "name": "task",
                        "image": "registry.example.com/butler-goose:0.1",
                        "imagePullPolicy": "IfNotPresent",
                        "command": ["butler", "task", "run"],
                        "workingDir": "/work",
                        "env": [
                            {"name": "HOME", "value": "/home/butler"},
                            {"name": "TMPDIR", "value": "/tmp"},
                            {"name": "BUTLER_PUSH_CREDENTIALS", "value": "/var/run/butler/push"},
                            {"name": "BUTLER_AGENT", "value": "goose"},
                            {"name": "MODEL_KEY", "valueFrom": {"secretKeyRef": {"name": "butler-model", "key": "ANTHROPIC_API_KEY"}}},
                        ],
                        "envFrom": [{"secretRef": {"name": "butler-model"}}],
                        "resources": {"requests": {"cpu": "2", "memory": "4Gi"}, "limits": {"cpu": "2", "memory": "4Gi"}},
                        "securityContext": {
                            "allowPrivilegeEscalation": false, "readOnlyRootFilesystem": true,
                            "runAsNonRoot": true, "capabilities": {"drop": ["ALL"]},
                        },
                        "terminationMessagePath": "/dev/termination-log",
                        "terminationMessagePolicy": "FallbackToLogsOnError",
                        "volumeMounts": [
                            {"name": "work", "mountPath": "/work"},
                            {"name": "home", "mountPath": "/home/butler"},
                            {"name": "tmp", "mountPath": "/tmp"},
                            {"name": "push", "mountPath": "/var/run/butler/push", "readOnly": true},
                        ],
                    }],
                    "volumes": [
                        {"name": "work", "emptyDir": {}},
                        {"name": "home", "emptyDir": {}},
                        {"name": "tmp", "emptyDir": {}},
                        {"name": "push", "secret": {"secretName": "butler-push", "defaultMode": 256}},
                    ],
                },
            },
        },
    })
}

fn typed(job: Value) -> Job {
    serde_json::from_value(job).expect("the design's Job is a k8s-openapi Job")
}

fn secrets(kube: &KubeStandIn) {
    kube.add_secret(
        "butler-model",
        BTreeMap::from([("ANTHROPIC_API_KEY".to_owned(), "sk-test".to_owned())]),
    );
    kube.add_secret(
        "butler-push",
        BTreeMap::from([
            ("username".to_owned(), "bot".to_owned()),
            ("token".to_owned(), "push-token".to_owned()),
        ]),
    );
}

fn sh(script: &str) -> PodScript {
    PodScript::Run {
        program: PathBuf::from("/bin/sh"),
        args: vec!["-c".to_owned(), script.to_owned()],
        env: BTreeMap::new(),
    }
}

/// Polls `check` every 20 ms for up to 5 s.
async fn wait_for<T>(what: &str, mut check: impl AsyncFnMut() -> Option<T>) -> T {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    loop {
        if let Some(found) = check().await {
            return found;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn has_condition(job: &Job, kind: &str) -> Option<(String, String)> {
    job.status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_ == kind && c.status == "True")
        .map(|c| {
            (
                c.reason.clone().unwrap_or_default(),
                c.message.clone().unwrap_or_default(),
            )
        })
}

/// Runs kube-runtime's watcher on `api` with `config` until `done` holds for an applied
/// object; errors (a 410, a cut) are skipped as a caller with a backoff would.
async fn watch_until<K>(api: Api<K>, config: watcher::Config, done: impl Fn(&K) -> bool) -> K
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug + Send + 'static,
{
    let mut stream = watcher::watcher(api, config).boxed();
    let found = tokio::time::timeout(Duration::from_secs(5), async {
        while let Some(event) = stream.next().await {
            match event {
                Ok(Event::Apply(object) | Event::InitApply(object)) if done(&object) => {
                    return object;
                }
                _ => {}
            }
        }
        panic!("the watch stream ended");
    })
    .await;
    found.expect("the watcher saw it in time")
}

#[tokio::test]
async fn a_job_runs_its_pod_and_the_watcher_sees_it_complete() {
    let kube = KubeStandIn::start().await;
    let dir = tempfile::tempdir().unwrap();
    let client = client(&kube, &dir).await;
    secrets(&kube);
    kube.set_pods(|_| {
        sh("echo line; echo \"key=$ANTHROPIC_API_KEY model=$MODEL_KEY user=$(cat $BUTLER_PUSH_CREDENTIALS/username)\"; \
            echo \"home=$HOME\" >&2; test \"$(pwd)\" != /work && touch work-file && test -f \"$HOME/../work/work-file\" || echo cwd-unmapped; \
            sleep 0.3; echo done > $BUTLER_TERMINATION_LOG; echo after")
    });
    let jobs: Api<Job> = Api::default_namespaced(client.clone());
    let pods: Api<Pod> = Api::default_namespaced(client.clone());
    let created = jobs
        .create(&PostParams::default(), &typed(design_job("butler-bcdf-t3")))
        .await
        .unwrap();
    assert_eq!(
        created.metadata.namespace.as_deref(),
        Some(KubeStandIn::NAMESPACE)
    );
    assert!(created.metadata.uid.is_some() && created.metadata.resource_version.is_some());
    assert_eq!(kube.jobs().len(), 1, "the body as received is kept");

    let pod = watch_until(
        pods.clone(),
        watcher::Config::default().labels("job-name=butler-bcdf-t3"),
        |pod: &Pod| pod.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running"),
    )
    .await;
    let pod_name = pod.metadata.name.clone().unwrap();
    assert!(
        pod_name.starts_with("butler-bcdf-t3-") && pod_name.len() == "butler-bcdf-t3-".len() + 5
    );
    let labels = pod.metadata.labels.clone().unwrap();
    assert_eq!(labels["job-name"], "butler-bcdf-t3");
    assert_eq!(labels["batch.kubernetes.io/job-name"], "butler-bcdf-t3");
    assert_eq!(labels["butler.dev/task"], "t3");
    assert!(labels.contains_key("controller-uid"));
    let owner = &pod.metadata.owner_references.as_ref().unwrap()[0];
    assert_eq!(
        (owner.kind.as_str(), owner.name.as_str()),
        ("Job", "butler-bcdf-t3")
    );

    let params = LogParams {
        container: Some("task".into()),
        follow: true,
        ..LogParams::default()
    };
    let lines: Vec<String> = pods
        .log_stream(&pod_name, &params)
        .await
        .unwrap()
        .lines()
        .try_collect()
        .await
        .unwrap();
    assert_eq!(lines[0], "line");
    assert_eq!(lines[1], "key=sk-test model=sk-test user=bot");
    assert!(
        lines.contains(&"after".to_owned()),
        "the follow held until the end: {lines:?}"
    );
    assert!(!lines.contains(&"cwd-unmapped".to_owned()), "{lines:?}");
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("home=/") && !l.ends_with("=/home/butler")),
        "HOME mapped: {lines:?}"
    );

    let job = watch_until(
        jobs.clone(),
        watcher::Config::default().fields("metadata.name=butler-bcdf-t3"),
        |job: &Job| has_condition(job, "Complete").is_some(),
    )
    .await;
    let status = job.status.clone().unwrap();
    assert_eq!((status.succeeded, status.active), (Some(1), Some(0)));
    assert!(status.start_time.is_some() && status.completion_time.is_some());
    assert_eq!(
        has_condition(&job, "SuccessCriteriaMet").unwrap().0,
        "CompletionsReached"
    );

    let pod = pods.get(&pod_name).await.unwrap();
    let pod_status = pod.status.unwrap();
    assert_eq!(pod_status.phase.as_deref(), Some("Succeeded"));
    let terminated = pod_status.container_statuses.unwrap()[0]
        .state
        .clone()
        .unwrap()
        .terminated
        .unwrap();
    assert_eq!(terminated.exit_code, 0);
    assert_eq!(terminated.reason.as_deref(), Some("Completed"));
    assert_eq!(terminated.message.as_deref(), Some("done\n"));

    // A finished container's log is still there, with the kubelet's timestamps on request.
    let stamped = pods
        .logs(
            &pod_name,
            &LogParams {
                timestamps: true,
                ..LogParams::default()
            },
        )
        .await
        .unwrap();
    let first = stamped.lines().next().unwrap();
    let (stamp, text) = first.split_once(' ').unwrap();
    assert!(
        stamp.ends_with('Z') && stamp.len() == "2026-12-02T10:33:27.123456789Z".len(),
        "{first}"
    );
    assert_eq!(text, "line");

    for request in kube.requests() {
        eprintln!("{} {}?{}", request.method, request.path, request.query);
    }
}

#[tokio::test]
async fn a_failing_pod_falls_back_to_its_log_and_fails_the_job() {
    let kube = KubeStandIn::start().await;
    let dir = tempfile::tempdir().unwrap();
    let client = client(&kube, &dir).await;
    secrets(&kube);
    kube.set_pods(|_| sh("echo first; sleep 0.05; echo 'last words' >&2; exit 3"));
    let jobs: Api<Job> = Api::default_namespaced(client.clone());
    let pods: Api<Pod> = Api::default_namespaced(client);
    jobs.create(&PostParams::default(), &typed(design_job("butler-bcdf-t4")))
        .await
        .unwrap();
    let job = watch_until(
        jobs,
        watcher::Config::default().fields("metadata.name=butler-bcdf-t4"),
        |job: &Job| has_condition(job, "Failed").is_some(),
    )
    .await;
    assert_eq!(
        has_condition(&job, "Failed").unwrap(),
        (
            "BackoffLimitExceeded".to_owned(),
            "Job has reached the specified backoff limit".to_owned()
        )
    );
    assert!(has_condition(&job, "FailureTarget").is_some());
    assert_eq!(job.status.unwrap().failed, Some(1));
    let pod = pods
        .list(&ListParams::default().labels("job-name=butler-bcdf-t4"))
        .await
        .unwrap()
        .items
        .remove(0);
    let terminated = pod.status.unwrap().container_statuses.unwrap()[0]
        .state
        .clone()
        .unwrap()
        .terminated
        .unwrap();
    assert_eq!(
        (terminated.exit_code, terminated.reason.as_deref()),
        (3, Some("Error"))
    );
    assert_eq!(terminated.message.as_deref(), Some("first\nlast words\n"));
    assert_eq!(
        kube.log(pod.metadata.name.as_deref().unwrap()).unwrap(),
        "first\nlast words\n"
    );
}

#[tokio::test]
async fn the_watcher_survives_a_cut_watch_and_an_expired_resource_version() {
    let kube = KubeStandIn::start().await;
    let dir = tempfile::tempdir().unwrap();
    let client = client(&kube, &dir).await;
    secrets(&kube);
    kube.set_pods(|_| sh("sleep 0.2; echo ok"));
    let jobs: Api<Job> = Api::default_namespaced(client.clone());
    // Another Job first, so the watcher's paged list (page size 1) needs a continue token.
    jobs.create(&PostParams::default(), &typed(design_job("butler-aaaa-t1")))
        .await
        .unwrap();
    kube.expire_resource_versions();
    kube.cut_next_watch_after(1);
    let watched = tokio::spawn(watch_until(
        jobs.clone(),
        watcher::Config::default().page_size(1),
        |job: &Job| {
            job.metadata.name.as_deref() == Some("butler-bcdf-t5")
                && has_condition(job, "Complete").is_some()
        },
    ));
    jobs.create(&PostParams::default(), &typed(design_job("butler-bcdf-t5")))
        .await
        .unwrap();
    let job = watched.await.unwrap();
    assert!(has_condition(&job, "Complete").is_some());

    let requests = kube.requests();
    let watches: Vec<_> = requests
        .iter()
        .filter(|r| r.path.ends_with("/jobs") && r.method == "GET")
        .map(|r| {
            (
                r.param("watch").is_some(),
                r.param("continue").is_some(),
                r.param("resourceVersion"),
            )
        })
        .collect();
    // LIST (2 pages), WATCH (410), LIST again (2 pages), WATCH (cut after 1 event), WATCH again.
    let lists = watches.iter().filter(|(w, _, _)| !w).count();
    let watch_count = watches.iter().filter(|(w, _, _)| *w).count();
    assert!(
        watches.iter().any(|(w, c, _)| !w && *c),
        "a continue token was followed: {watches:?}"
    );
    assert!(lists >= 3, "re-listed after the 410: {watches:?}");
    assert!(watch_count >= 3, "re-watched after the cut: {watches:?}");
    for request in requests.iter().filter(|r| r.method == "GET") {
        eprintln!("{} {}?{}", request.method, request.path, request.query);
    }
}

/// What the foreground-delete test notes of a watch event.
#[derive(Debug, PartialEq, Eq)]
enum Seen {
    InitDone,
    /// A deletion, with the resourceVersion the server gave it.
    Delete(u64),
    Other,
}

#[tokio::test]
async fn a_foreground_delete_kills_the_process_then_removes_pods_then_the_job() {
    let kube = KubeStandIn::start().await;
    let dir = tempfile::tempdir().unwrap();
    let client = client(&kube, &dir).await;
    secrets(&kube);
    let pid_file = dir.path().join("pids");
    // The shell waits on a background child: both must go, as a container's processes do.
    let script = format!(
        "sleep 30 & echo \"$$ $!\" > {}.tmp; mv {0}.tmp {0}; wait; echo never",
        pid_file.display()
    );
    kube.set_pods(move |_| sh(&script));
    let jobs: Api<Job> = Api::default_namespaced(client.clone());
    let pods: Api<Pod> = Api::default_namespaced(client);
    jobs.create(&PostParams::default(), &typed(design_job("butler-bcdf-t6")))
        .await
        .unwrap();
    let pod = watch_until(
        pods.clone(),
        watcher::Config::default().labels("job-name=butler-bcdf-t6"),
        |pod: &Pod| pod.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running"),
    )
    .await;
    let pids = wait_for("the pid file", async || {
        std::fs::read_to_string(&pid_file).ok()
    })
    .await;
    let pids: Vec<String> = pids.split_whitespace().map(str::to_owned).collect();
    assert_eq!(pids.len(), 2, "{pids:?}");

    // Both watches open before the delete, to see the order of the deletions.
    fn seen<K: kube::Resource>(event: Result<Event<K>, watcher::Error>) -> Seen {
        match event {
            Ok(Event::InitDone) => Seen::InitDone,
            Ok(Event::Delete(object)) => Seen::Delete(
                object
                    .meta()
                    .resource_version
                    .as_deref()
                    .unwrap_or("0")
                    .parse()
                    .unwrap(),
            ),
            _ => Seen::Other,
        }
    }
    let mut events = futures::stream::select(
        watcher::watcher(jobs.clone(), watcher::Config::default())
            .map(|e| ("job", seen(e)))
            .boxed(),
        watcher::watcher(pods.clone(), watcher::Config::default())
            .map(|e| ("pod", seen(e)))
            .boxed(),
    );
    let mut inits = 0;
    while inits < 2 {
        if let Some((_, Seen::InitDone)) = events.next().await {
            inits += 1;
        }
    }
    let answer = jobs
        .delete("butler-bcdf-t6", &DeleteParams::foreground())
        .await
        .unwrap();
    let marked = answer
        .left()
        .expect("a foreground delete answers with the Job being deleted");
    assert!(marked.metadata.deletion_timestamp.is_some());
    assert_eq!(
        marked.metadata.finalizers.as_deref(),
        Some(&["foregroundDeletion".to_owned()][..])
    );

    // Two streams need not deliver in the server's order: the resourceVersions tell it.
    let mut deleted = BTreeMap::new();
    tokio::time::timeout(Duration::from_secs(5), async {
        while let Some((what, event)) = events.next().await {
            if let Seen::Delete(rv) = event {
                deleted.insert(what, rv);
                if deleted.len() == 2 {
                    return;
                }
            }
        }
    })
    .await
    .expect("the pod and the Job were deleted in time");
    assert!(
        deleted["pod"] < deleted["job"],
        "the pod went first: {deleted:?}"
    );
    assert!(
        pods.get_opt(pod.metadata.name.as_deref().unwrap())
            .await
            .unwrap()
            .is_none()
    );
    for pid in &pids {
        // Gone, or a zombie waiting for whoever reaps orphans here.
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let state = stat
            .rsplit_once(") ")
            .and_then(|(_, rest)| rest.chars().next());
        assert!(
            matches!(state, None | Some('Z' | 'X')),
            "the pod's process {pid} was killed: {stat}"
        );
    }
    let gone = jobs.get("butler-bcdf-t6").await.unwrap_err();
    match gone {
        kube::Error::Api(status) => {
            assert_eq!((status.code, status.reason.as_str()), (404, "NotFound"));
            assert_eq!(status.message, "jobs.batch \"butler-bcdf-t6\" not found");
        }
        other => panic!("expected a 404, got {other:?}"),
    }
}

#[tokio::test]
async fn rbac_conflicts_and_strict_decoding_answer_as_the_real_server() {
    let kube = KubeStandIn::start().await;
    let dir = tempfile::tempdir().unwrap();
    let client = client(&kube, &dir).await;
    let version = client.apiserver_version().await.unwrap();
    assert_eq!(
        (version.major.as_str(), version.minor.as_str()),
        ("1", "33")
    );
    let jobs: Api<Job> = Api::default_namespaced(client.clone());
    let pods: Api<Pod> = Api::default_namespaced(client.clone());

    jobs.create(&PostParams::default(), &typed(design_job("butler-bcdf-t7")))
        .await
        .unwrap();
    match jobs
        .create(&PostParams::default(), &typed(design_job("butler-bcdf-t7")))
        .await
    {
        Err(kube::Error::Api(status)) => {
            assert_eq!(
                (status.code, status.reason.as_str()),
                (409, "AlreadyExists")
            );
            assert_eq!(
                status.message,
                "jobs.batch \"butler-bcdf-t7\" already exists"
            );
        }
        other => panic!("expected a 409, got {other:?}"),
    }

    // A Job with a field the schema lacks is refused as strict field validation refuses it.
    let gvk = GroupVersionKind::gvk("batch", "v1", "Job");
    let dynamic: Api<DynamicObject> =
        Api::default_namespaced_with(client.clone(), &ApiResource::from_gvk(&gvk));
    let mut body = design_job("butler-bcdf-t9");
    body["spec"]["foo"] = json!(1);
    body["spec"]["template"]["spec"]["containers"][0]["imagePullPolicyy"] = json!("Always");
    let object: DynamicObject = serde_json::from_value(body).unwrap();
    match dynamic.create(&PostParams::default(), &object).await {
        Err(kube::Error::Api(status)) => {
            assert_eq!((status.code, status.reason.as_str()), (400, "BadRequest"));
            assert_eq!(
                status.message,
                "Job in version \"v1\" cannot be handled as a Job: strict decoding error: unknown field \"spec.foo\", unknown field \"spec.template.spec.containers[0].imagePullPolicyy\""
            );
        }
        other => panic!("expected a 400, got {other:?}"),
    }
    assert!(jobs.get_opt("butler-bcdf-t9").await.unwrap().is_none());

    kube.forbid("create", "jobs");
    match jobs
        .create(&PostParams::default(), &typed(design_job("butler-bcdf-t8")))
        .await
    {
        Err(kube::Error::Api(status)) => {
            assert_eq!((status.code, status.reason.as_str()), (403, "Forbidden"));
            assert_eq!(
                status.message,
                "jobs.batch is forbidden: User \"system:serviceaccount:butler:butler\" cannot create resource \"jobs\" in API group \"batch\" in the namespace \"butler\""
            );
        }
        other => panic!("expected a 403, got {other:?}"),
    }
    kube.forbid("get", "pods/log");
    match pods.logs("some-pod", &LogParams::default()).await {
        Err(kube::Error::Api(status)) => {
            assert_eq!(status.code, 403);
            assert_eq!(
                status.message,
                "pods \"some-pod\" is forbidden: User \"system:serviceaccount:butler:butler\" cannot get resource \"pods/log\" in API group \"\" in the namespace \"butler\""
            );
        }
        other => panic!("expected a 403, got {other:?}"),
    }
}

#[tokio::test]
async fn each_failure_script_has_the_real_shape() {
    let kube = KubeStandIn::start().await;
    let dir = tempfile::tempdir().unwrap();
    let client = client(&kube, &dir).await;
    secrets(&kube);
    kube.set_pods(
        |pod| match pod["metadata"]["labels"]["job-name"].as_str().unwrap_or("") {
            "pull" => PodScript::ImagePullBackOff,
            "unschedulable" => PodScript::Unschedulable,
            "oom" => PodScript::OomKilled,
            "evicted" => PodScript::Evicted,
            "node-lost" => PodScript::NodeLost,
            "deadline" => PodScript::Hang,
            _ => sh("true"),
        },
    );
    let jobs: Api<Job> = Api::default_namespaced(client.clone());
    let pods: Api<Pod> = Api::default_namespaced(client);
    for name in [
        "pull",
        "unschedulable",
        "oom",
        "evicted",
        "node-lost",
        "deadline",
        "no-secret",
        "no-volume",
    ] {
        let mut job = design_job(name);
        if name == "deadline" {
            job["spec"]["activeDeadlineSeconds"] = json!(1);
        }
        if name == "no-secret" {
            job["spec"]["template"]["spec"]["containers"][0]["envFrom"] =
                json!([{"secretRef": {"name": "nope"}}]);
        }
        if name == "no-volume" {
            job["spec"]["template"]["spec"]["volumes"][3]["secret"]["secretName"] = json!("absent");
        }
        jobs.create(&PostParams::default(), &typed(job))
            .await
            .unwrap();
    }
    let pod_of = |job: &'static str| {
        let pods = pods.clone();
        async move {
            pods.list(&ListParams::default().labels(&format!("job-name={job}")))
                .await
                .unwrap()
                .items
                .into_iter()
                .next()
        }
    };
    let waiting = |pod: &Pod| {
        pod.status.as_ref()?.container_statuses.as_ref()?[0]
            .state
            .as_ref()?
            .waiting
            .as_ref()
            .map(|w| {
                (
                    w.reason.clone().unwrap_or_default(),
                    w.message.clone().unwrap_or_default(),
                )
            })
    };
    let terminated = |pod: &Pod| {
        pod.status.as_ref()?.container_statuses.as_ref()?[0]
            .state
            .as_ref()?
            .terminated
            .clone()
    };

    let pull = wait_for("ImagePullBackOff", async || {
        pod_of("pull")
            .await
            .filter(|p| waiting(p).is_some_and(|(r, _)| r == "ImagePullBackOff"))
    })
    .await;
    assert_eq!(
        waiting(&pull).unwrap().1,
        "Back-off pulling image \"registry.example.com/butler-goose:0.1\""
    );
    match pods
        .logs(
            pull.metadata.name.as_deref().unwrap(),
            &LogParams::default(),
        )
        .await
    {
        Err(kube::Error::Api(status)) => {
            assert_eq!((status.code, status.reason.as_str()), (400, "BadRequest"));
            assert_eq!(
                status.message,
                format!(
                    "container \"task\" in pod \"{}\" is waiting to start: trying and failing to pull image",
                    pull.metadata.name.as_deref().unwrap()
                )
            );
        }
        other => panic!("expected a 400, got {other:?}"),
    }

    let unschedulable = wait_for("Unschedulable", async || {
        pod_of("unschedulable").await.filter(|p| {
            p.status
                .as_ref()
                .and_then(|s| s.conditions.as_ref())
                .is_some_and(|cs| !cs.is_empty())
        })
    })
    .await;
    let status = unschedulable.status.unwrap();
    assert_eq!(status.phase.as_deref(), Some("Pending"));
    let scheduled = &status.conditions.unwrap()[0];
    assert_eq!(
        (scheduled.type_.as_str(), scheduled.status.as_str()),
        ("PodScheduled", "False")
    );
    assert_eq!(scheduled.reason.as_deref(), Some("Unschedulable"));
    assert!(
        scheduled
            .message
            .as_deref()
            .unwrap()
            .starts_with("0/3 nodes are available: 3 Insufficient memory.")
    );

    let oom = wait_for("OOMKilled", async || {
        pod_of("oom").await.filter(|p| terminated(p).is_some())
    })
    .await;
    let end = terminated(&oom).unwrap();
    assert_eq!(
        (end.exit_code, end.reason.as_deref()),
        (137, Some("OOMKilled"))
    );
    assert_eq!(oom.status.unwrap().phase.as_deref(), Some("Failed"));

    let evicted = wait_for("Evicted", async || {
        pod_of("evicted")
            .await
            .filter(|p| p.status.as_ref().and_then(|s| s.reason.as_deref()) == Some("Evicted"))
    })
    .await;
    let status = evicted.status.unwrap();
    assert_eq!(status.phase.as_deref(), Some("Failed"));
    assert!(
        status
            .message
            .unwrap()
            .starts_with("The node was low on resource: memory.")
    );

    let config_error = wait_for("CreateContainerConfigError", async || {
        pod_of("no-secret")
            .await
            .filter(|p| waiting(p).is_some_and(|(r, _)| r == "CreateContainerConfigError"))
    })
    .await;
    assert_eq!(
        waiting(&config_error).unwrap().1,
        "secret \"nope\" not found"
    );
    let log_error = |pod: &Pod| {
        let pods = pods.clone();
        let name = pod.metadata.name.clone().unwrap();
        async move {
            match pods.logs(&name, &LogParams::default()).await {
                Err(kube::Error::Api(status)) if status.code == 400 => status.message,
                other => panic!("expected a 400, got {other:?}"),
            }
        }
    };
    assert_eq!(
        log_error(&config_error).await,
        format!(
            "container \"task\" in pod \"{}\" is waiting to start: CreateContainerConfigError",
            config_error.metadata.name.as_deref().unwrap()
        )
    );
    // A Secret volume that cannot be mounted keeps the container creating.
    let creating = wait_for("ContainerCreating", async || {
        pod_of("no-volume")
            .await
            .filter(|p| waiting(p).is_some_and(|(r, _)| r == "ContainerCreating"))
    })
    .await;
    assert_eq!(
        log_error(&creating).await,
        format!(
            "container \"task\" in pod \"{}\" is waiting to start: ContainerCreating",
            creating.metadata.name.as_deref().unwrap()
        )
    );

    for (job, reason) in [
        ("oom", "BackoffLimitExceeded"),
        ("evicted", "BackoffLimitExceeded"),
        ("node-lost", "BackoffLimitExceeded"),
        ("deadline", "DeadlineExceeded"),
    ] {
        let failed = wait_for(job, async || {
            jobs.get(job)
                .await
                .ok()
                .filter(|j| has_condition(j, "Failed").is_some())
        })
        .await;
        assert_eq!(has_condition(&failed, "Failed").unwrap().0, reason, "{job}");
    }
    let deadline = jobs.get("deadline").await.unwrap();
    assert_eq!(
        has_condition(&deadline, "Failed").unwrap().1,
        "Job was active longer than specified deadline"
    );
    assert!(
        pod_of("deadline").await.is_none(),
        "the deadline's pod was deleted"
    );
    // The lost node's pod was deleted by the pod GC; its last state carried the condition.
    assert!(pod_of("node-lost").await.is_none());
}

#[tokio::test]
async fn a_lost_node_shows_a_disruption_target_before_the_pod_goes() {
    let kube = KubeStandIn::start().await;
    let dir = tempfile::tempdir().unwrap();
    let client = client(&kube, &dir).await;
    kube.set_pods(|_| PodScript::NodeLost);
    let pods: Api<Pod> = Api::default_namespaced(client.clone());
    let watched = tokio::spawn(watch_until(
        pods,
        watcher::Config::default(),
        |pod: &Pod| pod.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Failed"),
    ));
    let jobs: Api<Job> = Api::default_namespaced(client);
    let mut job = design_job("lost");
    job["spec"]["template"]["spec"]["containers"][0]
        .as_object_mut()
        .unwrap()
        .remove("envFrom");
    job["spec"]["template"]["spec"]["containers"][0]["env"] = json!([]);
    jobs.create(&PostParams::default(), &typed(job))
        .await
        .unwrap();
    let pod = watched.await.unwrap();
    let condition = pod
        .status
        .unwrap()
        .conditions
        .unwrap()
        .into_iter()
        .find(|c| c.type_ == "DisruptionTarget")
        .unwrap();
    assert_eq!(condition.reason.as_deref(), Some("DeletionByPodGC"));
    assert_eq!(
        condition.message.as_deref(),
        Some("PodGC: node no longer exists")
    );
}

#[test]
fn the_validator_reports_every_problem_with_its_path() {
    let subset = ApiSubset::pinned();
    assert!(subset.validate("Job", &design_job("ok")).is_empty());
    let mut job = design_job("bad");
    job["spec"]["backoffLimit"] = json!("zero");
    job["spec"]["template"]["spec"]["containers"][0]
        .as_object_mut()
        .unwrap()
        .remove("name");
    job["spec"]["template"]["spec"]["volumes"][0]["emptyDir"]["sizeLimitt"] = json!("1Gi");
    job["metadata"]["creationTimestamp"] = json!("yesterday");
    let problems = subset.validate("io.k8s.api.batch.v1.Job", &job);
    let found: Vec<(&str, &ProblemKind)> = problems
        .iter()
        .map(|p| (p.path.as_str(), &p.kind))
        .collect();
    assert!(
        found.contains(&(
            "spec.backoffLimit",
            &ProblemKind::WrongType {
                expected: "int32".into(),
                found: "string \"zero\"".into()
            }
        )),
        "{found:?}"
    );
    assert!(
        found.contains(&(
            "spec.template.spec.containers[0].name",
            &ProblemKind::MissingRequired
        )),
        "{found:?}"
    );
    assert!(
        found.contains(&(
            "spec.template.spec.volumes[0].emptyDir.sizeLimitt",
            &ProblemKind::UnknownField
        )),
        "{found:?}"
    );
    assert!(
        found
            .iter()
            .any(|(path, _)| *path == "metadata.creationTimestamp"),
        "{found:?}"
    );
    assert_eq!(problems.len(), 4, "{found:?}");
    assert_eq!(
        problems
            .iter()
            .find(|p| p.kind == ProblemKind::UnknownField)
            .unwrap()
            .to_string(),
        "unknown field \"spec.template.spec.volumes[0].emptyDir.sizeLimitt\""
    );
}

#[tokio::test]
async fn a_cut_log_stream_resumes_with_since_time() {
    let kube = KubeStandIn::start().await;
    let dir = tempfile::tempdir().unwrap();
    let client = client(&kube, &dir).await;
    secrets(&kube);
    kube.set_pods(|_| sh("for i in 1 2 3 4 5; do echo line-$i; sleep 0.1; done"));
    let jobs: Api<Job> = Api::default_namespaced(client.clone());
    let pods: Api<Pod> = Api::default_namespaced(client);
    let before =
        k8s_openapi::jiff::Timestamp::now() - k8s_openapi::jiff::SignedDuration::from_secs(2);
    jobs.create(
        &PostParams::default(),
        &typed(design_job("butler-bcdf-t10")),
    )
    .await
    .unwrap();
    let pod = watch_until(
        pods.clone(),
        watcher::Config::default().labels("job-name=butler-bcdf-t10"),
        |pod: &Pod| pod.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running"),
    )
    .await;
    let pod_name = pod.metadata.name.unwrap();

    // "line-1\nline-2\n" is 14 bytes: the cut comes 3 bytes into the third line.
    kube.cut_next_log_after(17);
    let follow = LogParams {
        container: Some("task".into()),
        follow: true,
        ..LogParams::default()
    };
    let mut cut = pods.log_stream(&pod_name, &follow).await.unwrap().lines();
    let mut seen = Vec::new();
    let mut broken = false;
    while let Some(line) = cut.next().await {
        match line {
            Ok(line) => seen.push(line),
            Err(_) => {
                broken = true;
                break;
            }
        }
    }
    assert!(broken, "the stream broke off: {seen:?}");
    assert_eq!(&seen[..2], ["line-1", "line-2"]);

    let resumed = LogParams {
        since_time: Some(before),
        ..follow
    };
    let rest: Vec<String> = pods
        .log_stream(&pod_name, &resumed)
        .await
        .unwrap()
        .lines()
        .try_collect()
        .await
        .unwrap();
    assert_eq!(rest, ["line-1", "line-2", "line-3", "line-4", "line-5"]);
    let future = LogParams {
        since_time: Some(
            k8s_openapi::jiff::Timestamp::now() + k8s_openapi::jiff::SignedDuration::from_secs(60),
        ),
        ..LogParams::default()
    };
    assert_eq!(pods.logs(&pod_name, &future).await.unwrap(), "");
    let sent = kube
        .requests()
        .into_iter()
        .filter(|r| r.path.ends_with("/log"))
        .find_map(|r| r.param("sinceTime"))
        .unwrap();
    assert!(
        sent.ends_with('Z') && sent.len() == "2026-12-02T10:33:27Z".len(),
        "{sent}"
    );
}

#[tokio::test]
async fn a_finished_job_goes_after_its_ttl_and_an_orphaning_delete_keeps_the_pod() {
    let kube = KubeStandIn::start().await;
    let dir = tempfile::tempdir().unwrap();
    let client = client(&kube, &dir).await;
    secrets(&kube);
    kube.set_pods(|pod| match pod["metadata"]["labels"]["job-name"].as_str() {
        Some("orphan") => PodScript::Hang,
        _ => sh("true"),
    });
    let jobs: Api<Job> = Api::default_namespaced(client.clone());
    let pods: Api<Pod> = Api::default_namespaced(client);
    let mut job = design_job("ttl");
    job["spec"]["ttlSecondsAfterFinished"] = json!(0);
    jobs.create(&PostParams::default(), &typed(job))
        .await
        .unwrap();
    wait_for("the TTL controller", async || {
        jobs.get_opt("ttl").await.unwrap().is_none().then_some(())
    })
    .await;
    assert!(
        pods.list(&ListParams::default().labels("job-name=ttl"))
            .await
            .unwrap()
            .items
            .is_empty()
    );

    jobs.create(&PostParams::default(), &typed(design_job("orphan")))
        .await
        .unwrap();
    wait_for("the orphan's pod", async || {
        pods.list(&ListParams::default().labels("job-name=orphan"))
            .await
            .unwrap()
            .items
            .into_iter()
            .next()
    })
    .await;
    let answer = jobs
        .delete("orphan", &DeleteParams::default())
        .await
        .unwrap();
    let status = answer
        .right()
        .expect("a delete without propagation answers with a Success status");
    assert_eq!(status.details.unwrap().name, "orphan");
    let pod = pods
        .list(&ListParams::default().labels("job-name=orphan"))
        .await
        .unwrap()
        .items
        .remove(0);
    assert!(
        pod.metadata.owner_references.is_none(),
        "the orphan lost its owner"
    );
}
