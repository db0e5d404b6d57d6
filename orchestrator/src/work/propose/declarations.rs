//! The declarations a patch adds, removes or changes, where the language is recognisable:
//! functions, types and modules (Rust, Python, JavaScript/TypeScript, Go) and headings
//! (Markdown), each marked when it is a test. Line-based on purpose: a proposal needs names,
//! not a parse tree, and a patch shows fragments of files anyway.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Code,
    Heading,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Symbol {
    name: String,
    kind: Kind,
    /// A test (in a test file, or marked as one).
    pub(super) test: bool,
}

impl Symbol {
    /// As a proposal names it: code by its name, headings quoted.
    pub(super) fn shown(&self) -> String {
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
pub(super) fn is_test_path(path: &str) -> bool {
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
pub(super) struct Declarations {
    pub(super) added: Vec<Symbol>,
    pub(super) removed: Vec<Symbol>,
    pub(super) changed: Vec<Symbol>,
}

pub(super) fn declarations(patch: &str) -> Declarations {
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

#[cfg(test)]
mod tests {
    use super::*;

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
