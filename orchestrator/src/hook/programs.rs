//! Which command words start git.
//!
//! - `git` itself, by any path (`/usr/bin/git`, `./git`, `C:\Program Files\Git\bin\git.exe`,
//!   `/c/Program Files/Git/cmd/git`), in any letter case (`GIT` runs git on the case-insensitive
//!   file systems of macOS and Windows), with a Windows program suffix (`git.exe`, `git.cmd`).
//! - git's own dashed programs: `git-<command>` where `<command>` is one of the commands git
//!   ships ([`GIT_COMMANDS`], from git's `command-list.txt` and the programs git installs in
//!   `git --exec-path`), e.g. `git-upload-pack`, `git-receive-pack`, `git-shell`, `git-commit`;
//!   and any `git-*` program run from a directory named `git-core` (git's exec path).
//! - a pattern bash expands in the program's name that can name one of these (`/usr/bin/gi?`,
//!   `g[i]t`; see [`super::glob`]).
//! - Not: separate programs whose names merely begin with `git` (`git-cliff`, `git-absorb`,
//!   `git-lfs`, `git-crypt`, `gitleaks`, `gitk`, `lazygit`): they are other tools, and the hook
//!   does not follow programs that run git themselves (`cargo`, `make`, an editor).

use std::borrow::Cow;

use super::glob;
use super::runs::DYNAMIC;

/// Commands git ships as `git-<name>` (builtins, scripts and helpers in its exec path), as of
/// git 2.47–2.50, plus older ones still found installed.
const GIT_COMMANDS: &[&str] = &[
    "add",
    "am",
    "annotate",
    "apply",
    "archimport",
    "archive",
    "backfill",
    "bisect",
    "blame",
    "branch",
    "bugreport",
    "bundle",
    "cat-file",
    "check-attr",
    "check-ignore",
    "check-mailmap",
    "check-ref-format",
    "checkout",
    "checkout--worker",
    "checkout-index",
    "cherry",
    "cherry-pick",
    "citool",
    "clean",
    "clone",
    "column",
    "commit",
    "commit-graph",
    "commit-tree",
    "config",
    "count-objects",
    "credential",
    "credential-cache",
    "credential-cache--daemon",
    "credential-libsecret",
    "credential-netrc",
    "credential-osxkeychain",
    "credential-store",
    "credential-wincred",
    "cvsexportcommit",
    "cvsimport",
    "cvsserver",
    "daemon",
    "describe",
    "diagnose",
    "diff",
    "diff-files",
    "diff-index",
    "diff-pairs",
    "diff-tree",
    "difftool",
    "difftool--helper",
    "fast-export",
    "fast-import",
    "fetch",
    "fetch-pack",
    "filter-branch",
    "fmt-merge-msg",
    "for-each-ref",
    "for-each-repo",
    "format-patch",
    "fsck",
    "fsck-objects",
    "fsmonitor--daemon",
    "gc",
    "get-tar-commit-id",
    "grep",
    "gui",
    "gui--askpass",
    "hash-object",
    "help",
    "hook",
    "http-backend",
    "http-fetch",
    "http-push",
    "imap-send",
    "index-pack",
    "init",
    "init-db",
    "instaweb",
    "interpret-trailers",
    "last-modified",
    "log",
    "lost-found",
    "ls-files",
    "ls-remote",
    "ls-tree",
    "mailinfo",
    "mailsplit",
    "maintenance",
    "merge",
    "merge-base",
    "merge-file",
    "merge-index",
    "merge-octopus",
    "merge-one-file",
    "merge-ours",
    "merge-recursive",
    "merge-recursive-ours",
    "merge-recursive-theirs",
    "merge-resolve",
    "merge-subtree",
    "merge-tree",
    "mergetool",
    "mergetool--lib",
    "mktag",
    "mktree",
    "multi-pack-index",
    "mv",
    "name-rev",
    "notes",
    "p4",
    "pack-objects",
    "pack-redundant",
    "pack-refs",
    "parse-remote",
    "patch-id",
    "peek-remote",
    "prune",
    "prune-packed",
    "pull",
    "push",
    "quiltimport",
    "range-diff",
    "read-tree",
    "rebase",
    "receive-pack",
    "reflog",
    "refs",
    "relink",
    "remote",
    "remote-ext",
    "remote-fd",
    "remote-ftp",
    "remote-ftps",
    "remote-http",
    "remote-https",
    "remote-testsvn",
    "repack",
    "replace",
    "replay",
    "repo",
    "repo-config",
    "request-pull",
    "rerere",
    "reset",
    "restore",
    "rev-list",
    "rev-parse",
    "revert",
    "rm",
    "send-email",
    "send-pack",
    "sh-i18n",
    "sh-i18n--envsubst",
    "sh-setup",
    "shell",
    "shortlog",
    "show",
    "show-branch",
    "show-index",
    "show-ref",
    "sparse-checkout",
    "stage",
    "stash",
    "status",
    "stripspace",
    "submodule",
    "submodule--helper",
    "subtree",
    "svn",
    "switch",
    "symbolic-ref",
    "tag",
    "tar-tree",
    "unpack-file",
    "unpack-objects",
    "update-index",
    "update-ref",
    "update-server-info",
    "upload-archive",
    "upload-pack",
    "var",
    "verify-commit",
    "verify-pack",
    "verify-tag",
    "version",
    "web--browse",
    "whatchanged",
    "worktree",
    "write-tree",
];

/// Windows program suffixes (`PATHEXT`) a command word may carry.
const PROGRAM_SUFFIXES: &[&str] = &[".exe", ".cmd", ".bat", ".com"];

/// The last path component of a command word, for `/` and `\` separators alike.
pub fn basename(word: &str) -> &str {
    word.rsplit(['/', '\\']).next().unwrap_or(word)
}

/// A command word's program name as the system would look it up: the basename, lower-cased,
/// without a Windows program suffix (`C:\Git\bin\GIT.EXE` → `git`). Borrowed when the word is
/// already that (the common case).
pub fn program_name(word: &str) -> Cow<'_, str> {
    let base = basename(word);
    let plain = !base.bytes().any(|b| b.is_ascii_uppercase() || b == b'.');
    if plain {
        return Cow::Borrowed(base);
    }
    let mut name = base.to_ascii_lowercase();
    for suffix in PROGRAM_SUFFIXES {
        if let Some(stem) = name.strip_suffix(suffix)
            && !stem.is_empty()
        {
            name.truncate(stem.len());
            break;
        }
    }
    Cow::Owned(name)
}

/// The words after `git` that running `word` amounts to, if `word` starts git: `git` → `[]`,
/// `git-commit` → `["commit"]`, `/usr/lib/git-core/git-frob` → `["frob"]`.
pub fn git_prefix(word: &str) -> Option<Vec<String>> {
    // Only the program's own name decides: `$HOME/.local/bin/git` is git wherever the
    // directory is.
    let base = basename(word);
    if base.contains(DYNAMIC) {
        return None;
    }
    if glob::is_pattern(base) {
        return git_by_pattern(word);
    }
    let name = program_name(word);
    if name == "git" {
        return Some(Vec::new());
    }
    let sub = name.strip_prefix("git-").filter(|s| !s.is_empty())?;
    let in_exec_path = word
        .rsplit(['/', '\\'])
        .nth(1)
        .is_some_and(|dir| dir.eq_ignore_ascii_case("git-core"));
    (in_exec_path || GIT_COMMANDS.contains(&sub)).then(|| vec![sub.to_owned()])
}

/// What a command word spelled as a pattern (`/usr/bin/gi? status`, `g[i]t`, `$HOME/bin/g*`)
/// may start of git, whichever file names it expands to: `[]` when it can name git itself,
/// `[sub]` when it can name exactly one of git's dashed programs, `[…]` (known at run time)
/// when it can name several, or any `git-*` program in a directory that can be `git-core`.
fn git_by_pattern(word: &str) -> Option<Vec<String>> {
    let base = basename(word);
    if !plausible(base) {
        return None;
    }
    // Past the budget, a pattern is taken to be git rather than matched (see [`Budget`]).
    if !PATTERNS.with(|b| b.spend(base)) {
        return Some(vec![DYNAMIC.to_string()]);
    }
    let names = |name: &str| {
        glob::matches(base, name)
            || PROGRAM_SUFFIXES
                .iter()
                .any(|suffix| glob::matches(base, &format!("{name}{suffix}")))
    };
    if names("git") {
        return Some(Vec::new());
    }
    let subs: Vec<&str> = GIT_COMMANDS
        .iter()
        .copied()
        .filter(|sub| names(&format!("git-{sub}")))
        .collect();
    let in_exec_path = word
        .rsplit(['/', '\\'])
        .nth(1)
        .is_some_and(|dir| glob::matches(dir, "git-core"));
    match subs.as_slice() {
        [one] => Some(vec![(*one).to_owned()]),
        [] if !(in_exec_path && may_start_dashed(base)) => None,
        _ => Some(vec![DYNAMIC.to_string()]),
    }
}

/// Patterns longer than this (in characters) are taken to be git: matching them against every
/// name would be slow, and no command line has one for a good reason.
const MAX_PATTERN: usize = 256;
/// Different patterns matched against git's names in one analysis (each against about a
/// thousand names); past it, a pattern is taken to be git.
const MAX_PATTERNS_MATCHED: usize = 256;

/// The cheap tests before matching: a pattern whose fixed start cannot begin `git`, or that
/// needs more characters than any name of git has, is none of them. A huge one passes (it is
/// then taken to be git).
fn plausible(base: &str) -> bool {
    let head = glob::head(base).to_ascii_lowercase();
    if !("git".starts_with(&head) || head.starts_with("git")) {
        return false;
    }
    base.chars().count() > MAX_PATTERN || glob::min_len(base) <= 48
}

/// How many different patterns one analysis has matched against git's names.
#[derive(Default)]
struct Budget {
    seen: std::cell::RefCell<std::collections::HashSet<String>>,
}

impl Budget {
    /// Whether `pattern` may be matched: seen before, or room for one more (and not huge).
    fn spend(&self, pattern: &str) -> bool {
        if pattern.chars().count() > MAX_PATTERN {
            return false;
        }
        let mut seen = self.seen.borrow_mut();
        if seen.contains(pattern) {
            return true;
        }
        if seen.len() >= MAX_PATTERNS_MATCHED {
            return false;
        }
        seen.insert(pattern.to_owned());
        true
    }
}

thread_local! {
    static PATTERNS: Budget = Budget::default();
}

/// Starts a new analysis's pattern budget (each command line gets its own).
pub fn new_analysis() {
    PATTERNS.with(|b| b.seen.borrow_mut().clear());
}

/// Whether a pattern's text before its first pattern character can begin `git-…`.
fn may_start_dashed(pattern: &str) -> bool {
    let head = glob::head(pattern).to_ascii_lowercase();
    "git-".starts_with(&head) || head.starts_with("git-")
}

/// Whether a word (pattern characters as [`glob`]'s stand-ins) mentions git as a pattern: one
/// that spells at least two letters of a name (`gi?`, `/usr/bin/g*t`, not `*` or `g*`) and can
/// expand to it.
///
/// A part known only at run time counts as `*` here (`/usr/bin/g${X:-i}t`, `g"$(x)"t`).
pub fn names_git_by_pattern(word: &str) -> bool {
    let word = word.replace(DYNAMIC, &glob::STAR.to_string());
    let base = basename(&word);
    glob::is_pattern(base)
        && glob::literal_part(base)
            .filter(|c| c.is_ascii_alphanumeric())
            .count()
            >= 2
        && git_by_pattern(&word).is_some()
}

/// Patterns in text as written (`os.system("gi? status")`): every run of path characters that
/// holds `*`, `?` or `[`, read as unquoted (those that cannot begin a name of git are passed
/// over cheaply).
fn mentions_git_by_pattern(text: &str) -> bool {
    text.split(|c: char| {
        c.is_whitespace()
            || matches!(
                c,
                '\'' | '"'
                    | '`'
                    | ';'
                    | '|'
                    | '&'
                    | '('
                    | ')'
                    | '<'
                    | '>'
                    | '$'
                    | '='
                    | '{'
                    | '}'
                    | ','
            )
    })
    .filter(|token| token.contains(['*', '?', '[']))
    .any(|token| names_git_by_pattern(&glob::pattern(token)))
}

/// Whether a command word is computed at run time (its program name holds a part known only
/// when the command runs: `$GIT`, `$(which git)`, `${CMD}`, `` `x` ``).
pub fn is_dynamic(word: &str) -> bool {
    basename(word).contains(DYNAMIC) || word == DYNAMIC.to_string()
}

/// Whether `text` mentions git: a word that starts git (`git`, `/usr/bin/git`, `GIT.EXE`,
/// `git-upload-pack`), a name with `git` as one of its `_`-separated parts (`$GIT`,
/// `GIT_BIN`, `my_git`), or a pattern that spells two letters of a name of git and can expand
/// to it (`gi?`, `/usr/bin/g[i]t`). `github`, `.gitignore`, `digit`, `git-cliff`, `*`, `g*` do
/// not.
pub fn mentions_git(text: &str) -> bool {
    let bytes = text.as_bytes();
    let mut from = 0;
    while let Some(pos) = find_ignore_case(&bytes[from..], b"git") {
        let start = from + pos;
        let mut token_start = start;
        while token_start > 0 && is_token_byte(bytes[token_start - 1]) {
            token_start -= 1;
        }
        let mut token_end = start + 3;
        while token_end < bytes.len() && is_token_byte(bytes[token_end]) {
            token_end += 1;
        }
        let token = &text[token_start..token_end];
        if git_prefix(token).is_some()
            || token
                .split('_')
                .any(|part| part.eq_ignore_ascii_case("git"))
        {
            return true;
        }
        from = start + 3;
    }
    text.contains(['*', '?', '[']) && mentions_git_by_pattern(text)
}

fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.')
}

/// The first `git` in any letter case.
fn find_ignore_case(haystack: &[u8], needle: &[u8; 3]) -> Option<usize> {
    let mut from = 0;
    while let Some(pos) = haystack[from..].iter().position(|&b| b | 0x20 == needle[0]) {
        let at = from + pos;
        if haystack.len() - at >= 3
            && haystack[at + 1] | 0x20 == needle[1]
            && haystack[at + 2] | 0x20 == needle[2]
        {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn git_in_every_spelling_starts_git() {
        for word in [
            "git",
            "/usr/bin/git",
            "./git",
            "GIT",
            "Git.exe",
            "GIT.EXE",
            "git.cmd",
            r"C:\Program Files\Git\bin\git.exe",
            "/c/Program Files/Git/cmd/git",
        ] {
            assert_eq!(git_prefix(word), Some(vec![]), "{word}");
        }
        assert_eq!(
            git_prefix("git-upload-pack"),
            Some(vec!["upload-pack".into()])
        );
        assert_eq!(
            git_prefix("/usr/lib/git-core/git-frobnicate"),
            Some(vec!["frobnicate".into()])
        );
        assert_eq!(git_prefix("GIT-COMMIT.EXE"), Some(vec!["commit".into()]));
    }

    #[test]
    fn other_programs_named_git_something_do_not() {
        for word in [
            "git-cliff",
            "git-absorb",
            "git-lfs",
            "git-crypt",
            "gitleaks",
            "gitk",
            "lazygit",
            "legit",
            "git-",
            "github",
            ".git",
        ] {
            assert_eq!(git_prefix(word), None, "{word}");
        }
    }

    #[test]
    fn mentions() {
        for text in [
            "$GIT status",
            "x=$(which git)",
            "GIT_BIN=/x; $GIT_BIN log",
            "run /usr/bin/git",
            "Git.exe",
            "my_git",
            "os.system(\"gi? status\")",
            "for g in /usr/bin/g[i]t; do",
            "~/bin/G*T",
        ] {
            assert!(mentions_git(text), "{text}");
        }
        for text in [
            "github.com",
            "cat .gitignore",
            "digit",
            "legit",
            "git-cliff",
            "gitlab-runner",
            "ls .git/refs",
            "git.log",
            "ls *",
            "arr[0]=x",
            "echo \"Done?\"",
            "rm -f *.o g?",
        ] {
            assert!(!mentions_git(text), "{text}");
        }
    }
}
