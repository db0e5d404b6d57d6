//! The sandbox's start-up cost per agent launch: `/bin/true` started directly, against
//! `/bin/true` started through `butler sandbox-exec --unconfined` (the reaper alone: become a
//! subreaper, start Butler's program again, which `exec`s) and through `butler sandbox-exec`
//! with a task's policy (the reaper, then the second stage reads the policy, builds the
//! Landlock ruleset with the worktree, the agent's directory, the devices and a TCP allow-list,
//! restricts, `exec`s), measured in the same run. The three are interleaved so machine noise
//! hits them alike.
//!
//! The deny list (credential stores left out of the read and write rules) is measured on a
//! home of 5,000 files and 200 directories beside the stores, and on a small one, against the
//! same helper without it and, when `BUTLER_BENCH_BEFORE` names a build of Butler from before
//! the deny list, against that helper (read everywhere) with the same policy.
//!
//! `cargo bench --bench benches -- sandbox_startup` (env `BUTLER_BENCH_RUNS`, default 200;
//! `BUTLER_BENCH_BEFORE`, optional).
#![allow(clippy::print_stdout)]
// It measures a raw spawn against a confined one: both started directly, as the Maid's
// supervisor would start them.
#![allow(clippy::disallowed_methods)]

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use butler_worker::sandbox::deny_read::{UserDirs, deny_list};
use butler_worker::sandbox::{Network, Policy, SandboxMode};

use crate::common::{env_usize, median, ms};

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

/// A user's home of `files` files and `dirs` directories (a few files each), beside the
/// credential stores a workstation has; returns it.
fn big_home(root: &std::path::Path, files: usize, dirs: usize) -> std::path::PathBuf {
    let home = root.join("home");
    for i in 0..dirs {
        let d = home.join(format!("dir{i:03}"));
        std::fs::create_dir_all(&d).expect("mkdir");
        std::fs::write(d.join("f"), "x").expect("write");
    }
    for i in 0..files {
        std::fs::write(home.join(format!("file{i:05}")), "x").expect("write");
    }
    for (rel, text) in [
        (".ssh/id_ed25519", "key"),
        (".aws/credentials", "key"),
        (".netrc", "machine"),
        (".git-credentials", "https://u:p@h"),
        (".config/gh/hosts.yml", "token"),
        (".config/butler/http-token", "token"),
        (".config/nvim/init.lua", "--"),
        (".cargo/credentials.toml", "token"),
        (".cargo/config.toml", "[build]"),
    ] {
        let path = home.join(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }
    home
}

fn as_strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

pub fn main() {
    let runs = env_usize("BUTLER_BENCH_RUNS", 200);
    let tmp = tempfile::tempdir().expect("tempdir");
    let home = big_home(tmp.path(), 5000, 200);
    let data = home.join(".local/share/butler/worktrees/p");
    let worktree = data.join("task-t1");
    let agent_dir = data.join("task-t1.agent");
    std::fs::create_dir_all(&worktree).expect("mkdir");
    std::fs::create_dir_all(&agent_dir).expect("mkdir");
    let mut policy = Policy::new(
        SandboxMode::Auto,
        vec![worktree, agent_dir],
        Network::Restricted {
            connect_tcp: vec![11434],
        },
    );
    let plain_policy = tmp.path().join("policy.json");
    policy.write_to(&plain_policy).expect("policy");
    let user = UserDirs {
        home: Some(home.clone()),
        ..UserDirs::default()
    };
    policy.deny_read = deny_list(&user, &[]).into_iter().map(|d| d.path).collect();
    let deny_policy = tmp.path().join("policy-deny.json");
    policy.write_to(&deny_policy).expect("policy");
    // The same denials in a small home: what the carving costs without 5,000 siblings.
    let small = tempfile::tempdir().expect("tempdir");
    let small_home = big_home(small.path(), 0, 0);
    policy.deny_read = deny_list(
        &UserDirs {
            home: Some(small_home),
            ..UserDirs::default()
        },
        &[],
    )
    .into_iter()
    .map(|d| d.path)
    .collect();
    let small_policy = tmp.path().join("policy-small.json");
    policy.write_to(&small_policy).expect("policy");

    let report = tmp.path().join("report.json");
    let report = report.to_string_lossy().into_owned();
    let args = |policy: &std::path::Path| -> Vec<String> {
        [
            "sandbox-exec",
            "--policy",
            &policy.to_string_lossy(),
            "--report",
            &report,
            "--",
            "/bin/true",
        ]
        .map(str::to_owned)
        .to_vec()
    };
    let (plain_args, deny_args, small_args) =
        (args(&plain_policy), args(&deny_policy), args(&small_policy));
    let (plain_args, deny_args, small_args) = (
        as_strs(&plain_args),
        as_strs(&deny_args),
        as_strs(&small_args),
    );
    let reaped_args = ["sandbox-exec", "--unconfined", "--", "/bin/true"];
    // Today's helper (read everywhere, one rule on `/`), when a build of it is named: the
    // program ignores the deny list it does not know.
    let before = std::env::var("BUTLER_BENCH_BEFORE").ok();
    // Warm the page cache for the programs.
    for _ in 0..5 {
        launch("/bin/true", &[]);
        launch(BUTLER, &reaped_args);
        launch(BUTLER, &plain_args);
        launch(BUTLER, &deny_args);
        launch(BUTLER, &small_args);
        if let Some(old) = &before {
            launch(old, &plain_args);
        }
    }
    let mut times: [Vec<Duration>; 6] = Default::default();
    for _ in 0..runs {
        times[0].push(launch("/bin/true", &[]));
        times[1].push(launch(BUTLER, &reaped_args));
        times[2].push(launch(BUTLER, &plain_args));
        times[3].push(launch(BUTLER, &small_args));
        times[4].push(launch(BUTLER, &deny_args));
        if let Some(old) = &before {
            times[5].push(launch(old, &plain_args));
        }
    }
    let text = std::fs::read_to_string(&report).expect("report");
    assert!(text.contains("\"enforcement\":\"full\""), "{text}");
    let [p, r, c, small, deny, old] = times.map(|t| {
        if t.is_empty() {
            Duration::ZERO
        } else {
            median(t)
        }
    });
    let ratio = |a: Duration, b: Duration| a.as_secs_f64() / b.as_secs_f64();
    println!("sandbox start-up, median of {runs} launches of /bin/true:");
    println!(
        "  unconfined:                              {:>7.3} ms",
        ms(p)
    );
    println!(
        "  under the reaper alone:                  {:>7.3} ms",
        ms(r)
    );
    if before.is_some() {
        println!(
            "  today's helper (read everywhere):        {:>7.3} ms",
            ms(old)
        );
    }
    println!(
        "  this helper, no deny list:               {:>7.3} ms",
        ms(c)
    );
    println!(
        "  this helper, deny list, small home:      {:>7.3} ms",
        ms(small)
    );
    println!(
        "  this helper, deny list, home of 5,200:   {:>7.3} ms",
        ms(deny)
    );
    println!(
        "  cost per launch (no deny list):          {:>7.3} ms ({:.1}x unconfined)",
        ms(c.saturating_sub(p)),
        ratio(c, p)
    );
    println!(
        "  deny list, home of 5,200 / no deny list: {:>7.2}x (+{:.3} ms)",
        ratio(deny, c),
        ms(deny.saturating_sub(c))
    );
    println!(
        "  deny list, small home / no deny list:    {:>7.2}x (+{:.3} ms)",
        ratio(small, c),
        ms(small.saturating_sub(c))
    );
    if before.is_some() {
        println!(
            "  deny list, home of 5,200 / today's:      {:>7.2}x (+{:.3} ms)",
            ratio(deny, old),
            ms(deny.saturating_sub(old))
        );
    }
}
