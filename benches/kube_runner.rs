//! The Kubernetes runner's own cost: the same task run locally and as a Job on the test kit's
//! stand-in API server (its kubelet emulation runs the pod as the real `butler task run` on
//! this machine), in the same run — so the difference is what the runner adds: the base pushed
//! to a private ref, the Job created and watched, the pod's process with a fresh repository
//! and ledger, its log followed, the line pushed, fetched back and checked, the evidence
//! imported, the private refs deleted. Then eight tasks at once through the runner.
//!
//! Both sides run the same scripted agent (it waits `BUTLER_BENCH_AGENT_MS`, default 200, and
//! writes one file), one test command, sandbox off on both sides (this measures the runner,
//! not the sandbox). `cargo bench --bench kube_runner` (env `BUTLER_BENCH_RUNS`, default 5;
//! the side that runs first alternates; every task is discarded, untimed, before the next).
#![allow(clippy::print_stdout)]
// The agent is a shell script written here; Butler's own children go through
// `butler_worker::process`.
#![allow(clippy::disallowed_methods)]

mod common;

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use butler_maid::agent::{AgentConfig, WorkerMcpCommand};
use butler_maid::contract::ImplementRequest;
use butler_maid::{AgentKind, MaidContext, Outcome, SandboxSettings};
use butler_orchestrator::implement::CancellationToken;
use butler_testkit::World;
use butler_testkit::kube::{KubeStandIn, PodScript};
use butler_worker::config::{RunnerConfig, RunnerKind};

use common::{env_usize, median, ms};

const BUTLER: &str = env!("CARGO_BIN_EXE_butler");

fn request(n: usize) -> ImplementRequest {
    ImplementRequest {
        goal: format!("Add bench {n}"),
        target_paths: vec!["src/".into()],
        test_commands: vec!["test -s src/bench.rs".into()],
        ..Default::default()
    }
}

/// Runs one task to its end (checked), returns its id.
async fn one_task(ctx: MaidContext, n: usize) -> String {
    let contract = butler_maid::prepare_task(&ctx, request(n), "bench")
        .await
        .expect("prepared");
    let id = contract.task_id.as_str().to_owned();
    let result = butler_maid::run_task(ctx, contract, |_| {}, CancellationToken::new())
        .await
        .expect("runs");
    let evidence = result.implementation().expect("implementation evidence");
    assert_eq!(evidence.outcome, Outcome::Succeeded, "{result:#?}");
    id
}

async fn timed(ctx: &MaidContext, tasks: usize) -> Duration {
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
    for id in ids {
        butler_maid::discard(&ctx.project_root, &id, ctx.clock.clone())
            .await
            .expect("discarded");
    }
    took
}

fn agent(path: &Path, wait_ms: usize) {
    let script = format!(
        "#!/bin/sh\nsleep {}.{:03}\nmkdir -p src && echo \"pub fn bench() {{}} // $PWD\" > src/bench.rs\n",
        wait_ms / 1000,
        wait_ms % 1000
    );
    std::fs::write(path, script).expect("agent");
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

fn main() {
    let runs = env_usize("BUTLER_BENCH_RUNS", 5);
    let wait_ms = env_usize("BUTLER_BENCH_AGENT_MS", 200);
    let world = World::published();
    let program = world.path("scripted-agent");
    agent(&program, wait_ms);
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let kube = rt.block_on(KubeStandIn::start());
    let kubeconfig = kube.kubeconfig(world.tmp.path());
    // The pod's image: the built butler, the scripted agent as goose, the world's git settings.
    let mut image: BTreeMap<String, String> = world
        .env
        .iter()
        .filter(|(k, _)| k.starts_with("GIT_") || k == "LC_ALL")
        .cloned()
        .collect();
    for (k, v) in [
        ("PATH", std::env::var("PATH").expect("PATH")),
        (
            "BUTLER_GOOSE_PROGRAM",
            program.to_string_lossy().into_owned(),
        ),
        ("BUTLER_GOOSE_PROVIDER", "bench".into()),
        ("BUTLER_GOOSE_MODEL", "bench".into()),
    ] {
        image.insert(k.to_owned(), v);
    }
    kube.set_pods(move |_| PodScript::Run {
        program: PathBuf::from(BUTLER),
        args: Vec::new(),
        env: image.clone(),
    });

    let mut local = MaidContext::new(
        &world.project,
        WorkerMcpCommand {
            program: BUTLER.into(),
            args: vec!["worker-mcp".into()],
            env: vec![],
        },
    );
    local.agents.insert(
        AgentKind::Goose,
        AgentConfig {
            program: Some(program.clone()),
            provider: Some("bench".into()),
            model: Some("bench".into()),
            ..Default::default()
        },
    );
    local.git_env = world.env.clone();
    local.sandbox = SandboxSettings::off();
    let mut cluster = local.clone();
    cluster.runner = RunnerConfig {
        kind: RunnerKind::Kubernetes,
        image: Some("butler-bench:local".into()),
        destination: Some(format!("file://{}", world.shared.display())),
        env: BTreeMap::from([("BUTLER_SANDBOX".to_owned(), "off".to_owned())]),
        ..RunnerConfig::default()
    };
    cluster
        .parent_env
        .push(("KUBECONFIG".into(), kubeconfig.into_os_string()));

    let (mut here, mut there) = (Vec::new(), Vec::new());
    for round in 0..runs {
        if round % 2 == 0 {
            here.push(rt.block_on(timed(&local, 1)));
            there.push(rt.block_on(timed(&cluster, 1)));
        } else {
            there.push(rt.block_on(timed(&cluster, 1)));
            here.push(rt.block_on(timed(&local, 1)));
        }
    }
    let (h, t) = (median(here.clone()), median(there.clone()));
    let spread = |v: &[Duration]| {
        let min = v.iter().min().copied().unwrap_or_default();
        let max = v.iter().max().copied().unwrap_or_default();
        format!("{:.0}–{:.0}", ms(min), ms(max))
    };
    println!("runs: {runs}, agent wait: {wait_ms} ms, sandbox off on both sides");
    println!(
        "one task, local runner:       {:8.1} ms (median; {} ms)",
        ms(h),
        spread(&here)
    );
    println!(
        "one task, Kubernetes runner:  {:8.1} ms (median; {} ms)",
        ms(t),
        spread(&there)
    );
    println!(
        "the runner's own cost per task: {:+.1} ms; ratio Kubernetes / local: {:.2}",
        ms(t) - ms(h),
        t.as_secs_f64() / h.as_secs_f64()
    );
    let eight = rt.block_on(timed(&cluster, 8));
    println!(
        "eight tasks at once through the runner: {:8.1} ms ({:.2}× one task; 2 cores here, the pods' processes share them)",
        ms(eight),
        eight.as_secs_f64() / t.as_secs_f64()
    );
}
