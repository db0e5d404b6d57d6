//! The crate's modules read as floors: a module only names modules below it. The test reads the
//! crate's own source (`butler_testkit::module_graph`, the reader every crate's test shares) and
//! fails when modules name each other, directly or round a loop — among the top-level modules,
//! and among the files of one directory (`work/record` and `work/conclude`, the hook's
//! `interpreters`, `programs` and `wrappers` once did).

use butler_testkit::module_graph::{crate_loops, module_edges};

#[test]
fn no_module_uses_one_that_uses_it_back() {
    let edges = module_edges(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    assert!(
        edges.get("server").is_some_and(|e| e.contains_key("work")),
        "the server's edges were read"
    );
    assert!(edges.contains_key("work/record"), "work/'s files were read");
    let (loops, shown) = crate_loops(env!("CARGO_MANIFEST_DIR"), "server");
    assert!(loops.is_empty(), "module loops:\n{shown}");
}
