//! What a command line runs: `git` itself, another command behind a wrapper (`sudo`, `env`,
//! `timeout 5`, `xargs`, `find -exec`, …), a script string (`sh -c`, `eval`, `watch`), or a
//! shell that reads its script from stdin.
//!
//! Words arrive de-quoted; a part that is only known at run time (`$VAR`, `$(…)`) is
//! [`DYNAMIC`], so such a word never equals a command name.

/// Stands for the parts of a word that are only known when the command runs.
pub const DYNAMIC: char = '\u{1}';

/// What running one simple command does, as far as git is concerned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Runs {
    /// Nothing that could start git (as far as can be known statically).
    Nothing,
    /// git, with the words after `git` (`git-commit x` gives `["commit", "x"]`).
    Git(Vec<String>),
    /// Other commands, each to be resolved in turn (a wrapper's command, `find -exec`'s).
    Commands(Vec<Vec<String>>),
    /// A shell script given as a string (`sh -c`, `eval`, `watch`, `su -c`, `trap`, `alias`).
    Script(String),
    /// A shell that reads its script from standard input.
    ShellStdin,
    /// Code of another language (`python -c`) that may spawn git.
    ForeignCode(String),
}

const SHELLS: &[&str] = &[
    "sh",
    "bash",
    "zsh",
    "dash",
    "ksh",
    "ksh93",
    "mksh",
    "ash",
    "yash",
    "posh",
    "rbash",
    "fish",
    "csh",
    "tcsh",
    "busybox-sh",
];

const INTERPRETERS: &[&str] = &[
    "python", "python2", "python3", "perl", "ruby", "node", "nodejs", "php", "deno", "bun",
];

/// A wrapper that runs its operand as a command: options that take a value, and how many
/// positional words come before the command.
struct Wrapper {
    name: &'static str,
    with_value: &'static [&'static str],
    positionals: usize,
}

const WRAPPERS: &[Wrapper] = &[
    Wrapper {
        name: "sudo",
        with_value: &[
            "-u",
            "-g",
            "-C",
            "-D",
            "-h",
            "-p",
            "-r",
            "-t",
            "-U",
            "-T",
            "-R",
            "--user",
            "--group",
            "--close-from",
            "--chdir",
            "--host",
            "--prompt",
            "--role",
            "--type",
            "--other-user",
            "--command-timeout",
            "--chroot",
        ],
        positionals: 0,
    },
    Wrapper {
        name: "doas",
        with_value: &["-u", "-C"],
        positionals: 0,
    },
    Wrapper {
        name: "env",
        with_value: &["-u", "--unset", "-C", "--chdir", "-a", "--argv0", "-P"],
        positionals: 0,
    },
    Wrapper {
        name: "time",
        with_value: &["-f", "--format", "-o", "--output"],
        positionals: 0,
    },
    Wrapper {
        name: "nohup",
        with_value: &[],
        positionals: 0,
    },
    Wrapper {
        name: "nice",
        with_value: &["-n", "--adjustment"],
        positionals: 0,
    },
    Wrapper {
        name: "renice",
        with_value: &["-n"],
        positionals: 0,
    },
    Wrapper {
        name: "timeout",
        with_value: &["-s", "--signal", "-k", "--kill-after"],
        positionals: 1,
    },
    Wrapper {
        name: "gtimeout",
        with_value: &["-s", "--signal", "-k", "--kill-after"],
        positionals: 1,
    },
    Wrapper {
        name: "command",
        with_value: &[],
        positionals: 0,
    },
    Wrapper {
        name: "exec",
        with_value: &["-a"],
        positionals: 0,
    },
    Wrapper {
        name: "builtin",
        with_value: &[],
        positionals: 0,
    },
    Wrapper {
        name: "xargs",
        with_value: &[
            "-I",
            "-L",
            "-n",
            "-P",
            "-s",
            "-d",
            "-E",
            "-a",
            "--arg-file",
            "--delimiter",
            "--max-args",
            "--max-procs",
            "--max-chars",
            "--max-lines",
            "--eof",
            "--process-slot-var",
        ],
        positionals: 0,
    },
    Wrapper {
        name: "stdbuf",
        with_value: &["-i", "-o", "-e", "--input", "--output", "--error"],
        positionals: 0,
    },
    Wrapper {
        name: "ionice",
        with_value: &["-c", "-n", "--class", "--classdata"],
        positionals: 0,
    },
    Wrapper {
        name: "chronic",
        with_value: &[],
        positionals: 0,
    },
    Wrapper {
        name: "setsid",
        with_value: &[],
        positionals: 0,
    },
    Wrapper {
        name: "unbuffer",
        with_value: &[],
        positionals: 0,
    },
    Wrapper {
        name: "nocorrect",
        with_value: &[],
        positionals: 0,
    },
    Wrapper {
        name: "noglob",
        with_value: &[],
        positionals: 0,
    },
    Wrapper {
        name: "fakeroot",
        with_value: &["-l", "-s", "-i", "-b", "--lib", "--faked"],
        positionals: 0,
    },
    Wrapper {
        name: "eatmydata",
        with_value: &[],
        positionals: 0,
    },
    Wrapper {
        name: "catchsegv",
        with_value: &[],
        positionals: 0,
    },
    Wrapper {
        name: "dbus-run-session",
        with_value: &["--config-file", "--dbus-daemon"],
        positionals: 0,
    },
    Wrapper {
        name: "xvfb-run",
        with_value: &[
            "-n",
            "-s",
            "-f",
            "-e",
            "-p",
            "--server-num",
            "--server-args",
            "--auth-file",
            "--error-file",
        ],
        positionals: 0,
    },
    Wrapper {
        name: "strace",
        with_value: &[
            "-o", "-e", "-p", "-s", "-u", "-E", "-P", "-a", "-b", "-I", "-O", "-S", "-X",
        ],
        positionals: 0,
    },
    Wrapper {
        name: "ltrace",
        with_value: &[
            "-o", "-e", "-p", "-s", "-u", "-n", "-a", "-A", "-D", "-F", "-l", "-L",
        ],
        positionals: 0,
    },
    Wrapper {
        name: "valgrind",
        with_value: &[],
        positionals: 0,
    },
    Wrapper {
        name: "taskset",
        with_value: &[],
        positionals: 1,
    },
    Wrapper {
        name: "chroot",
        with_value: &["--userspec", "--groups"],
        positionals: 1,
    },
    Wrapper {
        name: "runuser",
        with_value: &["-u", "-g", "-G", "-s", "--user", "--group", "--shell"],
        positionals: 0,
    },
    Wrapper {
        name: "proxychains",
        with_value: &["-f"],
        positionals: 0,
    },
    Wrapper {
        name: "proxychains4",
        with_value: &["-f"],
        positionals: 0,
    },
    Wrapper {
        name: "torsocks",
        with_value: &["-u", "-p", "-a", "-P"],
        positionals: 0,
    },
    Wrapper {
        name: "firejail",
        with_value: &[],
        positionals: 0,
    },
    Wrapper {
        name: "unshare",
        with_value: &[
            "-S", "-G", "--setuid", "--setgid", "-R", "-w", "--root", "--wd",
        ],
        positionals: 0,
    },
    Wrapper {
        name: "nsenter",
        with_value: &["-t", "--target", "-S", "-G", "-r", "-w"],
        positionals: 0,
    },
    Wrapper {
        name: "prlimit",
        with_value: &["-p", "--pid"],
        positionals: 0,
    },
    Wrapper {
        name: "cpulimit",
        with_value: &["-l", "--limit", "-p", "--pid", "-e", "--exe"],
        positionals: 0,
    },
    Wrapper {
        name: "systemd-run",
        with_value: &[
            "-u",
            "--unit",
            "-p",
            "--property",
            "-E",
            "--setenv",
            "--slice",
            "-M",
            "--machine",
            "--uid",
            "--gid",
            "--nice",
            "--working-directory",
            "-H",
            "--host",
            "--description",
        ],
        positionals: 0,
    },
    Wrapper {
        name: "caffeinate",
        with_value: &["-t", "-w"],
        positionals: 0,
    },
    Wrapper {
        name: "rlwrap",
        with_value: &["-a", "-f", "-H", "-l", "-P", "-S", "-z"],
        positionals: 0,
    },
    Wrapper {
        name: "numactl",
        with_value: &[
            "-C",
            "-N",
            "-m",
            "-p",
            "-i",
            "--physcpubind",
            "--cpunodebind",
            "--membind",
            "--preferred",
            "--interleave",
        ],
        positionals: 0,
    },
    Wrapper {
        name: "watch",
        with_value: &["-n", "--interval", "-q", "--equexit"],
        positionals: 0,
    },
    Wrapper {
        name: "sg",
        with_value: &[],
        positionals: 1,
    },
];

/// `X run …` / `X exec …` launchers: the first words, then the command.
const LAUNCHERS: &[(&str, &str)] = &[
    ("uv", "run"),
    ("poetry", "run"),
    ("pipenv", "run"),
    ("bundle", "exec"),
    ("mise", "exec"),
    ("rtx", "exec"),
    ("pnpm", "exec"),
    ("direnv", "exec"),
    ("conda", "run"),
    ("pixi", "run"),
    ("nix-shell", "--run"),
];

/// Basename of a command word (`/usr/bin/git` → `git`).
pub fn basename(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

/// What `argv` (a simple command's de-quoted words, command first) runs.
pub fn resolve(argv: &[String]) -> Runs {
    let Some(first) = argv.first() else {
        return Runs::Nothing;
    };
    let name = basename(first);
    if name == "git" {
        return Runs::Git(argv[1..].to_vec());
    }
    if let Some(sub) = name.strip_prefix("git-")
        && !sub.is_empty()
        && !sub.contains(DYNAMIC)
    {
        let mut args = vec![sub.to_owned()];
        args.extend(argv[1..].iter().cloned());
        return Runs::Git(args);
    }
    if SHELLS.contains(&name) {
        return shell(argv);
    }
    if INTERPRETERS
        .iter()
        .any(|i| name == *i || name.starts_with(&format!("{i}3.")))
    {
        return interpreter(argv);
    }
    match name {
        "eval" => return Runs::Script(argv[1..].join(" ")),
        "busybox" => return resolve(&argv[1..]),
        "find" => return find_exec(argv),
        "su" | "script" => return option_script(argv, &["-c", "--command"]),
        "flock" => return flock(argv),
        "trap" => {
            return argv
                .get(1)
                .map_or(Runs::Nothing, |s| Runs::Script(s.clone()));
        }
        "alias" => return alias(argv),
        "parallel" => return parallel(argv),
        "command" if argv[1..].iter().any(|a| a == "-v" || a == "-V") => return Runs::Nothing,
        _ => {}
    }
    if let Some((_, verb)) = LAUNCHERS.iter().find(|(n, _)| *n == name) {
        return launcher(argv, verb);
    }
    if let Some(wrapper) = WRAPPERS.iter().find(|w| w.name == name) {
        return wrapped(wrapper, argv);
    }
    Runs::Nothing
}

/// Skip a wrapper's options (and for `env` its assignments) and positionals; the rest is the
/// command it runs.
fn wrapped(wrapper: &Wrapper, argv: &[String]) -> Runs {
    let mut i = 1;
    let mut exec_form = false;
    while i < argv.len() {
        let arg = argv[i].as_str();
        if arg == "--" {
            i += 1;
            break;
        }
        if wrapper.name == "env" && (arg == "-S" || arg == "--split-string") {
            return argv
                .get(i + 1)
                .map_or(Runs::Nothing, |s| Runs::Script(s.clone()));
        }
        if wrapper.name == "env"
            && let Some(s) = arg.strip_prefix("--split-string=")
        {
            return Runs::Script(s.to_owned());
        }
        if wrapper.name == "env" && is_assignment(arg) {
            i += 1;
            continue;
        }
        if wrapper.name == "watch" && (arg == "-x" || arg == "--exec") {
            exec_form = true;
        }
        if !arg.starts_with('-') || arg == "-" {
            break;
        }
        if arg.starts_with("--") {
            i += if arg.contains('=') || !wrapper.with_value.contains(&arg) {
                1
            } else {
                2
            };
            continue;
        }
        // A short option, possibly with its value attached (`-n5`, `-I{}`).
        let opt = &arg[..arg.char_indices().nth(2).map_or(arg.len(), |(p, _)| p)];
        i += if wrapper.with_value.contains(&opt) && arg.len() == opt.len() {
            2
        } else {
            1
        };
    }
    i += wrapper.positionals;
    let command = argv.get(i..).unwrap_or_default();
    if command.is_empty() {
        return Runs::Nothing;
    }
    if wrapper.name == "watch" && !exec_form {
        return Runs::Script(command.join(" "));
    }
    Runs::Commands(vec![command.to_vec()])
}

fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// `sh -c 'script'`, `bash -lc`, `zsh -o x -c`, `fish --command`; a shell with no script
/// operand (or with `-s`) reads its script from stdin.
fn shell(argv: &[String]) -> Runs {
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
            return Runs::Script(script.to_owned());
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
        Some(script) if command_string => Runs::Script(script.clone()),
        None if !command_string => Runs::ShellStdin,
        _ if from_stdin => Runs::ShellStdin,
        _ => Runs::Nothing,
    }
}

/// `python -c CODE`, `perl -e CODE`, `node -e CODE`, `php -r CODE`.
fn interpreter(argv: &[String]) -> Runs {
    let mut iter = argv[1..].iter();
    while let Some(arg) = iter.next() {
        if matches!(
            arg.as_str(),
            "-c" | "-e" | "-E" | "-r" | "--eval" | "-p" | "--print"
        ) {
            return iter
                .next()
                .map_or(Runs::Nothing, |code| Runs::ForeignCode(code.clone()));
        }
        if !arg.starts_with('-') {
            break;
        }
    }
    Runs::Nothing
}

/// `find … -exec cmd … ;` (also `-execdir`, `-ok`, `-okdir`, ended by `;` or `+`).
fn find_exec(argv: &[String]) -> Runs {
    let mut commands = Vec::new();
    let mut i = 1;
    while i < argv.len() {
        if matches!(argv[i].as_str(), "-exec" | "-execdir" | "-ok" | "-okdir") {
            let start = i + 1;
            let mut end = start;
            while end < argv.len() && argv[end] != ";" && argv[end] != "+" {
                end += 1;
            }
            commands.push(argv[start..end].to_vec());
            i = end;
        }
        i += 1;
    }
    if commands.is_empty() {
        Runs::Nothing
    } else {
        Runs::Commands(commands)
    }
}

/// `su -c CMD`, `script -c CMD`: the value of one of `options` is a shell script.
fn option_script(argv: &[String], options: &[&str]) -> Runs {
    let mut iter = argv[1..].iter();
    while let Some(arg) = iter.next() {
        if options.contains(&arg.as_str()) {
            return iter
                .next()
                .map_or(Runs::Nothing, |s| Runs::Script(s.clone()));
        }
        if let Some(s) = arg.strip_prefix("--command=") {
            return Runs::Script(s.to_owned());
        }
    }
    Runs::Nothing
}

/// `flock [opts] FILE CMD…`, `flock [opts] FILE -c CMD`, `flock FD`.
fn flock(argv: &[String]) -> Runs {
    if let script @ Runs::Script(_) = option_script(argv, &["-c", "--command"]) {
        return script;
    }
    let with_value = ["-w", "--wait", "--timeout", "-E", "--conflict-exit-code"];
    let mut i = 1;
    while i < argv.len() && argv[i].starts_with('-') {
        i += if with_value.contains(&argv[i].as_str()) {
            2
        } else {
            1
        };
    }
    match argv.get(i + 1..) {
        Some(command) if !command.is_empty() => Runs::Commands(vec![command.to_vec()]),
        _ => Runs::Nothing,
    }
}

/// `alias g='git status'`: defining an alias that runs git counts as running it.
fn alias(argv: &[String]) -> Runs {
    let bodies: Vec<&str> = argv[1..]
        .iter()
        .filter_map(|a| a.split_once('='))
        .map(|(_, v)| v)
        .collect();
    if bodies.is_empty() {
        Runs::Nothing
    } else {
        Runs::Script(bodies.join("\n"))
    }
}

/// `parallel [opts] CMD… ::: args`: the command words are run through a shell.
fn parallel(argv: &[String]) -> Runs {
    let with_value = [
        "-j",
        "--jobs",
        "-S",
        "--sshlogin",
        "-a",
        "--arg-file",
        "--delay",
        "--timeout",
    ];
    let mut i = 1;
    while i < argv.len() && argv[i].starts_with('-') {
        i += if with_value.contains(&argv[i].as_str()) {
            2
        } else {
            1
        };
    }
    let command: Vec<&str> = argv[i.min(argv.len())..]
        .iter()
        .map(String::as_str)
        .take_while(|a| !a.starts_with(":::"))
        .collect();
    if command.is_empty() {
        Runs::Nothing
    } else {
        Runs::Script(command.join(" "))
    }
}

/// `uv run CMD…`, `bundle exec CMD…`, `direnv exec DIR CMD…`, `nix-shell --run SCRIPT`.
fn launcher(argv: &[String], verb: &str) -> Runs {
    let Some(pos) = argv.iter().position(|a| a == verb) else {
        return Runs::Nothing;
    };
    if verb == "--run" {
        return argv
            .get(pos + 1)
            .map_or(Runs::Nothing, |s| Runs::Script(s.clone()));
    }
    let mut i = pos + 1;
    while i < argv.len() && argv[i].starts_with('-') {
        i += 1;
        if argv[i - 1] == "--" {
            break;
        }
    }
    if basename(&argv[0]) == "direnv" {
        i += 1;
    }
    match argv.get(i..) {
        Some(command) if !command.is_empty() => Runs::Commands(vec![command.to_vec()]),
        _ => Runs::Nothing,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(s: &str) -> Runs {
        resolve(&s.split_whitespace().map(str::to_owned).collect::<Vec<_>>())
    }

    fn cmd(s: &str) -> Runs {
        Runs::Commands(vec![s.split_whitespace().map(str::to_owned).collect()])
    }

    #[test]
    fn wrappers_skip_their_options() {
        assert_eq!(r("sudo -u root -E git status"), cmd("git status"));
        assert_eq!(r("timeout -s KILL 5 git log"), cmd("git log"));
        assert_eq!(r("nice -n 5 git gc"), cmd("git gc"));
        assert_eq!(r("env -i A=b git status"), cmd("git status"));
        assert_eq!(r("xargs -I{} git add {}"), cmd("git add {}"));
        assert_eq!(r("xargs -n 1 git add"), cmd("git add"));
        assert_eq!(r("stdbuf -oL git log"), cmd("git log"));
    }

    #[test]
    fn shells_with_scripts() {
        assert_eq!(r("bash -lc x"), Runs::Script("x".into()));
        assert_eq!(r("sh"), Runs::ShellStdin);
        assert_eq!(r("bash -s"), Runs::ShellStdin);
        assert_eq!(r("bash script.sh"), Runs::Nothing);
        assert_eq!(r("watch git status"), Runs::Script("git status".into()));
    }

    #[test]
    fn command_v_only_looks_up() {
        assert_eq!(r("command -v git"), Runs::Nothing);
        assert_eq!(r("command git status"), cmd("git status"));
    }
}
