//! The worker's modules read as floors: no module loop, between its top-level modules or between
//! the files of one directory. From the bottom: `process`; `sandbox` on it; `config` and the
//! `contract` (a taught procedure's steps, record ids and what the agent did to git among it)
//! on the sandbox; `ledger` on the contract, `record` on the ledger, `git` on the record;
//! `issues`, `secrets` and `ops` at the top. Most of them once reached one another, and so did
//! `git/hardened` and `git/task`, `ops/engine` and `ops/runner`, `process/spawn` and
//! `process/supervise` (issue 21).

use butler_testkit::module_graph::crate_loops;

#[test]
fn no_module_uses_one_that_uses_it_back() {
    let (loops, shown) = crate_loops(env!("CARGO_MANIFEST_DIR"), "ops");
    assert!(loops.is_empty(), "module loops:\n{shown}");
}
