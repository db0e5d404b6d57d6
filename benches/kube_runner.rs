//! The Kubernetes runner's own cost: the same task run locally and as a Job on the test kit's
//! stand-in API server (its kubelet emulation runs the pod as the real `butler task run` on
//! this machine), in the same run — so the difference is what the runner adds: the base pushed
//! to a private ref, the Job created and watched, the pod's process with a fresh repository
//! and ledger, its log followed, the line pushed, fetched back and checked, the evidence
//! imported, the private refs deleted. Then eight tasks at once through the runner.
//!
//! Both sides run the same scripted agent (it waits `BUTLER_BENCH_AGENT_MS`, default 200, and
//! writes one file), one test command, sandbox off on both sides (this measures the runner,
//! not the sandbox). `cargo bench --bench benches -- kube_runner` (env `BUTLER_BENCH_RUNS`, default 5;
//! the side that runs first alternates; every task is discarded, untimed, before the next).
#![allow(clippy::print_stdout)]
// The agent is a shell script written here; Butler's own children go through
// `butler_worker::process`.
#![allow(clippy::disallowed_methods)]

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use butler_maid::agent::{AgentConfig, WorkerMcpCommand};
use butler_maid::{AgentKind, MaidContext, SandboxSettings};
use butler_testkit::World;
use butler_testkit::kube::{KubeStandIn, PodScript};
use butler_worker::config::{RunnerConfig, RunnerKind};

use crate::common::task::{agent, side_by_side};
use crate::common::{env_usize, median, ms};

const BUTLER: &str = env!("CARGO_BIN_EXE_butler");

pub fn main() {
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
            here.push(rt.block_on(side_by_side(&local, 1)));
            there.push(rt.block_on(side_by_side(&cluster, 1)));
        } else {
            there.push(rt.block_on(side_by_side(&cluster, 1)));
            here.push(rt.block_on(side_by_side(&local, 1)));
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
    let eight = rt.block_on(side_by_side(&cluster, 8));
    println!(
        "eight tasks at once through the runner: {:8.1} ms ({:.2}× one task; 2 cores here, the pods' processes share them)",
        ms(eight),
        eight.as_secs_f64() / t.as_secs_f64()
    );
}
