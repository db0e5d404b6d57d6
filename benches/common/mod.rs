//! What the benchmarks share: hermetic git, a generated large repository, medians.
#![allow(dead_code)]
// The baseline of a benchmark is git spawned the plain way a person's shell does; Butler's
// own children go through `butler_worker::process`.
#![allow(clippy::disallowed_methods)]

use std::path::Path;
use std::process::Command;
use std::time::Duration;

pub fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Runs git in `dir` with the machine's configuration shut out, asserting success; its output
/// is captured, never mixed into the figures.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A repository of `files` small files in directories of 1000, all committed, with git's
/// index refreshed once (as any first status would).
pub fn generate(dir: &Path, files: usize) {
    git(dir, &["init", "-q", "-b", "main"]);
    git(dir, &["config", "user.name", "Bench"]);
    git(dir, &["config", "user.email", "bench@example.invalid"]);
    for i in 0..files {
        let sub = dir.join(format!("d{:03}", i / 1000));
        if i % 1000 == 0 {
            std::fs::create_dir_all(&sub).expect("mkdir");
        }
        std::fs::write(sub.join(format!("f{i:06}.txt")), format!("file {i}\n")).expect("write");
    }
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "generated"]);
    git(dir, &["status", "--porcelain"]);
}

pub fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
