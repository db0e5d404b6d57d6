//! What a simple command runs: git itself, another command behind a wrapper (`sudo`, `env`,
//! `nice`, `timeout 5`, `xargs`, `find -exec`, …), a shell script string (`sh -c`, `eval`,
//! `watch`, `su -c`), code of another language (`python -c`), or a command word known only at
//! run time.
//!
//! Wrappers are an allow-list: each known wrapper's options are parsed with its real grammar
//! ([`getopt`], tables below written after each program's source and manual), and what it runs
//! is taken from where the program takes it. An option a wrapper's table does not know is
//! read both ways (see [`getopt`]). A command that is not listed here is not a wrapper: its
//! arguments are data.
//!
//! Words arrive de-quoted; a part only known at run time (`$VAR`, `$(…)`) is [`DYNAMIC`].

use super::getopt::{self, Grammar, Order, Parsed, flag, optional, value, words};
use super::interpreters::{self, Code, Lang};
use super::programs;

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

    fn command(words: &[String]) -> Runs {
        if words.is_empty() {
            Runs::Nothing
        } else {
            Runs::Command(words.to_vec())
        }
    }

    fn script(text: &str) -> Runs {
        if text.trim().is_empty() {
            Runs::Nothing
        } else {
            Runs::Script(text.to_owned())
        }
    }
}

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

/// A program that runs a command given to it, with its option grammar and what it runs once
/// its options are read.
struct Wrapper {
    names: &'static [&'static str],
    grammar: Grammar,
    /// What it runs, from one reading of its arguments (the words after its name).
    then: fn(&Parsed, &[String]) -> Runs,
}

/// The operands are the command.
fn command(p: &Parsed, _: &[String]) -> Runs {
    Runs::command(&p.operands)
}

/// One operand (a duration, a mask, a directory), then the command.
fn after_one(p: &Parsed, _: &[String]) -> Runs {
    Runs::command(p.operands.get(1..).unwrap_or_default())
}

/// `sudo FOO=bar cmd`: assignments before the command.
fn skip_assignments(words: &[String]) -> &[String] {
    let n = words.iter().take_while(|w| is_assignment(w)).count();
    &words[n..]
}

fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

fn is_integer(word: &str) -> bool {
    let digits = word.strip_prefix(['-', '+']).unwrap_or(word);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

const WRAPPERS: &[Wrapper] = &[
    // sudo 1.9 (parse_args.c).
    Wrapper {
        names: &["sudo"],
        grammar: Grammar::new(
            "+Aa:BbC:c:D:Eeg:Hh::iKklNnPp:R:r:sST:t:U:u:Vv",
            &[
                flag("askpass", "A"),
                value("auth-type", "a"),
                flag("background", "b"),
                flag("bell", "B"),
                value("close-from", "C"),
                value("login-class", "c"),
                value("chdir", "D"),
                optional("preserve-env", "E"),
                flag("edit", "e"),
                value("group", "g"),
                flag("set-home", "H"),
                flag("help", "help"),
                value("host", "host"),
                flag("login", "i"),
                flag("remove-timestamp", "K"),
                flag("reset-timestamp", "k"),
                flag("list", "l"),
                flag("no-update", "N"),
                flag("non-interactive", "n"),
                flag("preserve-groups", "P"),
                value("prompt", "p"),
                value("chroot", "R"),
                value("role", "r"),
                flag("stdin", "S"),
                flag("shell", "s"),
                value("type", "t"),
                value("command-timeout", "T"),
                value("other-user", "U"),
                value("user", "u"),
                flag("version", "V"),
                flag("validate", "v"),
            ],
        ),
        then: sudo,
    },
    Wrapper {
        names: &["doas"],
        grammar: Grammar::new("+a:C:Lnsu:", &[]),
        then: command,
    },
    Wrapper {
        names: &["run0"],
        grammar: Grammar::new(
            "+hVu:g:D:",
            &[
                flag("help", "h"),
                flag("version", "V"),
                flag("no-ask-password", "no-ask-password"),
                value("machine", "machine"),
                value("unit", "unit"),
                value("property", "property"),
                value("description", "description"),
                value("slice", "slice"),
                flag("slice-inherit", "slice-inherit"),
                value("user", "u"),
                value("group", "g"),
                value("nice", "nice"),
                value("chdir", "D"),
                value("setenv", "setenv"),
                value("background", "background"),
                flag("pty", "pty"),
                flag("pipe", "pipe"),
                value("shell-prompt-prefix", "shell-prompt-prefix"),
            ],
        ),
        then: command,
    },
    Wrapper {
        names: &["pkexec"],
        grammar: Grammar::new(
            "+",
            &[
                value("user", "user"),
                flag("disable-internal-agent", "disable-internal-agent"),
                flag("keep-cwd", "keep-cwd"),
                flag("help", "help"),
                flag("version", "version"),
            ],
        ),
        then: command,
    },
    // coreutils env, with BSD's -P and newer coreutils' -a.
    Wrapper {
        names: &["env"],
        grammar: Grammar::new(
            "+0a:C:iP:S:u:v",
            &[
                flag("ignore-environment", "i"),
                flag("null", "0"),
                value("unset", "u"),
                value("chdir", "C"),
                value("split-string", "S"),
                value("argv0", "a"),
                optional("block-signal", "block-signal"),
                optional("default-signal", "default-signal"),
                optional("ignore-signal", "ignore-signal"),
                flag("list-signal-handling", "list-signal-handling"),
                flag("debug", "v"),
                flag("help", "help"),
                flag("version", "version"),
            ],
        ),
        then: env,
    },
    Wrapper {
        names: &["nice"],
        grammar: Grammar::new(
            "+n:",
            &[
                value("adjustment", "n"),
                flag("help", "help"),
                flag("version", "version"),
            ],
        )
        .numeric(),
        then: command,
    },
    // coreutils timeout, with FreeBSD's short -f/-p.
    Wrapper {
        names: &["timeout", "gtimeout"],
        grammar: Grammar::new(
            "+fk:ps:v",
            &[
                flag("foreground", "f"),
                value("kill-after", "k"),
                flag("preserve-status", "p"),
                value("signal", "s"),
                flag("verbose", "v"),
                flag("help", "help"),
                flag("version", "version"),
            ],
        ),
        then: after_one,
    },
    Wrapper {
        names: &["stdbuf", "gstdbuf"],
        grammar: Grammar::new(
            "+i:o:e:",
            &[
                value("input", "i"),
                value("output", "o"),
                value("error", "e"),
                flag("help", "help"),
                flag("version", "version"),
            ],
        ),
        then: command,
    },
    Wrapper {
        names: &["nohup"],
        grammar: Grammar::new("+", &[flag("help", "help"), flag("version", "version")]),
        then: command,
    },
    Wrapper {
        names: &["setsid"],
        grammar: Grammar::new(
            "+cfwhV",
            &[
                flag("ctty", "c"),
                flag("fork", "f"),
                flag("wait", "w"),
                flag("help", "h"),
                flag("version", "V"),
            ],
        ),
        then: command,
    },
    // util-linux chrt: `chrt [options] [priority] command…`, `chrt -p [priority] pid`.
    Wrapper {
        names: &["chrt"],
        grammar: Grammar::new(
            "+abdD:fiphmoP:rRT:vV",
            &[
                flag("all-tasks", "a"),
                flag("batch", "b"),
                flag("deadline", "d"),
                value("sched-deadline", "D"),
                flag("fifo", "f"),
                flag("idle", "i"),
                flag("pid", "p"),
                flag("help", "h"),
                flag("max", "m"),
                flag("other", "o"),
                value("sched-period", "P"),
                flag("rr", "r"),
                flag("reset-on-fork", "R"),
                value("sched-runtime", "T"),
                flag("verbose", "v"),
                flag("version", "V"),
            ],
        ),
        then: chrt,
    },
    // util-linux taskset: `taskset [options] mask command…`, `taskset -p [mask] pid`.
    Wrapper {
        names: &["taskset"],
        grammar: Grammar::new(
            "+apchV",
            &[
                flag("all-tasks", "a"),
                flag("pid", "p"),
                flag("cpu-list", "c"),
                flag("help", "h"),
                flag("version", "V"),
            ],
        ),
        then: taskset,
    },
    Wrapper {
        names: &["ionice"],
        grammar: Grammar::new(
            "+c:n:p:P:tu:hV",
            &[
                value("class", "c"),
                value("classdata", "n"),
                value("pid", "p"),
                value("pgid", "P"),
                flag("ignore", "t"),
                value("uid", "u"),
                flag("help", "h"),
                flag("version", "V"),
            ],
        ),
        then: ionice,
    },
    Wrapper {
        names: &["numactl"],
        grammar: Grammar::new(
            "+vgi:w:baP:p:m:nN:C:c:S:f:o:L:M:I:uTlHsdtDV",
            &[
                flag("all", "a"),
                value("interleave", "i"),
                value("weighted-interleave", "w"),
                value("preferred", "p"),
                value("preferred-many", "P"),
                value("cpubind", "c"),
                value("cpunodebind", "N"),
                value("physcpubind", "C"),
                value("membind", "m"),
                flag("show", "s"),
                flag("localalloc", "l"),
                flag("hardware", "H"),
                value("shm", "S"),
                value("file", "f"),
                value("offset", "o"),
                value("length", "L"),
                flag("strict", "t"),
                value("shmmode", "M"),
                flag("dump", "d"),
                flag("dump-nodes", "D"),
                value("shmid", "I"),
                flag("huge", "u"),
                flag("touch", "T"),
                flag("verify", "V"),
                flag("balancing", "b"),
            ],
        ),
        then: command,
    },
    Wrapper {
        names: &["cpulimit", "limitcpu"],
        grammar: Grammar::new(
            "+p:e:P:l:c:m:vzikrbqfh",
            &[
                value("pid", "p"),
                value("exe", "e"),
                value("path", "P"),
                value("limit", "l"),
                value("cpu", "c"),
                flag("verbose", "v"),
                flag("lazy", "z"),
                flag("include-children", "i"),
                flag("kill", "k"),
                flag("restore", "r"),
                flag("background", "b"),
                flag("quiet", "q"),
                flag("foreground", "f"),
                flag("help", "h"),
            ],
        ),
        then: command,
    },
    Wrapper {
        names: &["trickle"],
        grammar: Grammar::new("+hvVsw:n:u:d:t:l:", &[]),
        then: command,
    },
    Wrapper {
        names: &["systemd-run"],
        grammar: Grammar::new(
            "+hrC:H:M:E:p:tPqGdSu:v",
            &[
                flag("help", "h"),
                flag("version", "version"),
                flag("user", "user"),
                flag("system", "system"),
                flag("scope", "scope"),
                value("unit", "u"),
                value("description", "description"),
                value("slice", "slice"),
                flag("slice-inherit", "slice-inherit"),
                flag("remain-after-exit", "r"),
                flag("send-sighup", "send-sighup"),
                value("service-type", "service-type"),
                value("uid", "uid"),
                value("gid", "gid"),
                value("nice", "nice"),
                value("working-directory", "working-directory"),
                flag("same-dir", "d"),
                value("setenv", "E"),
                flag("no-ask-password", "no-ask-password"),
                flag("no-block", "no-block"),
                value("property", "p"),
                flag("pty", "t"),
                flag("pipe", "P"),
                flag("quiet", "q"),
                flag("verbose", "v"),
                value("on-active", "on-active"),
                value("on-boot", "on-boot"),
                value("on-startup", "on-startup"),
                value("on-unit-active", "on-unit-active"),
                value("on-unit-inactive", "on-unit-inactive"),
                value("on-calendar", "on-calendar"),
                flag("on-timezone-change", "on-timezone-change"),
                flag("on-clock-change", "on-clock-change"),
                value("timer-property", "timer-property"),
                value("path-property", "path-property"),
                value("socket-property", "socket-property"),
                flag("collect", "G"),
                flag("wait", "wait"),
                value("machine", "M"),
                value("host", "H"),
                value("capsule", "C"),
                value("expand-environment", "expand-environment"),
                value("json", "json"),
                flag("shell", "S"),
                flag("ignore-failure", "ignore-failure"),
                value("background", "background"),
                value("job-mode", "job-mode"),
            ],
        ),
        then: command,
    },
    // util-linux flock: `flock [options] file command…` or `flock [options] file -c string`.
    Wrapper {
        names: &["flock"],
        grammar: Grammar::new(
            "+sexnoFuw:E:hV",
            &[
                flag("shared", "s"),
                flag("exclusive", "x"),
                flag("unlock", "u"),
                flag("nonblocking", "n"),
                flag("nonblock", "n"),
                value("timeout", "w"),
                value("wait", "w"),
                value("conflict-exit-code", "E"),
                flag("close", "o"),
                flag("no-fork", "F"),
                flag("verbose", "verbose"),
                flag("help", "h"),
                flag("version", "V"),
            ],
        ),
        then: flock,
    },
    Wrapper {
        names: &["unbuffer"],
        grammar: Grammar::new("+p", &[]),
        then: command,
    },
    Wrapper {
        names: &["chroot"],
        grammar: Grammar::new(
            "+",
            &[
                value("userspec", "userspec"),
                value("groups", "groups"),
                flag("skip-chdir", "skip-chdir"),
                flag("help", "help"),
                flag("version", "version"),
            ],
        ),
        then: after_one,
    },
    // util-linux su and runuser: options end at the user; `-c` runs a shell string, and the
    // words after the user go to the user's shell (`su bob -c cmd`).
    Wrapper {
        names: &["su", "runuser"],
        grammar: Grammar::new(
            "+c:fg:G:lmpPs:u:hVw:",
            &[
                value("command", "c"),
                value("session-command", "c"),
                flag("fast", "f"),
                value("group", "g"),
                value("supp-group", "G"),
                flag("login", "l"),
                flag("preserve-environment", "p"),
                flag("pty", "P"),
                value("shell", "s"),
                value("user", "u"),
                value("whitelist-environment", "w"),
                flag("help", "h"),
                flag("version", "V"),
            ],
        ),
        then: su,
    },
    // util-linux script (`-c`), and BSD script (`script [-q] file command…`).
    Wrapper {
        names: &["script"],
        grammar: Grammar::new(
            "aB:c:deE:fI:kO:o:pqm:rT:Vh",
            &[
                flag("append", "a"),
                value("log-io", "B"),
                value("command", "c"),
                value("echo", "E"),
                flag("return", "e"),
                flag("flush", "f"),
                flag("force", "force"),
                value("log-in", "I"),
                value("log-out", "O"),
                value("output-limit", "o"),
                flag("quiet", "q"),
                value("logging-format", "m"),
                value("log-timing", "T"),
                optional("timing", "t"),
                flag("version", "V"),
                flag("help", "h"),
            ],
        )
        .order(Order::Either),
        then: script,
    },
    Wrapper {
        names: &["asciinema"],
        grammar: Grammar::new(
            "c:t:i:yqe:f:",
            &[
                value("command", "c"),
                value("title", "t"),
                value("idle-time-limit", "i"),
                flag("yes", "y"),
                flag("quiet", "q"),
                value("env", "e"),
                value("capture-env", "e"),
                flag("append", "append"),
                flag("raw", "raw"),
                flag("overwrite", "overwrite"),
                flag("stdin", "stdin"),
                flag("capture-input", "stdin"),
                value("cols", "cols"),
                value("rows", "rows"),
                value("format", "f"),
                value("output-format", "f"),
                value("window-size", "window-size"),
                value("log-file", "log-file"),
                flag("headless", "headless"),
            ],
        ),
        then: asciinema,
    },
    Wrapper {
        names: &["ttyrec"],
        grammar: Grammar::new("aue:h", &[]),
        then: ttyrec,
    },
    // procps watch: the operands are joined into a `sh -c` string unless -x.
    Wrapper {
        names: &["watch"],
        grammar: Grammar::new(
            "+bcCd::eghn:pq:rs:tvwx",
            &[
                flag("beep", "b"),
                flag("color", "c"),
                flag("no-color", "C"),
                optional("differences", "d"),
                flag("errexit", "e"),
                flag("chgexit", "g"),
                value("equexit", "q"),
                value("interval", "n"),
                flag("precise", "p"),
                flag("no-rerun", "r"),
                value("shotsdir", "s"),
                flag("no-title", "t"),
                flag("no-wrap", "w"),
                flag("exec", "x"),
                flag("help", "h"),
                flag("version", "v"),
            ],
        ),
        then: watch,
    },
    // GNU time (and BSD's -l/-h).
    Wrapper {
        names: &["time", "gtime"],
        grammar: Grammar::new(
            "+af:hlo:pqv",
            &[
                flag("append", "a"),
                value("format", "f"),
                value("output", "o"),
                flag("portability", "p"),
                flag("quiet", "q"),
                flag("verbose", "v"),
                flag("help", "help"),
                flag("version", "version"),
            ],
        ),
        then: command,
    },
    Wrapper {
        names: &["command"],
        grammar: Grammar::new("+pvV", &[]),
        then: builtin_command,
    },
    Wrapper {
        names: &["exec"],
        grammar: Grammar::new("+cla:", &[]),
        then: command,
    },
    Wrapper {
        names: &[
            "builtin",
            "nocorrect",
            "noglob",
            "eatmydata",
            "catchsegv",
            "winpty",
        ],
        grammar: Grammar::new("+", &[]),
        then: command,
    },
    Wrapper {
        names: &["chronic"],
        grammar: Grammar::new("+ev", &[]),
        then: command,
    },
    Wrapper {
        names: &["setpriv"],
        grammar: Grammar::new(
            "+dhV",
            &[
                flag("dump", "d"),
                flag("nnp", "nnp"),
                flag("no-new-privs", "nnp"),
                value("inh-caps", "inh-caps"),
                value("ambient-caps", "ambient-caps"),
                value("bounding-set", "bounding-set"),
                value("ruid", "ruid"),
                value("euid", "euid"),
                value("rgid", "rgid"),
                value("egid", "egid"),
                value("reuid", "reuid"),
                value("regid", "regid"),
                flag("clear-groups", "clear-groups"),
                flag("keep-groups", "keep-groups"),
                flag("init-groups", "init-groups"),
                value("groups", "groups"),
                value("securebits", "securebits"),
                value("pdeathsig", "pdeathsig"),
                flag("reset-env", "reset-env"),
                value("selinux-label", "selinux-label"),
                value("apparmor-profile", "apparmor-profile"),
                value("landlock-access", "landlock-access"),
                value("landlock-rule", "landlock-rule"),
                value("seccomp-filter", "seccomp-filter"),
                flag("help", "h"),
                flag("version", "V"),
            ],
        ),
        then: command,
    },
    Wrapper {
        names: &["caffeinate"],
        grammar: Grammar::new("+dimsut:w:", &[]),
        then: command,
    },
    Wrapper {
        names: &["sandbox-exec"],
        grammar: Grammar::new("+f:n:p:D:", &[]),
        then: command,
    },
    Wrapper {
        names: &["proxychains", "proxychains4"],
        grammar: Grammar::new("+f:q", &[]),
        then: command,
    },
    Wrapper {
        names: &["torsocks"],
        grammar: Grammar::new(
            "+u:p:a:P:idqhv",
            &[
                value("user", "u"),
                value("pass", "p"),
                value("address", "a"),
                value("port", "P"),
                flag("isolate", "i"),
                flag("debug", "d"),
                flag("quiet", "q"),
                flag("help", "h"),
                flag("version", "v"),
            ],
        ),
        then: command,
    },
    Wrapper {
        names: &["sshpass"],
        grammar: Grammar::new("+f:d:p:eP:hvV", &[]),
        then: command,
    },
    Wrapper {
        names: &["daemonize"],
        grammar: Grammar::new("+ac:e:E:o:p:l:u:v", &[]),
        then: command,
    },
    Wrapper {
        names: &["chpst"],
        grammar: Grammar::new("+u:U:b:e:/:C:n:l:L:m:d:o:p:f:c:r:t:vP012", &[]),
        then: command,
    },
    // firejail and valgrind take option values only as `--name=value`.
    Wrapper {
        names: &["firejail", "valgrind"],
        grammar: Grammar::new("+", &[]).unknown_flags(),
        then: command,
    },
    Wrapper {
        names: &["strace"],
        grammar: Grammar::new(
            "+a:Ab:cCdDe:E:fFhiI:kno:O:p:P:qrs:S:tTu:U:vVwxX:yYzZ",
            &[
                value("columns", "a"),
                flag("output-append-mode", "A"),
                value("detach-on", "b"),
                flag("summary-only", "c"),
                flag("summary", "C"),
                flag("debug", "d"),
                optional("daemonize", "D"),
                value("expr", "e"),
                value("trace", "e"),
                value("signal", "e"),
                value("status", "e"),
                value("abbrev", "e"),
                value("verbose", "e"),
                value("raw", "e"),
                value("read", "e"),
                value("write", "e"),
                value("fault", "e"),
                value("inject", "e"),
                value("kvm", "e"),
                value("env", "E"),
                flag("follow-forks", "f"),
                flag("output-separately", "ff"),
                flag("help", "h"),
                flag("instruction-pointer", "i"),
                value("interruptible", "I"),
                flag("stack-trace", "k"),
                flag("syscall-number", "n"),
                value("output", "o"),
                value("summary-syscall-overhead", "O"),
                value("attach", "p"),
                value("trace-path", "P"),
                optional("quiet", "q"),
                optional("silent", "q"),
                optional("relative-timestamps", "r"),
                value("string-limit", "s"),
                value("summary-sort-by", "S"),
                optional("absolute-timestamps", "t"),
                optional("timestamps", "t"),
                optional("syscall-times", "T"),
                value("user", "u"),
                value("summary-columns", "U"),
                flag("no-abbrev", "v"),
                flag("version", "V"),
                flag("summary-wall-clock", "w"),
                optional("strings-in-hex", "x"),
                value("const-print-style", "X"),
                optional("decode-fds", "y"),
                optional("decode-pids", "Y"),
                flag("successful-only", "z"),
                flag("failed-only", "Z"),
                flag("seccomp-bpf", "seccomp-bpf"),
                value("argv0", "argv0"),
                optional("kill-on-exit", "kill-on-exit"),
            ],
        ),
        then: command,
    },
    Wrapper {
        names: &["ltrace"],
        grammar: Grammar::new(
            "+a:A:bcCD:e:fF:hiLl:n:o:p:r:s:S:tTu:Vw:x:",
            &[
                value("align", "a"),
                flag("demangle", "C"),
                value("debug", "D"),
                value("config", "F"),
                flag("help", "h"),
                value("indent", "n"),
                value("output", "o"),
                value("library", "l"),
                flag("version", "V"),
                flag("no-signals", "b"),
            ],
        ),
        then: command,
    },
    Wrapper {
        names: &["unshare"],
        grammar: Grammar::new(
            "+fhVmuinpCTUl:rR:w:S:G:ck",
            &[
                optional("mount", "m"),
                optional("uts", "u"),
                optional("ipc", "i"),
                optional("net", "n"),
                optional("pid", "p"),
                optional("user", "U"),
                optional("cgroup", "C"),
                optional("time", "T"),
                flag("fork", "f"),
                optional("kill-child", "kill-child"),
                optional("mount-proc", "mount-proc"),
                optional("mount-binfmt", "mount-binfmt"),
                flag("map-root-user", "r"),
                flag("map-current-user", "c"),
                flag("map-auto", "map-auto"),
                value("map-user", "map-user"),
                value("map-users", "map-users"),
                value("map-group", "map-group"),
                value("map-groups", "map-groups"),
                value("propagation", "propagation"),
                value("setgroups", "setgroups"),
                flag("keep-caps", "keep-caps"),
                value("setuid", "S"),
                value("setgid", "G"),
                value("root", "R"),
                value("wd", "w"),
                value("monotonic", "monotonic"),
                value("boottime", "boottime"),
                value("load-interp", "l"),
                flag("help", "h"),
                flag("version", "V"),
            ],
        ),
        then: command,
    },
    Wrapper {
        names: &["nsenter"],
        grammar: Grammar::new(
            "+ahVt:m::u::i::n::p::U::C::T::S:G:r::w::W:eFZc",
            &[
                flag("all", "a"),
                flag("help", "h"),
                flag("version", "V"),
                value("target", "t"),
                optional("mount", "m"),
                optional("uts", "u"),
                optional("ipc", "i"),
                optional("net", "n"),
                optional("pid", "p"),
                optional("user", "U"),
                optional("cgroup", "C"),
                optional("time", "T"),
                value("setuid", "S"),
                value("setgid", "G"),
                flag("preserve-credentials", "preserve-credentials"),
                optional("root", "r"),
                optional("wd", "w"),
                value("wdns", "W"),
                flag("env", "e"),
                flag("no-fork", "F"),
                flag("follow-context", "Z"),
                flag("join-cgroup", "c"),
                flag("user-parent", "user-parent"),
                flag("keep-caps", "keep-caps"),
            ],
        ),
        then: command,
    },
    Wrapper {
        names: &["prlimit"],
        grammar: Grammar::new(
            "+hc::d::e::f::i::l::m::n::q::r::s::t::u::v::x::y::p:o:V",
            &[
                value("pid", "p"),
                value("output", "o"),
                flag("noheadings", "noheadings"),
                flag("raw", "raw"),
                flag("verbose", "verbose"),
                flag("help", "h"),
                flag("version", "V"),
                optional("core", "c"),
                optional("data", "d"),
                optional("nice", "e"),
                optional("fsize", "f"),
                optional("sigpending", "i"),
                optional("memlock", "l"),
                optional("rss", "m"),
                optional("nofile", "n"),
                optional("msgqueue", "q"),
                optional("rtprio", "r"),
                optional("stack", "s"),
                optional("cpu", "t"),
                optional("nproc", "u"),
                optional("as", "v"),
                optional("locks", "x"),
                optional("rttime", "y"),
            ],
        ),
        then: command,
    },
    Wrapper {
        names: &["bwrap"],
        grammar: Grammar::new(
            "+",
            &[
                words("bind", 2, "bind"),
                words("bind-try", 2, "bind"),
                words("ro-bind", 2, "bind"),
                words("ro-bind-try", 2, "bind"),
                words("dev-bind", 2, "bind"),
                words("dev-bind-try", 2, "bind"),
                words("bind-fd", 2, "bind"),
                words("ro-bind-fd", 2, "bind"),
                words("bind-data", 2, "bind"),
                words("ro-bind-data", 2, "bind"),
                words("file", 2, "bind"),
                words("symlink", 2, "bind"),
                words("chmod", 2, "bind"),
                words("setenv", 2, "setenv"),
                words("overlay", 3, "overlay"),
                words("ro-overlay", 1, "overlay"),
                words("tmp-overlay", 1, "overlay"),
                words("overlay-src", 1, "overlay"),
                value("tmpfs", "dir"),
                value("proc", "dir"),
                value("dev", "dir"),
                value("dir", "dir"),
                value("mqueue", "dir"),
                value("remount-ro", "dir"),
                value("unsetenv", "unsetenv"),
                value("chdir", "chdir"),
                value("hostname", "hostname"),
                value("uid", "uid"),
                value("gid", "gid"),
                value("lock-file", "fd"),
                value("sync-fd", "fd"),
                value("info-fd", "fd"),
                value("json-status-fd", "fd"),
                value("block-fd", "fd"),
                value("userns-block-fd", "fd"),
                value("userns", "fd"),
                value("userns2", "fd"),
                value("pidns", "fd"),
                value("seccomp", "fd"),
                value("add-seccomp-fd", "fd"),
                value("args", "fd"),
                value("exec-label", "label"),
                value("file-label", "label"),
                value("cap-add", "cap"),
                value("cap-drop", "cap"),
                value("perms", "perms"),
                value("size", "size"),
                value("argv0", "argv0"),
                value("level-prefix", "level-prefix"),
                flag("unshare-all", "unshare"),
                flag("share-net", "unshare"),
                flag("unshare-user", "unshare"),
                flag("unshare-user-try", "unshare"),
                flag("unshare-ipc", "unshare"),
                flag("unshare-pid", "unshare"),
                flag("unshare-net", "unshare"),
                flag("unshare-uts", "unshare"),
                flag("unshare-cgroup", "unshare"),
                flag("unshare-cgroup-try", "unshare"),
                flag("clearenv", "clearenv"),
                flag("disable-userns", "disable-userns"),
                flag("assert-userns-disabled", "disable-userns"),
                flag("new-session", "new-session"),
                flag("die-with-parent", "die-with-parent"),
                flag("as-pid-1", "as-pid-1"),
                flag("help", "help"),
                flag("version", "version"),
            ],
        ),
        then: command,
    },
    // screen: `screen [options] [cmd [args]]`; `-X cmd` sends screen commands (`stuff`
    // types text into a window).
    Wrapper {
        names: &["screen"],
        grammar: Grammar::new(
            "+aAc:dDe:fh:ilLmOp:qrRs:S:t:T:UxXv",
            &[
                value("Logfile", "Logfile"),
                flag("ls", "ls"),
                flag("list", "ls"),
                flag("wipe", "ls"),
                flag("fn", "fn"),
                flag("fa", "fa"),
                flag("ln", "ln"),
            ],
        )
        .single_dash_long(),
        then: screen,
    },
    Wrapper {
        names: &["arch"],
        grammar: Grammar::new(
            "+",
            &[
                value("arch", "arch"),
                value("d", "d"),
                value("e", "e"),
                flag("c", "c"),
                flag("h", "h"),
            ],
        )
        .single_dash_long()
        .unknown_flags(),
        then: command,
    },
    Wrapper {
        names: &["xcrun"],
        grammar: Grammar::new(
            "+",
            &[
                value("sdk", "sdk"),
                value("toolchain", "toolchain"),
                flag("log", "l"),
                flag("l", "l"),
                flag("find", "find"),
                flag("f", "find"),
                flag("run", "r"),
                flag("r", "r"),
                flag("no-cache", "n"),
                flag("n", "n"),
                flag("kill-cache", "k"),
                flag("k", "k"),
                flag("verbose", "v"),
                flag("v", "v"),
                flag("show-sdk-path", "find"),
                flag("show-sdk-version", "find"),
                flag("show-sdk-build-version", "find"),
                flag("show-sdk-platform-path", "find"),
                flag("show-sdk-platform-version", "find"),
                flag("help", "find"),
                flag("version", "find"),
            ],
        )
        .single_dash_long()
        .unknown_flags(),
        then: xcrun,
    },
    // findutils xargs, with BSD's -J/-R/-S: the command (default `echo`) gets the input as
    // arguments; with a replace string, that string in the command stands for input.
    Wrapper {
        names: &["xargs", "gxargs"],
        grammar: Grammar::new(
            "+0a:d:E:e::I:i::J:L:l::n:opP:rR:s:S:tx",
            &[
                flag("null", "0"),
                value("arg-file", "a"),
                value("delimiter", "d"),
                optional("eof", "e"),
                optional("replace", "i"),
                optional("max-lines", "l"),
                value("max-args", "n"),
                flag("open-tty", "o"),
                flag("interactive", "p"),
                flag("no-run-if-empty", "r"),
                value("max-chars", "s"),
                flag("show-limits", "show-limits"),
                flag("verbose", "t"),
                flag("exit", "x"),
                value("max-procs", "P"),
                value("process-slot-var", "process-slot-var"),
                flag("help", "help"),
                flag("version", "version"),
            ],
        ),
        then: xargs,
    },
    // GNU parallel (Getopt::Long with bundling and require_order) and its `sem`.
    Wrapper {
        names: &["parallel", "sem"],
        grammar: Grammar::new(
            "+j:P:S:a:I:C:d:E:n:N:L:l::s:k0qvutrXmM",
            &[
                value("jobs", "j"),
                value("max-procs", "j"),
                value("sshlogin", "S"),
                value("arg-file", "a"),
                value("colsep", "C"),
                value("delimiter", "d"),
                optional("eof", "E"),
                value("max-args", "n"),
                value("max-replace-args", "N"),
                value("max-lines", "L"),
                value("max-chars", "s"),
                value("joblog", "joblog"),
                value("results", "results"),
                value("res", "results"),
                value("tmpdir", "tmpdir"),
                value("workdir", "workdir"),
                value("wd", "workdir"),
                value("delay", "delay"),
                value("timeout", "timeout"),
                value("retries", "retries"),
                value("halt", "halt"),
                value("memfree", "memfree"),
                value("load", "load"),
                value("nice", "nice"),
                value("tagstring", "tagstring"),
                value("tag-string", "tagstring"),
                value("env", "env"),
                value("basefile", "basefile"),
                value("bf", "basefile"),
                value("return", "return"),
                value("transferfile", "transferfile"),
                value("tf", "transferfile"),
                value("sshloginfile", "sshloginfile"),
                value("slf", "sshloginfile"),
                value("termseq", "termseq"),
                value("id", "id"),
                flag("keep-order", "k"),
                flag("null", "0"),
                flag("quote", "q"),
                flag("verbose", "v"),
                flag("ungroup", "u"),
                flag("tag", "tag"),
                flag("pipe", "pipe"),
                flag("progress", "progress"),
                flag("eta", "eta"),
                flag("bar", "bar"),
                flag("dry-run", "dry-run"),
                flag("group", "group"),
                flag("line-buffer", "line-buffer"),
                flag("semaphore", "semaphore"),
                flag("fg", "fg"),
                flag("bg", "bg"),
                flag("shuf", "shuf"),
                flag("trim", "trim"),
                flag("will-cite", "will-cite"),
            ],
        ),
        then: parallel,
    },
];

/// Whether `name` is a shell (runs a script file or string).
pub fn is_shell(name: &str) -> bool {
    SHELLS.contains(&name)
}

/// Programs (other than shells and interpreters) that run a command given in their arguments,
/// by program name: what the text scan of [`super::fallback`] treats as a wrapper.
pub fn runs_a_command(name: &str) -> bool {
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
    SPECIAL.contains(&name)
        || SHELLS.contains(&name)
        || LAUNCHERS.iter().any(|l| l.name == name)
        || WRAPPERS.iter().any(|w| w.names.contains(&name))
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
    let name = name.as_str();
    if SHELLS.contains(&name) {
        return shell(argv);
    }
    if let Some(runs) = interpreters::resolve(name, argv) {
        return runs;
    }
    match name {
        "eval" => return Runs::script(&argv[1..].join(" ")),
        "busybox" => return resolve(&argv[1..]),
        "find" | "gfind" => return find(argv),
        "fd" | "fdfind" => return fd(argv),
        "gdb" => return gdb(argv),
        "sg" => return sg(argv),
        "trap" => return argv.get(1).map_or(Runs::Nothing, |s| Runs::script(s)),
        "alias" => return alias(argv),
        "wsl" => return wsl(argv),
        "cmd" => return cmd(argv),
        "powershell" | "pwsh" => return powershell(argv),
        "tmux" => return tmux(argv),
        _ => {}
    }
    if let Some(launcher) = LAUNCHERS.iter().find(|l| l.name == name) {
        return launch(launcher, argv);
    }
    if let Some(wrapper) = WRAPPERS.iter().find(|w| w.names.contains(&name)) {
        return wrapped(wrapper, argv);
    }
    Runs::Nothing
}

/// Every reading of a wrapper's arguments, and what each runs.
fn wrapped(wrapper: &Wrapper, argv: &[String]) -> Runs {
    let args = &argv[1..];
    Runs::any(
        getopt::parse(&wrapper.grammar, args)
            .iter()
            .filter(|p| !p.incomplete)
            .map(|p| (wrapper.then)(p, args)),
    )
}

fn sudo(p: &Parsed, _: &[String]) -> Runs {
    // -e edits files, -l lists what may run, -V/-v/-K do their own thing and exit.
    if p.has(&["e", "l", "V", "v", "K", "help"])
        || p.options.iter().any(|o| o.key == "h" && o.value.is_none())
    {
        return Runs::Nothing;
    }
    Runs::command(skip_assignments(&p.operands))
}

/// env: `-S` splits its value into arguments that take its place (options included); a lone
/// `-` means `-i`; then assignments, then the command.
fn env(p: &Parsed, args: &[String]) -> Runs {
    if let Some(split) = p.options.iter().find(|o| o.key == "S") {
        let mut spliced: Vec<String> = vec!["env".to_owned()];
        // Flags clustered before -S in the same word (`-iS`) do not name a command.
        spliced.extend(args[..split.words.0].iter().cloned());
        spliced.extend(env_split(split.value.as_deref().unwrap_or("")));
        spliced.extend(args[split.words.1..].iter().cloned());
        return resolve(&spliced);
    }
    let mut operands = p.operands.as_slice();
    if operands.first().is_some_and(|o| o == "-") {
        operands = &operands[1..];
    }
    Runs::command(skip_assignments(operands))
}

/// GNU env's `-S` string: split at unquoted white space; `'…'` keeps everything but `\\` and
/// `\'`; `"…"` and bare text know `\"`, `\\`, `\$`, `\#`, `\_` (a space, which outside quotes
/// also separates), `\n`, `\t`, `\c` (ends the string); `${NAME}` is the variable's value
/// (known only at run time); `#` at the start of an argument begins a comment.
fn env_split(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut has_word = false;
    let mut chars = s.chars().peekable();
    let mut quote: Option<char> = None;
    while let Some(c) = chars.next() {
        match (quote, c) {
            (None, c) if c.is_whitespace() => {
                if has_word {
                    out.push(std::mem::take(&mut word));
                    has_word = false;
                }
            }
            (None, '#') if !has_word => break,
            (None, '\'' | '"') => {
                quote = Some(c);
                has_word = true;
            }
            (Some(q), c) if c == q => quote = None,
            (Some('\''), '\\') => match chars.peek() {
                Some('\\' | '\'') => word.extend(chars.next()),
                _ => word.push('\\'),
            },
            (_, '\\') => match chars.next() {
                Some('c') => break,
                Some('_') if quote.is_none() && has_word => {
                    out.push(std::mem::take(&mut word));
                    has_word = false;
                }
                Some('_') if quote.is_none() => {}
                Some('_') => word.push(' '),
                Some('n') => word.push('\n'),
                Some('t') => word.push('\t'),
                Some('r') => word.push('\r'),
                Some('f') => word.push('\u{c}'),
                Some('v') => word.push('\u{b}'),
                Some(other) => {
                    word.push(other);
                    has_word = true;
                }
                None => {}
            },
            (Some('\''), c) => word.push(c),
            (_, '$') if chars.peek() == Some(&'{') => {
                for n in chars.by_ref() {
                    if n == '}' {
                        break;
                    }
                }
                word.push(DYNAMIC);
                has_word = true;
            }
            (_, c) => {
                word.push(c);
                has_word = true;
            }
        }
    }
    if has_word {
        out.push(word);
    }
    out
}

fn chrt(p: &Parsed, _: &[String]) -> Runs {
    if p.has(&["p", "m", "h", "V"]) {
        return Runs::Nothing;
    }
    match p.operands.first() {
        // Newer chrt makes the priority optional for policies without one.
        Some(priority) if is_integer(priority) => Runs::command(&p.operands[1..]),
        _ => Runs::command(&p.operands),
    }
}

fn taskset(p: &Parsed, args: &[String]) -> Runs {
    if p.has(&["p", "h", "V"]) {
        return Runs::Nothing;
    }
    after_one(p, args)
}

fn ionice(p: &Parsed, _: &[String]) -> Runs {
    if p.has(&["p", "P", "u", "h", "V"]) {
        return Runs::Nothing;
    }
    Runs::command(&p.operands)
}

fn flock(p: &Parsed, _: &[String]) -> Runs {
    let ops = &p.operands;
    match ops.get(1).map(String::as_str) {
        Some("-c" | "--command") => ops.get(2).map_or(Runs::Nothing, |s| Runs::script(s)),
        _ => Runs::command(ops.get(1..).unwrap_or_default()),
    }
}

/// su/runuser: `-c` runs a shell string; runuser `-u user cmd…` runs a command; otherwise the
/// words after the user are arguments of the user's shell (`su bob -- -c 'cmd'`).
fn su(p: &Parsed, _: &[String]) -> Runs {
    if let Some(script) = p.value(&["c"]) {
        return Runs::script(script);
    }
    if p.has(&["u"]) {
        return Runs::command(&p.operands);
    }
    let mut ops = p.operands.as_slice();
    if ops.first().is_some_and(|o| o == "-") {
        ops = &ops[1..];
    }
    match ops.get(1..) {
        Some(rest) if !rest.is_empty() => {
            let mut argv = vec!["sh".to_owned()];
            argv.extend(rest.iter().cloned());
            shell(&argv)
        }
        _ => Runs::Nothing,
    }
}

fn script(p: &Parsed, _: &[String]) -> Runs {
    if let Some(s) = p.value(&["c"]) {
        return Runs::script(s);
    }
    Runs::command(p.operands.get(1..).unwrap_or_default())
}

fn asciinema(p: &Parsed, _: &[String]) -> Runs {
    p.value(&["c"]).map_or(Runs::Nothing, Runs::script)
}

fn ttyrec(p: &Parsed, _: &[String]) -> Runs {
    p.value(&["e"]).map_or(Runs::Nothing, Runs::script)
}

fn watch(p: &Parsed, _: &[String]) -> Runs {
    if p.has(&["x"]) {
        Runs::command(&p.operands)
    } else {
        Runs::script(&p.operands.join(" "))
    }
}

fn builtin_command(p: &Parsed, _: &[String]) -> Runs {
    if p.has(&["v", "V"]) {
        return Runs::Nothing;
    }
    Runs::command(&p.operands)
}

fn screen(p: &Parsed, _: &[String]) -> Runs {
    if p.has(&["X"]) {
        return Runs::any(p.operands.iter().map(|o| Runs::script(o)));
    }
    Runs::command(&p.operands)
}

fn xcrun(p: &Parsed, _: &[String]) -> Runs {
    if p.has(&["find"]) {
        return Runs::Nothing;
    }
    Runs::command(&p.operands)
}

/// Marks where a placeholder stands for input known only at run time.
fn with_placeholders(words: &[String], placeholders: &[&str]) -> Vec<String> {
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

/// xargs: the command (default `echo`) gets the input as arguments; with a replace string, that
/// string in the command's arguments (never its name: GNU and BSD xargs alike) stands for input.
fn xargs(p: &Parsed, _: &[String]) -> Runs {
    let mut replace: Vec<&str> = p.values(&["I", "J", "R"]).collect();
    for o in p.options.iter().filter(|o| o.key == "i") {
        replace.push(o.value.as_deref().unwrap_or("{}"));
    }
    let Some((name, args)) = p.operands.split_first() else {
        return Runs::command(&["echo".to_owned()]);
    };
    let mut command = vec![name.clone()];
    command.extend(with_placeholders(args, &replace));
    Runs::command(&command)
}

/// The placeholders GNU parallel replaces with input.
const PARALLEL_PLACEHOLDERS: &[&str] = &["{}", "{.}", "{/}", "{//}", "{/.}", "{#}", "{%}"];

/// `parallel [options] command… ::: inputs…`: the command runs through a shell, once per input
/// (placed at its placeholders, or appended); without a command, each input is a command.
fn parallel(p: &Parsed, _: &[String]) -> Runs {
    let ops = &p.operands;
    let split = ops
        .iter()
        .position(|o| matches!(o.as_str(), ":::" | "::::" | ":::+" | "::::+"))
        .unwrap_or(ops.len());
    let template = ops[..split].join(" ");
    let inputs: Vec<&String> = if ops
        .get(split)
        .is_some_and(|s| s.starts_with(":::") && !s.starts_with("::::"))
    {
        ops[split + 1..]
            .iter()
            .take_while(|o| !o.starts_with(":::"))
            .collect()
    } else {
        Vec::new()
    };
    let mut runs = Vec::new();
    let has_placeholder = PARALLEL_PLACEHOLDERS.iter().any(|ph| template.contains(ph))
        || template.contains('{') && template.contains('}');
    for input in &inputs {
        if template.is_empty() {
            runs.push(Runs::script(input));
        } else if has_placeholder {
            runs.push(Runs::script(&template.replace("{}", input)));
        } else {
            runs.push(Runs::script(&format!("{template} {input}")));
        }
    }
    if !template.is_empty() {
        let marked = with_placeholders(std::slice::from_ref(&template), PARALLEL_PLACEHOLDERS);
        runs.push(Runs::script(&marked[0]));
    }
    Runs::any(runs)
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
        _ => Runs::Nothing,
    }
}

/// `find … -exec cmd … ;` (also `-execdir`, `-ok`, `-okdir`, ended by `;` or `+`); `{}` is a
/// path found at run time.
fn find(argv: &[String]) -> Runs {
    let mut runs = Vec::new();
    let mut i = 1;
    while i < argv.len() {
        if matches!(argv[i].as_str(), "-exec" | "-execdir" | "-ok" | "-okdir") {
            let start = i + 1;
            let mut end = start;
            while end < argv.len()
                && argv[end] != ";"
                && !(argv[end] == "+" && argv[end - 1] == "{}")
            {
                end += 1;
            }
            runs.push(Runs::command(&with_placeholders(
                &argv[start..end],
                &["{}"],
            )));
            i = end;
        }
        i += 1;
    }
    Runs::any(runs)
}

/// `fd … -x cmd… [;]`, `--exec`, `-X`/`--exec-batch`; placeholders stand for found paths.
fn fd(argv: &[String]) -> Runs {
    const PLACEHOLDERS: &[&str] = &["{}", "{/}", "{//}", "{.}", "{/.}"];
    let mut runs = Vec::new();
    let mut i = 1;
    while i < argv.len() {
        let word = argv[i].as_str();
        let attached = word
            .strip_prefix("--exec=")
            .or_else(|| word.strip_prefix("--exec-batch="));
        let starts = matches!(word, "--exec" | "--exec-batch")
            || attached.is_some()
            || (word.starts_with('-')
                && !word.starts_with("--")
                && word.len() > 1
                && word[1..].contains(['x', 'X'])
                && word[1..].chars().all(|c| c.is_ascii_alphabetic()));
        if starts {
            let mut command: Vec<String> = attached.map(str::to_owned).into_iter().collect();
            let mut end = i + 1;
            while end < argv.len() && argv[end] != ";" {
                command.push(argv[end].clone());
                end += 1;
            }
            runs.push(Runs::command(&with_placeholders(&command, PLACEHOLDERS)));
            i = end;
        }
        i += 1;
    }
    Runs::any(runs)
}

/// gdb: `--args prog args…` is the program it runs; `-ex 'shell cmd'` / `-ex '!cmd'` runs a
/// shell command; the first operand is the program to debug (`gdb -batch -ex run git`).
fn gdb(argv: &[String]) -> Runs {
    const GDB: Grammar = Grammar::new(
        "+",
        &[
            value("ex", "ex"),
            value("eval-command", "ex"),
            value("iex", "ex"),
            value("init-eval-command", "ex"),
            value("x", "x"),
            value("command", "x"),
            value("ix", "x"),
            value("init-command", "x"),
            value("p", "p"),
            value("pid", "p"),
            value("c", "c"),
            value("core", "c"),
            value("s", "s"),
            value("symbols", "s"),
            value("e", "e"),
            value("exec", "e"),
            value("se", "s"),
            value("d", "d"),
            value("directory", "d"),
            value("cd", "cd"),
            value("tty", "tty"),
            value("i", "i"),
            value("interpreter", "i"),
            value("D", "D"),
            value("data-directory", "D"),
            value("b", "b"),
            value("l", "l"),
            flag("batch", "batch"),
            flag("q", "q"),
            flag("quiet", "q"),
            flag("silent", "q"),
            flag("n", "n"),
            flag("nx", "n"),
            flag("nh", "nh"),
            flag("w", "w"),
            flag("write", "w"),
            flag("readnow", "readnow"),
            flag("readnever", "readnever"),
            flag("return-child-result", "return-child-result"),
            flag("nw", "nw"),
            flag("nowindows", "nw"),
            flag("tui", "tui"),
            flag("statistics", "statistics"),
            flag("version", "version"),
            flag("help", "help"),
            flag("configuration", "configuration"),
            flag("dbx", "dbx"),
            flag("fullname", "f"),
            flag("f", "f"),
        ],
    )
    .single_dash_long();
    let args = &argv[1..];
    let (own, program) = match args.iter().position(|a| a == "--args" || a == "-args") {
        Some(pos) => (&args[..pos], Some(&args[pos + 1..])),
        None => (args, None),
    };
    let mut runs = vec![program.map_or(Runs::Nothing, Runs::command)];
    for p in getopt::parse(&GDB, own) {
        for command in p.values(&["ex"]) {
            let command = command.trim_start();
            if let Some(rest) = command
                .strip_prefix('!')
                .or_else(|| command.strip_prefix("shell "))
                .or_else(|| command.strip_prefix("pipe "))
            {
                runs.push(Runs::script(rest));
            }
        }
        if program.is_none() {
            runs.push(Runs::command(p.operands.get(..1).unwrap_or_default()));
        }
    }
    Runs::any(runs)
}

/// `sg [-] [group [-c] command]`: the command is a string run by `/bin/sh`.
fn sg(argv: &[String]) -> Runs {
    let mut rest = &argv[1..];
    if rest.first().is_some_and(|w| w == "-") {
        rest = &rest[1..];
    }
    let Some(rest) = rest.get(1..) else {
        return Runs::Nothing;
    };
    let rest = match rest.first().map(String::as_str) {
        Some("-c") => &rest[1..],
        _ => rest,
    };
    Runs::script(&rest.join(" "))
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

/// `wsl [options] [--] command line` (through the default shell), `wsl -e prog args…`.
fn wsl(argv: &[String]) -> Runs {
    const WSL: Grammar = Grammar::new(
        "+d:u:e",
        &[
            value("distribution", "d"),
            value("distribution-id", "d"),
            value("user", "u"),
            value("cd", "cd"),
            value("shell-type", "shell-type"),
            flag("exec", "e"),
            flag("system", "system"),
        ],
    );
    Runs::any(getopt::parse(&WSL, &argv[1..]).iter().map(|p| {
        if p.has(&["e"]) {
            Runs::command(&p.operands)
        } else {
            Runs::script(&p.operands.join(" "))
        }
    }))
}

/// `cmd /c command line`, `cmd.exe /K …` (switches are case-insensitive).
fn cmd(argv: &[String]) -> Runs {
    let pos = argv[1..].iter().position(|a| {
        // Git Bash turns `//c` into `/c` on its way to a Windows program.
        let a = a
            .strip_prefix('/')
            .filter(|r| r.starts_with('/'))
            .unwrap_or(a);
        a.eq_ignore_ascii_case("/c") || a.eq_ignore_ascii_case("/k")
    });
    match pos {
        Some(pos) => Runs::script(&argv[pos + 2..].join(" ")),
        None => Runs::Nothing,
    }
}

/// PowerShell: `-Command`/`-c` (any unambiguous prefix, any case), `-EncodedCommand` (base64 of
/// UTF-16LE); without `-File`, the remaining words are a command too (Windows PowerShell's
/// default).
fn powershell(argv: &[String]) -> Runs {
    const WITH_VALUE: &[&str] = &[
        "executionpolicy",
        "ep",
        "windowstyle",
        "w",
        "inputformat",
        "inp",
        "if",
        "outputformat",
        "o",
        "of",
        "configurationname",
        "config",
        "workingdirectory",
        "wd",
        "settingsfile",
        "settings",
        "version",
        "v",
        "psconsolefile",
        "custompipename",
        "encodedarguments",
        "ea",
    ];
    let mut i = 1;
    while i < argv.len() {
        let word = argv[i].as_str();
        let Some(name) = word.strip_prefix('-').or_else(|| word.strip_prefix('/')) else {
            break;
        };
        let name = name.to_ascii_lowercase();
        let is = |full: &str, min: usize| name.len() >= min && full.starts_with(name.as_str());
        if is("command", 1) || is("commandwithargs", 8) || name == "cwa" {
            return Runs::script(&argv[i + 1..].join(" "));
        }
        if is("encodedcommand", 1) || name == "ec" {
            return argv
                .get(i + 1)
                .and_then(|b| decode_utf16le_base64(b))
                .map_or(Runs::Nothing, |s| Runs::script(&s));
        }
        if is("file", 1) {
            return Runs::Nothing;
        }
        i += if WITH_VALUE.contains(&name.as_str()) {
            2
        } else {
            1
        };
    }
    Runs::script(&argv.get(i..).unwrap_or_default().join(" "))
}

fn decode_utf16le_base64(text: &str) -> Option<String> {
    let mut bits = 0u32;
    let mut count = 0;
    let mut bytes = Vec::new();
    for c in text.bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            b'=' => break,
            _ => return None,
        };
        bits = (bits << 6) | u32::from(v);
        count += 6;
        if count >= 8 {
            count -= 8;
            bytes.push((bits >> count) as u8);
            bits &= (1 << count) - 1;
        }
    }
    let units: Vec<u16> = bytes
        .chunks_exact(2)
        .map(|p| u16::from_le_bytes([p[0], p[1]]))
        .collect();
    String::from_utf16(&units).ok()
}

/// tmux: the global `-c shell-command`, and the commands that run a shell command
/// (`new-session`, `new-window`, `split-window`, `respawn-*`, `run-shell`, `if-shell`,
/// `display-popup`, `pipe-pane`) or type keys into one (`send-keys`); commands chain with `;`.
fn tmux(argv: &[String]) -> Runs {
    const GLOBAL: Grammar = Grammar::new("+2CDlNuVvc:f:L:S:T:", &[]);
    /// (names, options) of the commands that run what follows their options.
    const COMMANDS: &[(&[&str], &str)] = &[
        (&["new-session", "new"], "+Ac:dDe:EF:f:n:Ps:t:x:Xy:"),
        (&["new-window", "neww"], "+abc:de:F:kn:PSt:"),
        (&["split-window", "splitw"], "+bc:de:fF:hIl:p:Pt:vZ"),
        (&["respawn-pane", "respawnp"], "+c:e:kt:"),
        (&["respawn-window", "respawnw"], "+c:e:kt:"),
        (&["run-shell", "run"], "+bCc:d:t:"),
        (&["if-shell", "if"], "+bFt:"),
        (
            &["display-popup", "popup"],
            "+Bb:Cc:d:e:Eh:kNs:S:t:T:w:x:y:",
        ),
        (&["pipe-pane", "pipep"], "+IOot:"),
        (&["send-keys", "send"], "+c:FHKlMN:Rt:X"),
    ];
    let mut runs = Vec::new();
    for p in getopt::parse(&GLOBAL, &argv[1..]) {
        if let Some(script) = p.value(&["c"]) {
            runs.push(Runs::script(script));
        }
        for command in p.operands.split(|w| w == ";") {
            let Some((name, rest)) = command.split_first() else {
                continue;
            };
            let Some((_, options)) = COMMANDS
                .iter()
                .find(|(names, _)| names.contains(&name.as_str()))
            else {
                continue;
            };
            let grammar = Grammar::new(options, &[]);
            for q in getopt::parse(&grammar, rest) {
                if matches!(name.as_str(), "send-keys" | "send" | "if-shell" | "if") {
                    runs.extend(q.operands.iter().map(|o| Runs::script(o)));
                } else {
                    runs.push(Runs::script(&q.operands.join(" ")));
                }
            }
        }
    }
    Runs::any(runs)
}

/// A tool that runs a command after a verb of its own (`uv run CMD…`, `bundle exec CMD…`).
struct Launcher {
    name: &'static str,
    verbs: &'static [&'static str],
    /// Options of the verb (and the tool's global options before it).
    options: Grammar,
    /// Operands of the verb before the command (`direnv exec DIR`, `aws-vault exec PROFILE`).
    positionals: usize,
    /// The verb's option whose value is a shell script (`nix-shell --run`), or whose value
    /// starts the command (`nix develop --command cmd args…`).
    script_option: Option<&'static str>,
    command_option: Option<&'static str>,
}

const fn launcher(
    name: &'static str,
    verbs: &'static [&'static str],
    options: Grammar,
) -> Launcher {
    Launcher {
        name,
        verbs,
        options,
        positionals: 0,
        script_option: None,
        command_option: None,
    }
}

const UV_RUN: Grammar = Grammar::new(
    "+p:f:C:P:qv",
    &[
        value("with", "with"),
        value("with-editable", "with"),
        value("with-requirements", "with"),
        value("python", "p"),
        value("package", "package"),
        value("env-file", "env-file"),
        value("extra", "extra"),
        value("group", "group"),
        value("only-group", "group"),
        value("no-group", "group"),
        value("index", "index"),
        value("default-index", "index"),
        value("index-url", "index"),
        value("extra-index-url", "index"),
        value("find-links", "f"),
        value("directory", "directory"),
        value("project", "project"),
        value("config-file", "config-file"),
        value("cache-dir", "cache-dir"),
        value("color", "color"),
        value("config-setting", "C"),
        value("upgrade-package", "P"),
        value("reinstall-package", "reinstall-package"),
        value("refresh-package", "refresh-package"),
        value("exclude-newer", "exclude-newer"),
        value("link-mode", "link-mode"),
        value("resolution", "resolution"),
        value("prerelease", "prerelease"),
        value("index-strategy", "index-strategy"),
        value("keyring-provider", "keyring-provider"),
        value("python-platform", "python-platform"),
        value("allow-insecure-host", "allow-insecure-host"),
        flag("frozen", "frozen"),
        flag("locked", "locked"),
        flag("no-sync", "no-sync"),
        flag("isolated", "isolated"),
        flag("all-extras", "all-extras"),
        flag("no-dev", "no-dev"),
        flag("dev", "dev"),
        flag("quiet", "q"),
        flag("verbose", "v"),
        flag("offline", "offline"),
        flag("no-project", "no-project"),
        flag("active", "active"),
        flag("script", "script"),
        flag("module", "module"),
    ],
);

const GENERIC_RUN: Grammar = Grammar::new(
    "+e:n:p:",
    &[
        value("env", "e"),
        value("name", "n"),
        value("prefix", "p"),
        value("cwd", "cwd"),
        value("environment", "e"),
        value("manifest-path", "manifest-path"),
        value("config", "config"),
        value("project", "project"),
        value("gemfile", "gemfile"),
        value("directory", "directory"),
        value("env-file", "env-file"),
        value("profile", "profile"),
        value("config-file", "config-file"),
        flag("live-stream", "live-stream"),
        flag("host", "host"),
        flag("clear-env", "clear-env"),
        flag("watch-bus", "watch-bus"),
        flag("latest-version", "latest-version"),
        flag("no-network", "no-network"),
        flag("sandbox", "sandbox"),
        flag("no-capture-output", "no-capture-output"),
        flag("frozen", "frozen"),
        flag("locked", "locked"),
        flag("quiet", "quiet"),
        flag("verbose", "verbose"),
    ],
);

const NIX_SHELL: Grammar = Grammar::new(
    "+p:I:A:E:j:",
    &[
        value("run", "run"),
        value("command", "run"),
        words("arg", 2, "arg"),
        words("argstr", 2, "arg"),
        words("option", 2, "option"),
        value("packages", "p"),
        value("attr", "A"),
        value("expr", "E"),
        value("include", "I"),
        value("keep", "keep"),
        value("max-jobs", "j"),
        flag("pure", "pure"),
        flag("impure", "impure"),
    ],
);

const NIX: Grammar = Grammar::new(
    "c:I:j:o:L",
    &[
        value("command", "c"),
        words("arg", 2, "arg"),
        words("argstr", 2, "arg"),
        words("option", 2, "option"),
        words("override-input", 2, "option"),
        value("include", "I"),
        value("max-jobs", "j"),
        value("out-link", "o"),
        value("profile", "profile"),
        value("expr", "expr"),
        value("file", "file"),
        value("unset", "unset"),
        value("keep", "keep"),
        flag("impure", "impure"),
        flag("ignore-environment", "ignore-environment"),
        flag("print-build-logs", "L"),
    ],
);

const LAUNCHERS: &[Launcher] = &[
    launcher("uv", &["run"], UV_RUN),
    launcher("poetry", &["run"], GENERIC_RUN),
    launcher("pipenv", &["run"], GENERIC_RUN),
    launcher("pdm", &["run"], GENERIC_RUN),
    launcher("hatch", &["run"], GENERIC_RUN),
    launcher("rye", &["run"], GENERIC_RUN),
    launcher("bundle", &["exec"], GENERIC_RUN),
    launcher("mise", &["exec", "x"], GENERIC_RUN),
    launcher("rtx", &["exec", "x"], GENERIC_RUN),
    launcher("asdf", &["exec"], GENERIC_RUN),
    launcher("pnpm", &["exec"], GENERIC_RUN),
    launcher("npm", &["exec"], GENERIC_RUN),
    launcher("yarn", &["exec"], GENERIC_RUN),
    launcher("conda", &["run"], GENERIC_RUN),
    launcher("mamba", &["run"], GENERIC_RUN),
    launcher("micromamba", &["run"], GENERIC_RUN),
    launcher("pixi", &["run", "exec"], GENERIC_RUN),
    launcher("devbox", &["run"], GENERIC_RUN),
    launcher("toolbox", &["run"], GENERIC_RUN),
    launcher("distrobox", &["enter"], GENERIC_RUN),
    launcher("op", &["run"], GENERIC_RUN),
    launcher("doppler", &["run"], GENERIC_RUN),
    launcher("dotenvx", &["run"], GENERIC_RUN),
    launcher("infisical", &["run"], GENERIC_RUN),
    Launcher {
        positionals: 1,
        ..launcher("direnv", &["exec"], GENERIC_RUN)
    },
    Launcher {
        positionals: 1,
        ..launcher("aws-vault", &["exec"], GENERIC_RUN)
    },
    Launcher {
        positionals: 1,
        ..launcher("chamber", &["exec"], GENERIC_RUN)
    },
    launcher("flatpak-spawn", &[], GENERIC_RUN),
    launcher("host-spawn", &[], GENERIC_RUN),
    launcher("distrobox-enter", &[], GENERIC_RUN),
    launcher("dotenv", &[], GENERIC_RUN),
    launcher("env-cmd", &[], GENERIC_RUN),
    launcher("cross-env", &[], GENERIC_RUN),
    Launcher {
        script_option: Some("run"),
        ..launcher("nix-shell", &[], NIX_SHELL)
    },
    Launcher {
        command_option: Some("c"),
        ..launcher("nix", &["develop", "shell"], NIX)
    },
];

fn launch(launcher: &Launcher, argv: &[String]) -> Runs {
    let mut args = &argv[1..];
    if !launcher.verbs.is_empty() {
        // Global options of the tool (each with at most one value) may precede its verb.
        let mut after_option = false;
        let mut verb_at = None;
        for (i, arg) in args.iter().enumerate() {
            if arg.starts_with('-') {
                after_option = true;
            } else if launcher.verbs.contains(&arg.as_str()) {
                verb_at = Some(i);
                break;
            } else if after_option {
                after_option = false;
            } else {
                break;
            }
        }
        let Some(pos) = verb_at else {
            return Runs::Nothing;
        };
        args = &args[pos + 1..];
    }
    let mut runs = Vec::new();
    for p in getopt::parse(&launcher.options, args) {
        if p.incomplete {
            continue;
        }
        if let Some(script) = launcher.script_option.and_then(|o| p.value(&[o])) {
            runs.push(Runs::script(script));
            continue;
        }
        if let Some(key) = launcher.command_option
            && let Some(opt) = p.options.iter().find(|o| o.key == key)
        {
            let mut command: Vec<String> = opt.value.clone().into_iter().collect();
            command.extend(args[opt.words.1..].iter().cloned());
            runs.push(Runs::command(&command));
            continue;
        }
        let mut operands = p.operands.get(launcher.positionals..).unwrap_or_default();
        if operands.first().is_some_and(|o| o == "--") {
            operands = &operands[1..];
        }
        runs.push(Runs::command(skip_assignments(operands)));
        // `mise x node@20 -- cmd`, `distrobox enter box -- cmd`: operands of the tool's own,
        // then `--`, then the command.
        if let Some(dashes) = p.operands.iter().position(|o| o == "--") {
            runs.push(Runs::command(&p.operands[dashes + 1..]));
        }
    }
    Runs::any(runs)
}

#[cfg(test)]
mod tests {
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
