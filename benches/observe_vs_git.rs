//! `work_observe` on a large repository, as a ratio to `git status --porcelain=v2 --branch`
//! measured in the same run.
//!
//! `cargo bench --bench benches -- observe_vs_git` (env `BUTLER_BENCH_FILES`, default 100000;
//! `BUTLER_BENCH_RUNS`, default 15). The repository gets 20 modified, 5 untracked and 3 deleted
//! files. Three figures: the git CLI, Butler's observation in-process (what the server does per
//! call), and a whole `work_observe` MCP round trip to a running `butler mcp` over stdio
//! (what the Brain waits for). A fourth and fifth: the operation log's snapshot before an
//! operation (`oplog_begin`), and completing the entry after it (`oplog_finish`: the second
//! snapshot; here nothing changed, so the entry is dropped again). Last, the log's size:
//! `BUTLER_BENCH_OPS` (default 20) logged operations that each change one file, and the bytes
//! of git objects they added.
#![allow(clippy::print_stdout)]
// The baseline of a benchmark is git spawned the plain way a person's shell does; Butler's
// own children go through `butler_worker::process`.
#![allow(clippy::disallowed_methods)]

use std::path::{Path, PathBuf};
use std::time::Instant;

use butler_orchestrator::client::BrainClient;
use butler_orchestrator::session::open_project;
use butler_orchestrator::work::observe::observe;
use butler_testkit::World;
use serde_json::json;

use crate::common::{env_usize, generate, median, ms, server_env};

/// The large repository with 20 modified, 5 untracked and 3 deleted files.
fn generate_with_changes(world: &World, files: usize) -> PathBuf {
    let dir = generate(world, files);
    for i in 0..20 {
        let p = dir.join(format!("d{:03}/f{:06}.txt", i * 7 / 1000, i * 7));
        std::fs::write(p, "changed\n").expect("modify");
    }
    for i in 0..5 {
        std::fs::write(dir.join(format!("new{i}.txt")), "new\n").expect("untracked");
    }
    for i in 0..3 {
        let k = files - 1 - i;
        std::fs::remove_file(dir.join(format!("d{:03}/f{k:06}.txt", k / 1000))).expect("delete");
    }
    // Let git refresh and save its index once, as any first status would.
    world.git(&dir, &["status", "--porcelain=v2", "--branch"]);
    dir
}

pub fn main() {
    let files = env_usize("BUTLER_BENCH_FILES", 100_000);
    let runs = env_usize("BUTLER_BENCH_RUNS", 15);
    let world = World::new();
    let t = Instant::now();
    let dir = generate_with_changes(&world, files);
    println!(
        "generated {files} files in {:.1} s",
        t.elapsed().as_secs_f64()
    );

    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let root = dir.to_string_lossy().into_owned();
    let clock = butler_worker::time::SystemClock::shared();
    let (project, _) = rt
        .block_on(open_project(
            &root,
            clock,
            std::sync::Arc::new(butler_worker::config::Environment::from_vars(server_env(
                &world,
            ))),
        ))
        .expect("session opens");
    let exe = Path::new(env!("CARGO_BIN_EXE_butler"));
    let brain = rt
        .block_on(BrainClient::spawn(exe, &dir, &server_env(&world)))
        .expect("server starts");
    rt.block_on(brain.call("work_session_start", json!({"project_root": root})))
        .expect("session");

    let (mut git_t, mut inproc_t, mut mcp_t) = (Vec::new(), Vec::new(), Vec::new());
    let (mut begin_t, mut finish_t) = (Vec::new(), Vec::new());
    let info = butler_worker::git::OpInfo {
        tool: "bench".into(),
        what: "nothing".into(),
        by: "bench".into(),
        at: 0,
        undoes: None,
    };
    for _ in 0..runs {
        let t = Instant::now();
        let out = world
            .git_command(&dir, &["status", "--porcelain=v2", "--branch"])
            .output()
            .expect("git status");
        assert!(out.status.success());
        git_t.push(t.elapsed());

        let t = Instant::now();
        let reply = rt.block_on(observe(&project));
        inproc_t.push(t.elapsed());
        assert_eq!(
            reply.data["changed_files"].as_array().map(Vec::len),
            Some(28)
        );

        let t = Instant::now();
        let a = rt
            .block_on(brain.call("work_observe", json!({})))
            .expect("observe");
        mcp_t.push(t.elapsed());
        assert_eq!(a.data()["work_state"], json!("dirty"));

        let lock = project.repo.lock_tree().expect("lock");
        let t = Instant::now();
        let begun = project
            .repo
            .oplog_begin(&lock, info.clone())
            .expect("snapshot");
        begin_t.push(t.elapsed());
        let t = Instant::now();
        let entry = project.repo.oplog_finish(&lock, begun).expect("finish");
        finish_t.push(t.elapsed());
        assert!(entry.is_none(), "nothing changed");
    }
    let (g, i, m) = (median(git_t), median(inproc_t), median(mcp_t));
    println!("median over {runs} runs on {files} files (20 modified, 5 untracked, 3 deleted):");
    println!("  git status --porcelain=v2 --branch  {:8.2} ms", ms(g));
    println!(
        "  work_observe in-process             {:8.2} ms  ratio {:.2}",
        ms(i),
        ms(i) / ms(g)
    );
    println!(
        "  work_observe MCP round trip         {:8.2} ms  ratio {:.2}",
        ms(m),
        ms(m) / ms(g)
    );
    let (b, f) = (median(begin_t), median(finish_t));
    println!(
        "  oplog snapshot before an operation  {:8.2} ms  ratio {:.2}",
        ms(b),
        ms(b) / ms(g)
    );
    println!(
        "  oplog entry completed after it      {:8.2} ms  ratio {:.2}",
        ms(f),
        ms(f) / ms(g)
    );
    let ops = env_usize("BUTLER_BENCH_OPS", 20);
    let objects = dir.join(".git/objects");
    let size_before = dir_size(&objects);
    for k in 0..ops {
        let lock = project.repo.lock_tree().expect("lock");
        let begun = project
            .repo
            .oplog_begin(&lock, info.clone())
            .expect("snapshot");
        std::fs::write(dir.join("d000/f000001.txt"), format!("op {k}\n")).expect("write");
        let entry = project.repo.oplog_finish(&lock, begun).expect("finish");
        assert!(entry.is_some(), "the change is logged");
    }
    let added = dir_size(&objects) - size_before;
    println!(
        "  oplog: {ops} operations changing one file added {:.1} KiB of objects ({:.1} KiB each, loose)",
        added as f64 / 1024.0,
        added as f64 / 1024.0 / ops as f64
    );
}

fn dir_size(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| match e.metadata() {
                    Ok(m) if m.is_dir() => dir_size(&e.path()),
                    Ok(m) => m.len(),
                    Err(_) => 0,
                })
                .sum()
        })
        .unwrap_or(0)
}
