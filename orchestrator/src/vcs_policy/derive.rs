//! Deriving the option tables from the installed git (tests only).
//!
//! For every command path of the allow-list that git parses with parse-options, this reads
//! `git <path> --help-all` (the usage text with hidden options) and checks it against
//! `git <path> --git-completion-helper-all` (the long options, `=` marking a required value,
//! which also tells `PARSE_OPT_LASTARG_DEFAULT` options apart). The result is rendered as the
//! Rust source of [`super::git_options`].
//!
//! `git_options_match_installed_git` compares the installed git with the checked-in tables:
//! an option the tables do not have (a newer git) fails the test, so a new option is looked
//! at and classified before Butler's tables know it (until then it is refused as unknown).
//! `BUTLER_REGENERATE_GIT_OPTIONS=1` rewrites `git_options.rs` from the installed git.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use butler_worker::process::{ChildEnv, ChildSpec, Limits, env, run_blocking};

use super::allow;
use super::table::Arg;

/// One option as derived (owned strings; rendered into `git_options.rs`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Derived {
    pub id: String,
    pub short: Option<char>,
    pub long: Option<String>,
    pub arg: Arg,
    pub negatable: bool,
    pub alias_of: Option<String>,
    pub number: bool,
    pub nodash: bool,
}

fn git(cwd: &Path, args: &[&str]) -> (String, String) {
    let mut vars = ChildEnv::new();
    vars.inherit(env::inherited(), env::BASE)
        .set("LC_ALL", "C")
        .set("LANGUAGE", "C")
        .set("GIT_CONFIG_NOSYSTEM", "1")
        .set("GIT_CONFIG_GLOBAL", "/dev/null")
        .set("GIT_PAGER", "cat")
        .set("PAGER", "cat");
    let spec = ChildSpec::new("git", cwd, vars).args(args);
    let done = run_blocking(spec, Limits::new(Duration::from_secs(60)).keep(4 << 20, 0));
    (done.stdout.text(), done.stderr.text())
}

/// The installed git's version (`2.47.3`).
pub(super) fn installed_version(cwd: &Path) -> String {
    let (out, _) = git(cwd, &["version"]);
    out.trim()
        .strip_prefix("git version ")
        .unwrap_or(out.trim())
        .to_owned()
}

/// The column where parse-options starts the help text.
const HELP_COLUMN: usize = 26;

/// Parses parse-options' usage (`--help-all`) into options.
pub(super) fn parse_usage(text: &str) -> Result<Vec<Derived>, String> {
    let mut out: Vec<Derived> = Vec::new();
    for line in text.lines() {
        let Some(body) = line.strip_prefix("    ") else {
            continue;
        };
        let first = body.chars().next().unwrap_or(' ');
        let nodash =
            matches!(first, '(' | ')' | '!') && body[1..].chars().next().is_none_or(|c| c == ' ');
        if first != '-' && !nodash {
            continue;
        }
        let (spec, help) = split_help(line);
        if nodash {
            let id = match first {
                '(' => "(",
                ')' => ")",
                _ => "!",
            };
            out.push(Derived {
                id: id.to_owned(),
                short: Some(first),
                long: None,
                arg: Arg::None,
                negatable: false,
                alias_of: None,
                number: false,
                nodash: true,
            });
            continue;
        }
        if let Some(positive) = help.strip_prefix("opposite of --no-") {
            // A line git adds for `--no-x` options that may be negated: not an option.
            let positive = positive.trim();
            let target = format!("no-{positive}");
            let Some(opt) = out
                .iter_mut()
                .find(|o| o.long.as_deref() == Some(target.as_str()))
            else {
                return Err(format!("`opposite of --no-{positive}` without the option"));
            };
            opt.negatable = true;
            continue;
        }
        let mut option = parse_spec(spec).map_err(|e| format!("{e}: `{line}`"))?;
        if let Some(target) = help.strip_prefix("alias of --") {
            option.alias_of = Some(target.trim().to_owned());
            option.id = target.trim().to_owned();
        }
        out.push(option);
    }
    // Aliases take their target's value rules.
    let targets: Vec<Derived> = out.clone();
    for opt in &mut out {
        if let Some(target) = &opt.alias_of {
            let t = targets
                .iter()
                .find(|t| t.long.as_deref() == Some(target.as_str()) && t.alias_of.is_none())
                .ok_or_else(|| format!("alias of unknown --{target}"))?;
            opt.arg = t.arg;
            opt.negatable = t.negatable;
        }
    }
    Ok(out)
}

/// Splits an option line into its spec and its help text (same line only). Help starts at
/// column 26 after padding; when the padding is a single space the text there could also be
/// a value placeholder, which starts with `<` or `[`.
fn split_help(line: &str) -> (&str, &str) {
    let bytes = line.as_bytes();
    let padded = bytes.len() > HELP_COLUMN
        && bytes[HELP_COLUMN - 1] == b' '
        && bytes[HELP_COLUMN] != b' '
        && (bytes[HELP_COLUMN - 2] == b' ' || !matches!(bytes[HELP_COLUMN], b'<' | b'['));
    if padded {
        (line[4..HELP_COLUMN].trim_end(), &line[HELP_COLUMN..])
    } else {
        (line[4..].trim_end(), "")
    }
}

fn parse_spec(spec: &str) -> Result<Derived, String> {
    let mut rest = spec;
    let mut short = None;
    let mut long: Option<String> = None;
    let mut negatable = false;
    if rest == "-NUM" {
        return Ok(Derived {
            id: "-NUM".to_owned(),
            short: None,
            long: None,
            arg: Arg::Required,
            negatable: false,
            alias_of: None,
            number: true,
            nodash: false,
        });
    }
    if let Some(r) = rest.strip_prefix('-')
        && !r.starts_with('-')
    {
        let c = r.chars().next().ok_or("empty short option")?;
        short = Some(c);
        rest = &r[c.len_utf8()..];
        if let Some(r) = rest.strip_prefix(", ") {
            rest = r;
        }
    }
    if let Some(r) = rest.strip_prefix("--") {
        let r = match r.strip_prefix("[no-]") {
            Some(r) => {
                negatable = true;
                r
            }
            None => r,
        };
        let end = r
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
            .unwrap_or(r.len());
        if end == 0 {
            return Err("empty long option".to_owned());
        }
        long = Some(r[..end].to_owned());
        rest = &r[end..];
        // `--no-x` options without `[no-]`: negatable only when git prints an "opposite of"
        // line (handled by the caller); other long options without `[no-]` are PARSE_OPT_NONEG.
    } else if short.is_none() {
        return Err("neither a short nor a long option".to_owned());
    }
    let arg = if rest.is_empty() {
        Arg::None
    } else if rest.starts_with("[=") || (rest.starts_with('[') && long.is_none()) {
        Arg::Optional
    } else if rest.starts_with(' ') && rest.len() > 1 && !rest[1..].contains(' ') {
        Arg::Required
    } else if rest.starts_with('[') && long.is_some() {
        // `--[no-]signoff[=...]`-like spellings without `=` do not occur; be strict.
        return Err(format!("unexpected value spelling `{rest}`"));
    } else {
        return Err(format!("unexpected text after the option name: `{rest}`"));
    };
    let id = match (&long, short) {
        (Some(l), _) => l.clone(),
        (None, Some(c)) => format!("-{c}"),
        (None, None) => unreachable!("checked above"),
    };
    Ok(Derived {
        id,
        short,
        long,
        arg,
        negatable,
        alias_of: None,
        number: false,
        nodash: false,
    })
}

/// Parses `--git-completion-helper-all`: long name → whether git marks it as taking a value.
/// The negated forms git appends (`--no-x`, and `--x` for a `--no-x` option) come back too;
/// the caller skips those that are negations of known options.
pub(super) fn parse_completion(text: &str) -> BTreeMap<String, bool> {
    let mut out = BTreeMap::new();
    for word in text.split_whitespace() {
        if let Some(name) = word.strip_prefix("--")
            && !name.is_empty()
        {
            let (name, value) = match name.strip_suffix('=') {
                Some(n) => (n, true),
                None => (name, false),
            };
            out.insert(name.to_owned(), value);
        }
    }
    out
}

/// Derives the options of one command path from the installed git, run in `cwd`.
pub(super) fn derive(cwd: &Path, path: &[&str], probe: &[&str]) -> Result<Vec<Derived>, String> {
    let mut args: Vec<&str> = probe.to_vec();
    args.push("--help-all");
    let (usage, err) = git(cwd, &args);
    if !usage.contains("usage: ") {
        return Err(format!("git {} --help-all: {err}", probe.join(" ")));
    }
    let mut options = parse_usage(&usage).map_err(|e| format!("git {}: {e}", path.join(" ")))?;
    if probe == path {
        let mut args: Vec<&str> = probe.to_vec();
        args.push("--git-completion-helper-all");
        let (completion, _) = git(cwd, &args);
        let completion = parse_completion(&completion);
        for (name, takes_value) in &completion {
            let is_long = |n: &str| options.iter().any(|o| o.long.as_deref() == Some(n));
            if !is_long(name)
                && (name.strip_prefix("no-").is_some_and(&is_long)
                    || is_long(&format!("no-{name}")))
            {
                continue;
            }
            let Some(opt) = options
                .iter_mut()
                .find(|o| o.long.as_deref() == Some(name.as_str()))
            else {
                return Err(format!(
                    "git {}: --{name} is completed but not in the usage",
                    path.join(" ")
                ));
            };
            match (opt.arg, takes_value) {
                (Arg::Required, false) => opt.arg = Arg::RequiredUnlessLast,
                (Arg::None, true) => {
                    return Err(format!(
                        "git {}: --{name} completes with a value but the usage shows none",
                        path.join(" ")
                    ));
                }
                _ => {}
            }
        }
    }
    Ok(options)
}

fn rust_str(s: &str) -> String {
    format!("{s:?}")
}

fn render_option(o: &Derived) -> String {
    if o.number {
        return "O::number()".to_owned();
    }
    if o.nodash {
        return format!(
            "O::nodash({}, {:?})",
            rust_str(&o.id),
            o.short.expect("nodash has a char")
        );
    }
    if let Some(target) = &o.alias_of {
        return format!(
            "O::alias({}, {})",
            rust_str(o.long.as_deref().expect("aliases are long")),
            rust_str(target)
        );
    }
    let short = o
        .short
        .map_or("None".to_owned(), |c| format!("Some({c:?})"));
    let long = o
        .long
        .as_deref()
        .map_or("None".to_owned(), |l| format!("Some({})", rust_str(l)));
    format!(
        "O::po({}, {short}, {long}, Arg::{:?}, {})",
        rust_str(&o.id),
        o.arg,
        o.negatable
    )
}

/// Renders the whole `git_options.rs`.
pub(super) fn render(version: &str, commands: &[DerivedCommand]) -> String {
    let mut s = String::new();
    s.push_str(
        "//! git's own option tables for the command paths `work_vcs` parses with parse-options.\n\
         //!\n\
         //! GENERATED from the installed git's `--help-all` and `--git-completion-helper-all` by\n\
         //! `vcs_policy::derive` — do not edit. Regenerate with\n\
         //! `BUTLER_REGENERATE_GIT_OPTIONS=1 cargo test -p butler-orchestrator git_options_match`.\n\n\
         use super::table::{Arg, RawCommand, RawOption as O};\n\n",
    );
    writeln!(s, "/// The git version these tables were read from.").expect("string");
    writeln!(s, "pub const GIT_VERSION: &str = {};\n", rust_str(version)).expect("string");
    s.push_str("/// Every derived command path with its options, in git's order.\n");
    s.push_str("pub const COMMANDS: &[RawCommand] = &[\n");
    for (path, options) in commands {
        let path: Vec<String> = path.iter().map(|p| rust_str(p)).collect();
        writeln!(s, "    RawCommand {{").expect("string");
        writeln!(s, "        path: &[{}],", path.join(", ")).expect("string");
        writeln!(s, "        options: &[").expect("string");
        for o in options {
            writeln!(s, "            {},", render_option(o)).expect("string");
        }
        writeln!(s, "        ],").expect("string");
        writeln!(s, "    }},").expect("string");
    }
    s.push_str("];\n");
    s
}

/// Derives every parse-options path of the allow-list.
/// A derived command path with its options.
pub(super) type DerivedCommand = (Vec<&'static str>, Vec<Derived>);

pub(super) fn derive_all(cwd: &Path) -> Result<Vec<DerivedCommand>, String> {
    allow::derived_paths()
        .map(|(path, probe)| Ok((path.to_vec(), derive(cwd, path, probe)?)))
        .collect()
}

fn to_derived(o: &super::table::RawOption) -> Derived {
    Derived {
        id: o.id.to_owned(),
        short: o.short,
        long: o.long.map(str::to_owned),
        arg: o.arg,
        negatable: o.negatable,
        alias_of: o.alias_of.map(str::to_owned),
        number: o.number,
        nodash: o.nodash,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vcs_policy::git_options;

    fn scratch_repo() -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("tempdir");
        let (_, err) = git(dir.path(), &["init", "-q"]);
        assert!(err.is_empty(), "{err}");
        dir
    }

    #[test]
    fn usage_lines_parse_like_parse_options_prints_them() {
        let usage = "usage: git x\n\n\
            Group\n\
            \x20   -b <branch>           create\n\
            \x20   -q, --[no-]quiet      quiet\n\
            \x20   --[no-]recurse-submodules[=<checkout>]\n\
            \x20                         recurse\n\
            \x20   --[no-]path blob|tree use a path\n\
            \x20   -C[<score>]           copies\n\
            \x20   --contains <commit>   contains\n\
            \x20   --no-verify           bypass hooks\n\
            \x20   --verify              opposite of --no-verify\n\
            \x20   --no-index            no index\n\
            \x20   --[no-]mailmap        alias of --use-mailmap\n\
            \x20   --[no-]use-mailmap    use it\n\
            \x20   -NUM                  shortcut\n\
            \x20   (\n";
        let opts = parse_usage(usage).expect("parses");
        let find = |id: &str| opts.iter().find(|o| o.id == id).expect(id).clone();
        assert_eq!(find("-b").arg, Arg::Required);
        assert_eq!(find("quiet").short, Some('q'));
        assert!(find("quiet").negatable);
        assert_eq!(find("recurse-submodules").arg, Arg::Optional);
        assert_eq!(find("path").arg, Arg::Required);
        assert_eq!(find("-C").arg, Arg::Optional);
        assert!(
            find("no-verify").negatable,
            "an opposite line makes it negatable"
        );
        assert!(!find("no-index").negatable);
        assert!(!opts.iter().any(|o| o.long.as_deref() == Some("verify")));
        let alias = opts
            .iter()
            .find(|o| o.long.as_deref() == Some("mailmap"))
            .expect("alias");
        assert_eq!(alias.alias_of.as_deref(), Some("use-mailmap"));
        assert!(find("-NUM").number);
        assert!(find("(").nodash);
    }

    #[test]
    fn completion_marks_required_values() {
        let c = parse_completion(" --quiet --conflict= --orphan= --no-quiet -- --no-orphan");
        assert_eq!(c.get("conflict"), Some(&true));
        assert_eq!(c.get("quiet"), Some(&false));
    }

    /// The checked-in tables against the installed git. A newer git with an option the tables
    /// lack fails here: classify it in `allow.rs` and regenerate.
    #[test]
    fn git_options_match_installed_git() {
        let repo = scratch_repo();
        let version = installed_version(repo.path());
        let derived = derive_all(repo.path()).expect("derivation works");
        let rendered = render(&version, &derived);
        let out = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/vcs_policy/git_options.rs");
        if std::env::var_os("BUTLER_REGENERATE_GIT_OPTIONS").is_some() {
            std::fs::write(&out, &rendered).expect("write git_options.rs");
            return;
        }
        let mut problems = Vec::new();
        for (path, options) in &derived {
            let Some(table) = git_options::COMMANDS
                .iter()
                .find(|c| c.path == path.as_slice())
            else {
                problems.push(format!("`git {}` has no table", path.join(" ")));
                continue;
            };
            let known: Vec<Derived> = table.options.iter().map(to_derived).collect();
            for o in options {
                match known
                    .iter()
                    .find(|k| k.id == o.id && k.long == o.long && k.short == o.short)
                {
                    None => problems.push(format!(
                        "git {version}: `git {}` has an option the tables do not know: {o:?}",
                        path.join(" ")
                    )),
                    Some(k) if k != o => problems.push(format!(
                        "git {version}: `git {}` option {} changed: {k:?} → {o:?}",
                        path.join(" "),
                        o.id
                    )),
                    Some(_) => {}
                }
            }
            for k in &known {
                if !options.iter().any(|o| o.id == k.id && o.long == k.long) {
                    eprintln!(
                        "note: git {version} has no `{}` for `git {}` (the table is from {})",
                        k.id,
                        path.join(" "),
                        git_options::GIT_VERSION
                    );
                }
            }
        }
        if version == git_options::GIT_VERSION {
            let checked_in = std::fs::read_to_string(&out).expect("git_options.rs");
            if checked_in != rendered {
                problems.push(
                    "git_options.rs differs from what the derivation produces from the same \
                     git version"
                        .to_owned(),
                );
            }
        }
        assert!(
            problems.is_empty(),
            "{}\n\nClassify new options in orchestrator/src/vcs_policy/allow.rs, then run \
             BUTLER_REGENERATE_GIT_OPTIONS=1 cargo test -p butler-orchestrator git_options_match",
            problems.join("\n")
        );
    }
}
