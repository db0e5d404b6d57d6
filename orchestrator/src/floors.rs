//! The crate's modules read as floors: a module only names modules below it. This test reads
//! the crate's own source and fails when two modules name each other, directly or round a
//! loop — among the top-level modules, and among the files inside `work/` and `hook/`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Modules whose files are nodes of their own (`work/record`, `hook/programs`); elsewhere a
/// top-level module is one node.
const OPENED: &[&str] = &["work", "hook"];

/// The module path of a source file (`work/line/view.rs` → `work::line::view`).
fn module_of(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    if let Some(last) = parts.pop() {
        let stem = last.trim_end_matches(".rs");
        if stem != "mod" && stem != "lib" {
            parts.push(stem.to_owned());
        }
    }
    parts
}

/// The node a module path belongs to: `work::line::view` → `work/line`, `error` → `error`.
fn node_of(path: &[String], nodes: &BTreeSet<String>) -> Option<String> {
    let first = path.first()?;
    if OPENED.contains(&first.as_str())
        && let Some(second) = path.get(1)
    {
        let name = format!("{first}/{second}");
        if nodes.contains(&name) {
            return Some(name);
        }
    }
    nodes.contains(first).then(|| first.clone())
}

/// The module paths a line of code names: `crate::a::b`, `super::c`, `use crate::{a, b}`.
fn named_paths(line: &str, here: &[String]) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    let mut rest = line;
    while let Some(at) = rest
        .find("crate::")
        .into_iter()
        .chain(rest.find("super::"))
        .min()
    {
        let from = &rest[at..];
        let (mut base, mut tail): (Vec<String>, &str) =
            if let Some(t) = from.strip_prefix("crate::") {
                (Vec::new(), t)
            } else {
                (here.to_vec(), from)
            };
        while let Some(t) = tail.strip_prefix("super::") {
            base.pop();
            tail = t;
        }
        let word = |s: &str| -> String {
            s.chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect()
        };
        let mut path = base.clone();
        loop {
            let w = word(tail);
            if w.is_empty() {
                break;
            }
            tail = &tail[w.len()..];
            path.push(w);
            match tail.strip_prefix("::") {
                Some(t) => tail = t,
                None => break,
            }
        }
        if let Some(group) = tail.strip_prefix('{') {
            let group = group.split('}').next().unwrap_or("");
            for item in group.split(',') {
                let w = word(item.trim());
                if !w.is_empty() && w != "self" {
                    let mut p = path.clone();
                    p.push(w);
                    found.push(p);
                }
            }
        }
        found.push(path);
        rest = if tail.len() < from.len() {
            tail
        } else {
            &rest[at + 1..]
        };
    }
    found
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Edges `from → to` between nodes, read from every file's code before its tests.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let modules: Vec<(PathBuf, Vec<String>)> = files
        .iter()
        .filter_map(|f| Some((f.clone(), module_of(f.strip_prefix(&src).ok()?))))
        .filter(|(_, m)| m.first().is_some_and(|first| first != "floors"))
        .collect();
    let mut nodes = BTreeSet::new();
    for (_, m) in &modules {
        if let Some(first) = m.first() {
            nodes.insert(first.clone());
            if OPENED.contains(&first.as_str())
                && let Some(second) = m.get(1)
            {
                nodes.insert(format!("{first}/{second}"));
            }
        }
    }
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (file, module) in &modules {
        let Some(from) = node_of(module, &nodes) else {
            continue;
        };
        let text = std::fs::read_to_string(file).unwrap_or_default();
        let mut lines = text.lines();
        while let Some(line) = lines.next() {
            if line.trim_start().starts_with("#[cfg(test)]") {
                // Tests name what they test: an inline test module ends the code read, a
                // test module of its own file (`mod tests;`) is skipped.
                match lines.next() {
                    Some(next) if next.trim_end().ends_with('{') => break,
                    _ => continue,
                }
            }
            if line.trim_start().starts_with("//") {
                continue;
            }
            for path in named_paths(line, module) {
                if let Some(to) = node_of(&path, &nodes)
                    && to != from
                    // A module's own file declares its children: not a dependency on them.
                    && !to.starts_with(&format!("{from}/"))
                {
                    edges.entry(from.clone()).or_default().insert(to);
                }
            }
        }
    }
    edges
}

/// The loops of the graph (its strongly connected components of more than one node).
fn loops(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<BTreeSet<String>> {
    let reach = |start: &str| -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut todo = vec![start.to_owned()];
        while let Some(n) = todo.pop() {
            for next in edges.get(&n).into_iter().flatten() {
                if seen.insert(next.clone()) {
                    todo.push(next.clone());
                }
            }
        }
        seen
    };
    let reached: BTreeMap<&String, BTreeSet<String>> =
        edges.keys().map(|n| (n, reach(n))).collect();
    let mut found: Vec<BTreeSet<String>> = Vec::new();
    for (n, from_n) in &reached {
        let component: BTreeSet<String> = from_n
            .iter()
            .filter(|m| reached.get(m).is_some_and(|r| r.contains(*n)))
            .cloned()
            .collect();
        if component.len() > 1 && !found.contains(&component) {
            found.push(component);
        }
    }
    found
}

#[test]
fn no_module_loops() {
    let edges = graph();
    assert!(
        edges.get("server").is_some_and(|e| e.contains("work")),
        "the source was read: {edges:?}"
    );
    let found = loops(&edges);
    assert!(found.is_empty(), "modules in a loop: {found:?}");
}

#[test]
fn a_loop_is_seen() {
    let here = vec!["work".to_owned(), "record".to_owned()];
    let named = named_paths("use crate::work::{conclude, observe::Snapshot};", &here);
    assert!(named.contains(&vec!["work".into(), "conclude".into()]));
    assert!(named.contains(&vec!["work".into(), "observe".into()]));
    let named = named_paths("use super::sensitive;", &here);
    assert_eq!(named, vec![vec!["work".to_owned(), "sensitive".to_owned()]]);
    let mut edges = BTreeMap::new();
    edges.insert("a".to_owned(), BTreeSet::from(["b".to_owned()]));
    edges.insert("b".to_owned(), BTreeSet::from(["a".to_owned()]));
    assert_eq!(loops(&edges).len(), 1);
}
