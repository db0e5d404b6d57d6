//! What a simple command runs: git itself, another command behind a wrapper (`sudo`, `env`,
//! `nice`, `timeout 5`, `xargs`, `find -exec`, …), a shell script string (`sh -c`, `eval`,
//! `watch`, `su -c`), code of another language (`python -c`), or a command word known only at
//! run time.
//!
//! Wrappers are an allow-list: each known wrapper's options are parsed with its real grammar
//! (`table`: getopt tables written after each program's source and manual; `launchers`: tools
//! with a verb such as `uv run`; `syntaxes`: programs with a syntax of their own such as
//! `find -exec … ;`), and what it runs is taken from where the program takes it. An option a
//! wrapper's table does not know is read both ways (see [`super::getopt`]). A command that is
//! not listed is not a wrapper: its arguments are data.
//!
//! Words arrive de-quoted; a part only known at run time (`$VAR`, `$(…)`) is [`DYNAMIC`].

mod launchers;
mod syntaxes;
mod table;

use super::interpreters;
use super::programs;
pub use super::runs::{DYNAMIC, Runs};

const SHELLS: &[&str] = &[
    "sh",
    "bash",
    "zsh",
    "dash",
    "ksh",
    "ksh93",
    "mksh",
    "pdksh",
    "oksh",
    "ash",
    "yash",
    "posh",
    "rbash",
    "fish",
    "csh",
    "tcsh",
    "busybox-sh",
    "osh",
    "ysh",
    "oil",
    "elvish",
    "nu",
    "xonsh",
    "brush",
];

/// `sudo FOO=bar cmd`: assignments before the command.
pub(super) fn skip_assignments(words: &[String]) -> &[String] {
    let n = words.iter().take_while(|w| is_assignment(w)).count();
    &words[n..]
}

pub(super) fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

pub(super) fn is_integer(word: &str) -> bool {
    let digits = word.strip_prefix(['-', '+']).unwrap_or(word);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// Wrapper-like commands followed when any later word may start the command.
const MAX_GUESSED_WRAPPERS: usize = 16;

/// What runs when any word of `args` from `from` on may start the command (a wrapper whose
/// options could not all be followed): the first word that starts git, else the first command
/// word known only at run time, and what the first few wrapper-like words run.
pub(super) fn any_later_command(args: &[String], from: usize) -> Runs {
    let mut runs = Vec::new();
    let mut wrappers = 0;
    for start in from..args.len() {
        let word = &args[start];
        if programs::git_prefix(word).is_some() {
            return resolve(&args[start..]);
        }
        if programs::is_dynamic(word) && !runs.iter().any(|r| matches!(r, Runs::Dynamic(_))) {
            runs.push(Runs::Dynamic(word.clone()));
            continue;
        }
        let name = programs::program_name(word);
        if wrappers < MAX_GUESSED_WRAPPERS
            && (runs_a_command(&name)
                || interpreters::resolve(&name, &args[start..start + 1]).is_some())
        {
            wrappers += 1;
            runs.push(resolve(&args[start..]));
        }
    }
    Runs::any(runs)
}

/// Whether `name` is a shell (runs a script file or string).
pub fn is_shell(name: &str) -> bool {
    SHELLS.contains(&name)
}

/// Programs (and shells) that run a command given in their arguments, by program name: what
/// the text scan of [`super::fallback`] treats as a wrapper.
pub fn runs_a_command(name: &str) -> bool {
    static NAMES: std::sync::OnceLock<std::collections::HashSet<&'static str>> =
        std::sync::OnceLock::new();
    NAMES
        .get_or_init(|| {
            const SPECIAL: &[&str] = &[
                "eval",
                "busybox",
                "find",
                "gfind",
                "fd",
                "fdfind",
                "gdb",
                "sg",
                "trap",
                "alias",
                "wsl",
                "cmd",
                "powershell",
                "pwsh",
                "tmux",
            ];
            let mut names: std::collections::HashSet<&'static str> =
                SPECIAL.iter().chain(SHELLS).copied().collect();
            names.extend(launchers::LAUNCHERS.iter().map(|l| l.name));
            names.extend(table::WRAPPERS.iter().flat_map(|w| w.names.iter().copied()));
            names
        })
        .contains(name)
}

/// What `argv` (a simple command's de-quoted words, command first) runs.
pub fn resolve(argv: &[String]) -> Runs {
    let Some(first) = argv.first() else {
        return Runs::Nothing;
    };
    if let Some(mut args) = programs::git_prefix(first) {
        args.extend(argv[1..].iter().cloned());
        return Runs::Git(args);
    }
    if programs::is_dynamic(first) {
        return Runs::Dynamic(first.clone());
    }
    let name = programs::program_name(first);
    let name: &str = &name;
    if SHELLS.contains(&name) {
        return shell(argv);
    }
    if let Some(runs) = interpreters::resolve(name, argv) {
        return runs;
    }
    match name {
        // Builtins take `--` as the end of their options.
        "eval" => return Runs::script(&after_dashes(&argv[1..]).join(" ")),
        "busybox" => return resolve(&argv[1..]),
        "find" | "gfind" => return syntaxes::find(argv),
        "fd" | "fdfind" => return syntaxes::fd(argv),
        "gdb" => return syntaxes::gdb(argv),
        "sg" => return syntaxes::sg(argv),
        "trap" => {
            return after_dashes(&argv[1..])
                .first()
                .map_or(Runs::Nothing, |s| Runs::script(s));
        }
        "alias" => return alias(argv),
        "wsl" => return syntaxes::wsl(argv),
        "cmd" => return syntaxes::cmd(argv),
        "powershell" | "pwsh" => return syntaxes::powershell(argv),
        "tmux" => return syntaxes::tmux(argv),
        _ => {}
    }
    if let Some(launcher) = launchers::LAUNCHERS.iter().find(|l| l.name == name) {
        return launchers::launch(launcher, argv);
    }
    if let Some(wrapper) = table::WRAPPERS.iter().find(|w| w.names.contains(&name)) {
        return table::wrapped(wrapper, argv);
    }
    Runs::Nothing
}

/// A builtin's operands after a leading `--`.
fn after_dashes(args: &[String]) -> &[String] {
    match args.split_first() {
        Some((first, rest)) if first == "--" => rest,
        _ => args,
    }
}

/// Files that are the shell's own standard input (`bash /dev/stdin <<< …`).
pub(super) fn is_stdin_file(path: &str) -> bool {
    matches!(
        path,
        "/dev/stdin" | "/dev/fd/0" | "/proc/self/fd/0" | "/proc/thread-self/fd/0"
    )
}

/// Marks where a placeholder stands for input known only at run time.
pub(super) fn with_placeholders(words: &[String], placeholders: &[&str]) -> Vec<String> {
    words
        .iter()
        .map(|w| {
            let mut w = w.clone();
            for p in placeholders.iter().filter(|p| !p.is_empty()) {
                w = w.replace(p, &DYNAMIC.to_string());
            }
            w
        })
        .collect()
}

/// `sh -c 'script'`, `bash -lc`, `zsh -o x -c`, `fish --command`; a shell with no script
/// operand (or with `-s`) reads its script from stdin.
pub(super) fn shell(argv: &[String]) -> Runs {
    let mut i = 1;
    let mut command_string = false;
    let mut from_stdin = false;
    while i < argv.len() {
        let arg = argv[i].as_str();
        if arg == "--" || arg == "-" {
            i += 1;
            break;
        }
        if let Some(script) = arg.strip_prefix("--command=") {
            return Runs::script(script);
        }
        match arg {
            "-o" | "+o" | "-O" | "+O" | "--rcfile" | "--init-file" | "-C" | "--init-command" => {
                i += 2;
                continue;
            }
            "--command" => command_string = true,
            _ if arg.starts_with("--") => {}
            _ if arg.starts_with('-') || arg.starts_with('+') => {
                command_string |= arg.contains('c');
                from_stdin |= arg.contains('s');
            }
            _ => break,
        }
        i += 1;
    }
    match argv.get(i) {
        Some(script) if command_string => Runs::script(script),
        None if !command_string => Runs::ShellStdin,
        _ if from_stdin => Runs::ShellStdin,
        Some(file) if is_stdin_file(file) => Runs::ShellStdin,
        _ => Runs::Nothing,
    }
}

/// `alias g='git status'`: defining an alias that runs git counts as running it.
fn alias(argv: &[String]) -> Runs {
    Runs::any(
        argv[1..]
            .iter()
            .filter_map(|a| a.split_once('='))
            .map(|(_, body)| Runs::script(body)),
    )
}

#[cfg(test)]
mod tests {
    use super::table::env_split;
    use super::*;

    fn w(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_owned).collect()
    }

    fn r(s: &str) -> Runs {
        resolve(&w(s))
    }

    fn cmd(s: &str) -> Runs {
        Runs::Command(w(s))
    }

    /// Whether any reading of `line` runs `git …`, resolving wrappers inside wrappers.
    fn reaches_git(line: &str) -> bool {
        fn walk(runs: &Runs, depth: usize) -> bool {
            match runs {
                Runs::Git(_) => true,
                Runs::Command(c) if depth < 8 => walk(&resolve(c), depth + 1),
                Runs::Any(all) => all.iter().any(|r| walk(r, depth)),
                _ => false,
            }
        }
        walk(&r(line), 0)
    }

    #[test]
    fn wrappers_skip_their_options() {
        assert_eq!(r("sudo -u root -E git status"), cmd("git status"));
        assert_eq!(r("sudo -Eu root git status"), cmd("git status"));
        assert_eq!(r("sudo FOO=1 git status"), cmd("git status"));
        assert_eq!(r("timeout -s KILL 5 git log"), cmd("git log"));
        assert_eq!(r("timeout --sig=KILL 5 git log"), cmd("git log"));
        assert_eq!(r("nice -n 5 git gc"), cmd("git gc"));
        assert_eq!(r("nice -10 git gc"), cmd("git gc"));
        assert_eq!(r("env -i A=b git status"), cmd("git status"));
        assert_eq!(r("env - git status"), cmd("git status"));
        assert_eq!(r("env --unse=X git status"), cmd("git status"));
        assert_eq!(r("stdbuf -oL git log"), cmd("git log"));
        assert_eq!(r("chrt -o 0 git log"), cmd("git log"));
        assert_eq!(r("chrt --idle git log"), cmd("git log"));
        assert_eq!(r("chrt -p 5 123"), Runs::Nothing);
        assert_eq!(r("taskset -c 0 git log"), cmd("git log"));
        assert_eq!(r("ionice -c3 -n7 git gc"), cmd("git gc"));
        assert_eq!(r("flock -w 3 /tmp/l git fetch"), cmd("git fetch"));
        assert_eq!(r("flock /tmp/l -c x"), Runs::Script("x".into()));
        assert_eq!(r("runuser -u bob -- git log"), cmd("git log"));
        assert_eq!(r("su bob -c x"), Runs::Script("x".into()));
        assert_eq!(
            r("watch -n 2 git status"),
            Runs::Script("git status".into())
        );
        assert_eq!(r("watch -x git status"), cmd("git status"));
        assert_eq!(r("bwrap --bind / / --dev /dev git log"), cmd("git log"));
    }

    #[test]
    fn env_split_string() {
        assert_eq!(r("env -S x"), cmd("x"));
        assert_eq!(
            env_split(r#"git "log -1" 'a b'\_c"#),
            w("git")
                .into_iter()
                .chain(["log -1".to_owned(), "a b".to_owned(), "c".to_owned()])
                .collect::<Vec<_>>()
        );
        assert_eq!(
            env_split("${GIT} status"),
            vec![DYNAMIC.to_string(), "status".to_owned()]
        );
        let args: Vec<String> = vec!["env".into(), "-S".into(), "-i git status".into()];
        assert_eq!(resolve(&args), cmd("git status"));
    }

    #[test]
    fn unknown_options_are_read_both_ways() {
        assert!(reaches_git("nice --frobnicate git status"));
        assert!(reaches_git("timeout --frob 5 git status"));
        assert!(reaches_git("sudo -Z git status"));
    }

    #[test]
    fn past_the_bound_any_later_word_may_start_the_command() {
        let many = "-Z x ".repeat(200);
        assert!(reaches_git(&format!("sudo {many} git status")));
        assert!(reaches_git(&format!("sudo {many} nice -n 5 git status")));
        assert!(!reaches_git(&format!("sudo {many} echo status")));
        // One reading stands for all later words: 20,000 unknown options stay linear.
        let huge = "-Z ".repeat(20_000);
        assert!(reaches_git(&format!("sudo {huge} git status")));
    }

    #[test]
    fn shells_with_scripts() {
        assert_eq!(r("bash -lc x"), Runs::Script("x".into()));
        assert_eq!(r("sh"), Runs::ShellStdin);
        assert_eq!(r("bash -s"), Runs::ShellStdin);
        assert_eq!(r("bash script.sh"), Runs::Nothing);
    }

    #[test]
    fn command_v_only_looks_up() {
        assert_eq!(r("command -v git"), Runs::Nothing);
        assert_eq!(r("command -pv git"), Runs::Nothing);
        assert_eq!(r("command git status"), cmd("git status"));
    }

    #[test]
    fn placeholders_are_run_time_input() {
        let d = DYNAMIC.to_string();
        assert_eq!(r("xargs -I{} {} status"), cmd("{} status"));
        assert_eq!(
            r("xargs -I{} sh -c {}"),
            Runs::Command(vec!["sh".into(), "-c".into(), d.clone()])
        );
        assert_eq!(
            r("find . -exec {} status ;"),
            Runs::Command(vec![d, "status".into()])
        );
        assert!(reaches_git("fd -e rs -x git add"));
        assert!(reaches_git("fd --exec-batch git add ;"));
    }

    #[test]
    fn launchers() {
        assert_eq!(r("uv run --with x git status"), cmd("git status"));
        assert_eq!(r("uv run pytest -k git"), cmd("pytest -k git"));
        assert_eq!(r("direnv exec . git log"), cmd("git log"));
        assert_eq!(r("nix develop -c git log"), cmd("git log"));
        assert_eq!(r("nix-shell -p x --run y"), Runs::Script("y".into()));
    }

    #[test]
    fn powershell_encoded_command() {
        // "git status" in UTF-16LE, base64.
        assert_eq!(
            r("powershell -enc ZwBpAHQAIABzAHQAYQB0AHUAcwA="),
            Runs::Script("git status".into())
        );
        assert_eq!(
            r("pwsh -NoProfile -Command git status"),
            Runs::Script("git status".into())
        );
    }
}
