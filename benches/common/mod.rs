//! What the benchmarks share beyond the test kit's world: a generated large repository, the
//! server's environment, medians.
#![allow(dead_code)]
// The baseline of a benchmark is git spawned the plain way a person's shell does; Butler's
// own children go through `butler_worker::process`.
#![allow(clippy::disallowed_methods)]

pub mod task;

use std::path::PathBuf;
use std::time::Duration;

use butler_testkit::World;

pub fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A repository `big` in `world` of `files` small files in directories of 1000, all committed,
/// with git's index refreshed once (as any first status would); returns its path.
///
/// Automatic gc and maintenance are off: the commit of that many loose objects would otherwise
/// start git's background gc, which then competes with whatever is measured first.
pub fn generate(world: &World, files: usize) -> PathBuf {
    let dir = world.init("big");
    world.git(&dir, &["config", "gc.auto", "0"]);
    world.git(&dir, &["config", "maintenance.auto", "false"]);
    for i in 0..files {
        let sub = dir.join(format!("d{:03}", i / 1000));
        if i % 1000 == 0 {
            std::fs::create_dir_all(&sub).expect("mkdir");
        }
        std::fs::write(sub.join(format!("f{i:06}.txt")), format!("file {i}\n")).expect("write");
    }
    world.commit(&dir, "generated");
    world.git(&dir, &["status", "--porcelain"]);
    dir
}

/// What a benchmark's `butler mcp` is started with: the world's environment and the embedded
/// issue store.
pub fn server_env(world: &World) -> Vec<(String, String)> {
    let mut env = world.env.clone();
    env.push(("BUTLER_ISSUE_BACKEND".into(), "local".into()));
    env
}

pub fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
