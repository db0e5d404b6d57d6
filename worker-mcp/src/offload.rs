//! Blocking work (git, SQLite, walking a tree) run off the async executor, on tokio's blocking
//! pool. Every caller's closure goes through one boxed job, so tokio's task machinery is
//! compiled once, not once per closure: the orchestrator alone had 117 copies of it, about a
//! tenth of its machine code.

use std::any::Any;
use std::fmt;
use std::sync::Mutex;

/// Runs `f` on the blocking pool and gives back its value, or how the job stopped without one.
pub fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> impl Future<Output = Result<T, Stopped>> + Send {
    value_of(run(Box::new(move || Box::new(f()) as Box<dyn Any + Send>)))
}

/// The job's value as the caller's type: generic over that type only, not over the closure,
/// and the future it awaits is the same for every caller.
async fn value_of<T: 'static>(
    job: impl Future<Output = Result<Box<dyn Any + Send>, Stopped>>,
) -> Result<T, Stopped> {
    let value = job.await?;
    value
        .downcast::<T>()
        .map(|value| *value)
        .map_err(|_| Stopped::new(None, "the job gave back a value of another type".into()))
}

/// The one place a job meets tokio's blocking pool.
async fn run(
    job: Box<dyn FnOnce() -> Box<dyn Any + Send> + Send>,
) -> Result<Box<dyn Any + Send>, Stopped> {
    tokio::task::spawn_blocking(job)
        .await
        .map_err(|e| match e.try_into_panic() {
            Ok(payload) => {
                let message = format!("panicked: {}", panic_message(payload.as_ref()));
                Stopped::new(Some(payload), message)
            }
            Err(e) => Stopped::new(None, e.to_string()),
        })
}

/// A job that ended without its value: it panicked, or the runtime shut down before it ran.
pub struct Stopped {
    /// Behind a lock only so that the error is `Sync`, as `std::io::Error` asks of a source.
    payload: Mutex<Option<Box<dyn Any + Send>>>,
    message: String,
}

impl Stopped {
    fn new(payload: Option<Box<dyn Any + Send>>, message: String) -> Stopped {
        Stopped {
            payload: Mutex::new(payload),
            message,
        }
    }

    /// Goes on as if the job's closure had run here: its panic continues in the caller.
    pub fn resume(self) -> ! {
        let payload = self
            .payload
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match payload {
            Some(payload) => std::panic::resume_unwind(payload),
            None => panic!("{}", self.message),
        }
    }
}

impl fmt::Display for Stopped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl fmt::Debug for Stopped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Stopped")
            .field("message", &self.message)
            .finish_non_exhaustive()
    }
}

impl std::error::Error for Stopped {}

/// A panic's message, when it carries one (`panic!` with a literal or a format).
fn panic_message(payload: &(dyn Any + Send)) -> &str {
    payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(no message)")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn values_come_back_from_many_jobs_at_once() {
        let jobs: Vec<_> = (0..64u64)
            .map(|i| tokio::spawn(blocking(move || (i, std::thread::current().id()))))
            .collect();
        let mut seen = Vec::new();
        for job in jobs {
            let (i, thread) = job.await.expect("join").expect("value");
            assert_ne!(thread, std::thread::current().id(), "ran off the caller");
            seen.push(i);
        }
        seen.sort_unstable();
        assert_eq!(seen, (0..64).collect::<Vec<_>>());
    }

    #[tokio::test]
    async fn a_panic_is_named_and_resumes_with_its_own_payload() {
        let n = std::hint::black_box(7);
        let stopped = blocking(move || -> u8 { panic!("the ledger is gone {n}") })
            .await
            .expect_err("it panicked");
        assert_eq!(stopped.to_string(), "panicked: the ledger is gone 7");
        let resumed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| stopped.resume()))
            .expect_err("resumed");
        assert_eq!(
            resumed.downcast_ref::<String>().map(String::as_str),
            Some("the ledger is gone 7"),
            "the payload itself, not a copy of its message"
        );
        let stopped = blocking(|| -> u8 { std::panic::panic_any(3_i32) })
            .await
            .expect_err("it panicked");
        assert_eq!(stopped.to_string(), "panicked: (no message)");
    }
}
