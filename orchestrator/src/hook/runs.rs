//! What a simple command runs, as far as git is concerned: the vocabulary the wrappers, the
//! interpreters and the walk share (below all three).

/// A language whose code the hook reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    Python,
    Perl,
    Ruby,
    JavaScript,
    Php,
    Lua,
    R,
    Julia,
    Tcl,
    AppleScript,
    Awk,
    Sed,
    Vim,
    Lisp,
}

/// Code in a language, as the interpreter receives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Code {
    pub lang: Lang,
    pub text: String,
}

/// Stands for the parts of a word that are only known when the command runs.
pub const DYNAMIC: char = '\u{1}';

/// What running one simple command does, as far as git is concerned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Runs {
    /// Nothing that could start git (as far as can be known statically).
    Nothing,
    /// git, with the words after `git` (`git-commit x` gives `["commit", "x"]`).
    Git(Vec<String>),
    /// Another command line, to be resolved in turn (a wrapper's command).
    Command(Vec<String>),
    /// A shell script given as a string (`sh -c`, `eval`, `watch`, `su -c`).
    Script(String),
    /// A shell that reads its script from standard input.
    ShellStdin,
    /// Code of another language (`python -c CODE`).
    Code(Code),
    /// An interpreter that reads its code from standard input.
    CodeStdin(Lang),
    /// A command word computed at run time (`$GIT`, `$(which x)`), as written.
    Dynamic(String),
    /// Each of these (several commands, or several readings of an ambiguous command line).
    Any(Vec<Runs>),
}

impl Runs {
    /// The union of `runs`: nothing when empty, the one when single.
    pub fn any(runs: impl IntoIterator<Item = Runs>) -> Runs {
        let mut all: Vec<Runs> = Vec::new();
        for run in runs {
            match run {
                Runs::Nothing => {}
                Runs::Any(inner) => all.extend(inner),
                other => {
                    if !all.contains(&other) {
                        all.push(other);
                    }
                }
            }
        }
        match all.len() {
            0 => Runs::Nothing,
            1 => all.pop().unwrap_or(Runs::Nothing),
            _ => Runs::Any(all),
        }
    }

    pub(in crate::hook) fn command(words: &[String]) -> Runs {
        if words.is_empty() {
            Runs::Nothing
        } else {
            Runs::Command(words.to_vec())
        }
    }

    pub(in crate::hook) fn script(text: &str) -> Runs {
        if text.trim().is_empty() {
            Runs::Nothing
        } else {
            Runs::Script(text.to_owned())
        }
    }
}
