//! The worker's modules and the loops among them. `agent_mcp` and `agent_notes` no longer use
//! each other (the notes file's limit lives with the notes); the loops listed here are the ones
//! still to untie (issue 21): a new loop, or a module drawn into one of these, fails the test,
//! and so does untying one without taking it off the list.

use butler_testkit::module_graph::crate_loops;

/// The loops left, each sorted.
const KNOWN: &[&[&str]] = &[];

#[test]
fn no_module_loop_beyond_the_known_ones() {
    let (loops, shown) = crate_loops(env!("CARGO_MANIFEST_DIR"), "ops");
    let known: Vec<Vec<String>> = KNOWN
        .iter()
        .map(|l| l.iter().map(|m| (*m).to_owned()).collect())
        .collect();
    assert_eq!(loops, known, "module loops:\n{shown}");
}
