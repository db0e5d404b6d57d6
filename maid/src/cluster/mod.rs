//! A task's Job on a Kubernetes cluster, through the ecosystem's client (`kube`, its runtime's
//! watcher; configuration from the user's kubeconfig or in-cluster): created, watched with its
//! pod to its end, its log followed line by line, deleted in the foreground when the task is
//! cancelled. Every way it can fail is a [`ClusterFailure`] with the cluster's reason.
//!
//! | module | what |
//! |---|---|
//! | `job` | the Job object: names, labels, the hardened pod |
//! | `state` | what the Job's and the pod's status say |
//! | `follow` | the pod's log, resumed when its stream is cut |
//! | `failure` | the typed failures |

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use butler_worker::config::RunnerConfig;
use futures::StreamExt;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{DeleteParams, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Client, Config};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

mod failure;
mod follow;
mod job;
mod state;

pub use failure::ClusterFailure;
pub(crate) use follow::LogItem;
pub(crate) use job::{DEADLINE_MARGIN_S, JobRequest, job_name, job_object, label_value};

use state::{JobVerdict, PendingClock, PodState, Terminated};

/// The permissions the runner uses, as RBAC names them (group, resource, verbs): a Role with
/// exactly these is enough (`deploy/kubernetes/rbac.yaml`).
pub const PERMISSIONS: &[(&str, &str, &[&str])] = &[
    (
        "batch",
        "jobs",
        &["create", "get", "list", "watch", "delete"],
    ),
    ("", "pods", &["get", "list", "watch"]),
    ("", "pods/log", &["get"]),
];

/// A pod that cannot start waits this long unless `[runner] pending_timeout_s` says.
pub(crate) const DEFAULT_PENDING_TIMEOUT: Duration = Duration::from_secs(300);
/// After the Job's verdict, how long its pod's last state and log may take to arrive.
const SETTLE: Duration = Duration::from_secs(10);
/// A pod deleted before its container ended fails the task this long after, unless the Job's
/// own verdict (its deadline) comes first.
const POD_GONE_GRACE: Duration = Duration::from_secs(3);
/// A cancelled Job's foreground deletion is waited for this long.
const DELETION_WAIT: Duration = Duration::from_secs(30);

/// A connection to the cluster and namespace tasks run in.
#[derive(Clone)]
pub(crate) struct Cluster {
    client: Client,
    namespace: String,
    config: Arc<RunnerConfig>,
}

/// How a Job ended that handed something back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct JobEnd {
    /// The Job completed (its container exited 0).
    pub complete: bool,
    /// The container's termination message, when it left one.
    pub termination_message: Option<String>,
    /// The container's exit code and reason.
    pub exit_code: i32,
    pub reason: String,
}

impl Cluster {
    /// Connects with `config`'s context of the user's kubeconfig (the files `kubeconfig`
    /// lists, as `KUBECONFIG` does, else `<home>/.kube/config`), else the in-cluster
    /// configuration. The locations come from Butler's environment as the caller read it.
    pub(crate) async fn connect(
        config: &RunnerConfig,
        kubeconfig: Option<&std::ffi::OsStr>,
        home: Option<&Path>,
    ) -> Result<Cluster, ClusterFailure> {
        let unreachable = |message: String| ClusterFailure::Unreachable { message };
        let options = KubeConfigOptions {
            context: config.context.clone(),
            ..KubeConfigOptions::default()
        };
        let files: Vec<PathBuf> = match kubeconfig.filter(|v| !v.is_empty()) {
            Some(list) => std::env::split_paths(list)
                .filter(|p| !p.as_os_str().is_empty())
                .collect(),
            None => home
                .map(|h| h.join(".kube/config"))
                .filter(|p| p.exists())
                .into_iter()
                .collect(),
        };
        let kube_config = if files.is_empty() {
            Config::incluster()
                .map_err(|e| unreachable(format!("no kubeconfig and not in a cluster ({e})")))?
        } else {
            let mut merged: Option<Kubeconfig> = None;
            for file in &files {
                let next = Kubeconfig::read_from(file)
                    .map_err(|e| unreachable(format!("the kubeconfig {}: {e}", file.display())))?;
                merged = Some(match merged {
                    None => next,
                    Some(m) => m
                        .merge(next)
                        .map_err(|e| unreachable(format!("the kubeconfig: {e}")))?,
                });
            }
            let merged = merged.expect("at least one file");
            Config::from_custom_kubeconfig(merged, &options)
                .await
                .map_err(|e| unreachable(format!("the kubeconfig: {e}")))?
        };
        let namespace = config
            .namespace
            .clone()
            .unwrap_or_else(|| kube_config.default_namespace.clone());
        let client =
            Client::try_from(kube_config).map_err(|e| unreachable(format!("the client: {e}")))?;
        Ok(Cluster {
            client,
            namespace,
            config: Arc::new(config.clone()),
        })
    }

    /// Runs `request` as a Job to its end: each log line goes to `on_line` as it comes, the
    /// container's termination message and exit come back. `cancel` deletes the Job in the
    /// foreground and ends with `Ok(None)`.
    pub(crate) async fn run(
        &self,
        request: &JobRequest,
        on_line: &(dyn Fn(LogItem) + Send + Sync),
        cancel: &CancellationToken,
    ) -> Result<Option<JobEnd>, ClusterFailure> {
        let ns = self.namespace.as_str();
        let jobs: Api<Job> = Api::namespaced(self.client.clone(), ns);
        let pods: Api<Pod> = Api::namespaced(self.client.clone(), ns);
        let object = job_object(request, &self.config, ns);
        jobs.create(&PostParams::default(), &object)
            .await
            .map_err(|e| ClusterFailure::of_api(e, "create", "jobs.batch", ns))?;
        let name = request.name.clone();
        let mut watch = JobWatch {
            jobs: jobs.clone(),
            pods: pods.clone(),
            name: name.clone(),
            ns: ns.to_owned(),
            pending: PendingClock {
                since: Instant::now(),
                limit: self
                    .config
                    .pending_timeout_s
                    .map_or(DEFAULT_PENDING_TIMEOUT, Duration::from_secs),
            },
            deadline_s: request.deadline_s,
        };
        let outcome = watch.follow_to_end(on_line, cancel).await;
        // Given up on while it may still start or run: nothing of it may keep going. A Job
        // whose pod ended stays for its TTL, for its log.
        if let Err(failure) = &outcome
            && !failure.pod_ended()
        {
            watch.delete(false).await;
        }
        outcome
    }
}

/// One Job followed to its end.
struct JobWatch {
    jobs: Api<Job>,
    pods: Api<Pod>,
    name: String,
    ns: String,
    pending: PendingClock,
    deadline_s: u64,
}

impl JobWatch {
    async fn follow_to_end(
        &mut self,
        on_line: &(dyn Fn(LogItem) + Send + Sync),
        cancel: &CancellationToken,
    ) -> Result<Option<JobEnd>, ClusterFailure> {
        let name = &self.name;
        let config = watcher::Config::default();
        let mut job_events = watcher(
            self.jobs.clone(),
            config.clone().fields(&format!("metadata.name={name}")),
        )
        .default_backoff()
        .boxed();
        let mut pod_events = watcher(
            self.pods.clone(),
            config.labels(&format!("job-name={name}")),
        )
        .default_backoff()
        .boxed();
        let (line_tx, mut line_rx) = mpsc::unbounded_channel();
        let container_ended = Arc::new(AtomicBool::new(false));
        let mut following = false;
        let mut log_ended = false;
        let mut verdict: Option<(JobVerdict, Instant)> = None;
        let mut waiting: Option<(String, String)> = None;
        let mut started = false;
        let mut ended: Option<Terminated> = None;
        let mut gone: Option<(ClusterFailure, Instant)> = None;
        let mut tick = tokio::time::interval(Duration::from_millis(500));
        loop {
            tokio::select! {
                () = cancel.cancelled() => {
                    self.delete(true).await;
                    return Ok(None);
                }
                event = job_events.next() => match event {
                    Some(Ok(watcher::Event::Apply(job) | watcher::Event::InitApply(job))) => {
                        if verdict.is_none()
                            && let Some(v) = state::job_verdict(&job)
                        {
                            verdict = Some((v, Instant::now()));
                        }
                    }
                    Some(Ok(watcher::Event::Delete(_))) => return Err(ClusterFailure::JobDeleted),
                    Some(Ok(_)) => {}
                    Some(Err(e)) => self.watch_error(&e, "jobs.batch")?,
                    None => return Err(ClusterFailure::Unreachable { message: "the Job's watch ended".into() }),
                },
                event = pod_events.next() => match event {
                    Some(Ok(watcher::Event::Apply(pod) | watcher::Event::InitApply(pod))) => {
                        match state::pod_state(&pod) {
                            PodState::Waiting(why) => {
                                if let Some((reason, _)) = &why
                                    && state::hopeless(reason)
                                {
                                    return Err(state::not_started(why.as_ref()));
                                }
                                if why.is_some() && why != waiting {
                                    if let Some((reason, message)) = &why {
                                        on_line(LogItem::Waiting(reason.clone(), message.clone()));
                                    }
                                    waiting = why;
                                }
                            }
                            PodState::Running => started = true,
                            PodState::Ended(t) => {
                                started = true;
                                container_ended.store(true, Ordering::SeqCst);
                                ended = Some(t);
                            }
                            PodState::Lost(failure) => return Err(failure),
                        }
                        if started && !following {
                            following = true;
                            let pod_name = pod.metadata.name.clone().unwrap_or_default();
                            let flag = container_ended.clone();
                            tokio::spawn(follow::follow(
                                self.pods.clone(),
                                pod_name,
                                line_tx.clone(),
                                move || flag.load(Ordering::SeqCst),
                            ));
                        }
                    }
                    // The pod went before its container ended: its node is gone (or someone
                    // deleted it).
                    // (The Job's own verdict, e.g. its deadline, is waited for a moment: its
                    // controller deletes the pod too.)
                    Some(Ok(watcher::Event::Delete(pod))) if ended.is_none() && gone.is_none() => {
                        let failure = ClusterFailure::NodeLost {
                            reason: "PodDeleted".to_owned(),
                            message: format!(
                                "pod {} was deleted before its container ended",
                                pod.metadata.name.unwrap_or_default()
                            ),
                        };
                        gone = Some((failure, Instant::now()));
                    }
                    Some(Ok(_)) => {}
                    Some(Err(e)) => self.watch_error(&e, "pods")?,
                    None => return Err(ClusterFailure::Unreachable { message: "the pods' watch ended".into() }),
                },
                Some(item) = line_rx.recv() => {
                    log_ended |= item == LogItem::Ended;
                    on_line(item);
                }
                _ = tick.tick() => {}
            }
            let now = Instant::now();
            if let Some((JobVerdict::Failed { reason, message }, _)) = &verdict
                && reason == "DeadlineExceeded"
            {
                return Err(ClusterFailure::DeadlineExceeded {
                    seconds: self.deadline_s,
                    message: message.clone(),
                });
            }
            if let Some((failure, at)) = &gone
                && now.duration_since(*at) >= POD_GONE_GRACE
            {
                return Err(failure.clone());
            }
            if !started && verdict.is_none() && self.pending.expired(now) {
                return Err(state::not_started(waiting.as_ref()));
            }
            let Some((v, at)) = &verdict else { continue };
            let settled =
                (ended.is_some() && (log_ended || !following)) || now.duration_since(*at) >= SETTLE;
            if !settled {
                continue;
            }
            return match ended.take() {
                Some(t) => Ok(Some(JobEnd {
                    complete: *v == JobVerdict::Complete,
                    termination_message: t.message,
                    exit_code: t.exit_code,
                    reason: t.reason,
                })),
                None => match v {
                    JobVerdict::Complete => Err(ClusterFailure::NoResult {
                        reason: "Completed".into(),
                        exit_code: 0,
                    }),
                    JobVerdict::Failed { reason, message } => Err(ClusterFailure::NotStarted {
                        reason: reason.clone(),
                        message: message.clone(),
                    }),
                },
            };
        }
    }

    /// A watch error: RBAC refusals end the run; the rest the watcher gets past (re-list after
    /// `410 Gone`, resume after a cut, with back-off).
    fn watch_error(&self, e: &watcher::Error, resource: &str) -> Result<(), ClusterFailure> {
        tracing::debug!(%e, resource, "a watch of the task's Job was interrupted");
        match ClusterFailure::of_watch(e, resource, &self.ns) {
            Some(failure) => Err(failure),
            None => Ok(()),
        }
    }

    /// Deletes the Job with its pod (foreground: the Job goes once its pod is gone), and when
    /// `wait`, waits for it to be gone.
    async fn delete(&self, wait: bool) {
        match self
            .jobs
            .delete(&self.name, &DeleteParams::foreground())
            .await
        {
            Ok(_) => {}
            Err(kube::Error::Api(s)) if s.code == 404 => return,
            Err(e) => {
                tracing::warn!(%e, job = self.name, "the task's Job could not be deleted");
                return;
            }
        }
        if !wait {
            return;
        }
        let until = Instant::now() + DELETION_WAIT;
        while Instant::now() < until {
            match self.jobs.get_opt(&self.name).await {
                Ok(None) => return,
                Ok(Some(_)) => tokio::time::sleep(Duration::from_millis(200)).await,
                Err(e) => {
                    tracing::warn!(%e, job = self.name, "the task's Job's deletion could not be followed");
                    return;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::PERMISSIONS;

    /// `["a", "b"]` → `["a", "b"]`.
    fn list(line: &str) -> Vec<String> {
        let inside = line
            .split_once('[')
            .and_then(|(_, rest)| rest.rsplit_once(']'))
            .map(|(inside, _)| inside)
            .unwrap_or_default();
        inside
            .split(',')
            .map(|w| w.trim().trim_matches('"').to_owned())
            .filter(|w| !w.is_empty() || inside.trim() == "\"\"")
            .collect()
    }

    #[test]
    fn the_documented_role_grants_exactly_what_the_runner_uses() {
        let text = include_str!("../../../deploy/kubernetes/rbac.yaml");
        let mut rules = Vec::new();
        let mut lines = text.lines().map(str::trim);
        while let Some(line) = lines.next() {
            if let Some(groups) = line.strip_prefix("- apiGroups:") {
                let resources = lines.next().expect("resources line");
                let verbs = lines.next().expect("verbs line");
                assert!(resources.starts_with("resources:") && verbs.starts_with("verbs:"));
                for resource in list(resources) {
                    rules.push((list(groups).join(","), resource, list(verbs)));
                }
            }
        }
        let wanted: Vec<(String, String, Vec<String>)> = PERMISSIONS
            .iter()
            .map(|(g, r, v)| {
                (
                    (*g).to_owned(),
                    (*r).to_owned(),
                    v.iter().map(|v| (*v).to_owned()).collect(),
                )
            })
            .collect();
        assert_eq!(rules, wanted);
    }
}
