//! The supervisor for synchronous callers (the git worker): the same [`supervise`], run on a
//! small runtime of its own while the calling thread waits.

use std::sync::OnceLock;
use std::sync::mpsc;

use tokio::runtime::Runtime;
use tokio_util::sync::CancellationToken;

use super::spawn::ChildSpec;
use super::supervise::{Limits, Supervised, supervise};

/// Runs `spec` under `limits` and blocks the calling thread until it ended. Works from any
/// thread, inside an async runtime or not (it never enters the caller's runtime, so a
/// single-threaded runtime cannot deadlock on it).
pub fn run_blocking(spec: ChildSpec, limits: Limits) -> Supervised {
    let (tx, rx) = mpsc::sync_channel(1);
    runtime().spawn(async move {
        let done = supervise(spec, &limits, &CancellationToken::new()).await;
        let _ = tx.send(done);
    });
    rx.recv()
        .expect("a supervision on the process runtime always sends its result")
}

/// The runtime synchronous callers' children are supervised on: two worker threads (pipes,
/// timers, reaping), started on first use and alive for the rest of the process.
fn runtime() -> &'static Runtime {
    static RUNTIME: OnceLock<Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("butler-children")
            .enable_all()
            .build()
            .expect("the children's runtime can be started")
    })
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::process::{ChildEnv, Ending};

    fn sh(script: &str) -> ChildSpec {
        let mut env = ChildEnv::new();
        env.set("PATH", "/usr/bin:/bin");
        ChildSpec::shell(script, std::env::temp_dir(), env)
    }

    #[test]
    fn runs_from_a_plain_thread() {
        let done = run_blocking(sh("echo hi; exit 3"), Limits::new(Duration::from_secs(10)));
        assert_eq!(done.ending, Ending::Exited { code: 3 });
        assert_eq!(done.stdout.text(), "hi\n");
    }

    #[tokio::test]
    async fn runs_from_inside_a_single_threaded_runtime() {
        let done = run_blocking(sh("echo hi"), Limits::new(Duration::from_secs(10)));
        assert_eq!(done.ending, Ending::Exited { code: 0 });
    }
}
