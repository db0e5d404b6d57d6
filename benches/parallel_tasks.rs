//! Parallel tasks: four implementation tasks on one project run side by side, against the same
//! four run one after another, in the same run. Each task is whole (precheck, task in the
//! ledger, worktree, baseline, the agent, detection, the Maid's record, one test command, the
//! evidence); the scripted agent waits `BUTLER_BENCH_AGENT_MS` (default 1000, standing in for a
//! model's latency) and writes one file.
//!
//! `cargo bench --bench benches -- parallel_tasks` (env `BUTLER_BENCH_RUNS`, default 3; `BUTLER_BENCH_TASKS`,
//! default 4). The side that runs first alternates per round; each run's tasks are discarded
//! (untimed) before the next.
#![allow(clippy::print_stdout)]
// The agent is a shell script written here; Butler's own children go through
// `butler_worker::process`.
#![allow(clippy::disallowed_methods)]

use std::time::{Duration, Instant};

use butler_maid::agent::{AgentConfig, WorkerMcpCommand};
use butler_maid::{AgentKind, MaidContext, SandboxSettings};
use butler_testkit::World;

use crate::common::task::{agent, discard, one_task, side_by_side};
use crate::common::{env_usize, median, ms};

async fn sequential(ctx: &MaidContext, tasks: usize) -> Duration {
    let t = Instant::now();
    let mut ids = Vec::new();
    for n in 0..tasks {
        ids.push(one_task(ctx.clone(), n).await);
    }
    let took = t.elapsed();
    discard(ctx, ids).await;
    took
}

pub fn main() {
    let runs = env_usize("BUTLER_BENCH_RUNS", 3);
    let tasks = env_usize("BUTLER_BENCH_TASKS", 4);
    let wait_ms = env_usize("BUTLER_BENCH_AGENT_MS", 1000);
    let world = World::committed(&[("src/lib.rs", "pub fn one() -> i32 { 1 }\n")]);
    let program = world.path("scripted-agent");
    agent(&program, wait_ms);
    let mut ctx = MaidContext::new(
        &world.project,
        WorkerMcpCommand {
            program: "/bin/true".into(),
            args: vec!["worker-mcp".into()],
            env: vec![],
        },
    );
    ctx.agents.insert(
        AgentKind::Goose,
        AgentConfig {
            program: Some(program),
            provider: Some("bench".into()),
            model: Some("bench".into()),
            ..Default::default()
        },
    );
    ctx.git_env = world.env.clone();
    ctx.sandbox = SandboxSettings::off();
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let (mut seq, mut par) = (Vec::new(), Vec::new());
    // Which side runs first alternates from round to round.
    for round in 0..runs {
        if round % 2 == 0 {
            seq.push(rt.block_on(sequential(&ctx, tasks)));
            par.push(rt.block_on(side_by_side(&ctx, tasks)));
        } else {
            par.push(rt.block_on(side_by_side(&ctx, tasks)));
            seq.push(rt.block_on(sequential(&ctx, tasks)));
        }
    }
    let (s, p) = (median(seq), median(par));
    println!("runs: {runs}, tasks: {tasks}, agent wait: {wait_ms} ms");
    println!("{tasks} tasks one after another: {:9.1} ms (median)", ms(s));
    println!("{tasks} tasks side by side:      {:9.1} ms (median)", ms(p));
    println!(
        "ratio side by side / one after another: {:.2}  (1/{tasks} = {:.2} is perfect overlap)",
        p.as_secs_f64() / s.as_secs_f64(),
        1.0 / tasks as f64
    );
}
