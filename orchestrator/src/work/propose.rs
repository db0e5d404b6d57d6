//! Record messages proposed from the change itself, deterministically (no model): which files
//! and areas changed, which functions, types or headings were added, removed or changed
//! where the language is recognisable (Rust, Python, JavaScript/TypeScript, Go, Markdown),
//! and which tests were touched. [`propose`] is a pure function over the file list and the
//! patch; `work_record` without a message offers its result, and `work_finish(auto=true)`
//! records with it.
//!
//! Shape: one subject line of at most [`MAX_SUBJECT`] characters (`Add merge_line, LineInfo
//! in worker-mcp/src/git`), then at most [`MAX_BODY_LINES`] lines for what the subject could
//! not say (`Files: …`, `Removed: …`, `Tests: …`).

/// The longest subject line proposed.
pub const MAX_SUBJECT: usize = 72;
/// The most body lines proposed.
pub const MAX_BODY_LINES: usize = 4;
/// The most names a subject lists before counting the rest.
const SUBJECT_NAMES: usize = 3;

/// How a file changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    Added,
    Deleted,
    Modified,
}

/// One changed file, as the overview of the change lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangedFile {
    pub path: String,
    pub kind: FileKind,
}

/// What a declaration is; headings are shown quoted.
mod declarations;

use declarations::{Declarations, Symbol, declarations, is_test_path};

fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// Where the change is: the one file, the deepest directory holding every file, or the
/// top-level parts it spans.
fn scope(files: &[ChangedFile]) -> String {
    match files {
        [] => String::new(),
        [one] => one.path.clone(),
        _ => {
            let dirs: Vec<Vec<&str>> = files
                .iter()
                .map(|f| {
                    let mut parts: Vec<&str> = f.path.split('/').collect();
                    parts.pop();
                    parts
                })
                .collect();
            let mut common: Vec<&str> = dirs[0].clone();
            for d in &dirs[1..] {
                let same = common.iter().zip(d).take_while(|(a, b)| a == b).count();
                common.truncate(same);
            }
            if !common.is_empty() {
                return common.join("/");
            }
            let mut tops: Vec<&str> = files
                .iter()
                .map(|f| f.path.split('/').next().unwrap_or(&f.path))
                .collect();
            tops.sort_unstable();
            tops.dedup();
            if tops.len() > 3 {
                format!("{}, …", tops[..3].join(", "))
            } else {
                tops.join(", ")
            }
        }
    }
}

/// `a, b, c (+2 more)` with the first `n` names.
fn names(symbols: &[&Symbol], n: usize) -> String {
    let shown: Vec<String> = symbols.iter().take(n).map(|s| s.shown()).collect();
    let mut text = shown.join(", ");
    if symbols.len() > n {
        text.push_str(&format!(" (+{} more)", symbols.len() - n));
    }
    text
}

fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(max - 1).collect();
    out.push('…');
    out
}

fn plural(n: usize, one: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {one}s")
    }
}

/// Which of the declarations a subject or body line is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Category {
    Added,
    Removed,
    Changed,
}

impl Category {
    fn verb(self) -> &'static str {
        match self {
            Category::Added => "Add",
            Category::Removed => "Remove",
            Category::Changed => "Update",
        }
    }

    fn label(self) -> &'static str {
        match self {
            Category::Added => "Added",
            Category::Removed => "Removed",
            Category::Changed => "Changed",
        }
    }

    fn of(self, decl: &Declarations) -> &[Symbol] {
        match self {
            Category::Added => &decl.added,
            Category::Removed => &decl.removed,
            Category::Changed => &decl.changed,
        }
    }
}

/// The category the subject is about (the first non-empty one) and its names, the main code
/// before tests.
fn headline(decl: &Declarations) -> Option<(Category, Vec<&Symbol>)> {
    fn prefer_code(list: &[Symbol]) -> Vec<&Symbol> {
        let main: Vec<&Symbol> = list.iter().filter(|s| !s.test).collect();
        if main.is_empty() {
            list.iter().collect()
        } else {
            main
        }
    }
    [Category::Added, Category::Removed, Category::Changed]
        .into_iter()
        .find(|c| !c.of(decl).is_empty())
        .map(|c| (c, prefer_code(c.of(decl))))
}

fn file_subject(files: &[ChangedFile]) -> String {
    let verb = if files.iter().all(|f| f.kind == FileKind::Added) {
        "Add"
    } else if files.iter().all(|f| f.kind == FileKind::Deleted) {
        "Remove"
    } else {
        "Update"
    };
    match files {
        [one] => fit_path(verb, &one.path),
        _ => {
            let place = scope(files);
            let base = format!("{verb} {}", plural(files.len(), "file"));
            if place.is_empty() {
                base
            } else {
                cut(&format!("{base} in {place}"), MAX_SUBJECT)
            }
        }
    }
}

/// `Update README.md`, or with the file name alone when the path is too long.
fn fit_path(verb: &str, path: &str) -> String {
    let full = format!("{verb} {path}");
    if full.chars().count() <= MAX_SUBJECT {
        full
    } else {
        cut(&format!("{verb} {}", file_name(path)), MAX_SUBJECT)
    }
}

/// The subject for `symbols`: as many names as fit, then the place.
fn symbol_subject(verb: &str, symbols: &[&Symbol], files: &[ChangedFile]) -> (String, usize) {
    let place = match files {
        [one] => file_name(&one.path).to_owned(),
        _ => scope(files),
    };
    let short_place = place.rsplit('/').next().unwrap_or(&place).to_owned();
    let tests_only = symbols.iter().all(|s| s.test);
    let verb = if tests_only {
        format!("{verb} tests")
    } else {
        verb.to_owned()
    };
    for n in (1..=SUBJECT_NAMES.min(symbols.len())).rev() {
        for where_ in [&place, &short_place] {
            let mut text = format!("{verb} {}", names(symbols, n));
            if !where_.is_empty() {
                text.push_str(&format!(" in {where_}"));
            }
            if text.chars().count() <= MAX_SUBJECT {
                return (text, n);
            }
        }
    }
    (
        cut(&format!("{verb} {}", names(symbols, 1)), MAX_SUBJECT),
        1,
    )
}

fn files_line(files: &[ChangedFile]) -> String {
    let full: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
    let line = format!("Files: {}", full.join(", "));
    if line.chars().count() <= MAX_SUBJECT {
        return line;
    }
    let mut shown = Vec::new();
    for (i, f) in files.iter().enumerate() {
        let rest = files.len() - i - 1;
        let mut candidate = shown.clone();
        candidate.push(file_name(&f.path));
        let tail = if rest > 0 {
            format!(" (+{rest} more)")
        } else {
            String::new()
        };
        if format!("Files: {}{tail}", candidate.join(", "))
            .chars()
            .count()
            > MAX_SUBJECT
        {
            break;
        }
        shown = candidate;
    }
    let rest = files.len() - shown.len();
    let tail = if rest > 0 {
        format!(" (+{rest} more)")
    } else {
        String::new()
    };
    cut(&format!("Files: {}{tail}", shown.join(", ")), MAX_SUBJECT)
}

fn tests_line(files: &[ChangedFile], decl: &Declarations) -> Option<String> {
    let test_files: Vec<&str> = files
        .iter()
        .filter(|f| is_test_path(&f.path))
        .map(|f| file_name(&f.path))
        .collect();
    let added_tests = decl.added.iter().filter(|s| s.test).count();
    let added = (added_tests > 0).then(|| format!("{added_tests} added"));
    let line = match (test_files.as_slice(), added) {
        ([], None) => return None,
        ([], Some(added)) => format!("Tests: {added}"),
        (names, added) => {
            let mut shown = names.iter().take(3).copied().collect::<Vec<_>>().join(", ");
            if names.len() > 3 {
                shown.push_str(&format!(" (+{} more)", names.len() - 3));
            }
            match added {
                Some(added) => format!("Tests: {shown} ({added})"),
                None => format!("Tests: {shown}"),
            }
        }
    };
    Some(cut(&line, MAX_SUBJECT))
}

/// The proposed record message for a change: `files` as the overview lists them (sorted),
/// `patch` the unified diff (possibly cut short; what it shows is used).
pub fn propose(files: &[ChangedFile], patch: &str) -> String {
    if files.is_empty() {
        return "Update the project".to_owned();
    }
    let decl = declarations(patch);
    let mut body = Vec::new();
    let subject = match headline(&decl) {
        Some((category, symbols)) => {
            let (subject, shown) = symbol_subject(category.verb(), &symbols, files);
            let line = |c: Category| {
                let all: Vec<&Symbol> = c.of(&decl).iter().collect();
                cut(&format!("{}: {}", c.label(), names(&all, 8)), MAX_SUBJECT)
            };
            if shown < category.of(&decl).len() {
                body.push(line(category));
            }
            for other in [Category::Added, Category::Removed] {
                if other != category && !other.of(&decl).is_empty() {
                    body.push(line(other));
                }
            }
            body.extend(tests_line(files, &decl));
            if category != Category::Changed && !decl.changed.is_empty() {
                body.push(line(Category::Changed));
            }
            subject
        }
        None => {
            body.extend(tests_line(files, &decl));
            file_subject(files)
        }
    };
    if files.len() > 1 {
        body.insert(0, files_line(files));
    }
    body.truncate(MAX_BODY_LINES);
    if body.is_empty() {
        subject
    } else {
        format!("{subject}\n\n{}", body.join("\n"))
    }
}
#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str, kind: FileKind) -> ChangedFile {
        ChangedFile {
            path: path.into(),
            kind,
        }
    }

    fn modified(path: &str) -> ChangedFile {
        file(path, FileKind::Modified)
    }

    #[test]
    fn a_new_rust_function_names_itself_and_its_file() {
        let patch = "diff --git a/src/line.rs b/src/line.rs\n--- a/src/line.rs\n+++ b/src/line.rs\n@@ -1,2 +1,5 @@\n use a;\n+\n+pub fn merge_line() {\n+}\n";
        assert_eq!(
            propose(&[modified("src/line.rs")], patch),
            "Add merge_line in line.rs"
        );
    }

    #[test]
    fn removed_changed_and_tests_go_to_the_body() {
        let patch = "\
diff --git a/src/a.rs b/src/a.rs
--- a/src/a.rs
+++ b/src/a.rs
@@ -1,6 +1,6 @@
-fn old_one() {}
+fn new_one() {}
-pub fn keep(x: u8) {}
+pub fn keep(x: u16) {}
@@ -20,3 +20,4 @@ fn touched() {
     body();
+    more();
diff --git a/tests/a.rs b/tests/a.rs
--- a/tests/a.rs
+++ b/tests/a.rs
@@ -1,1 +1,4 @@
 use a;
+#[test]
+fn new_one_works() {}
";
        let message = propose(&[modified("src/a.rs"), modified("tests/a.rs")], patch);
        assert_eq!(
            message,
            "Add new_one in src, tests\n\nFiles: src/a.rs, tests/a.rs\nAdded: new_one, new_one_works\nRemoved: old_one\nTests: a.rs (1 added)"
        );
    }

    #[test]
    fn headings_outside_code_fences_are_sections() {
        let patch = "\
diff --git a/README.md b/README.md
--- a/README.md
+++ b/README.md
@@ -3,2 +3,9 @@ intro
+## Lines of work
+```sh
+# not a heading
+```
+## Proposed messages
";
        assert_eq!(
            propose(&[modified("README.md")], patch),
            "Add \"Lines of work\", \"Proposed messages\" in README.md"
        );
    }

    #[test]
    fn without_declarations_the_files_speak() {
        assert_eq!(
            propose(&[file("assets/logo.png", FileKind::Added)], ""),
            "Add assets/logo.png"
        );
        assert_eq!(
            propose(
                &[
                    file("docs/a.txt", FileKind::Deleted),
                    file("docs/b.txt", FileKind::Deleted)
                ],
                ""
            ),
            "Remove 2 files in docs\n\nFiles: docs/a.txt, docs/b.txt"
        );
        assert_eq!(
            propose(&[modified("Cargo.toml"), modified("src/x.toml")], ""),
            "Update 2 files in Cargo.toml, src\n\nFiles: Cargo.toml, src/x.toml"
        );
    }

    #[test]
    fn long_subjects_are_cut_to_fit() {
        let mut patch =
            String::from("diff --git a/src/lib.rs b/src/lib.rs\n+++ b/src/lib.rs\n@@ -1 +1,9 @@\n");
        for i in 0..9 {
            patch.push_str(&format!(
                "+pub fn a_rather_long_function_name_number_{i}() {{}}\n"
            ));
        }
        let message = propose(&[modified("src/lib.rs")], &patch);
        let subject = message.lines().next().expect("subject");
        assert!(subject.chars().count() <= MAX_SUBJECT, "{subject}");
        assert!(subject.contains("(+8 more)"), "{subject}");
        assert!(message.lines().count() <= 2 + MAX_BODY_LINES, "{message}");
        assert!(
            message.lines().all(|l| l.chars().count() <= MAX_SUBJECT),
            "{message}"
        );
        let paths: Vec<ChangedFile> = (0..40)
            .map(|i| modified(&format!("some/deeply/nested/directory/file_{i}.txt")))
            .collect();
        let message = propose(&paths, "");
        assert!(
            message.lines().all(|l| l.chars().count() <= MAX_SUBJECT),
            "{message}"
        );
    }
}
