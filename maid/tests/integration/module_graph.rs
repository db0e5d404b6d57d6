//! The Maid's modules read as floors: no module loop, between its top-level modules or between
//! the files of one directory (`run/attempt` and `run/inspect` once used each other).

use butler_testkit::module_graph::crate_loops;

#[test]
fn no_module_uses_one_that_uses_it_back() {
    let (loops, shown) = crate_loops(env!("CARGO_MANIFEST_DIR"), "run");
    assert!(loops.is_empty(), "module loops:\n{shown}");
}
