//! Recording: `git add -A` then `git commit -F -`, with the repository's hooks running as they
//! would for a person, and every way it can fail classified.

use std::fs::File;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use super::GitRepo;
use super::command::{GitCommand, GitOutput};
use super::error::{GitError, redact_credentials};
use super::lock::TreeLock;
use crate::process::tail_of;

/// Hooks may run linters and tests.
const RECORD_TIMEOUT: Duration = Duration::from_secs(600);
/// How much hook output goes back to the caller.
const HOOK_OUTPUT_TAIL: usize = 2 << 10;

impl GitRepo {
    /// Saves every change (tracked and untracked, ignore rules respected) as one commit with
    /// `message` (kept verbatim apart from surrounding whitespace: lines starting with `#`
    /// survive). Returns the new commit's full id.
    ///
    /// Errors: `NothingToRecord`; `NoIdentity` (git has no user name/email); `HookRejected`
    /// (a `pre-commit`, `commit-msg`, … hook refused; with its output tail); `IndexLocked`
    /// (something that is not Butler kept the index locked); `ButlerBusy`; `Failed`. Takes
    /// Butler's lock on this working tree for the time it runs.
    pub fn record_all(&self, message: &str) -> Result<String, GitError> {
        let held = self.lock_tree()?;
        self.record_all_held(&held, message)
    }

    /// [`GitRepo::record_all`] for a caller that holds the working tree's lock already (to do
    /// more under it, such as journaling the record).
    pub fn record_all_held(&self, held: &TreeLock, message: &str) -> Result<String, GitError> {
        self.wait_for_index(held)?;
        let add = GitCommand::new(self, "add")
            .args(["add", "-A"])
            .timeout(RECORD_TIMEOUT)
            .run()?;
        if !add.status.success() {
            return Err(self.classify("add", &add, None));
        }
        let trace = TraceFile::create();
        let mut commit = GitCommand::new(self, "commit")
            .args(["commit", "--cleanup=whitespace", "-F", "-"])
            .stdin(message.as_bytes().to_vec())
            .timeout(RECORD_TIMEOUT);
        if let Some(trace) = &trace {
            commit = commit.env("GIT_TRACE2_EVENT", &trace.path);
        }
        let out = commit.run()?;
        if !out.status.success() {
            let failed_hook = trace.as_ref().and_then(TraceFile::failed_hook);
            return Err(self.classify("commit", &out, failed_hook));
        }
        let repo = self.open()?;
        let head = repo
            .head()?
            .target()
            .ok_or_else(|| GitError::failed("commit", "no HEAD"))?;
        Ok(head.to_string())
    }

    fn classify(&self, op: &'static str, out: &GitOutput, failed_hook: Option<String>) -> GitError {
        let stderr = out.stderr_tail.as_str();
        let stdout = String::from_utf8_lossy(&out.stdout);
        if let Some(lock_path) = locked_index(stderr) {
            let age = std::fs::metadata(&lock_path)
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.elapsed().ok());
            return GitError::IndexLocked { lock_path, age };
        }
        if stderr.contains("Please tell me who you are")
            || stderr.contains("unable to auto-detect email address")
            || stderr.contains("empty ident name")
            || stderr.contains("no email was given")
        {
            return GitError::NoIdentity;
        }
        if let Some(hook) = failed_hook {
            return GitError::HookRejected {
                hook: Some(hook),
                output_tail: redact_credentials(tail_of(stderr, HOOK_OUTPUT_TAIL)),
            };
        }
        if op == "commit"
            && [
                "nothing to commit",
                "nothing added to commit",
                "no changes added to commit",
            ]
            .iter()
            .any(|s| stdout.contains(s) || stderr.contains(s))
        {
            return GitError::NothingToRecord;
        }
        tracing::warn!(op, detail = %out.detail(), "recording failed");
        GitError::failed(op, out.detail())
    }
}

/// `fatal: Unable to create '/x/.git/index.lock': File exists.` → the lock path.
fn locked_index(stderr: &str) -> Option<PathBuf> {
    let line = stderr
        .lines()
        .find(|l| l.contains("index.lock") && l.contains("File exists"))?;
    let start = line.find('\'')? + 1;
    let end = start + line[start..].find('\'')?;
    Some(PathBuf::from(&line[start..end]))
}

/// A private file that git's trace2 event stream is written to, so the hook that ended a
/// commit can be named exactly. Removed on drop.
struct TraceFile {
    path: PathBuf,
}

impl TraceFile {
    fn create() -> Option<TraceFile> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let name = format!(
            "butler-git-trace-{}-{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        );
        let path = std::env::temp_dir().join(name);
        let _ = std::fs::remove_file(&path);
        let mut options = File::options();
        options.write(true).create_new(true);
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        options.open(&path).ok()?;
        Some(TraceFile { path })
    }

    /// The hook whose non-zero exit ended the top-level git process.
    fn failed_hook(&self) -> Option<String> {
        failed_hook_in(&std::fs::read_to_string(&self.path).ok()?)
    }
}

impl Drop for TraceFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Reads trace2 events: the top-level process (the first `sid`) started children of class
/// `hook`; returns the name of one that exited non-zero.
fn failed_hook_in(events: &str) -> Option<String> {
    let mut top_sid: Option<String> = None;
    let mut hooks = std::collections::HashMap::new();
    let mut failed = None;
    for line in events.lines() {
        let Ok(event) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let sid = event["sid"].as_str().unwrap_or_default();
        let top = top_sid.get_or_insert_with(|| sid.to_string());
        if sid != top {
            continue;
        }
        match event["event"].as_str() {
            Some("child_start") if event["child_class"] == "hook" => {
                if let (Some(id), Some(name)) =
                    (event["child_id"].as_i64(), event["hook_name"].as_str())
                {
                    hooks.insert(id, name.to_string());
                }
            }
            Some("child_exit") => {
                let id = event["child_id"].as_i64();
                if event["code"].as_i64().unwrap_or(0) != 0
                    && let Some(name) = id.and_then(|id| hooks.get(&id))
                {
                    failed = Some(name.clone());
                }
            }
            _ => {}
        }
    }
    failed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_lock_path_is_read_from_the_message() {
        let err =
            "fatal: Unable to create '/r/.git/index.lock': File exists.\n\nAnother git process";
        assert_eq!(locked_index(err), Some(PathBuf::from("/r/.git/index.lock")));
    }

    #[test]
    fn failing_hook_of_the_top_process_is_found() {
        let events = r#"{"event":"version","sid":"A"}
{"event":"child_start","sid":"A","child_id":0,"child_class":"hook","hook_name":"pre-commit"}
{"event":"child_start","sid":"A/B","child_id":0,"child_class":"hook","hook_name":"other"}
{"event":"child_exit","sid":"A/B","child_id":0,"code":1}
{"event":"child_exit","sid":"A","child_id":0,"code":3}"#;
        assert_eq!(failed_hook_in(events), Some("pre-commit".into()));
        let ok = events.replace("\"code\":3", "\"code\":0");
        assert_eq!(failed_hook_in(&ok), None);
    }
}
