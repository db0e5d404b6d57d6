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
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Code,
    Heading,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Symbol {
    name: String,
    kind: Kind,
    test: bool,
}

impl Symbol {
    fn shown(&self) -> String {
        match self.kind {
            Kind::Code => self.name.clone(),
            Kind::Heading => format!("\"{}\"", self.name),
        }
    }
}

/// The languages whose declarations are recognised.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Language {
    Rust,
    Python,
    Script,
    Go,
    Markdown,
}

fn language(path: &str) -> Option<Language> {
    let ext = path.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase())?;
    Some(match ext.as_str() {
        "rs" => Language::Rust,
        "py" | "pyi" => Language::Python,
        "js" | "jsx" | "mjs" | "cjs" | "ts" | "tsx" | "mts" | "cts" => Language::Script,
        "go" => Language::Go,
        "md" | "markdown" | "mdx" => Language::Markdown,
        _ => return None,
    })
}

/// Whether `path` is a test file by the usual conventions.
fn is_test_path(path: &str) -> bool {
    let parts: Vec<&str> = path.split('/').collect();
    let file = parts.last().copied().unwrap_or("");
    let in_test_dir = parts[..parts.len().saturating_sub(1)]
        .iter()
        .any(|d| matches!(*d, "tests" | "test" | "__tests__" | "spec" | "testdata"));
    let stem = file.split('.').next().unwrap_or(file);
    in_test_dir
        || file.ends_with("_test.go")
        || (file.ends_with(".py") && (stem.starts_with("test_") || stem.ends_with("_test")))
        || file.contains(".test.")
        || file.contains(".spec.")
}

fn ident(text: &str) -> Option<String> {
    let name: String = text
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '$')
        .collect();
    (!name.is_empty() && !name.starts_with(|c: char| c.is_ascii_digit())).then_some(name)
}

fn strip_any<'a>(mut text: &'a str, prefixes: &[&str]) -> &'a str {
    loop {
        let before = text;
        for p in prefixes {
            if let Some(rest) = text.strip_prefix(p) {
                text = rest.trim_start();
            }
        }
        if text == before {
            return text;
        }
    }
}

fn rust_symbol(line: &str) -> Option<String> {
    let mut t = line.trim_start();
    if let Some(rest) = t.strip_prefix("pub") {
        t = match rest.strip_prefix('(') {
            Some(inner) => inner.split_once(')')?.1,
            None if rest.starts_with(' ') => rest,
            None => return None,
        }
        .trim_start();
    }
    let t = strip_any(
        t,
        &[
            "async ",
            "const ",
            "unsafe ",
            "extern \"C\" ",
            "extern ",
            "default ",
        ],
    );
    [
        "fn ",
        "struct ",
        "enum ",
        "trait ",
        "type ",
        "mod ",
        "union ",
        "macro_rules! ",
    ]
    .iter()
    .find_map(|kw| t.strip_prefix(kw))
    .and_then(ident)
}

fn python_symbol(line: &str) -> Option<String> {
    let t = strip_any(line.trim_start(), &["async "]);
    ["def ", "class "]
        .iter()
        .find_map(|kw| t.strip_prefix(kw))
        .and_then(ident)
}

fn script_symbol(line: &str) -> Option<String> {
    let t = strip_any(
        line.trim_start(),
        &["export ", "default ", "declare ", "abstract ", "async "],
    );
    if let Some(rest) = t.strip_prefix("function") {
        return ident(rest.trim_start_matches('*').trim_start());
    }
    if let Some(name) = ["class ", "interface ", "enum ", "type "]
        .iter()
        .find_map(|kw| t.strip_prefix(kw))
        .and_then(ident)
    {
        return Some(name);
    }
    let rest = ["const ", "let ", "var "]
        .iter()
        .find_map(|kw| t.strip_prefix(kw))?;
    let name = ident(rest)?;
    let value = rest[name.len()..].trim_start();
    let value = value
        .strip_prefix(':')
        .map_or(value, |typed| typed.split_once('=').map_or("", |(_, v)| v));
    let value = value
        .trim_start()
        .strip_prefix('=')
        .unwrap_or(value)
        .trim_start();
    let is_function = value.starts_with("function")
        || value.starts_with("async")
        || (value.starts_with('(') || value.starts_with(|c: char| c.is_alphabetic()))
            && value.contains("=>");
    is_function.then_some(name)
}

fn go_symbol(line: &str) -> Option<String> {
    if let Some(rest) = line.strip_prefix("func ") {
        let rest = match rest.strip_prefix('(') {
            Some(receiver) => receiver.split_once(')')?.1.trim_start(),
            None => rest,
        };
        return ident(rest);
    }
    line.strip_prefix("type ").and_then(ident)
}

fn heading(line: &str) -> Option<String> {
    let hashes = line.chars().take_while(|c| *c == '#').count();
    if !(1..=6).contains(&hashes) {
        return None;
    }
    let text = line[hashes..].strip_prefix(' ')?;
    let text = text.trim().trim_end_matches('#').trim();
    (!text.is_empty()).then(|| text.chars().take(60).collect())
}

/// The declarations of one file's patch: added, removed, and touched (named in hunk headers).
#[derive(Default)]
struct FileSymbols {
    added: Vec<Symbol>,
    removed: Vec<Symbol>,
    touched: Vec<Symbol>,
}

struct Extractor {
    lang: Language,
    test_file: bool,
    /// The previous line on each side was a test attribute (`#[test]`, `#[tokio::test]`).
    test_attr: [bool; 2],
    in_fence: bool,
}

impl Extractor {
    fn symbol(&mut self, line: &str, side: usize) -> Option<Symbol> {
        let trimmed = line.trim();
        if self.lang == Language::Markdown {
            if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
                self.in_fence = !self.in_fence;
                return None;
            }
            if self.in_fence {
                return None;
            }
            return heading(line).map(|name| Symbol {
                name,
                kind: Kind::Heading,
                test: false,
            });
        }
        if self.lang == Language::Rust && trimmed.starts_with("#[") {
            self.test_attr[side] = trimmed.contains("test]") || trimmed.contains("test(");
            return None;
        }
        let name = match self.lang {
            Language::Rust => rust_symbol(line),
            Language::Python => python_symbol(line),
            Language::Script => script_symbol(line),
            Language::Go => go_symbol(line),
            Language::Markdown => None,
        };
        let attr = std::mem::take(&mut self.test_attr[side]);
        let name = name?;
        let test = self.test_file
            || attr
            || (self.lang == Language::Python && name.starts_with("test_"))
            || (self.lang == Language::Go && name.starts_with("Test"));
        Some(Symbol {
            name,
            kind: Kind::Code,
            test,
        })
    }
}

fn push_new(list: &mut Vec<Symbol>, symbol: Symbol) {
    if !list.iter().any(|s| s.name == symbol.name) {
        list.push(symbol);
    }
}

/// The path a `diff --git a/P b/P` header names (renames are off, so both sides agree).
fn header_path(line: &str) -> Option<String> {
    let rest = line.strip_prefix("diff --git ")?;
    let half = rest.len().checked_sub(1)? / 2;
    let a = rest.get(..half)?;
    let path = a.strip_prefix("a/").or_else(|| a.strip_prefix("\"a/"))?;
    Some(path.trim_end_matches('"').to_owned())
}

/// Splits the patch by file and extracts each file's declarations.
fn symbols_by_file(patch: &str) -> Vec<(String, FileSymbols)> {
    let mut out: Vec<(String, FileSymbols)> = Vec::new();
    let mut current: Option<(Extractor, usize)> = None;
    for line in patch.lines() {
        if let Some(path) = header_path(line) {
            current = language(&path).map(|lang| {
                let extractor = Extractor {
                    lang,
                    test_file: is_test_path(&path),
                    test_attr: [false; 2],
                    in_fence: false,
                };
                out.push((path, FileSymbols::default()));
                (extractor, out.len() - 1)
            });
            continue;
        }
        let Some((extractor, index)) = current.as_mut() else {
            continue;
        };
        let symbols = &mut out[*index].1;
        if let Some(hunk) = line.strip_prefix("@@") {
            extractor.in_fence = false;
            let context = hunk.split_once("@@").map_or("", |(_, c)| c.trim());
            if let Some(s) = extractor.symbol(context, 0) {
                push_new(&mut symbols.touched, s);
            }
            extractor.test_attr = [false; 2];
            continue;
        }
        if line.starts_with("+++") || line.starts_with("---") {
            continue;
        }
        match line.as_bytes().first() {
            Some(b'+') => {
                if let Some(s) = extractor.symbol(&line[1..], 1) {
                    push_new(&mut symbols.added, s);
                }
            }
            Some(b'-') => {
                if let Some(s) = extractor.symbol(&line[1..], 0) {
                    push_new(&mut symbols.removed, s);
                }
            }
            Some(b' ') => {
                let _ = extractor.symbol(&line[1..], 0);
                extractor.test_attr[1] = extractor.test_attr[0];
            }
            _ => {}
        }
    }
    out
}

/// The change's declarations, in file order: added, removed and changed ones.
#[derive(Default)]
struct Declarations {
    added: Vec<Symbol>,
    removed: Vec<Symbol>,
    changed: Vec<Symbol>,
}

fn declarations(patch: &str) -> Declarations {
    let mut all = Declarations::default();
    for (_, file) in symbols_by_file(patch) {
        let has = |list: &[Symbol], s: &Symbol| list.iter().any(|o| o.name == s.name);
        for s in &file.added {
            if has(&file.removed, s) {
                push_new(&mut all.changed, s.clone());
            } else {
                push_new(&mut all.added, s.clone());
            }
        }
        for s in &file.removed {
            if !has(&file.added, s) {
                push_new(&mut all.removed, s.clone());
            }
        }
        for s in &file.touched {
            if !has(&file.added, s) && !has(&file.removed, s) {
                push_new(&mut all.changed, s.clone());
            }
        }
    }
    all
}

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
    fn declarations_are_recognised_per_language() {
        assert_eq!(
            rust_symbol("pub(crate) async fn merge_line<E>("),
            Some("merge_line".into())
        );
        assert_eq!(
            rust_symbol("    pub struct LineInfo {"),
            Some("LineInfo".into())
        );
        assert_eq!(rust_symbol("const MAX: usize = 3;"), None);
        assert_eq!(rust_symbol("let fn_name = 3;"), None);
        assert_eq!(rust_symbol("pubfn x()"), None);
        assert_eq!(
            python_symbol("    async def fetch(self):"),
            Some("fetch".into())
        );
        assert_eq!(python_symbol("class Store(Base):"), Some("Store".into()));
        assert_eq!(
            script_symbol("export default async function load() {"),
            Some("load".into())
        );
        assert_eq!(
            script_symbol("export const add = (a, b) => a + b;"),
            Some("add".into())
        );
        assert_eq!(
            script_symbol("const handler: Fn = async () => {}"),
            Some("handler".into())
        );
        assert_eq!(script_symbol("const limit = 5;"), None);
        assert_eq!(script_symbol("interface Props {"), Some("Props".into()));
        assert_eq!(
            go_symbol("func (s *Server) Serve(ctx context.Context) error {"),
            Some("Serve".into())
        );
        assert_eq!(go_symbol("type Config struct {"), Some("Config".into()));
        assert_eq!(heading("## Lines of work ##"), Some("Lines of work".into()));
        assert_eq!(heading("#hashtag"), None);
        assert_eq!(heading("####### seven"), None);
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

    #[test]
    fn test_files_are_recognised() {
        for path in [
            "tests/a.rs",
            "pkg/x_test.go",
            "test_x.py",
            "a/b.test.ts",
            "src/__tests__/x.js",
        ] {
            assert!(is_test_path(path), "{path}");
        }
        for path in ["src/testing.rs", "latest.py", "contest/x.go"] {
            assert!(!is_test_path(path), "{path}");
        }
    }

    #[test]
    fn header_paths_are_read_back() {
        assert_eq!(
            header_path("diff --git a/x y/z.rs b/x y/z.rs"),
            Some("x y/z.rs".into())
        );
        assert_eq!(header_path("diff --git a/a b/a"), Some("a".into()));
    }
}
