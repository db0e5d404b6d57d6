//! The ImplementMaid's own overhead per attempt on a large repository, as a ratio to what the
//! same work costs with plain git: `git worktree add` + `git add -A` + `git commit`, measured in
//! the same run.
//!
//! `cargo bench --bench maid_overhead` (env `BUTLER_BENCH_FILES`, default 100000;
//! `BUTLER_BENCH_RUNS`, default 5). The Maid's figure is a whole one-attempt task (precheck,
//! task creation in the ledger, worktree, baseline, detection and restoration, the Brain's-tree
//! check, scope check, the Maid's record, verification with no test commands, the evidence in
//! the ledger) with a no-op agent that writes one file, minus that agent's own run time
//! (measured separately). Each side gets a fresh worktree per run; retiring it is not timed.
#![allow(clippy::print_stdout)]
// The baseline of a benchmark is git spawned the plain way a person's shell does; Butler's
// own children go through `butler_worker::process`.
#![allow(clippy::disallowed_methods)]

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use butler_maid::agent::{AgentConfig, WorkerMcpCommand};
use butler_maid::contract::ImplementRequest;
use butler_maid::{AgentKind, MaidContext, Outcome};
use butler_orchestrator::implement::CancellationToken;
use butler_testkit::World;

use common::{env_usize, generate, median, ms};

/// `git worktree add` + one file + `git add -A` + `git commit`, in a fresh worktree.
fn plain_git(world: &World, dir: &Path, scratch: &Path, run: usize) -> Duration {
    let wt = scratch.join(format!("plain-{run}"));
    let wt_arg = wt.to_string_lossy().into_owned();
    let branch = format!("plain-{run}");
    let t = Instant::now();
    world.git(
        dir,
        &["worktree", "add", "-q", "-b", &branch, &wt_arg, "HEAD"],
    );
    let took_add = t.elapsed();
    std::fs::create_dir_all(wt.join("src")).expect("mkdir");
    std::fs::write(wt.join("src/bench.rs"), "pub fn bench() {}\n").expect("write");
    let t = Instant::now();
    world.git(&wt, &["add", "-A"]);
    world.git(&wt, &["commit", "-q", "-m", "bench"]);
    let took = took_add + t.elapsed();
    world.git(dir, &["worktree", "remove", "--force", &wt_arg]);
    took
}

fn main() {
    let files = env_usize("BUTLER_BENCH_FILES", 100_000);
    let runs = env_usize("BUTLER_BENCH_RUNS", 5);
    let world = World::new();
    let t = Instant::now();
    let dir = generate(&world, files);
    println!(
        "generated {files} files in {:.1} s",
        t.elapsed().as_secs_f64()
    );

    // The no-op agent: writes one file in its working directory and exits.
    let agent = world.path("noop-agent");
    std::fs::write(
        &agent,
        "#!/bin/sh\nmkdir -p src && echo 'pub fn bench() {}' > src/bench.rs\n",
    )
    .expect("agent");
    std::fs::set_permissions(&agent, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let agent_runs: Vec<Duration> = (0..5)
        .map(|_| {
            let work = world.path("agent-probe");
            std::fs::create_dir_all(&work).expect("mkdir");
            let t = Instant::now();
            let status = Command::new(&agent)
                .current_dir(&work)
                .status()
                .expect("agent runs");
            assert!(status.success());
            t.elapsed()
        })
        .collect();
    let agent_time = median(agent_runs);

    let mut ctx = MaidContext::new(
        &dir,
        WorkerMcpCommand {
            program: "/bin/true".into(),
            args: vec!["worker-mcp".into()],
            env: vec![],
        },
    );
    ctx.agents.insert(
        AgentKind::Goose,
        AgentConfig {
            program: Some(agent.clone()),
            provider: Some("bench".into()),
            model: Some("bench".into()),
            ..Default::default()
        },
    );
    ctx.git_env = world.env.clone();
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let scratch = world.path("plain");
    std::fs::create_dir_all(&scratch).expect("mkdir");

    let mut plain = Vec::new();
    let mut maid = Vec::new();
    for run in 0..runs {
        plain.push(plain_git(&world, &dir, &scratch, run));
        let request = ImplementRequest {
            goal: "Add bench".into(),
            target_paths: vec!["src/".into()],
            ..Default::default()
        };
        let t = Instant::now();
        let result = rt.block_on(async {
            let contract = butler_maid::prepare_task(&ctx, request, "bench")
                .await
                .expect("prepared");
            butler_maid::run_task(ctx.clone(), contract, |_| {}, CancellationToken::new())
                .await
                .expect("runs")
        });
        let took = t.elapsed();
        let evidence = result.implementation().expect("implementation evidence");
        assert_eq!(evidence.outcome, Outcome::Succeeded, "{result:#?}");
        assert_eq!(evidence.attempts.len(), 1);
        maid.push(took.saturating_sub(agent_time));
        let discarded = butler_maid::discard(&dir, result.task_id.as_str(), ctx.clock.clone());
        rt.block_on(discarded).expect("discard");
    }
    let (p, m) = (median(plain), median(maid));
    println!("runs: {runs}, files: {files}");
    println!(
        "plain git (worktree add + add -A + commit): {:9.1} ms (median)",
        ms(p)
    );
    println!(
        "Maid overhead per attempt:                  {:9.1} ms (median; agent's own {:.1} ms taken out)",
        ms(m),
        ms(agent_time)
    );
    println!(
        "ratio Maid / plain git:                     {:9.2}  (target <= 1.2)",
        m.as_secs_f64() / p.as_secs_f64()
    );
}
