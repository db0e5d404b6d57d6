//! Which module of a crate stands on which: the edges `use crate::<module>` / `crate::<module>::`
//! between a crate's top-level modules, and `super::<file>` / `crate::<dir>::<file>` between
//! the files of one directory, read from the sources; and the loops among them. A crate's test
//! asserts its modules read as floors (no loop), so a loop that comes back fails a test.
//!
//! Test code (`tests.rs`, `mod tests { … }` after `#[cfg(test)]`) is left out, as are comments.
//! A path through a re-export (`super::Progress` re-exported by `mod.rs`) is not followed.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Module → the modules it uses, with the files that make each edge.
pub type Edges = BTreeMap<String, BTreeMap<String, BTreeSet<String>>>;

/// The edges of the crate whose sources are in `src` (`CARGO_MANIFEST_DIR/src`). Top-level
/// modules are named by their file or directory (`run`); the files of a directory as `run/attempt`.
pub fn module_edges(src: &Path) -> Edges {
    let mut edges = Edges::new();
    let mut files = Vec::new();
    collect(src, &mut files);
    for file in files {
        let rel = file
            .strip_prefix(src)
            .expect("under src")
            .with_extension("")
            .to_string_lossy()
            .into_owned();
        let parts: Vec<&str> = rel.split('/').collect();
        let top = parts[0];
        if matches!(top, "lib" | "main" | "bin") || parts.contains(&"tests") {
            continue;
        }
        let text = std::fs::read_to_string(&file).expect("readable source");
        let text = code_only(&text);
        let mut add = |from: String, to: String| {
            edges
                .entry(from)
                .or_default()
                .entry(to)
                .or_default()
                .insert(rel.clone());
        };
        for name in names_after(&text, "crate::") {
            if name != top && is_module(src, &name) {
                add(top.to_owned(), name);
            }
        }
        // A file of a directory (not its `mod.rs`, the directory's own face).
        let Some(&own) = parts.get(1) else { continue };
        if own == "mod" {
            continue;
        }
        let dir = src.join(top);
        let sibling = |name: &str| {
            name != own && (dir.join(format!("{name}.rs")).is_file() || dir.join(name).is_dir())
        };
        let mut inner: BTreeSet<String> = BTreeSet::new();
        if parts.len() == 2 {
            inner.extend(names_after(&text, "super::"));
        }
        inner.extend(names_after(&text, &format!("crate::{top}::")));
        for name in inner.into_iter().filter(|n| sibling(n)) {
            add(format!("{top}/{own}"), format!("{top}/{name}"));
        }
    }
    edges
}

/// The loops among `edges`: each set of modules that reach one another (sorted, each loop's
/// members sorted).
pub fn module_loops(edges: &Edges) -> Vec<Vec<String>> {
    let nodes: BTreeSet<&String> = edges
        .iter()
        .flat_map(|(from, to)| std::iter::once(from).chain(to.keys()))
        .collect();
    let reach = |from: &String| {
        let mut seen: BTreeSet<&String> = BTreeSet::new();
        let mut todo = vec![from];
        while let Some(at) = todo.pop() {
            for next in edges.get(at).into_iter().flat_map(BTreeMap::keys) {
                if seen.insert(next) {
                    todo.push(next);
                }
            }
        }
        seen
    };
    let reaches: BTreeMap<&String, BTreeSet<&String>> =
        nodes.iter().map(|n| (*n, reach(n))).collect();
    let mut loops: BTreeSet<Vec<String>> = BTreeSet::new();
    for node in &nodes {
        let members: Vec<String> = nodes
            .iter()
            .filter(|other| reaches[*node].contains(*other) && reaches[*other].contains(*node))
            .map(|n| (*n).clone())
            .collect();
        if members.len() > 1 || (members.len() == 1 && reaches[*node].contains(*node)) {
            loops.insert(members);
        }
    }
    loops.into_iter().collect()
}

/// The loops among the modules of the crate at `manifest_dir` (`env!("CARGO_MANIFEST_DIR")`),
/// with each loop's edges written out for a failing assertion; `read` is a module the crate
/// has, to prove its sources were read.
pub fn crate_loops(manifest_dir: &str, read: &str) -> (Vec<Vec<String>>, String) {
    let edges = module_edges(&Path::new(manifest_dir).join("src"));
    assert!(edges.contains_key(read), "the sources were read");
    let loops = module_loops(&edges);
    let shown = loops
        .iter()
        .map(|l| format!("{}:\n{}", l.join(" <-> "), explain(&edges, l)))
        .collect();
    (loops, shown)
}

/// The edges inside one loop, one line each (`activity -> run (activity/log.rs)`), to show in a
/// failing assertion.
pub fn explain(edges: &Edges, members: &[String]) -> String {
    let mut out = String::new();
    for from in members {
        for (to, files) in edges.get(from).into_iter().flatten() {
            if members.contains(to) {
                let files: Vec<&str> = files.iter().map(String::as_str).collect();
                out.push_str(&format!("  {from} -> {to} ({})\n", files.join(", ")));
            }
        }
    }
    out
}

fn collect(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("readable directory")
        .map(|e| e.expect("entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            collect(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn is_module(src: &Path, name: &str) -> bool {
    src.join(format!("{name}.rs")).is_file() || src.join(name).join("mod.rs").is_file()
}

/// The text without comments and without the test module at its end.
fn code_only(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(at) => &text[..at],
        None => text,
    };
    text.lines()
        .map(|line| match line.find("//") {
            Some(at) => &line[..at],
            None => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The first name of each path after `prefix` (`crate::a::X` → `a`; `crate::{a::X, b}` → `a`,
/// `b`).
fn names_after(text: &str, prefix: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = text;
    while let Some(at) = rest.find(prefix) {
        let before = rest[..at].chars().next_back();
        rest = &rest[at + prefix.len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let after = rest.trim_start();
        if let Some(group) = after.strip_prefix('{') {
            let mut depth = 1;
            let mut start = 0;
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    _ => {}
                }
                if (c == ',' && depth == 1) || depth == 0 {
                    out.extend(ident(&group[start..i]));
                    start = i + 1;
                }
                if depth == 0 {
                    break;
                }
            }
        } else {
            out.extend(ident(after));
        }
    }
    out
}

fn ident(text: &str) -> Option<String> {
    let text = text.trim_start();
    let end = text
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(text.len());
    (end > 0).then(|| text[..end].to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_and_groups_are_read() {
        let names = names_after(
            "use crate::{a::X, b::{c, d}, e};\nlet x = crate::f::g(); my_crate::h;",
            "crate::",
        );
        assert_eq!(names.into_iter().collect::<Vec<_>>(), ["a", "b", "e", "f"]);
    }

    #[test]
    fn loops_are_found() {
        let mut edges = Edges::new();
        for (from, to) in [("a", "b"), ("b", "c"), ("c", "a"), ("c", "d"), ("e", "e")] {
            edges
                .entry(from.into())
                .or_default()
                .entry(to.into())
                .or_default()
                .insert("x.rs".into());
        }
        assert_eq!(
            module_loops(&edges),
            [
                vec!["a".to_owned(), "b".into(), "c".into()],
                vec!["e".into()]
            ]
        );
        assert!(explain(&edges, &["a".into(), "b".into(), "c".into()]).contains("c -> a"));
    }
}
