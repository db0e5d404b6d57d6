//! One whole implementation task for the task benchmarks: the request, the run (checked), the
//! discard (untimed), and the scripted agent that waits (a model's latency) and writes one file.

use std::path::Path;
use std::time::{Duration, Instant};

use butler_maid::contract::ImplementRequest;
use butler_maid::{MaidContext, Outcome};
use butler_orchestrator::implement::CancellationToken;

pub fn request(n: usize) -> ImplementRequest {
    ImplementRequest {
        goal: format!("Add bench {n}"),
        target_paths: vec!["src/".into()],
        test_commands: vec!["test -s src/bench.rs".into()],
        ..Default::default()
    }
}

/// Runs task `n` to its end, checks it succeeded, and returns its id.
pub async fn one_task(ctx: MaidContext, n: usize) -> String {
    let contract = butler_maid::prepare_task(&ctx, request(n), "bench")
        .await
        .expect("prepared");
    let id = contract.task_id.as_str().to_owned();
    let result = butler_maid::run_task(ctx, contract, &|_| {}, CancellationToken::new())
        .await
        .expect("runs");
    let evidence = result.implementation().expect("implementation evidence");
    assert_eq!(evidence.outcome, Outcome::Succeeded, "{result:#?}");
    id
}

/// Discards the tasks of a run (untimed), so every run starts from the same repository.
pub async fn discard(ctx: &MaidContext, ids: Vec<String>) {
    for id in ids {
        butler_maid::discard(&ctx.project_root, &id, ctx.clock.clone())
            .await
            .expect("discarded");
    }
}

/// Runs `tasks` tasks side by side to their ends; the time they took (their discard untimed).
pub async fn side_by_side(ctx: &MaidContext, tasks: usize) -> Duration {
    let t = Instant::now();
    let mut set = tokio::task::JoinSet::new();
    for n in 0..tasks {
        set.spawn(one_task(ctx.clone(), n));
    }
    let mut ids = Vec::new();
    while let Some(done) = set.join_next().await {
        ids.push(done.expect("a task panicked"));
    }
    let took = t.elapsed();
    discard(ctx, ids).await;
    took
}

/// Writes the scripted agent to `path`: it waits `wait_ms`, then writes `src/bench.rs`.
pub fn agent(path: &Path, wait_ms: usize) {
    let script = format!(
        "#!/bin/sh\nsleep {}.{:03}\nmkdir -p src && echo \"pub fn bench() {{}} // $PWD\" > src/bench.rs\n",
        wait_ms / 1000,
        wait_ms % 1000
    );
    butler_testkit::write_executable(path, script);
}
