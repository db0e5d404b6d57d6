//! Butler's benchmarks, one program: `cargo bench --bench benches -- <name>` runs one (several
//! names run one after another; none lists them). One program links the workspace once, where
//! nine linked it nine times in every build of the tests (`.ci/run` builds the benchmarks too,
//! so they are linted and proved to build). Each prints its figures as ratios against the git
//! CLI or the raw alternative measured in the same run; its module says what it measures.
#![allow(clippy::print_stdout)]

mod common;

mod brain_bytes;
mod egress_proxy;
mod hook_vs_git;
mod kube_runner;
mod maid_overhead;
mod observe_vs_git;
mod parallel_tasks;
mod sandbox_startup;
mod secret_scan;

/// Every benchmark by name.
const BENCHMARKS: &[(&str, fn())] = &[
    ("brain_bytes", brain_bytes::main),
    ("egress_proxy", egress_proxy::main),
    ("hook_vs_git", hook_vs_git::main),
    ("kube_runner", kube_runner::main),
    ("maid_overhead", maid_overhead::main),
    ("observe_vs_git", observe_vs_git::main),
    ("parallel_tasks", parallel_tasks::main),
    ("sandbox_startup", sandbox_startup::main),
    ("secret_scan", secret_scan::main),
];

fn main() {
    // Cargo adds `--bench`; flags are not names.
    let asked: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let mut chosen = Vec::new();
    for name in &asked {
        match BENCHMARKS.iter().find(|(known, _)| known == name) {
            Some(bench) => chosen.push(bench),
            None => {
                eprintln!("no benchmark {name:?}");
                list();
                std::process::exit(2);
            }
        }
    }
    if chosen.is_empty() {
        list();
    }
    for (name, run) in chosen {
        println!("== {name}");
        run();
    }
}

fn list() {
    eprintln!("usage: cargo bench --bench benches -- <name>…; the benchmarks:");
    for (name, _) in BENCHMARKS {
        eprintln!("  {name}");
    }
}
