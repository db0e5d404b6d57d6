//! The sandbox's start-up cost per agent launch: `/bin/true` started directly, against
//! `/bin/true` started through `butler sandbox-exec --unconfined` (the reaper alone: become a
//! subreaper, start Butler's program again, which `exec`s) and through `butler sandbox-exec`
//! with a task's policy (the reaper, then the second stage reads the policy, builds the
//! Landlock ruleset with the worktree, the agent's directory, the devices and a TCP allow-list,
//! restricts, `exec`s), measured in the same run. The three are interleaved so machine noise
//! hits them alike.
//!
//! `cargo bench --bench sandbox_startup` (env `BUTLER_BENCH_RUNS`, default 200).
#![allow(clippy::print_stdout)]
// It measures a raw spawn against a confined one: both started directly, as the Maid's
// supervisor would start them.
#![allow(clippy::disallowed_methods)]

mod common;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use butler_worker::sandbox::{Network, Policy, SandboxMode};

use common::{env_usize, median, ms};

const BUTLER: &str = env!("CARGO_BIN_EXE_butler");

fn launch(program: &str, args: &[&str]) -> Duration {
    let t = Instant::now();
    let status = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("starts");
    let took = t.elapsed();
    assert!(status.success(), "{program} {args:?}: {status}");
    took
}

fn main() {
    let runs = env_usize("BUTLER_BENCH_RUNS", 200);
    let tmp = tempfile::tempdir().expect("tempdir");
    let worktree = tmp.path().join("task-t1");
    let agent_dir = tmp.path().join("task-t1.agent");
    std::fs::create_dir_all(&worktree).expect("mkdir");
    std::fs::create_dir_all(&agent_dir).expect("mkdir");
    let policy_file = tmp.path().join("policy.json");
    Policy::new(
        SandboxMode::Auto,
        vec![worktree, agent_dir],
        Network::Restricted {
            connect_tcp: vec![11434],
        },
    )
    .write_to(&policy_file)
    .expect("policy");
    let report = tmp.path().join("report.json");
    let policy = policy_file.to_string_lossy().into_owned();
    let report = report.to_string_lossy().into_owned();
    let confined_args = [
        "sandbox-exec",
        "--policy",
        &policy,
        "--report",
        &report,
        "--",
        "/bin/true",
    ];
    let reaped_args = ["sandbox-exec", "--unconfined", "--", "/bin/true"];
    // Warm the page cache for the programs.
    for _ in 0..5 {
        launch("/bin/true", &[]);
        launch(BUTLER, &reaped_args);
        launch(BUTLER, &confined_args);
    }
    let (mut plain, mut reaped, mut confined) = (
        Vec::with_capacity(runs),
        Vec::with_capacity(runs),
        Vec::with_capacity(runs),
    );
    for _ in 0..runs {
        plain.push(launch("/bin/true", &[]));
        reaped.push(launch(BUTLER, &reaped_args));
        confined.push(launch(BUTLER, &confined_args));
    }
    let text = std::fs::read_to_string(&report).expect("report");
    assert!(text.contains("\"enforcement\":\"full\""), "{text}");
    let (p, r, c) = (median(plain), median(reaped), median(confined));
    println!("sandbox start-up, median of {runs} launches of /bin/true:");
    println!("  unconfined:                 {:>7.3} ms", ms(p));
    println!("  under the reaper alone:     {:>7.3} ms", ms(r));
    println!("  through butler sandbox-exec: {:>7.3} ms", ms(c));
    println!(
        "  cost per launch:            {:>7.3} ms ({:.1}x)",
        ms(c.saturating_sub(p)),
        c.as_secs_f64() / p.as_secs_f64()
    );
}
