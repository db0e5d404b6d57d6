//! The wrappers parsed by a getopt grammar: each program's option string and long options,
//! written after its source and manual, and what it runs once its options are read.

use super::super::getopt::{self, Grammar, Order, Parsed, flag, optional, value, words};
use super::{
    DYNAMIC, Runs, any_later_command, is_integer, resolve, shell, skip_assignments,
    with_placeholders,
};

/// A program that runs a command given to it, with its option grammar and what it runs once
/// its options are read.
pub(super) struct Wrapper {
    pub(super) names: &'static [&'static str],
    grammar: Grammar,
    /// What it runs, from one reading of its arguments (the words after its name).
    then: fn(&Parsed, &[String]) -> Runs,
}

/// The operands are the command.
pub(super) fn command(p: &Parsed, _: &[String]) -> Runs {
    Runs::command(&p.operands)
}

/// One operand (a duration, a mask, a directory), then the command.
pub(super) fn after_one(p: &Parsed, _: &[String]) -> Runs {
    Runs::command(p.operands.get(1..).unwrap_or_default())
}

pub(super) const WRAPPERS: &[Wrapper] = &[
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
    // `hash -p FILE NAME`: NAME runs FILE from then on.
    Wrapper {
        names: &["hash"],
        grammar: Grammar::new("+lp:dtr", &[]),
        then: hashed,
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

/// Every reading of a wrapper's arguments, and what each runs.
pub(super) fn wrapped(wrapper: &Wrapper, argv: &[String]) -> Runs {
    let args = &argv[1..];
    Runs::any(
        getopt::parse(&wrapper.grammar, args)
            .iter()
            .filter(|p| !p.incomplete)
            .map(|p| match p.operands_from_any {
                Some(from) => any_later_command(args, from),
                None => (wrapper.then)(p, args),
            }),
    )
}

pub(super) fn sudo(p: &Parsed, _: &[String]) -> Runs {
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
pub(super) fn env(p: &Parsed, args: &[String]) -> Runs {
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
pub(super) fn env_split(s: &str) -> Vec<String> {
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

pub(super) fn chrt(p: &Parsed, _: &[String]) -> Runs {
    if p.has(&["p", "m", "h", "V"]) {
        return Runs::Nothing;
    }
    match p.operands.first() {
        // Newer chrt makes the priority optional for policies without one.
        Some(priority) if is_integer(priority) => Runs::command(&p.operands[1..]),
        _ => Runs::command(&p.operands),
    }
}

pub(super) fn taskset(p: &Parsed, args: &[String]) -> Runs {
    if p.has(&["p", "h", "V"]) {
        return Runs::Nothing;
    }
    after_one(p, args)
}

pub(super) fn ionice(p: &Parsed, _: &[String]) -> Runs {
    if p.has(&["p", "P", "u", "h", "V"]) {
        return Runs::Nothing;
    }
    Runs::command(&p.operands)
}

pub(super) fn flock(p: &Parsed, _: &[String]) -> Runs {
    let ops = &p.operands;
    match ops.get(1).map(String::as_str) {
        Some("-c" | "--command") => ops.get(2).map_or(Runs::Nothing, |s| Runs::script(s)),
        _ => Runs::command(ops.get(1..).unwrap_or_default()),
    }
}

/// su/runuser: `-c` runs a shell string; runuser `-u user cmd…` runs a command; otherwise the
/// words after the user are arguments of the user's shell (`su bob -- -c 'cmd'`).
pub(super) fn su(p: &Parsed, _: &[String]) -> Runs {
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

pub(super) fn script(p: &Parsed, _: &[String]) -> Runs {
    if let Some(s) = p.value(&["c"]) {
        return Runs::script(s);
    }
    Runs::command(p.operands.get(1..).unwrap_or_default())
}

pub(super) fn asciinema(p: &Parsed, _: &[String]) -> Runs {
    p.value(&["c"]).map_or(Runs::Nothing, Runs::script)
}

pub(super) fn ttyrec(p: &Parsed, _: &[String]) -> Runs {
    p.value(&["e"]).map_or(Runs::Nothing, Runs::script)
}

pub(super) fn watch(p: &Parsed, _: &[String]) -> Runs {
    if p.has(&["x"]) {
        Runs::command(&p.operands)
    } else {
        Runs::script(&p.operands.join(" "))
    }
}

pub(super) fn builtin_command(p: &Parsed, _: &[String]) -> Runs {
    if p.has(&["v", "V"]) {
        return Runs::Nothing;
    }
    Runs::command(&p.operands)
}

/// `hash -p FILE NAME…`: the file each name will run, judged as a command word.
pub(super) fn hashed(p: &Parsed, _: &[String]) -> Runs {
    Runs::any(
        p.values(&["p"])
            .map(|file| Runs::command(&[file.to_owned()])),
    )
}

pub(super) fn screen(p: &Parsed, _: &[String]) -> Runs {
    if p.has(&["X"]) {
        return Runs::any(p.operands.iter().map(|o| Runs::script(o)));
    }
    Runs::command(&p.operands)
}

pub(super) fn xcrun(p: &Parsed, _: &[String]) -> Runs {
    if p.has(&["find"]) {
        return Runs::Nothing;
    }
    Runs::command(&p.operands)
}

/// xargs: the command (default `echo`) gets the input as arguments; with a replace string, that
/// string in the command's arguments (never its name: GNU and BSD xargs alike) stands for input.
pub(super) fn xargs(p: &Parsed, _: &[String]) -> Runs {
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
pub(super) const PARALLEL_PLACEHOLDERS: &[&str] =
    &["{}", "{.}", "{/}", "{//}", "{/.}", "{#}", "{%}"];

/// `parallel [options] command… ::: inputs…`: the command runs through a shell, once per input
/// (placed at its placeholders, or appended); without a command, each input is a command.
pub(super) fn parallel(p: &Parsed, _: &[String]) -> Runs {
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
