//! The Maid's modules read as floors: no module loop, between its top-level modules or between
//! the files of one directory (`run/attempt` and `run/inspect` once used each other).

use std::path::Path;

use butler_testkit::module_graph::{explain, module_edges, module_loops};

#[test]
fn no_module_uses_one_that_uses_it_back() {
    let edges = module_edges(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    assert!(edges.contains_key("run"), "the sources were read");
    let loops = module_loops(&edges);
    let shown: String = loops
        .iter()
        .map(|l| format!("{}:\n{}", l.join(" <-> "), explain(&edges, l)))
        .collect();
    assert!(loops.is_empty(), "module loops:\n{shown}");
}
