//! Walks a parsed shell program and finds the first place where git would start.
//!
//! Every simple command's words are brace-expanded ([`super::braces`]) and de-quoted (unquoted
//! pattern characters kept as [`super::glob`]'s stand-ins), then resolved through
//! [`super::wrappers`]; every word is searched for command substitutions (also
//! inside double quotes, parameter expansions, arithmetic, `[[ … ]]` tests and unquoted
//! here-docs); scripts handed to a shell (`sh -c`, `eval`, a pipeline into `sh`, a here-doc fed
//! to `bash`) are parsed and walked in turn, and code handed to another language is judged by
//! [`super::interpreters`]. Scripts that do not parse, are too large or nest too deeply go to
//! [`super::fallback`].
//!
//! A command word computed at run time (`$GIT status`, `$(which x) log`, `eval "$X"`,
//! `xargs -I{} {}`) is blocked when the whole command line mentions git
//! ([`super::programs::mentions_git`]) and allowed when it does not.

use std::collections::HashMap;

use brush_parser::ast;
use brush_parser::word::{
    self, Parameter, ParameterExpr, TildeExpr, WordPiece, WordPieceWithSource,
};
use brush_parser::{Parser, ParserOptions};

use super::interpreters::{self, Code};
use super::parameter::{self, Removal, Replace};
use super::wrappers::{self, DYNAMIC, Runs};
use super::{braces, fallback, glob, output, programs};

/// Scripts longer than this are not parsed but scanned.
pub const MAX_PARSE_BYTES: usize = 128 * 1024;
/// Nesting of brackets and quotes deeper than this is not parsed but scanned (the parser
/// recurses per level).
const MAX_BRACKET_NESTING: usize = 48;
/// Scripts inside scripts (`sh -c "$(eval …)"`) deeper than this are scanned, not parsed.
const MAX_SCRIPT_DEPTH: usize = 12;
/// Wrappers inside wrappers (`sudo env nice git`) resolved at most this deep.
const MAX_WRAPPER_HOPS: usize = 16;
/// Total bytes of scripts parsed for one command, nested ones included.
const MAX_TOTAL_PARSE_BYTES: usize = 4 * 1024 * 1024;
/// Variable values longer than this (bytes) are taken to be known only at run time.
const MAX_VALUE: usize = 64 * 1024;
/// In an expanded word: a break between fields (an `IFS` character of an unquoted expansion).
const FIELD: char = '\u{6}';
/// In an expanded word: a quoted part begins (a field holding one is kept even when empty).
const QUOTED: char = '\u{7}';

/// What a command reads on its standard input, where that is known before it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Input {
    /// This text (a here-doc, a here-string, what `echo` prints).
    Text(String),
    /// A file's contents (`< deploy.sh`, `cat a.sh |`): scripts in files are not read, so a
    /// shell fed one runs nothing the hook judges.
    File,
}

impl Input {
    fn text(self) -> Option<String> {
        match self {
            Input::Text(text) => Some(text),
            Input::File => None,
        }
    }
}

/// What was found that would start git.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// git, with the words after `git` (parts known only at run time shown as `…`).
    Git(Vec<String>),
    /// A command word computed at run time, as written (run-time parts shown as `…`), on a
    /// line that mentions git.
    Dynamic(String),
}

/// Every command a script would start, as far as can be known before it runs (for the
/// judge of procedure steps): each simple command's words, wrappers and what they wrap alike,
/// and the first thing known only at run time (a command word, code of another language, a
/// script read from standard input, a script that does not parse).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Commands {
    pub programs: Vec<Vec<String>>,
    pub opaque: Option<String>,
    /// Texts read as code: every shell script a command hands on (`sh -c`, `eval`, a command
    /// substitution) and every piece of another language's code (`python -c`).
    pub code: Vec<String>,
}

/// The first git invocation in `script` and every command it would start.
pub fn commands(script: &str) -> (Option<Found>, Commands) {
    programs::new_analysis();
    let mut walker = Walker {
        line_mentions_git: programs::mentions_git(script),
        seen: Some(Commands::default()),
        ..Walker::default()
    };
    walker.script(script);
    let seen = walker.seen.take().unwrap_or_default();
    let found = match (walker.found, walker.pending_dynamic) {
        (Some(found), _) => Some(found),
        (None, Some(word)) if walker.line_mentions_git => Some(Found::Dynamic(word)),
        _ => None,
    };
    (found, seen)
}

/// Find the first git invocation in `script`, parsing it as bash.
pub fn find_git(script: &str) -> Option<Found> {
    programs::new_analysis();
    let mut walker = Walker {
        line_mentions_git: programs::mentions_git(script),
        ..Walker::default()
    };
    walker.script(script);
    match (walker.found, walker.pending_dynamic) {
        (Some(found), _) => Some(found),
        // A run-time command word is blocked when the line mentions git anywhere, also in a
        // spelling only de-quoting reveals (`g''it`), wherever on the line that is.
        (None, Some(word)) if walker.line_mentions_git => Some(Found::Dynamic(word)),
        _ => None,
    }
}

#[derive(Default)]
struct Walker {
    found: Option<Found>,
    /// The whole command line mentions git, as written or de-quoted (decides run-time command
    /// words).
    line_mentions_git: bool,
    /// The first run-time command word seen, as shown.
    pending_dynamic: Option<String>,
    /// Process substitutions read by a command (`<(…)`), by the file name the command sees,
    /// with what they write when that is known.
    substitutions: HashMap<String, Option<String>>,
    /// The top-level simple command being resolved, as written (shown for run-time command
    /// words).
    written: String,
    /// Variables with a known value, from plain assignments seen so far (`G=git; $G status`).
    vars: HashMap<String, String>,
    depth: usize,
    parsed_bytes: usize,
    options: ParserOptions,
    /// Every command seen, when the caller asked for them ([`commands`]).
    seen: Option<Commands>,
}

impl Walker {
    /// Notes something known only at run time (kept: the first one).
    fn opaque(&mut self, what: impl FnOnce() -> String) {
        if let Some(seen) = &mut self.seen
            && seen.opaque.is_none()
        {
            seen.opaque = Some(what());
        }
    }

    fn script(&mut self, text: &str) {
        if self.found.is_some() || text.trim().is_empty() {
            return;
        }
        self.parsed_bytes += text.len();
        if self.depth >= MAX_SCRIPT_DEPTH
            || text.len() > MAX_PARSE_BYTES
            || self.parsed_bytes > MAX_TOTAL_PARSE_BYTES
            || bracket_nesting(text) > MAX_BRACKET_NESTING
        {
            return self.fallback(text);
        }
        let parsed = Parser::new(std::io::Cursor::new(text), &self.options).parse_program();
        match parsed {
            Ok(program) => {
                self.depth += 1;
                for list in &program.complete_commands {
                    self.compound_list(list);
                }
                self.depth -= 1;
            }
            Err(_) => self.fallback(text),
        }
    }

    fn fallback(&mut self, text: &str) {
        self.opaque(|| {
            let start: String = text.chars().take(80).collect();
            format!("a script that cannot be parsed: {}", shown(&start))
        });
        if self.found.is_none()
            && let Some(args) = fallback::git_in_command_position(text)
        {
            self.found = Some(Found::Git(args));
        }
    }

    fn compound_list(&mut self, list: &ast::CompoundList) {
        for item in &list.0 {
            self.and_or(&item.0);
        }
    }

    fn and_or(&mut self, list: &ast::AndOrList) {
        self.pipeline(&list.first);
        for next in &list.additional {
            match next {
                // May or may not run: what it sets is known only at run time.
                ast::AndOr::And(p) | ast::AndOr::Or(p) => self.maybe(|w| {
                    w.pipeline(p);
                }),
            }
        }
    }

    /// Walk a pipeline; returns what it writes when that is known statically. In a pipeline
    /// of several commands each runs in a subshell: what they set is gone after it.
    fn pipeline(&mut self, pipeline: &ast::Pipeline) -> Option<Input> {
        let mut feed: Option<Input> = None;
        let apart = pipeline.seq.len() > 1;
        for command in &pipeline.seq {
            if self.found.is_some() {
                return None;
            }
            let fed = feed.take();
            feed = if apart {
                self.apart(|w| w.command(command, fed))
            } else {
                self.command(command, fed)
            };
        }
        feed
    }

    /// Walks what runs in a subshell (or a function's body, run when called): the variables
    /// it sets do not outlive it.
    fn apart<R>(&mut self, walk: impl FnOnce(&mut Self) -> R) -> R {
        let saved = self.vars.clone();
        let result = walk(self);
        self.vars = saved;
        result
    }

    /// Walks what may or may not run (after `&&`/`||`, an `if`'s branches, a loop's body): a
    /// variable it sets or unsets is known only at run time afterwards.
    fn maybe(&mut self, walk: impl FnOnce(&mut Self)) {
        let saved = self.vars.clone();
        walk(self);
        let changed: Vec<String> = saved
            .keys()
            .chain(self.vars.keys())
            .filter(|k| saved.get(*k) != self.vars.get(*k))
            .cloned()
            .collect();
        for name in changed {
            self.vars.insert(name, DYNAMIC.to_string());
        }
    }

    /// Walk the list of a process substitution; returns what it writes when that is known
    /// statically (`<(echo 'git status')`).
    fn substitution_output(&mut self, list: &ast::CompoundList) -> Option<Input> {
        match list.0.as_slice() {
            [item] if item.0.additional.is_empty() => self.pipeline(&item.0.first),
            _ => {
                self.compound_list(list);
                None
            }
        }
    }

    /// `bash <(…)`, `source <(…)`, `. <(…)`: the shell runs what the substitution writes.
    fn sourced_substitution(&mut self, argv: &[String], stdin: Option<&Input>) {
        let name = programs::program_name(&argv[0]);
        let sources = matches!(&*name, "source" | ".");
        if !(sources || wrappers::is_shell(&name)) {
            return;
        }
        let Some(file) = argv[1..].iter().find(|a| !a.starts_with(['-', '+'])) else {
            return;
        };
        // `source /dev/stdin <<< …`: the script is the command's input (for a shell,
        // `wrappers::shell` says so).
        if sources && wrappers::is_stdin_file(file) {
            match stdin {
                Some(Input::File) => {}
                Some(Input::Text(text)) => self.script(text),
                None => self.dynamic(file),
            }
            return;
        }
        match self.substitutions.get(file) {
            Some(Some(text)) => {
                let text = text.clone();
                self.script(&text);
            }
            Some(None) => self.dynamic(file),
            None => {}
        }
    }

    /// Walk one command; returns what it writes to stdout when that is known statically
    /// (`echo 'git status'`), for a shell later in the pipeline.
    fn command(&mut self, command: &ast::Command, stdin: Option<Input>) -> Option<Input> {
        match command {
            ast::Command::Simple(simple) => return self.simple(simple, stdin),
            ast::Command::Compound(compound, redirects) => {
                self.compound(compound);
                self.redirects(redirects.as_ref());
            }
            ast::Command::Function(function) => self.apart(|w| {
                w.compound(&function.body.0);
                w.redirects(function.body.1.as_ref());
            }),
            ast::Command::ExtendedTest(test, redirects) => {
                self.extended_test(&test.expr);
                self.redirects(redirects.as_ref());
            }
        }
        None
    }

    fn redirects(&mut self, redirects: Option<&ast::RedirectList>) {
        for redirect in redirects.into_iter().flat_map(|r| &r.0) {
            self.redirect(redirect);
        }
    }

    fn compound(&mut self, compound: &ast::CompoundCommand) {
        use ast::CompoundCommand as C;
        match compound {
            C::Arithmetic(a) => self.raw_text(&a.expr.value),
            C::ArithmeticForClause(f) => {
                for expr in [&f.initializer, &f.condition, &f.updater]
                    .into_iter()
                    .flatten()
                {
                    self.raw_text(&expr.value);
                }
                self.maybe(|w| w.compound_list(&f.body.list));
            }
            C::BraceGroup(g) => self.compound_list(&g.list),
            C::Subshell(s) => self.apart(|w| w.compound_list(&s.list)),
            C::ForClause(f) => {
                for value in f.values.iter().flatten() {
                    self.word(&value.value);
                    // `for g in /usr/bin/gi?; do $g status; done`: the loop runs its values.
                    self.note_mention_in(&value.value);
                }
                // The loop's variable takes each value in turn.
                self.vars
                    .insert(f.variable_name.clone(), DYNAMIC.to_string());
                self.maybe(|w| w.compound_list(&f.body.list));
            }
            C::CaseClause(c) => {
                self.word(&c.value.value);
                self.maybe(|w| {
                    for case in &c.cases {
                        for pattern in &case.patterns {
                            w.word(&pattern.value);
                        }
                        if let Some(cmd) = &case.cmd {
                            w.compound_list(cmd);
                        }
                    }
                });
            }
            C::IfClause(i) => {
                self.compound_list(&i.condition);
                self.maybe(|w| {
                    w.compound_list(&i.then);
                    for clause in i.elses.iter().flatten() {
                        if let Some(condition) = &clause.condition {
                            w.compound_list(condition);
                        }
                        w.compound_list(&clause.body);
                    }
                });
            }
            C::WhileClause(w) | C::UntilClause(w) => self.maybe(|walker| {
                walker.compound_list(&w.0);
                walker.compound_list(&w.1.list);
            }),
            C::Coprocess(c) => self.apart(|w| {
                w.command(&c.body, None);
            }),
        }
    }

    fn extended_test(&mut self, expr: &ast::ExtendedTestExpr) {
        use ast::ExtendedTestExpr as E;
        match expr {
            E::And(a, b) | E::Or(a, b) => {
                self.extended_test(a);
                self.extended_test(b);
            }
            E::Not(a) | E::Parenthesized(a) => self.extended_test(a),
            E::UnaryTest(_, w) => self.word(&w.value),
            E::BinaryTest(_, a, b) => {
                self.word(&a.value);
                self.word(&b.value);
            }
        }
    }

    /// Returns the here-doc or here-string text fed to the command, if any.
    fn redirect(&mut self, redirect: &ast::IoRedirect) -> Option<Input> {
        match redirect {
            ast::IoRedirect::File(fd, kind, target) => match target {
                // `bash < deploy.sh`: a script file, not read (as `bash deploy.sh`).
                ast::IoFileRedirectTarget::Filename(w)
                    if matches!(kind, ast::IoFileRedirectKind::Read)
                        && fd.is_none_or(|fd| fd == 0) =>
                {
                    self.word(&w.value);
                    return Some(Input::File);
                }
                ast::IoFileRedirectTarget::Filename(w)
                | ast::IoFileRedirectTarget::Duplicate(w) => self.word(&w.value),
                ast::IoFileRedirectTarget::ProcessSubstitution(kind, sub) => {
                    let output = self.substitution_output(&sub.list);
                    // `bash < <(echo 'git status')`: the output is the command's stdin.
                    if matches!(kind, ast::ProcessSubstitutionKind::Read) {
                        return output;
                    }
                }
                ast::IoFileRedirectTarget::Fd(_) => {}
            },
            ast::IoRedirect::HereDocument(_, doc) => {
                if !doc.requires_expansion {
                    return Some(Input::Text(doc.doc.value.clone()));
                }
                // An unquoted here-doc reaches the command expanded: escapes taken, known
                // variables filled in, substitutions known only at run time.
                return match word::parse_heredoc(&doc.doc.value, &self.options) {
                    Ok(pieces) => {
                        self.pieces(&doc.doc.value, &pieces);
                        let mut text = String::new();
                        self.append_value(&pieces, &mut text, true, false);
                        Some(Input::Text(text))
                    }
                    Err(_) => {
                        self.raw_text(&doc.doc.value);
                        Some(Input::Text(doc.doc.value.clone()))
                    }
                };
            }
            ast::IoRedirect::HereString(_, w) => {
                self.word(&w.value);
                let text = self.value(&w.value);
                self.note_mention(&text);
                return Some(Input::Text(text));
            }
            ast::IoRedirect::OutputAndError(w, _) => self.word(&w.value),
        }
        None
    }

    fn simple(&mut self, simple: &ast::SimpleCommand, feed: Option<Input>) -> Option<Input> {
        let mut words: Vec<String> = Vec::new();
        let mut assignments: Vec<(&str, &str, bool)> = Vec::new();
        let mut stdin = feed;
        let prefix = simple.prefix.iter().flat_map(|p| &p.0);
        let suffix = simple.suffix.iter().flat_map(|s| &s.0);
        let name = simple.word_or_name.iter().map(ItemRef::Word);
        let items = prefix
            .map(ItemRef::Item)
            .chain(name)
            .chain(suffix.map(ItemRef::Item));
        for item in items {
            match item {
                ItemRef::Word(w) | ItemRef::Item(ast::CommandPrefixOrSuffixItem::Word(w)) => {
                    self.word(&w.value);
                    words.extend(braces::expand(&w.value, &self.options));
                }
                ItemRef::Item(ast::CommandPrefixOrSuffixItem::IoRedirect(r)) => {
                    if let Some(input) = self.redirect(r) {
                        stdin = Some(input);
                    }
                }
                ItemRef::Item(ast::CommandPrefixOrSuffixItem::AssignmentWord(a, w)) => {
                    self.word(&w.value);
                    // An array's elements are not followed, but they mention git like any
                    // word (`a=(g\it status); "${a[@]}"`).
                    if let ast::AssignmentValue::Array(elements) = &a.value {
                        for (_, element) in elements {
                            self.note_mention_in(&element.value);
                        }
                    }
                    if words.is_empty() {
                        if let (
                            ast::AssignmentName::VariableName(n),
                            ast::AssignmentValue::Scalar(v),
                        ) = (&a.name, &a.value)
                        {
                            assignments.push((n, &v.value, a.append));
                        }
                    } else {
                        words.push(w.value.clone());
                    }
                }
                ItemRef::Item(ast::CommandPrefixOrSuffixItem::ProcessSubstitution(kind, sub)) => {
                    let output = self.substitution_output(&sub.list);
                    if matches!(kind, ast::ProcessSubstitutionKind::Read) {
                        // The command sees a file name; remember what reading it gives.
                        let file = format!("/dev/fd/{}", 63 - self.substitutions.len().min(60));
                        self.substitutions
                            .insert(file.clone(), output.and_then(Input::text));
                        words.push(file);
                    }
                }
            }
            if self.found.is_some() {
                return None;
            }
        }
        if words.is_empty() {
            for (name, raw, append) in assignments {
                let value = self.value(raw);
                self.assign(name, value, append);
            }
            return None;
        }
        if self.depth == 1 {
            self.written = words.join(" ");
        }
        // Unquoted expansions split into fields (`CMD="git status"; $CMD`), and an unquoted
        // expansion to nothing is no word at all (`E=; $E git status` runs git).
        let argv: Vec<String> = words.iter().flat_map(|w| self.fields(w)).collect();
        if argv.is_empty() {
            return None;
        }
        for word in &argv {
            self.note_mention(word);
        }
        self.remember_exports(&argv);
        self.remember_reads(&argv);
        self.sourced_substitution(&argv, stdin.as_ref());
        self.resolve(&argv, stdin.clone(), 0);
        static_output(&argv, stdin)
    }

    /// `export NAME=value` / `declare`, `local`, `readonly`, `typeset`. With an attribute
    /// that changes what the name expands to (`-n` a reference to another name, `-i` an
    /// arithmetic value, `-a`/`-A` an array), the value is known only at run time.
    fn remember_exports(&mut self, argv: &[String]) {
        if !matches!(
            argv[0].as_str(),
            "export" | "declare" | "local" | "readonly" | "typeset"
        ) {
            return;
        }
        let opaque = argv[0] != "export"
            && argv[1..]
                .iter()
                .any(|a| a.starts_with(['-', '+']) && a.contains(['n', 'i', 'a', 'A']));
        for arg in &argv[1..] {
            if let Some((name, value)) = glob::literal(arg).split_once('=') {
                let value = if opaque {
                    DYNAMIC.to_string()
                } else {
                    value.to_owned()
                };
                match name.strip_suffix('+') {
                    Some(name) => self.assign(name, value, true),
                    None => self.assign(name, value, false),
                }
            }
        }
    }

    /// Whether a word as the command sees it (or a value) makes the line mention git: a name
    /// of git, or a pattern that can expand to one (`x=g\it` once de-quoted, `gi?`).
    fn note_mention(&mut self, word: &str) {
        if !self.line_mentions_git
            && (programs::mentions_git(word) || programs::names_git_by_pattern(word))
        {
            self.line_mentions_git = true;
        }
    }

    /// [`Self::note_mention`] for a word as written (expanded only when it could matter).
    fn note_mention_in(&mut self, raw: &str) {
        if !self.line_mentions_git {
            let value = self.argument(raw);
            self.note_mention(&value);
        }
    }

    /// A variable set on the line: its value (appended to with `+=`), and whether it makes the
    /// line mention git.
    fn assign(&mut self, name: &str, value: String, append: bool) {
        self.note_mention(&value);
        let value = match self.vars.get(name) {
            Some(before) if append => format!("{before}{value}"),
            None if append => format!("{DYNAMIC}{value}"),
            _ => value,
        };
        // A value that keeps growing (`x=$x$x`, `x+=…`) is left to run time.
        let value = if value.len() > MAX_VALUE {
            DYNAMIC.to_string()
        } else {
            value
        };
        self.vars.insert(name.to_owned(), value);
    }

    /// Builtins that set or clear variables to what is known only at run time: `unset NAME`
    /// (empty from then on; `IFS` back to its default), `read NAME…`, `printf -v NAME`,
    /// `mapfile`/`readarray NAME`.
    fn remember_reads(&mut self, argv: &[String]) {
        let names = |from: &[String]| -> Vec<String> {
            from.iter()
                .filter(|a| {
                    !a.is_empty() && a.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                })
                .cloned()
                .collect()
        };
        match argv[0].as_str() {
            "unset" if !argv[1..].iter().any(|a| a == "-f") => {
                for name in names(&argv[1..]) {
                    if name == "IFS" {
                        self.vars.remove(&name);
                    } else {
                        self.vars.insert(name, String::new());
                    }
                }
            }
            "read" | "mapfile" | "readarray" => {
                for name in names(&argv[1..]) {
                    self.vars.insert(name, DYNAMIC.to_string());
                }
            }
            // `printf -v NAME format args…`: NAME holds what it would have printed.
            "printf" if argv.len() > 2 && argv[1] == "-v" => {
                let printed = output::printf(&argv[3..]).unwrap_or_else(|| DYNAMIC.to_string());
                self.assign(&argv[2], printed, false);
            }
            "printf" if argv.len() > 1 && argv[1].len() > 2 && argv[1].starts_with("-v") => {
                let printed = output::printf(&argv[2..]).unwrap_or_else(|| DYNAMIC.to_string());
                self.assign(&argv[1][2..], printed, false);
            }
            _ => {}
        }
    }

    fn resolve(&mut self, argv: &[String], stdin: Option<Input>, hops: usize) {
        if self.found.is_some() || hops > MAX_WRAPPER_HOPS {
            return;
        }
        if let Some(seen) = &mut self.seen {
            seen.programs
                .push(argv.iter().map(|w| glob::literal(w).into_owned()).collect());
        }
        let runs = wrappers::resolve(argv);
        self.runs(runs, stdin, hops);
    }

    fn runs(&mut self, runs: Runs, stdin: Option<Input>, hops: usize) {
        if self.found.is_some() {
            return;
        }
        match runs {
            Runs::Nothing => {}
            Runs::Git(args) => self.found = Some(Found::Git(shown_all(&args))),
            Runs::Command(command) => self.resolve(&command, stdin, hops + 1),
            Runs::Script(script) => {
                // The script is text again: its shell expands its own patterns.
                let script = glob::literal(&script);
                self.saw_code(&script);
                self.script(&script);
            }
            // A script whose text is known only at run time (`… | tee x | sh`).
            Runs::ShellStdin => match stdin {
                Some(Input::File) => {}
                Some(Input::Text(text)) => self.script(&text),
                None => {
                    self.opaque(|| "a script read from standard input".to_owned());
                    self.dynamic("a script read from standard input");
                }
            },
            Runs::Code(mut code) => {
                self.opaque(|| "code of another language".to_owned());
                code.text = glob::literal(&code.text).into_owned();
                self.saw_code(&code.text);
                self.code(&code);
            }
            Runs::CodeStdin(lang) => {
                self.opaque(|| "code of another language".to_owned());
                match stdin {
                    Some(Input::File) => {}
                    Some(Input::Text(text)) => self.code(&Code { lang, text }),
                    None => self.dynamic("code read from standard input"),
                }
            }
            Runs::Dynamic(word) => {
                self.opaque(|| shown(&word));
                self.dynamic(&word);
            }
            Runs::Any(all) => {
                for run in all {
                    self.runs(run, stdin.clone(), hops);
                }
            }
        }
    }

    /// A command word known only at run time: blocked (at the end of the walk) when the line
    /// mentions git.
    fn dynamic(&mut self, word: &str) {
        if self.pending_dynamic.is_none() {
            let written = if self.written.is_empty() {
                shown(word)
            } else {
                self.written.clone()
            };
            self.pending_dynamic = Some(written);
        }
    }

    fn saw_code(&mut self, text: &str) {
        if let Some(seen) = &mut self.seen {
            seen.code.push(text.to_owned());
        }
    }

    /// Code of another language: see [`interpreters`] for the policy.
    fn code(&mut self, code: &Code) {
        if code.text.contains(DYNAMIC)
            && (interpreters::can_spawn(code) || code.text.trim() == DYNAMIC.to_string())
        {
            self.dynamic(&code.text);
        }
        if !interpreters::runs_git(code) {
            return;
        }
        let args = self
            .git_in_literals(&code.text)
            .or_else(|| interpreters::git_in_text(code).map(|a| shown_all(&a)))
            .unwrap_or_else(|| vec!["…".to_owned()]);
        self.found = Some(Found::Git(args));
    }

    /// The git command a string literal of foreign code spells, for the message: a list whose
    /// first element is git (`["git", "log"]`), or a string that as a shell command runs git.
    fn git_in_literals(&mut self, code: &str) -> Option<Vec<String>> {
        let literals = interpreters::literals(code);
        for (i, (text, _)) in literals.iter().enumerate() {
            if let Some(mut args) = programs::git_prefix(text.trim()) {
                args.extend(
                    literals[i + 1..]
                        .iter()
                        .take_while(|(_, in_list)| *in_list)
                        .map(|(t, _)| t.clone()),
                );
                return Some(shown_all(&args));
            }
            if self.depth < MAX_SCRIPT_DEPTH && programs::mentions_git(text) {
                let mut inner = Walker {
                    line_mentions_git: false,
                    depth: self.depth + 1,
                    parsed_bytes: self.parsed_bytes,
                    ..Walker::default()
                };
                inner.script(text);
                self.parsed_bytes = inner.parsed_bytes;
                if let Some(Found::Git(args)) = inner.found {
                    return Some(args);
                }
            }
        }
        None
    }

    /// Search one raw word for command substitutions and walk them.
    fn word(&mut self, raw: &str) {
        if self.found.is_some() || !raw.contains(['$', '`']) {
            return;
        }
        match word::parse(raw, &self.options) {
            Ok(pieces) => self.pieces(raw, &pieces),
            Err(_) => self.raw_text(raw),
        }
    }

    fn pieces(&mut self, raw: &str, pieces: &[WordPieceWithSource]) {
        for piece in pieces {
            match &piece.piece {
                WordPiece::CommandSubstitution(s) => {
                    self.saw_code(s);
                    self.script(s)
                }
                WordPiece::BackquotedCommandSubstitution(s) => self.script(&unescape_backquoted(s)),
                WordPiece::DoubleQuotedSequence(inner)
                | WordPiece::GettextDoubleQuotedSequence(inner) => self.pieces(raw, inner),
                WordPiece::ParameterExpansion(_) | WordPiece::ArithmeticExpression(_) => {
                    if let WordPiece::ParameterExpansion(expr) = &piece.piece {
                        self.default_word(expr);
                    }
                    let text = raw.get(piece.start_index..piece.end_index).unwrap_or(raw);
                    if text.contains("$(") || text.contains('`') {
                        let inner = text.trim_start_matches(['$', '{', '(']);
                        self.fallback(inner);
                    }
                }
                _ => {}
            }
            if self.found.is_some() {
                return;
            }
        }
    }

    /// What a parameter operation gives when its variable was set earlier on the line: the
    /// removals, substrings and replacements [`parameter`] works out, case changes (which do
    /// not matter to the names of git) and `@E`; `None` for the rest.
    fn operated(&self, expr: &ParameterExpr) -> Option<String> {
        use ParameterExpr as P;
        let known = |parameter: &Parameter, indirect: bool| match parameter {
            Parameter::Named(name) if !indirect => {
                self.vars.get(name).filter(|v| !v.contains(DYNAMIC))
            }
            _ => None,
        };
        // The pattern word as bash reads it: unquoted characters are patterns, quoted ones
        // themselves; `None` when part of it is known only at run time.
        let pattern = |raw: &Option<String>| {
            let word = self.expanded(raw.as_deref().unwrap_or(""), true);
            (!word.contains(DYNAMIC)).then(|| word.replace(QUOTED, "").replace(FIELD, " "))
        };
        let removal = |parameter, indirect: &bool, raw, how| {
            let (value, pattern) = (known(parameter, *indirect)?, pattern(raw)?);
            parameter::workable(value, &pattern).then(|| parameter::remove(value, &pattern, how))
        };
        match expr {
            P::RemoveSmallestPrefixPattern {
                parameter,
                indirect,
                pattern: raw,
            } => removal(parameter, indirect, raw, Removal::ShortestPrefix),
            P::RemoveLargestPrefixPattern {
                parameter,
                indirect,
                pattern: raw,
            } => removal(parameter, indirect, raw, Removal::LongestPrefix),
            P::RemoveSmallestSuffixPattern {
                parameter,
                indirect,
                pattern: raw,
            } => removal(parameter, indirect, raw, Removal::ShortestSuffix),
            P::RemoveLargestSuffixPattern {
                parameter,
                indirect,
                pattern: raw,
            } => removal(parameter, indirect, raw, Removal::LongestSuffix),
            P::Substring {
                parameter,
                indirect,
                offset,
                length,
            } => parameter::substring(
                known(parameter, *indirect)?,
                &offset.value,
                length.as_ref().map(|l| l.value.as_str()),
            ),
            P::ReplaceSubstring {
                parameter,
                indirect,
                pattern: raw,
                replacement,
                match_kind,
            } => {
                let value = known(parameter, *indirect)?;
                let with = self.value(replacement.as_deref().unwrap_or(""));
                // `&` stands for the match (bash's `patsub_replacement`): left to run time.
                if with.contains([DYNAMIC, '&']) {
                    return None;
                }
                let how = match match_kind {
                    word::SubstringMatchKind::FirstOccurrence => Replace::First,
                    word::SubstringMatchKind::Anywhere => Replace::All,
                    word::SubstringMatchKind::Prefix => Replace::Prefix,
                    word::SubstringMatchKind::Suffix => Replace::Suffix,
                };
                let pattern = pattern(&Some(raw.clone()))?;
                parameter::workable(value, &pattern)
                    .then(|| parameter::replace(value, &pattern, &with, how))
            }
            P::UppercaseFirstChar {
                parameter,
                indirect,
                ..
            }
            | P::UppercasePattern {
                parameter,
                indirect,
                ..
            }
            | P::LowercaseFirstChar {
                parameter,
                indirect,
                ..
            }
            | P::LowercasePattern {
                parameter,
                indirect,
                ..
            } => known(parameter, *indirect).cloned(),
            P::Transform {
                parameter,
                indirect,
                op: word::ParameterTransformOp::ExpandEscapeSequences,
            } => known(parameter, *indirect).map(|v| ansi_c(v)),
            _ => None,
        }
    }

    /// What a substitution of one `echo` or `printf` of known words prints
    /// (`$(printf 'g\151t') status`).
    fn printed(&self, script: &str) -> Option<String> {
        if !(script.contains("echo") || script.contains("printf")) {
            return None;
        }
        let program = Parser::new(std::io::Cursor::new(script), &self.options)
            .parse_program()
            .ok()?;
        let [list] = program.complete_commands.as_slice() else {
            return None;
        };
        let [item] = list.0.as_slice() else {
            return None;
        };
        let [ast::Command::Simple(simple)] = item.0.first.seq.as_slice() else {
            return None;
        };
        if !item.0.additional.is_empty() || simple.prefix.is_some() {
            return None;
        }
        let name = simple.word_or_name.as_ref()?;
        let mut argv = vec![self.argument(&name.value)];
        for suffix in simple.suffix.iter().flat_map(|s| &s.0) {
            let ast::CommandPrefixOrSuffixItem::Word(w) = suffix else {
                return None;
            };
            argv.extend(self.fields(&w.value));
        }
        if argv.iter().any(|w| w.contains(DYNAMIC)) {
            return None;
        }
        let argv: Vec<String> = argv.iter().map(|w| glob::literal(w).into_owned()).collect();
        match argv[0].as_str() {
            "echo" | "printf" => static_output(&argv, None).and_then(Input::text),
            _ => None,
        }
    }

    /// `${X:-git}`, `${X:=g*}`, `${X:+git}`: the word the expansion gives when `X` is unset
    /// (or set) is a mention of git like any other, for deciding run-time command words.
    fn default_word(&mut self, expr: &ParameterExpr) {
        let (ParameterExpr::UseDefaultValues {
            default_value: Some(word),
            ..
        }
        | ParameterExpr::AssignDefaultValues {
            default_value: Some(word),
            ..
        }
        | ParameterExpr::UseAlternativeValue {
            alternative_value: Some(word),
            ..
        }) = expr
        else {
            return;
        };
        self.note_mention_in(word);
        // `${X:=word}` sets X when it is unset (or empty): from then on it is either.
        if let ParameterExpr::AssignDefaultValues {
            parameter: Parameter::Named(name),
            ..
        } = expr
            && self.vars.get(name).is_none_or(String::is_empty)
        {
            self.vars.insert(name.clone(), DYNAMIC.to_string());
        }
    }

    /// Text that is not a word of its own (arithmetic): scan it for substitutions.
    fn raw_text(&mut self, text: &str) {
        if text.contains("$(") || text.contains('`') {
            self.fallback(text);
        }
    }

    /// The word as the command will see it, with run-time parts replaced by [`DYNAMIC`], where
    /// bash expands no patterns (an assignment's value, a here-string).
    fn value(&self, raw: &str) -> String {
        self.expanded(raw, false)
    }

    /// A command's word as the command will see it: run-time parts replaced by [`DYNAMIC`],
    /// pattern characters bash would expand as [`glob`]'s stand-ins, its fields joined by a
    /// space.
    fn argument(&self, raw: &str) -> String {
        self.fields(raw).join(" ")
    }

    /// A command's word as the fields bash makes of it: [`Self::argument`], split where an
    /// unquoted expansion holds a character of `IFS`; a field with nothing quoted in it that
    /// comes out empty is dropped.
    fn fields(&self, raw: &str) -> Vec<String> {
        let word = self.expanded(raw, true);
        if !word.contains([FIELD, QUOTED]) {
            return if word.is_empty() {
                Vec::new()
            } else {
                vec![word]
            };
        }
        word.split(FIELD)
            .filter(|field| !field.is_empty())
            .map(|field| field.replace(QUOTED, ""))
            .collect()
    }

    /// An expansion's text; unquoted (`expands`), split into fields and read as a pattern.
    fn push_expansion(&self, out: &mut String, text: &str, expands: bool) {
        if expands {
            out.push_str(&glob::pattern(&self.split_text(text)));
        } else {
            out.push_str(text);
        }
    }

    /// An unquoted expansion's text with its `IFS` characters as [`FIELD`] breaks.
    fn split_text(&self, text: &str) -> String {
        let ifs = self.vars.get("IFS").map_or(" \t\n", String::as_str);
        // An `IFS` known only at run time: where the text splits is unknown, and the run-time
        // parts of the text must stay what they are.
        if ifs.contains(DYNAMIC) {
            return text.to_owned();
        }
        text.chars()
            .map(|c| if ifs.contains(c) { FIELD } else { c })
            .collect()
    }

    fn expanded(&self, raw: &str, globbing: bool) -> String {
        match word::parse(raw, &self.options) {
            Ok(pieces) => {
                let mut out = String::new();
                self.append_value(&pieces, &mut out, false, globbing);
                out
            }
            Err(_) => raw.replace(['"', '\'', '\\'], ""),
        }
    }

    /// `quoted`: inside double quotes; `globbing`: unquoted patterns are expanded here.
    fn append_value(
        &self,
        pieces: &[WordPieceWithSource],
        out: &mut String,
        quoted: bool,
        globbing: bool,
    ) {
        let expands = globbing && !quoted;
        for piece in pieces {
            if expands
                && matches!(
                    piece.piece,
                    WordPiece::SingleQuotedText(_)
                        | WordPiece::AnsiCQuotedText(_)
                        | WordPiece::DoubleQuotedSequence(_)
                        | WordPiece::GettextDoubleQuotedSequence(_)
                        | WordPiece::EscapeSequence(_)
                )
            {
                out.push(QUOTED);
            }
            match &piece.piece {
                WordPiece::Text(s) if expands => out.push_str(&glob::pattern(s)),
                WordPiece::Text(s) | WordPiece::SingleQuotedText(s) => out.push_str(s),
                WordPiece::AnsiCQuotedText(s) => out.push_str(&ansi_c(s)),
                WordPiece::DoubleQuotedSequence(inner)
                | WordPiece::GettextDoubleQuotedSequence(inner) => {
                    self.append_value(inner, out, true, globbing)
                }
                WordPiece::EscapeSequence(s) => {
                    let escaped = s.strip_prefix('\\').unwrap_or(s);
                    if escaped != "\n" {
                        if quoted && !matches!(escaped, "$" | "`" | "\"" | "\\") {
                            out.push('\\');
                        }
                        out.push_str(escaped);
                    }
                }
                // `~`, `~+`, `~-` with `HOME`, `PWD`, `OLDPWD` set earlier on the line.
                WordPiece::TildeExpansion(tilde) => {
                    let name = match tilde {
                        TildeExpr::Home => Some("HOME"),
                        TildeExpr::WorkingDir => Some("PWD"),
                        TildeExpr::OldWorkingDir => Some("OLDPWD"),
                        _ => None,
                    };
                    match name.and_then(|n| self.vars.get(n)) {
                        Some(dir) => out.push_str(dir),
                        None => out.push('~'),
                    }
                }
                WordPiece::ParameterExpansion(ParameterExpr::Parameter {
                    parameter: Parameter::Named(name),
                    indirect: false,
                }) => match (self.vars.get(name), name.as_str()) {
                    (Some(value), _) => self.push_expansion(out, value, expands),
                    (None, "SHELL" | "BASH") => out.push_str("sh"),
                    _ => out.push(DYNAMIC),
                },
                // An operation on a value set earlier on the line (`${x#x}`, `${x:2}`).
                WordPiece::ParameterExpansion(expr) => match self.operated(expr) {
                    Some(value) => self.push_expansion(out, &value, expands),
                    None => out.push(DYNAMIC),
                },
                WordPiece::CommandSubstitution(s) | WordPiece::BackquotedCommandSubstitution(s)
                    if locates_git(s) =>
                {
                    out.push_str("/usr/bin/git")
                }
                WordPiece::CommandSubstitution(s) | WordPiece::BackquotedCommandSubstitution(s) => {
                    let known = match &piece.piece {
                        WordPiece::CommandSubstitution(_) => cat_heredoc(s).map(str::to_owned),
                        _ => None,
                    }
                    .or_else(|| self.printed(s));
                    match known {
                        // A substitution's output loses its trailing newlines.
                        Some(text) => {
                            self.push_expansion(out, text.trim_end_matches('\n'), expands)
                        }
                        None => out.push(DYNAMIC),
                    }
                }
                _ => out.push(DYNAMIC),
            }
        }
    }
}

enum ItemRef<'a> {
    Word(&'a ast::Word),
    Item(&'a ast::CommandPrefixOrSuffixItem),
}

/// `$(which git)`, `$(command -v git)`: the path of git, used as a command name.
fn locates_git(script: &str) -> bool {
    let words: Vec<&str> = script.split_whitespace().collect();
    matches!(
        words.as_slice(),
        ["which", "git"]
            | ["command", "-v", "git"]
            | ["type", "-p" | "-P", "git"]
            | ["whereis", "-b", "git"]
    )
}

/// The body of `$(cat <<'EOF' … EOF)`, the usual way to pass a multi-line commit message.
fn cat_heredoc(script: &str) -> Option<&str> {
    let script = script.trim_start();
    let (first, rest) = script.split_once('\n')?;
    let tag = first
        .trim()
        .strip_prefix("cat")?
        .trim_start()
        .strip_prefix("<<")?;
    let tag = tag.trim_start_matches('-').trim().trim_matches(['\'', '"']);
    if tag.is_empty() || !tag.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return None;
    }
    let mut end = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim() == tag {
            return Some(&rest[..end]);
        }
        end += line.len();
    }
    None
}

/// What `echo …` / `printf …` / `cat <<EOF` prints, as far as it is known.
fn static_output(argv: &[String], stdin: Option<Input>) -> Option<Input> {
    let name = programs::program_name(&argv[0]);
    let name: &str = &name;
    match name {
        "cat" if argv[1..].iter().all(|a| a.starts_with('-')) => stdin,
        // Files' contents: scripts in files are not read.
        "cat" => Some(Input::File),
        // Parts known only at run time stay marked: a shell may read this as its script.
        "echo" => output::echo(&argv[1..]).map(|s| Input::Text(glob::literal(&s).into_owned())),
        "printf" if argv.get(1).is_some_and(|a| a.starts_with("-v")) => None,
        "printf" => output::printf(&argv[1..]).map(|s| Input::Text(glob::literal(&s).into_owned())),
        _ => None,
    }
}

/// A word as shown to the Brain: run-time parts as `…`, patterns as written.
fn shown(word: &str) -> String {
    glob::literal(&word.replace(DYNAMIC, "…")).into_owned()
}

fn shown_all(words: &[String]) -> Vec<String> {
    words.iter().map(|w| shown(w)).collect()
}

/// Inside backquotes, `\\`, `` \` `` and `\$` stand for the character itself.
fn unescape_backquoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' && matches!(chars.peek(), Some('\\' | '`' | '$')) {
            out.extend(chars.next());
        } else {
            out.push(c);
        }
    }
    out
}

/// Decode the escapes of a `$'…'` string that matter for spelling a command name.
fn ansi_c(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('x') => {
                let hex: String = std::iter::from_fn(|| chars.next_if(|c| c.is_ascii_hexdigit()))
                    .take(2)
                    .collect();
                out.extend(u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32));
            }
            Some(d @ '0'..='7') => {
                let mut oct = String::from(d);
                oct.extend(
                    std::iter::from_fn(|| chars.next_if(|c| ('0'..='7').contains(c))).take(2),
                );
                out.extend(u32::from_str_radix(&oct, 8).ok().and_then(char::from_u32));
            }
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    out
}

/// The deepest nesting of brackets and substitutions, counted without parsing.
fn bracket_nesting(text: &str) -> usize {
    let mut depth = 0usize;
    let mut max = 0usize;
    for b in text.bytes() {
        match b {
            b'(' | b'{' | b'[' => {
                depth += 1;
                max = max.max(depth);
            }
            b')' | b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sub(script: &str) -> Option<String> {
        match find_git(script)? {
            Found::Git(args) => Some(args.first().cloned().unwrap_or_default()),
            Found::Dynamic(word) => Some(format!("dynamic {word}")),
        }
    }

    #[test]
    fn finds_git_behind_operators_and_wrappers() {
        assert_eq!(sub("cd /tmp && git status").as_deref(), Some("status"));
        assert_eq!(sub("GIT_PAGER=cat git log").as_deref(), Some("log"));
        assert_eq!(sub("echo foo | git commit -F -").as_deref(), Some("commit"));
        assert_eq!(sub("x=$(git rev-parse HEAD)").as_deref(), Some("rev-parse"));
        assert_eq!(sub("echo \"`git log`\"").as_deref(), Some("log"));
        assert_eq!(sub("sh -c 'git status'").as_deref(), Some("status"));
        assert_eq!(sub("echo 'git status' | sh").as_deref(), Some("status"));
        assert_eq!(sub("g\\it diff").as_deref(), Some("diff"));
        assert_eq!(sub("'g''it' diff").as_deref(), Some("diff"));
        assert_eq!(sub("G=git; $G status").as_deref(), Some("status"));
    }

    #[test]
    fn git_as_data_is_not_found() {
        assert_eq!(sub("echo git && ls"), None);
        assert_eq!(sub("grep -r git src"), None);
        assert_eq!(sub("cat > notes <<'EOF'\ngit status\nEOF"), None);
        assert_eq!(sub("# git status"), None);
    }

    #[test]
    fn deep_nesting_falls_back_without_crashing() {
        let deep = format!("{}git status{}", "(".repeat(5000), ")".repeat(5000));
        assert_eq!(sub(&deep).as_deref(), Some("status"));
        let subst = format!("{}echo{}", "$(".repeat(3000), ")".repeat(3000));
        assert_eq!(sub(&subst), None);
    }
}
