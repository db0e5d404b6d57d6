//! The two diff guards. Both read a unified diff (`git diff` output) and need no repository:
//! - [`weakened_tests`]: removed tests and assertions (a removed line that does not reappear
//!   elsewhere in the diff, so moved code is not flagged), and added skips (`#[ignore]`,
//!   `@pytest.mark.skip`, `xfail`, `.skip(`, `.only(`, …);
//! - [`stubs`]: stubs in added lines (`todo!()`, `unimplemented!()`, `TODO`, `FIXME`,
//!   `raise NotImplementedError`, Python bodies that are only `pass`).

use std::collections::HashSet;

use crate::contract::GuardFinding;

/// Longest line text kept in a finding.
const TEXT_MAX: usize = 160;

/// Changed lines that delete or weaken tests or assertions.
pub(crate) fn weakened_tests(patch: &str) -> Vec<GuardFinding> {
    let files = parse(patch);
    let added: HashSet<&str> = files
        .iter()
        .flat_map(|f| f.lines.iter())
        .filter(|l| l.kind == Kind::Added)
        .map(|l| l.text.trim())
        .collect();
    let mut out = Vec::new();
    for file in &files {
        let lang = Lang::of(&file.path);
        for line in &file.lines {
            let what = match line.kind {
                Kind::Removed if !added.contains(line.text.trim()) => {
                    removed_test(lang, &line.text)
                }
                Kind::Added => added_skip(lang, &line.text),
                _ => None,
            };
            if let Some(what) = what {
                out.push(finding(&file.path, line, what));
            }
        }
    }
    out
}

/// Stubs left in added lines (documentation files are skipped).
pub(crate) fn stubs(patch: &str) -> Vec<GuardFinding> {
    let mut out = Vec::new();
    for file in parse(patch) {
        let lang = Lang::of(&file.path);
        if lang == Lang::Doc {
            continue;
        }
        for (i, line) in file.lines.iter().enumerate() {
            if line.kind != Kind::Added {
                continue;
            }
            let what = stub(&line.text).or_else(|| {
                (lang == Lang::Python && is_pass_body(&file.lines[..i], &line.text))
                    .then_some("`pass`-only body")
            });
            if let Some(what) = what {
                out.push(finding(&file.path, line, what));
            }
        }
    }
    out
}

fn finding(path: &str, line: &Line, what: &str) -> GuardFinding {
    let text = line.text.trim();
    let text = match text.char_indices().nth(TEXT_MAX) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    };
    GuardFinding {
        path: path.to_owned(),
        line: line.number,
        what: what.to_owned(),
        text,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lang {
    Rust,
    Python,
    Js,
    Go,
    Doc,
    Other,
}

impl Lang {
    fn of(path: &str) -> Self {
        let ext = path
            .rsplit_once('.')
            .map_or("", |(_, e)| e)
            .to_ascii_lowercase();
        match ext.as_str() {
            "rs" => Self::Rust,
            "py" => Self::Python,
            "js" | "jsx" | "ts" | "tsx" | "mjs" | "cjs" | "mts" | "cts" => Self::Js,
            "go" => Self::Go,
            "md" | "markdown" | "txt" | "rst" | "adoc" => Self::Doc,
            _ => Self::Other,
        }
    }
}

fn removed_test(lang: Lang, text: &str) -> Option<&'static str> {
    let t = text.trim();
    let any = |needles: &[&str]| needles.iter().any(|n| t.contains(n));
    match lang {
        Lang::Rust if any(&["#[test]", "#[tokio::test", "#[rstest"]) => Some("removed test"),
        Lang::Rust if any(&["assert!(", "assert_eq!(", "assert_ne!(", "assert_matches!("]) => {
            Some("removed assertion")
        }
        Lang::Python if t.starts_with("def test_") || t.starts_with("async def test_") => {
            Some("removed test")
        }
        Lang::Python
            if t.starts_with("assert ")
                || t.starts_with("assert(")
                || any(&["self.assert", "pytest.raises("]) =>
        {
            Some("removed assertion")
        }
        Lang::Js
            if ["it(", "test(", "it.each", "test.each"]
                .iter()
                .any(|p| t.starts_with(p)) =>
        {
            Some("removed test")
        }
        Lang::Js if has_bare_call(t, "expect(") || t.contains("assert.") => {
            Some("removed assertion")
        }
        Lang::Go if t.starts_with("func Test") => Some("removed test"),
        _ => None,
    }
}

fn added_skip(lang: Lang, text: &str) -> Option<&'static str> {
    let t = text.trim();
    let any = |needles: &[&str]| needles.iter().any(|n| t.contains(n));
    match lang {
        Lang::Rust if t.starts_with("#[ignore") => Some("added `#[ignore]`"),
        Lang::Python if any(&["pytest.mark.skip", "unittest.skip", "pytest.skip("]) => {
            Some("added skip")
        }
        Lang::Python if any(&["pytest.mark.xfail", "unittest.expectedFailure"]) => {
            Some("added xfail")
        }
        Lang::Js if any(&[".only("]) => Some("added `.only` (other tests stop running)"),
        Lang::Js
            if any(&[".skip(", ".todo("])
                || ["xit(", "xtest(", "xdescribe("]
                    .iter()
                    .any(|p| t.starts_with(p)) =>
        {
            Some("added skip")
        }
        Lang::Go if t.contains("t.Skip(") => Some("added skip"),
        _ => None,
    }
}

/// `expect(` called as a function, not as a method (`.expect(` in Rust is not an assertion).
fn has_bare_call(text: &str, call: &str) -> bool {
    text.match_indices(call).any(|(at, _)| {
        text[..at]
            .chars()
            .next_back()
            .is_none_or(|c| !(c.is_alphanumeric() || c == '_' || c == '.'))
    })
}

fn stub(text: &str) -> Option<&'static str> {
    let t = text.trim();
    if t.contains("todo!(") {
        Some("`todo!()`")
    } else if t.contains("unimplemented!(") {
        Some("`unimplemented!()`")
    } else if t.contains("NotImplementedError") && t.starts_with("raise") {
        Some("`raise NotImplementedError`")
    } else if t.starts_with("throw") && t.to_ascii_lowercase().contains("not implemented") {
        Some("throws \"not implemented\"")
    } else if has_word(t, "TODO") {
        Some("`TODO`")
    } else if has_word(t, "FIXME") {
        Some("`FIXME`")
    } else {
        None
    }
}

fn has_word(text: &str, word: &str) -> bool {
    text.match_indices(word).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        let edge = |c: Option<char>| c.is_none_or(|c| !c.is_alphanumeric() && c != '_');
        edge(before) && edge(after)
    })
}

/// `pass` (or `...`) whose nearest earlier line in the hunk, past blanks and a docstring, is a
/// `def` header.
fn is_pass_body(before: &[Line], text: &str) -> bool {
    if !matches!(text.trim(), "pass" | "...") {
        return false;
    }
    let header = before
        .iter()
        .rev()
        .filter(|l| l.kind != Kind::Removed)
        .map(|l| l.text.trim())
        .find(|t| !t.is_empty() && !is_docstring(t));
    header
        .is_some_and(|h| (h.starts_with("def ") || h.starts_with("async def ")) && h.ends_with(':'))
}

fn is_docstring(t: &str) -> bool {
    (t.starts_with("\"\"\"") || t.starts_with("'''"))
        && t.len() >= 6
        && (t.ends_with("\"\"\"") || t.ends_with("'''"))
}

// -- unified diff parsing ----------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Context,
    Added,
    Removed,
}

#[derive(Debug)]
struct Line {
    kind: Kind,
    /// New-file number for added and context lines, old-file number for removed ones.
    number: u32,
    text: String,
}

#[derive(Debug)]
struct FileDiff {
    path: String,
    lines: Vec<Line>,
}

fn parse(patch: &str) -> Vec<FileDiff> {
    let mut files: Vec<FileDiff> = Vec::new();
    let mut old_path = String::new();
    let (mut old_left, mut new_left) = (0u32, 0u32);
    let (mut old_no, mut new_no) = (0u32, 0u32);
    for raw in patch.lines() {
        if raw.starts_with("diff --git ") {
            // Always a new file, even where a miscounted hunk would still be open.
            (old_left, new_left) = (0, 0);
            continue;
        }
        if old_left > 0 || new_left > 0 {
            let (kind, text) = match raw.split_at_checked(1) {
                Some(("+", rest)) => (Kind::Added, rest),
                Some(("-", rest)) => (Kind::Removed, rest),
                Some((" ", rest)) => (Kind::Context, rest),
                _ if raw.is_empty() => (Kind::Context, ""),
                _ => {
                    // `\ No newline at end of file` and the like.
                    continue;
                }
            };
            let number = match kind {
                Kind::Removed => {
                    old_left = old_left.saturating_sub(1);
                    old_no += 1;
                    old_no - 1
                }
                Kind::Added => {
                    new_left = new_left.saturating_sub(1);
                    new_no += 1;
                    new_no - 1
                }
                Kind::Context => {
                    old_left = old_left.saturating_sub(1);
                    new_left = new_left.saturating_sub(1);
                    old_no += 1;
                    new_no += 1;
                    new_no - 1
                }
            };
            if let Some(file) = files.last_mut() {
                file.lines.push(Line {
                    kind,
                    number,
                    text: text.to_owned(),
                });
            }
            continue;
        }
        if let Some(rest) = raw.strip_prefix("--- ") {
            old_path = strip_side(rest, "a/");
        } else if let Some(rest) = raw.strip_prefix("+++ ") {
            let new_path = strip_side(rest, "b/");
            let path = if new_path == "/dev/null" {
                old_path.clone()
            } else {
                new_path
            };
            files.push(FileDiff {
                path,
                lines: Vec::new(),
            });
        } else if let Some((old, new)) = raw.strip_prefix("@@ ").and_then(hunk_ranges) {
            (old_no, old_left) = old;
            (new_no, new_left) = new;
        }
    }
    files
}

fn strip_side(path: &str, side: &str) -> String {
    let path = path.split('\t').next().unwrap_or(path).trim();
    let path = path
        .strip_prefix('"')
        .and_then(|p| p.strip_suffix('"'))
        .unwrap_or(path);
    path.strip_prefix(side).unwrap_or(path).to_owned()
}

/// `-12,3 +14,5 @@ …` → ((12, 3), (14, 5)); a missing count means 1.
fn hunk_ranges(header: &str) -> Option<((u32, u32), (u32, u32))> {
    let mut parts = header.split_whitespace();
    let old = range(parts.next()?.strip_prefix('-')?)?;
    let new = range(parts.next()?.strip_prefix('+')?)?;
    Some((old, new))
}

fn range(text: &str) -> Option<(u32, u32)> {
    match text.split_once(',') {
        Some((start, count)) => Some((start.parse().ok()?, count.parse().ok()?)),
        None => Some((text.parse().ok()?, 1)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RUST_PATCH: &str = "\
diff --git a/src/lib.rs b/src/lib.rs
index 1111111..2222222 100644
--- a/src/lib.rs
+++ b/src/lib.rs
@@ -1,12 +1,11 @@
 pub fn add(a: i32, b: i32) -> i32 {
-    a + b
+    todo!()
 }
 
 #[cfg(test)]
 mod tests {
-    #[test]
-    fn adds() {
-        assert_eq!(super::add(1, 2), 3);
-    }
+    #[ignore]
+    fn adds() {}
+    // TODO: bring back
 }
";

    #[test]
    fn rust_weakening_is_flagged_with_line_numbers() {
        let found = weakened_tests(RUST_PATCH);
        let whats: Vec<(&str, u32)> = found.iter().map(|f| (f.what.as_str(), f.line)).collect();
        assert_eq!(
            whats,
            vec![
                ("removed test", 7),
                ("removed assertion", 9),
                ("added `#[ignore]`", 7)
            ]
        );
        assert!(found.iter().all(|f| f.path == "src/lib.rs"));
        assert_eq!(found[1].text, "assert_eq!(super::add(1, 2), 3);");
    }

    #[test]
    fn rust_stubs_are_flagged() {
        let found = stubs(RUST_PATCH);
        let whats: Vec<(&str, u32)> = found.iter().map(|f| (f.what.as_str(), f.line)).collect();
        assert_eq!(whats, vec![("`todo!()`", 2), ("`TODO`", 9)]);
    }

    #[test]
    fn moved_assertions_are_not_flagged() {
        let patch = "\
--- a/tests/a.rs
+++ b/tests/a.rs
@@ -1,2 +1,0 @@
-#[test]
-fn x() { assert!(ok()); }
--- /dev/null
+++ b/tests/b.rs
@@ -0,0 +1,2 @@
+#[test]
+fn x() { assert!(ok()); }
";
        assert!(
            weakened_tests(patch).is_empty(),
            "{:?}",
            weakened_tests(patch)
        );
    }

    #[test]
    fn deleted_file_uses_the_old_path() {
        let patch = "\
diff --git a/tests/t.py b/tests/t.py
deleted file mode 100644
--- a/tests/t.py
+++ /dev/null
@@ -1,2 +0,0 @@
-def test_it():
-    assert f() == 2
";
        let found = weakened_tests(patch);
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].path, "tests/t.py");
        assert_eq!(found[0].what, "removed test");
        assert_eq!(found[1].what, "removed assertion");
    }

    #[test]
    fn python_skips_and_stubs() {
        let patch = "\
--- a/app.py
+++ b/app.py
@@ -1,3 +1,9 @@
+import pytest
+@pytest.mark.skip(reason=\"later\")
+def test_a():
+    \"\"\"Checks a.\"\"\"
+    pass
+def compute(x):
+    raise NotImplementedError
 if x:
     pass
";
        let weak: Vec<String> = weakened_tests(patch).into_iter().map(|f| f.what).collect();
        assert_eq!(weak, vec!["added skip"]);
        let stub: Vec<(String, u32)> = stubs(patch).into_iter().map(|f| (f.what, f.line)).collect();
        assert_eq!(
            stub,
            vec![
                ("`pass`-only body".into(), 5),
                ("`raise NotImplementedError`".into(), 7)
            ],
            "the context `pass` under `if` is not added, so not flagged"
        );
    }

    #[test]
    fn js_focus_skip_and_removed_expectations() {
        let patch = "\
--- a/src/a.test.ts
+++ b/src/a.test.ts
@@ -1,4 +1,3 @@
-test('adds', () => {
-  expect(add(1, 2)).toBe(3);
+it.only('adds', () => {
+  xit('other');
 });
";
        let weak: Vec<String> = weakened_tests(patch).into_iter().map(|f| f.what).collect();
        assert_eq!(
            weak,
            vec![
                "removed test",
                "removed assertion",
                "added `.only` (other tests stop running)",
                "added skip"
            ]
        );
    }

    #[test]
    fn rust_expect_and_todo_words_are_not_false_positives() {
        let patch = "\
--- a/src/main.rs
+++ b/src/main.rs
@@ -1 +1 @@
-    let f = open().expect(\"file\");
+    let f = open()?; // TODOS are words like todos_list
--- a/README.md
+++ b/README.md
@@ -1 +1 @@
-old
+TODO: write docs
";
        assert!(weakened_tests(patch).is_empty());
        assert!(stubs(patch).is_empty(), "{:?}", stubs(patch));
    }

    #[test]
    fn a_git_header_ends_a_miscounted_hunk() {
        let patch = "\
diff --git a/a.rs b/a.rs
--- a/a.rs
+++ b/a.rs
@@ -1,5 +1,5 @@
-x
+y
diff --git a/b.rs b/b.rs
--- a/b.rs
+++ b/b.rs
@@ -1 +1 @@
-old
+todo!()
";
        let found = stubs(patch);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].path, "b.rs");
    }

    #[test]
    fn a_removed_line_that_looks_like_a_header_is_still_content() {
        let patch = "\
--- a/a.py
+++ b/a.py
@@ -1,2 +1,1 @@
--- a/x
 keep
";
        let files = parse(patch);
        assert_eq!(files.len(), 1);
        assert_eq!(files[0].lines[0].kind, Kind::Removed);
        assert_eq!(files[0].lines[0].text, "-- a/x");
    }
}
