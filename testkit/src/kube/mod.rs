//! A stand-in Kubernetes API server for the Kubernetes runner's tests: a small hyper server
//! speaking the part of the API the runner uses (Jobs in `batch/v1`; pods, their log) as the
//! real API server answers it, shapes checked against the pinned OpenAPI subset
//! (`testkit/kubernetes/api-subset.json`, see [`schema`]), with a kubelet emulation that runs
//! a created Job's pod as a local child process.
//!
//! ```ignore
//! let kube = KubeStandIn::start().await;
//! kube.add_secret("butler-model", BTreeMap::from([("ANTHROPIC_API_KEY".into(), "k".into())]));
//! kube.set_pods(move |_pod| PodScript::Run { program: butler.clone(), args: vec![], env });
//! let kubeconfig = kube.kubeconfig(dir.path());
//! ```
//!
//! - Endpoints: create/get/delete/list/watch `jobs` (group `batch`), get/list/watch `pods`,
//!   get `pods/{name}/log` (`container`, `follow`, `sinceTime`, `timestamps`, `limitBytes`,
//!   `tailLines`). Lists take `fieldSelector` (`metadata.name=`), `labelSelector` (`k=v`,
//!   `k!=v`, `k`), `limit`/`continue`; watches take `resourceVersion`, `allowWatchBookmarks`,
//!   `timeoutSeconds` and stream `{"type":…,"object":…}` lines.
//! - Errors are `Status` objects with the real reasons and messages (`NotFound`,
//!   `AlreadyExists`, RBAC's `Forbidden`, `BadRequest` for a Job outside the subset as strict
//!   field validation words it, a watch's 410 `Expired` ERROR event).
//! - The kubelet emulation is described at [`PodScript`].

mod clock;
mod kubelet;
pub mod schema;
mod server;
mod state;
mod status;
mod streams;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;
use tokio::task::JoinHandle;

pub use schema::{ApiSubset, Problem, ProblemKind};

use state::{Shared, Stop};

/// What a created pod does, chosen by the test's [`KubeStandIn::set_pods`] closure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PodScript {
    /// The container runs, as a local child process.
    ///
    /// The command line is `program`, then `args`, then the container's `command` after its
    /// first word, then the container's `args`: `program` stands for the image's entrypoint
    /// word (`butler` in `["butler", "task", "run"]`), so a test passes the built butler
    /// binary with no `args`, or `/bin/sh` with `["-c", "script"]` (the container's
    /// remaining words then become `$0`, `$1`, … of the script).
    ///
    /// The environment is built as a kubelet builds it, from nothing: `env` (the image's
    /// `ENV`; `PATH` is the host's when `env` has none), `HOSTNAME` (the pod's name), then
    /// the container's `envFrom` Secrets and `env` (plain values and `secretKeyRef`s), later
    /// entries winning. Every `emptyDir` and `secret` volume is a temp dir (a Secret's keys as
    /// files); an env value equal to a mount path, or under one, and `workingDir` are mapped
    /// into those dirs. `BUTLER_TERMINATION_LOG` names a temp file whose content becomes the
    /// container's `state.terminated.message` (with `FallbackToLogsOnError`: the log's last
    /// 80 lines / 2048 bytes when the file is empty and the exit code non-zero). Stdout and
    /// stderr are the pod's log. A missing Secret (or key) keeps the pod `Pending` with
    /// `CreateContainerConfigError` and the kubelet's message; a missing Secret volume keeps
    /// it `ContainerCreating`.
    ///
    /// The process leads its own process group, which stands for the container: when the
    /// Job is deleted or its deadline passes, the group gets SIGTERM, then SIGKILL after the
    /// pod's `terminationGracePeriodSeconds` (30 by default); when the main process ends,
    /// whatever it left running is killed.
    Run {
        /// The program standing for the image's entrypoint word.
        program: PathBuf,
        /// Arguments placed before the container's remaining words.
        args: Vec<String>,
        /// The image's environment (`ENV` lines).
        env: BTreeMap<String, String>,
    },
    /// The image cannot be pulled: waiting `ErrImagePull`, then `ImagePullBackOff`
    /// ("Back-off pulling image …"), until deleted or the deadline.
    ImagePullBackOff,
    /// No node fits: `PodScheduled` False, reason `Unschedulable`, "0/3 nodes are available:
    /// 3 Insufficient memory. …"; stays `Pending`.
    Unschedulable,
    /// The container starts, then is killed by the kernel: terminated, exit code 137, reason
    /// `OOMKilled`; the pod `Failed`.
    OomKilled,
    /// The kubelet evicts the pod: phase `Failed`, `status.reason` `Evicted`, "The node was
    /// low on resource: memory. …", a `DisruptionTarget` condition.
    Evicted,
    /// The node disappears: a `DisruptionTarget` condition with reason `DeletionByPodGC`
    /// ("PodGC: node no longer exists"), phase `Failed`.
    NodeLost,
    /// The container runs (no process) until the Job is deleted or its deadline passes.
    Hang,
}

/// A request as the stand-in received it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedRequest {
    /// `GET`, `POST`, `DELETE`, …
    pub method: String,
    /// The path, e.g. `/apis/batch/v1/namespaces/butler/jobs`.
    pub path: String,
    /// The query string as sent (percent-encoded), empty when none.
    pub query: String,
    /// The body, when it was JSON.
    pub body: Option<Value>,
}

impl RecordedRequest {
    /// The decoded query parameters, in order.
    pub fn query_pairs(&self) -> Vec<(String, String)> {
        url::form_urlencoded::parse(self.query.as_bytes())
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect()
    }

    /// The decoded value of query parameter `key`, when present.
    pub fn param(&self, key: &str) -> Option<String> {
        self.query_pairs()
            .into_iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
    }
}

/// The stand-in API server, listening on 127.0.0.1 until dropped (its pods' processes are
/// killed then).
pub struct KubeStandIn {
    shared: Arc<Shared>,
    addr: SocketAddr,
    server: JoinHandle<()>,
}

impl KubeStandIn {
    /// The namespace the stand-in serves (and its kubeconfig context names).
    pub const NAMESPACE: &'static str = "butler";
    /// The user every request is made as (RBAC messages name it).
    pub const USER: &'static str = "system:serviceaccount:butler:butler";
    /// The bearer token the kubeconfig carries.
    pub const TOKEN: &'static str = "stand-in-token";
    /// The kubeconfig's context, cluster and user name.
    pub const CONTEXT: &'static str = "standin";

    /// Starts the server on a free port of 127.0.0.1.
    pub async fn start() -> KubeStandIn {
        let shared = Arc::new(Shared::new(Self::NAMESPACE));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind the Kubernetes stand-in to 127.0.0.1");
        let addr = listener
            .local_addr()
            .expect("the stand-in's listener has an address");
        let server = tokio::spawn(server::serve(listener, Arc::clone(&shared)));
        KubeStandIn {
            shared,
            addr,
            server,
        }
    }

    /// `http://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The namespace served: [`KubeStandIn::NAMESPACE`].
    pub fn namespace(&self) -> &str {
        &self.shared.namespace
    }

    /// Writes `dir/kubeconfig`: one cluster (this server, plain http), one token user, one
    /// context [`KubeStandIn::CONTEXT`] (current) whose namespace is the stand-in's.
    pub fn kubeconfig(&self, dir: &Path) -> PathBuf {
        let path = dir.join("kubeconfig");
        let text = format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: {ctx}\n  cluster:\n    server: {url}\n\
             users:\n- name: {ctx}\n  user:\n    token: {token}\n\
             contexts:\n- name: {ctx}\n  context:\n    cluster: {ctx}\n    user: {ctx}\n    namespace: {ns}\n\
             current-context: {ctx}\n",
            ctx = Self::CONTEXT,
            url = self.url(),
            token = Self::TOKEN,
            ns = self.namespace(),
        );
        std::fs::write(&path, text).expect("write the stand-in's kubeconfig");
        path
    }

    /// Adds (or replaces) the Secret `name` with `data` (plain strings; pods see them as
    /// files and env values).
    pub fn add_secret(&self, name: &str, data: BTreeMap<String, String>) {
        self.shared.lock().secrets.insert(name.to_owned(), data);
    }

    /// Chooses what each created pod does; the closure gets the pod object as created.
    /// Without one, pods [`PodScript::Hang`].
    pub fn set_pods(&self, script: impl Fn(&Value) -> PodScript + Send + Sync + 'static) {
        self.shared.lock().pod_script = Some(Arc::new(script));
    }

    /// Makes RBAC refuse `verb` (`create`, `get`, `list`, `watch`, `delete`) on `resource`
    /// (`jobs`, `pods`, `pods/log`) with a 403 `Forbidden`.
    pub fn forbid(&self, verb: &str, resource: &str) {
        self.shared
            .lock()
            .forbidden
            .insert((verb.to_owned(), resource.to_owned()));
    }

    /// The Job bodies clients sent to create, as received (refused ones included).
    pub fn jobs(&self) -> Vec<Value> {
        self.shared.lock().received_jobs.clone()
    }

    /// Every request so far, in order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.lock().requests.clone()
    }

    /// The Job `name` as the stand-in holds it now.
    pub fn job(&self, name: &str) -> Option<Value> {
        self.shared.lock().jobs.get(name).cloned()
    }

    /// Every pod the stand-in holds now.
    pub fn pods(&self) -> Vec<Value> {
        self.shared.lock().pods.values().cloned().collect()
    }

    /// The log of pod `name` so far (stdout and stderr as the kubelet keeps them), when the
    /// pod has run.
    pub fn log(&self, pod: &str) -> Option<String> {
        let state = self.shared.lock();
        let log = state.logs.get(pod)?;
        let bytes: Vec<u8> = log
            .lines
            .iter()
            .flat_map(|(_, line)| line.iter().copied())
            .collect();
        Some(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// The next watch stream is cut (the connection dropped) after `events` events.
    pub fn cut_next_watch_after(&self, events: usize) {
        self.shared.lock().knobs.cut_watch_after = Some(events);
    }

    /// The next watch is answered as when its resourceVersion was compacted away: an
    /// `ERROR` event carrying a 410 `Expired` Status, then the end of the stream.
    pub fn expire_resource_versions(&self) {
        self.shared.lock().knobs.expire_next_watch = true;
    }

    /// The next log stream is cut (the connection dropped) after `bytes` bytes.
    pub fn cut_next_log_after(&self, bytes: usize) {
        self.shared.lock().knobs.cut_log_after = Some(bytes);
    }
}

impl Drop for KubeStandIn {
    fn drop(&mut self) {
        self.server.abort();
        let (controllers, groups) = {
            let mut state = self.shared.lock();
            (
                std::mem::take(&mut state.controllers),
                std::mem::take(&mut state.process_groups),
            )
        };
        kubelet::kill_groups(groups);
        for (_, controller) in controllers {
            controller.stop.send_replace(Stop::Deleting);
            if let Some(task) = controller.task {
                // Dropping the task drops its child, which is killed on drop.
                task.abort();
            }
        }
    }
}

/// A short random string of `len` characters from the alphabet Kubernetes uses for
/// generated names (`generateName`): lowercase consonants and digits without vowels or
/// look-alikes, `bcdfghjklmnpqrstvwxz2456789`.
fn random_suffix(len: usize) -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let mut bits = random_u64();
    (0..len)
        .map(|_| {
            let c = ALPHABET[(bits % ALPHABET.len() as u64) as usize];
            bits /= ALPHABET.len() as u64;
            c as char
        })
        .collect()
}

/// A random UID shaped as Kubernetes writes them (a UUID).
fn random_uid() -> String {
    let a = random_u64();
    let b = random_u64();
    format!(
        "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xffff,
        a & 0xfff,
        (b >> 48) & 0x3fff | 0x8000,
        b & 0xffff_ffff_ffff
    )
}

fn random_u64() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    hasher.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos(),
    );
    hasher.finish()
}
