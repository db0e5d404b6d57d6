//! Which of the repository's hooks a git command ran, and which one ended it: read from git's
//! own trace2 event stream, so a refusal is attributed to the exact hook (`pre-commit`,
//! `commit-msg`, `pre-push`, …) whatever it printed.

use std::fs::File;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use super::command::GitCommand;

/// A private file that git's trace2 event stream is written to, alone in a private directory.
/// Dropping it removes the directory: a process git left running in the background (automatic
/// maintenance after a commit) that inherited the setting cannot then recreate the file.
pub(crate) struct HookTrace {
    dir: PathBuf,
    path: PathBuf,
}

/// What the trace says about hooks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct HooksRun {
    /// Every hook the top-level git process started, in order.
    pub ran: Vec<String>,
    /// The hook that exited non-zero, if one did.
    pub failed: Option<String>,
}

impl HookTrace {
    /// A fresh trace file (directory 0700, file 0600); `None` when none can be made (hooks
    /// then go unnamed).
    pub(crate) fn create() -> Option<HookTrace> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let name = format!(
            "butler-git-trace-{}-{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        );
        let dir = std::env::temp_dir().join(name);
        let _ = std::fs::remove_dir_all(&dir);
        let _ = std::fs::remove_file(&dir);
        let mut builder = std::fs::DirBuilder::new();
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder.create(&dir).ok()?;
        let path = dir.join("events");
        let mut options = File::options();
        options.write(true).create_new(true);
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        if options.open(&path).is_err() {
            let _ = std::fs::remove_dir_all(&dir);
            return None;
        }
        Some(HookTrace { dir, path })
    }

    /// `cmd` writing its events here.
    pub(crate) fn attach(trace: Option<&HookTrace>, cmd: GitCommand) -> GitCommand {
        match trace {
            Some(t) => cmd.env("GIT_TRACE2_EVENT", &t.path),
            None => cmd,
        }
    }

    /// The hooks of the command that ran.
    pub(crate) fn hooks(trace: Option<&HookTrace>) -> HooksRun {
        trace
            .and_then(|t| std::fs::read_to_string(&t.path).ok())
            .map(|events| hooks_in(&events))
            .unwrap_or_default()
    }
}

impl Drop for HookTrace {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Reads trace2 events: the top-level process (the first `sid`) started children of class
/// `hook`; which ran, and one that exited non-zero.
fn hooks_in(events: &str) -> HooksRun {
    let mut top_sid: Option<String> = None;
    let mut started = std::collections::HashMap::new();
    let mut run = HooksRun::default();
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
                    started.insert(id, name.to_string());
                    run.ran.push(name.to_string());
                }
            }
            Some("child_exit") => {
                let id = event["child_id"].as_i64();
                if event["code"].as_i64().unwrap_or(0) != 0
                    && let Some(name) = id.and_then(|id| started.get(&id))
                {
                    run.failed = Some(name.clone());
                }
            }
            _ => {}
        }
    }
    run
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_trace_leaves_nothing_behind_even_if_written_to_later() {
        let trace = HookTrace::create().expect("trace");
        let (dir, path) = (trace.dir.clone(), trace.path.clone());
        assert!(path.exists());
        drop(trace);
        assert!(!dir.exists());
        // A late writer (what a background git would do) cannot recreate it.
        assert!(
            std::fs::OpenOptions::new()
                .append(true)
                .create(true)
                .open(&path)
                .is_err()
        );
        assert!(!dir.exists());
    }

    #[test]
    fn failing_hook_of_the_top_process_is_found() {
        let events = r#"{"event":"version","sid":"A"}
{"event":"child_start","sid":"A","child_id":0,"child_class":"hook","hook_name":"pre-commit"}
{"event":"child_start","sid":"A/B","child_id":0,"child_class":"hook","hook_name":"other"}
{"event":"child_exit","sid":"A/B","child_id":0,"code":1}
{"event":"child_exit","sid":"A","child_id":0,"code":3}"#;
        let run = hooks_in(events);
        assert_eq!(run.failed, Some("pre-commit".into()));
        assert_eq!(run.ran, vec!["pre-commit".to_string()]);
        let ok = events.replace("\"code\":3", "\"code\":0");
        assert_eq!(hooks_in(&ok).failed, None);
    }
}
