//! Code handed to another language's interpreter: `python -c CODE`, `perl -e`, `node -e`,
//! `ruby -e`, `php -r`, `awk 'PROGRAM'`, `sed 'SCRIPT'`, code piped into `python3`, ….
//!
//! The policy: such code runs git when it can start a process **and** mentions git. "Can start
//! a process" means the code holds one of its language's process-starting constructs
//! (`os.system`, `subprocess`, `child_process`, `system(…)`, backticks in Perl and Ruby, awk's
//! `system()` and `|` pipes, sed's `e` command, `import git` for GitPython, and the language's
//! own `eval`/`exec` of a string, which could hold any of them), looked for anywhere in the code,
//! strings included. "Mentions git" is [`super::programs::mentions_git`]. So
//! `python -c "print('git status')"` and `awk '{print "git"}'` pass, while
//! `python -c "import os; os.system('git status')"` and
//! `python -c "import subprocess; subprocess.run(['git','status'])"` are blocked. A string
//! that merely talks about processes next to the word git (`print("git can exec")`) is blocked
//! too: the policy errs towards blocking. A script file (`python3 tool.py`) is not read.

use super::getopt::{self, Grammar};
use super::programs;
use super::runs::Runs;
pub use super::runs::{Code, Lang};

/// How an interpreter takes code on its command line.
struct Interpreter {
    lang: Lang,
    /// Short options whose value is code (`c` for python, `e` for perl).
    code_short: &'static str,
    /// Long options whose value is code (`--eval`).
    code_long: &'static [&'static str],
    /// Short options taking the rest of the word or the next word as a value that is not code.
    value_short: &'static str,
    /// Short options taking only the rest of the word (perl's `-MPOSIX`, `-i.bak`).
    attached_short: &'static str,
    /// Short options taking only the digits that follow (perl's `-l0`, `-0777`).
    digits_short: &'static str,
    /// Long options taking the next word (when not given with `=`).
    value_long: &'static [&'static str],
    /// Options after which nothing is code (`python -m module`, `sed --sandbox`, `-f file`).
    no_code: &'static [&'static str],
    /// The first operand is the program text (awk, sed) rather than a script file.
    operand_is_code: bool,
    /// Without code or a script file it reads its program from stdin.
    reads_stdin: bool,
}

const PYTHON: Interpreter = Interpreter {
    lang: Lang::Python,
    code_short: "c",
    code_long: &[],
    value_short: "WXQm",
    attached_short: "",
    digits_short: "",
    value_long: &["--check-hash-based-pycs"],
    no_code: &["-m"],
    operand_is_code: false,
    reads_stdin: true,
};

const PERL: Interpreter = Interpreter {
    lang: Lang::Perl,
    code_short: "eE",
    code_long: &[],
    value_short: "I",
    attached_short: "ixFCdDMmV",
    digits_short: "0l",
    value_long: &[],
    no_code: &[],
    operand_is_code: false,
    reads_stdin: true,
};

const RUBY: Interpreter = Interpreter {
    lang: Lang::Ruby,
    code_short: "e",
    code_long: &[],
    value_short: "IrCE",
    attached_short: "iFxTWK",
    digits_short: "0l",
    value_long: &["--encoding", "--external-encoding", "--internal-encoding"],
    no_code: &[],
    operand_is_code: false,
    reads_stdin: true,
};

const NODE: Interpreter = Interpreter {
    lang: Lang::JavaScript,
    code_short: "ep",
    code_long: &["--eval", "--print"],
    value_short: "rC",
    attached_short: "",
    digits_short: "",
    value_long: &[
        "--require",
        "--import",
        "--loader",
        "--experimental-loader",
        "--input-type",
        "--conditions",
        "--env-file",
        "--title",
        "--inspect-port",
    ],
    no_code: &[],
    operand_is_code: false,
    reads_stdin: true,
};

const BUN: Interpreter = Interpreter {
    lang: Lang::JavaScript,
    code_short: "ep",
    code_long: &["--eval", "--print"],
    value_short: "r",
    attached_short: "",
    digits_short: "",
    value_long: &["--preload", "--require", "--cwd", "--env-file", "--config"],
    no_code: &[],
    operand_is_code: false,
    reads_stdin: false,
};

const PHP: Interpreter = Interpreter {
    lang: Lang::Php,
    code_short: "rBRE",
    code_long: &[],
    value_short: "cdzt",
    attached_short: "",
    digits_short: "",
    value_long: &[],
    no_code: &["-f", "-F"],
    operand_is_code: false,
    reads_stdin: true,
};

const LUA: Interpreter = Interpreter {
    lang: Lang::Lua,
    code_short: "e",
    code_long: &[],
    value_short: "l",
    attached_short: "",
    digits_short: "",
    value_long: &[],
    no_code: &[],
    operand_is_code: false,
    reads_stdin: true,
};

const R: Interpreter = Interpreter {
    lang: Lang::R,
    code_short: "e",
    code_long: &[],
    value_short: "fdg",
    attached_short: "",
    digits_short: "",
    value_long: &["--file", "--encoding", "--args"],
    no_code: &["-f", "--file"],
    operand_is_code: false,
    reads_stdin: true,
};

const JULIA: Interpreter = Interpreter {
    lang: Lang::Julia,
    code_short: "eE",
    code_long: &["--eval", "--print"],
    value_short: "LJCtpO",
    attached_short: "",
    digits_short: "",
    value_long: &["--load", "--sysimage", "--project", "--threads", "--procs"],
    no_code: &[],
    operand_is_code: false,
    reads_stdin: true,
};

const TCL: Interpreter = Interpreter {
    lang: Lang::Tcl,
    code_short: "c",
    code_long: &[],
    value_short: "fD",
    attached_short: "",
    digits_short: "",
    value_long: &["-encoding"],
    no_code: &["-f"],
    operand_is_code: false,
    reads_stdin: true,
};

const OSASCRIPT: Interpreter = Interpreter {
    lang: Lang::AppleScript,
    code_short: "e",
    code_long: &[],
    value_short: "ls",
    attached_short: "",
    digits_short: "",
    value_long: &[],
    no_code: &[],
    operand_is_code: false,
    reads_stdin: true,
};

const AWK: Interpreter = Interpreter {
    lang: Lang::Awk,
    code_short: "e",
    code_long: &["--source"],
    value_short: "FvfEil",
    attached_short: "d",
    digits_short: "",
    value_long: &[
        "--field-separator",
        "--assign",
        "--file",
        "--exec",
        "--include",
        "--load",
    ],
    no_code: &["-f", "--file", "-E", "--exec"],
    operand_is_code: true,
    reads_stdin: false,
};

const SED: Interpreter = Interpreter {
    lang: Lang::Sed,
    code_short: "e",
    code_long: &["--expression"],
    value_short: "fl",
    attached_short: "i",
    digits_short: "",
    value_long: &["--file", "--line-length"],
    no_code: &["-f", "--file", "--sandbox"],
    operand_is_code: true,
    reads_stdin: false,
};

const VIM: Interpreter = Interpreter {
    lang: Lang::Vim,
    code_short: "c",
    code_long: &["--cmd"],
    value_short: "uiTwWstqSrU",
    attached_short: "",
    digits_short: "",
    value_long: &["--servername", "--remote-send", "--remote-expr"],
    no_code: &[],
    operand_is_code: false,
    reads_stdin: false,
};

const EMACS: Interpreter = Interpreter {
    lang: Lang::Lisp,
    code_short: "",
    code_long: &["--eval", "-eval", "--execute", "-execute"],
    value_short: "lfLdt",
    attached_short: "",
    digits_short: "",
    value_long: &[
        "--load",
        "-load",
        "--funcall",
        "-funcall",
        "--directory",
        "-f",
    ],
    no_code: &[],
    operand_is_code: false,
    reads_stdin: false,
};

/// The interpreter a program name stands for.
fn interpreter(name: &str) -> Option<&'static Interpreter> {
    let stem = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    Some(match stem {
        "python" | "pypy" | "py" | "ipython" => &PYTHON,
        "perl" => &PERL,
        "ruby" | "jruby" => &RUBY,
        "node" | "nodejs" => &NODE,
        "bun" => &BUN,
        "php" => &PHP,
        "lua" | "luajit" => &LUA,
        "rscript" | "r" => &R,
        "julia" => &JULIA,
        "tclsh" | "wish" | "expect" | "jimsh" => &TCL,
        "osascript" => &OSASCRIPT,
        "awk" | "gawk" | "mawk" | "nawk" | "original-awk" | "busybox-awk" => &AWK,
        "sed" | "gsed" => &SED,
        "vim" | "nvim" | "vi" | "view" | "ex" | "gvim" | "vimdiff" => &VIM,
        "emacs" | "emacsclient" => &EMACS,
        _ => return None,
    })
}

/// What an interpreter command line runs, if `name` is an interpreter: its inline code, a
/// reading of stdin, or nothing the hook can see (a script file).
pub fn resolve(name: &str, argv: &[String]) -> Option<Runs> {
    if name == "deno" {
        return Some(deno(argv));
    }
    let interp = interpreter(name)?;
    let mut code: Vec<String> = Vec::new();
    let mut i = 1;
    let mut operands_from = argv.len();
    let mut stdin_marker = false;
    'words: while i < argv.len() {
        let word = argv[i].as_str();
        if word == "--" {
            operands_from = i + 1;
            break;
        }
        if word == "-" {
            stdin_marker = true;
            operands_from = i + 1;
            break;
        }
        if interp
            .no_code
            .iter()
            .any(|o| word == *o || word.starts_with(&format!("{o}=")))
        {
            return Some(Runs::Nothing);
        }
        if interp.lang == Lang::Vim && word.len() > 1 && word.starts_with('+') {
            code.push(word[1..].to_owned());
            i += 1;
            continue;
        }
        if word.starts_with("--") || (interp.lang == Lang::Lisp && word.starts_with('-')) {
            let (name, attached) = match word.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (word, None),
            };
            let is_code = interp.code_long.contains(&name);
            let takes = is_code || interp.value_long.contains(&name);
            let value = match (attached, takes) {
                (Some(v), _) => Some(v.to_owned()),
                (None, true) => {
                    i += 1;
                    argv.get(i).cloned()
                }
                (None, false) => None,
            };
            if is_code {
                code.extend(value);
            }
            i += 1;
            continue;
        }
        if word.len() > 1 && word.starts_with('-') {
            let mut skip_to = 0;
            for (pos, c) in word.char_indices().skip(1) {
                if pos < skip_to {
                    continue;
                }
                let rest = &word[pos + c.len_utf8()..];
                if interp.digits_short.contains(c) {
                    skip_to = pos + 1 + rest.bytes().take_while(u8::is_ascii_digit).count();
                    continue;
                }
                let is_code = interp.code_short.contains(c);
                if is_code || interp.value_short.contains(c) {
                    let value = if rest.is_empty() {
                        i += 1;
                        argv.get(i).cloned()
                    } else {
                        Some(rest.to_owned())
                    };
                    if is_code {
                        code.extend(value);
                        // python -c ends its own options; what follows is sys.argv.
                        if interp.lang == Lang::Python {
                            break 'words;
                        }
                    } else if interp.no_code.contains(&format!("-{c}").as_str()) {
                        return Some(Runs::Nothing);
                    }
                    break;
                }
                if interp.attached_short.contains(c) {
                    break;
                }
            }
            i += 1;
            continue;
        }
        operands_from = i;
        break;
    }
    let operands = argv.get(operands_from..).unwrap_or_default();
    if code.is_empty() && interp.operand_is_code {
        code.extend(operands.first().cloned());
    }
    let lang = interp.lang;
    if !code.is_empty() {
        return Some(Runs::Code(Code {
            lang,
            text: code.join("\n"),
        }));
    }
    let script_file = !operands.is_empty() && !interp.operand_is_code;
    if stdin_marker || (interp.reads_stdin && !script_file) {
        return Some(Runs::CodeStdin(lang));
    }
    Some(Runs::Nothing)
}

/// `deno eval CODE`, `deno eval -p CODE`.
fn deno(argv: &[String]) -> Runs {
    const EVAL: Grammar = Grammar::new(
        "+pq",
        &[
            getopt::flag("print", "p"),
            getopt::value("ext", "ext"),
            getopt::value("config", "config"),
            getopt::value("import-map", "import-map"),
            getopt::value("location", "location"),
            getopt::value("env-file", "env-file"),
        ],
    );
    if argv.get(1).map(String::as_str) != Some("eval") {
        return Runs::Nothing;
    }
    let readings = getopt::parse(&EVAL, &argv[2..]);
    Runs::any(readings.into_iter().filter_map(|p| {
        p.operands.first().map(|code| {
            Runs::Code(Code {
                lang: Lang::JavaScript,
                text: code.clone(),
            })
        })
    }))
}

/// Constructs through which code of `lang` starts a process (or evaluates a string as code).
/// Identifier-like entries are matched as whole identifiers, others as substrings.
fn spawn_constructs(lang: Lang) -> &'static [&'static str] {
    match lang {
        Lang::Python => &[
            "system",
            "popen",
            "subprocess",
            "spawnl",
            "spawnle",
            "spawnlp",
            "spawnlpe",
            "spawnv",
            "spawnve",
            "spawnvp",
            "spawnvpe",
            "posix_spawn",
            "posix_spawnp",
            "execl",
            "execle",
            "execlp",
            "execlpe",
            "execv",
            "execve",
            "execvp",
            "execvpe",
            "exec",
            "eval",
            "compile",
            "getoutput",
            "getstatusoutput",
            "check_output",
            "check_call",
            "startfile",
            "pty",
            "pexpect",
            "plumbum",
            "__import__",
            "importlib",
            "ctypes",
            "create_subprocess_exec",
            "create_subprocess_shell",
        ],
        Lang::Perl => &[
            "system", "exec", "qx", "readpipe", "open", "open2", "open3", "fork", "eval", "`",
        ],
        Lang::Ruby => &[
            "system",
            "exec",
            "spawn",
            "popen",
            "popen2",
            "popen2e",
            "popen3",
            "capture2",
            "capture2e",
            "capture3",
            "pipeline",
            "pipeline_r",
            "pipeline_w",
            "pipeline_rw",
            "pipeline_start",
            "fork",
            "eval",
            "instance_eval",
            "class_eval",
            "Open3",
            "PTY",
            "`",
            "%x",
        ],
        Lang::JavaScript => &[
            "child_process",
            "exec",
            "execSync",
            "execFile",
            "execFileSync",
            "spawn",
            "spawnSync",
            "fork",
            "execa",
            "execaSync",
            "execaCommand",
            "execaCommandSync",
            "shelljs",
            "Deno",
            "Command",
            "eval",
            "Function",
            "simpleGit",
            "simple-git",
            "$`",
        ],
        Lang::Php => &[
            "system",
            "exec",
            "shell_exec",
            "passthru",
            "popen",
            "proc_open",
            "pcntl_exec",
            "eval",
            "`",
        ],
        Lang::Lua => &["execute", "popen", "load", "loadstring", "dofile"],
        Lang::R => &["system", "system2", "shell", "pipe", "processx", "eval"],
        Lang::Julia => &["`", "Cmd", "eval", "include_string", "spawn", "pipeline"],
        Lang::Tcl => &["exec", "spawn", "open", "eval", "uplevel", "subst"],
        Lang::AppleScript => &["do shell script", "do script"],
        Lang::Awk => &["system"],
        Lang::Sed => &[],
        Lang::Vim => &[
            "!",
            "system",
            "systemlist",
            "terminal",
            "term",
            "jobstart",
            "job_start",
            "termopen",
        ],
        Lang::Lisp => &[
            "shell-command",
            "call-process",
            "start-process",
            "process-lines",
            "make-process",
            "process-file",
            "start-file-process",
            "eval",
        ],
    }
}

/// Whether `code` holds a construct of its language that starts a process.
pub fn can_spawn(code: &Code) -> bool {
    let text = code.text.as_str();
    if code.lang == Lang::Sed {
        return sed_executes(text);
    }
    if code.lang == Lang::Python && imports_gitpython(text) {
        return true;
    }
    if code.lang == Lang::Awk && awk_pipes(text) {
        return true;
    }
    let identifiers: Vec<&str> = text
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|t| !t.is_empty())
        .collect();
    spawn_constructs(code.lang).iter().any(|construct| {
        if construct
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            identifiers.contains(construct)
        } else {
            text.contains(construct)
        }
    })
}

/// awk's `print | "cmd"`, `"cmd" | getline` and `|&`: a `|` that is not half of `||`.
fn awk_pipes(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.iter().enumerate().any(|(i, &b)| {
        b == b'|' && bytes.get(i + 1) != Some(&b'|') && (i == 0 || bytes[i - 1] != b'|')
    })
}

/// `import git` / `from git import …` (GitPython runs the git program).
fn imports_gitpython(text: &str) -> bool {
    let words: Vec<&str> = text
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
        .filter(|t| !t.is_empty())
        .collect();
    words
        .windows(2)
        .any(|w| matches!(w[0], "import" | "from") && (w[1] == "git" || w[1].starts_with("git.")))
}

/// Whether code of this language, as the policy reads it, runs git.
pub fn runs_git(code: &Code) -> bool {
    programs::mentions_git(&code.text) && can_spawn(code)
}

/// The string literals of `code` (`'…'`, `"…"`, `` `…` ``), with backslash escapes kept as
/// written except `\"`, `\'` and `` \` ``, and whether each follows another one with only
/// commas, spaces and opening brackets between (a further element of the same call or list).
pub fn literals(code: &str) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    let mut chars = code.chars().peekable();
    let mut between_only_commas = false;
    while let Some(c) = chars.next() {
        if matches!(c, '\'' | '"' | '`') {
            let mut text = String::new();
            while let Some(n) = chars.next() {
                if n == c {
                    break;
                }
                if n == '\\' {
                    match chars.next() {
                        Some(q) if q == c || q == '\\' => text.push(q),
                        Some(q) => {
                            text.push('\\');
                            text.push(q);
                        }
                        None => {}
                    }
                    continue;
                }
                text.push(n);
            }
            out.push((text, between_only_commas));
            between_only_commas = true;
        } else if !(matches!(c, ',' | '[' | '(') || c.is_whitespace()) {
            between_only_commas = false;
        }
    }
    out
}

/// The words after the first git word in `code`, read as a command line: `qx(git log -1)`,
/// `1e git status`, `spawn git status; interact` (a fragment ends at brackets, quotes, `;`,
/// `|`, `&` and line ends).
pub fn git_in_text(code: &Code) -> Option<Vec<String>> {
    let fragments = code.text.split(|c: char| {
        matches!(
            c,
            '(' | ')' | '[' | ']' | '{' | '}' | '"' | '\'' | '`' | ';' | '|' | '&' | '\n' | ','
        ) || (c == '/' && code.lang == Lang::Sed)
    });
    for fragment in fragments {
        let words: Vec<&str> = fragment
            .split_whitespace()
            .map(|w| w.trim_start_matches(['!', '+', ':', '$', '%']))
            .collect();
        for (i, word) in words.iter().enumerate() {
            // `import git`, `require("simple-git")`: a library, not a command line.
            let after_import = i > 0 && matches!(words[i - 1], "import" | "from" | "require");
            if after_import {
                return None;
            }
            if let Some(mut args) = programs::git_prefix(word) {
                args.extend(words[i + 1..].iter().map(|w| (*w).to_owned()));
                return Some(args);
            }
        }
    }
    None
}

/// sed's `e` command and the `e` flag of `s`, which run the pattern space or a command.
fn sed_executes(script: &str) -> bool {
    let chars: Vec<char> = script.chars().collect();
    let mut i = 0;
    let n = chars.len();
    // Skip a delimited part (`/re/`, the parts of `s` and `y`) starting after its opening
    // delimiter; returns the index after the closing one.
    let skip_to = |mut i: usize, delim: char| -> usize {
        while i < n && chars[i] != delim {
            if chars[i] == '\\' {
                i += 1;
            }
            i += 1;
        }
        i + 1
    };
    let to_line_end = |mut i: usize| -> usize {
        while i < n && chars[i] != '\n' {
            i += 1;
        }
        i
    };
    while i < n {
        let c = chars[i];
        if c.is_whitespace() || c == ';' || c == '{' || c == '}' || c == '!' {
            i += 1;
            continue;
        }
        // Addresses.
        if c.is_ascii_digit() || c == '$' || c == ',' || c == '~' || c == '+' {
            i += 1;
            continue;
        }
        if c == '/' {
            i = skip_to(i + 1, '/');
            continue;
        }
        if c == '\\' && i + 1 < n {
            i = skip_to(i + 2, chars[i + 1]);
            continue;
        }
        match c {
            'e' => return true,
            's' | 'y' if i + 1 < n => {
                let delim = chars[i + 1];
                i = skip_to(i + 2, delim);
                i = skip_to(i, delim);
                if c == 's' {
                    while i < n && !matches!(chars[i], ';' | '\n' | '}') {
                        match chars[i] {
                            'e' => return true,
                            'w' => {
                                i = to_line_end(i);
                                break;
                            }
                            _ => i += 1,
                        }
                    }
                }
            }
            'a' | 'i' | 'c' | 'r' | 'R' | 'w' | 'W' | ':' | '#' => i = to_line_end(i),
            'b' | 't' | 'T' => {
                while i < n && !matches!(chars[i], ';' | '\n') {
                    i += 1;
                }
            }
            _ => i += 1,
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(words: &[&str]) -> Vec<String> {
        words.iter().map(|s| s.to_string()).collect()
    }

    fn code_of(words: &[&str]) -> Option<Code> {
        let args = argv(words);
        match resolve(&programs::program_name(&args[0]), &args) {
            Some(Runs::Code(code)) => Some(code),
            _ => None,
        }
    }

    fn runs(words: &[&str]) -> bool {
        code_of(words).is_some_and(|c| runs_git(&c))
    }

    #[test]
    fn printing_git_is_not_running_it() {
        assert!(!runs(&["python3", "-c", "print('git status')"]));
        assert!(!runs(&["node", "-e", "console.log('git')"]));
        assert!(!runs(&["perl", "-e", "print \"git\\n\""]));
        assert!(!runs(&["ruby", "-e", "puts 'git status'"]));
        assert!(!runs(&["awk", "{print \"git\"}"]));
        assert!(!runs(&["sed", "s/git/jj/g"]));
        assert!(!runs(&["awk", "/git/ || /hg/ {print}"]));
        assert!(!runs(&["php", "-r", "echo 'git';"]));
    }

    #[test]
    fn spawning_git_is_running_it() {
        assert!(runs(&[
            "python3",
            "-c",
            "import os; os.system('git status')"
        ]));
        assert!(runs(&[
            "python",
            "-c",
            "import subprocess; subprocess.run(['git','status'])"
        ]));
        assert!(runs(&["python3", "-Ic", "import git; git.Repo('.')"]));
        assert!(runs(&[
            "node",
            "-e",
            "require('child_process').execSync('git log')"
        ]));
        assert!(runs(&["perl", "-le", "print `git log`"]));
        assert!(runs(&["ruby", "-e", "system('git', 'status')"]));
        assert!(runs(&["awk", "BEGIN { system(\"git status\") }"]));
        assert!(runs(&["awk", "BEGIN { \"git log\" | getline x }"]));
        assert!(runs(&["sed", "1e git status", "f"]));
        assert!(runs(&["sed", "-n", "s/.*/git log/ep", "f"]));
        assert!(runs(&["php", "-r", "shell_exec('git status');"]));
        assert!(runs(&[
            "deno",
            "eval",
            "new Deno.Command('git').outputSync()"
        ]));
    }

    #[test]
    fn script_files_and_stdin() {
        let args = argv(&["python3", "tool.py", "-c", "x"]);
        assert_eq!(resolve("python3", &args), Some(Runs::Nothing));
        let args = argv(&["python3"]);
        assert_eq!(
            resolve("python3", &args),
            Some(Runs::CodeStdin(Lang::Python))
        );
        let args = argv(&["python3", "-m", "pip", "-c", "x"]);
        assert_eq!(resolve("python3", &args), Some(Runs::Nothing));
        let args = argv(&["awk", "-f", "prog.awk", "x"]);
        assert_eq!(resolve("awk", &args), Some(Runs::Nothing));
    }

    #[test]
    fn literals_in_order() {
        let lits = literals(r#"run(["git", 'log', "-1"]); print("x\"y")"#);
        let texts: Vec<&str> = lits.iter().map(|(t, _)| t.as_str()).collect();
        assert_eq!(texts, ["git", "log", "-1", "x\"y"]);
        assert!(lits[1].1);
        assert!(!lits[3].1);
    }
}
