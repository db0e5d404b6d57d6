//! Which commands a procedure may run, and which wait for the user's approval every time.
//!
//! What a command line starts is read the way the shell and the programs would read it — by
//! the orchestrator's parser, the one the git hook uses — through a [`CommandJudge`] (this
//! crate does not know shells or git's options; the edge gives it the judge). The decision
//! ([`assess`]) is an allow-list:
//!
//! - git as the step's own program (`argv: ["git", …]`) is judged as `work_vcs` judges it: the
//!   same policy, run by the git worker; an operation that would lose work needs approval.
//! - git anywhere else (inside a shell line, behind a wrapper) is refused: it cannot be vetted.
//! - A command whose programs are all known runs, unless one of them is on the destructive list
//!   for effects beyond the project's files (services, containers, clusters, databases,
//!   devices, processes: Butler's own and the configured `[delegation] destructive_commands`):
//!   then it needs the user's approval each time it runs, even inside an active procedure.
//!   What a confined step does to the project's files is undone by one `work_undo` (the
//!   operation log takes a snapshot before it), so the names that only protected files (`rm`,
//!   `truncate`, `rsync --delete`, …) count only for a step that would run unconfined.
//! - A command whose programs are only known at run time (`$CMD`, code of another language, a
//!   script read from standard input) needs approval each time it would run unconfined; confined,
//!   it is judged as any program is: by what the sandbox lets it do.

use crate::contract::procedure::CommandLine;
use crate::git::LossQuery;

/// What a command line would start, as the shell and the programs would read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reading {
    /// These programs, each with its arguments (a wrapper and what it wraps both listed:
    /// `sudo rm x` gives `sudo …` and `rm x`).
    Programs(Vec<Vec<String>>),
    /// git is the command's own program: the words after `git`.
    Git(Vec<String>),
    /// git starts somewhere inside (a script, a wrapper), as shown.
    HiddenGit(String),
    /// Something it runs is known only when it runs, as shown.
    Opaque(String),
}

/// The `work_vcs` policy's verdict over git's arguments, in the repository as it is now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GitVerdict {
    /// Run these canonical arguments.
    Run(Vec<String>),
    /// Run them unless computing `loss` finds work that would be lost.
    RunUnlessLoss {
        args: Vec<String>,
        loss: Vec<LossQuery>,
        globals: Vec<String>,
    },
    /// Not run: why, and what to do instead.
    Refused { reason: String },
}

/// Where a command's words are read as more than data.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Active {
    /// The program word of every command it starts, wrappers followed (`env X=1 {p}` runs
    /// `{p}`).
    pub programs: Vec<String>,
    /// Every text read as code: a shell script handed on (`sh -c`, `eval`), another
    /// language's code (`python -c`).
    pub code: Vec<String>,
}

/// Where a target placeholder in `argv` would stop being data: the places named, for `teach`.
/// Each `{target.NAME}` is swapped for a marker, and the judge says where the marker lands.
pub fn placeholder_misuse(argv: &[String], judge: &dyn CommandJudge) -> Vec<String> {
    const MARKER: &str = "BUTLERTARGETVALUE";
    let probe: Vec<String> = argv
        .iter()
        .map(|w| {
            let mut out = w.clone();
            for name in crate::contract::procedure::placeholder_names(w) {
                out = out.replace(&format!("{{target.{name}}}"), MARKER);
            }
            out
        })
        .collect();
    if !probe.iter().any(|w| w.contains(MARKER)) {
        return Vec::new();
    }
    let active = judge.active(&CommandLine::Argv(probe));
    let mut problems = Vec::new();
    if let Some(program) = active.programs.iter().find(|p| p.contains(MARKER)) {
        problems.push(format!(
            "a target value would be the program a command runs (`{}`): the programs a step \
             runs are the procedure's, never the target's",
            program.replace(MARKER, "{target…}")
        ));
    }
    if let Some(code) = active.code.iter().find(|c| c.contains(MARKER)) {
        problems.push(format!(
            "a target value would be spliced into code a shell or interpreter reads (`{}`): \
             pass it as its own argument or read it from the environment (`$TARGET_NAME`)",
            code.replace(MARKER, "{target…}")
        ));
    }
    problems
}

/// Reads command lines and judges git, for the engine. Implemented at the edge with the git
/// hook's parser and `work_vcs`'s policy.
pub trait CommandJudge: Send + Sync {
    /// What `command` would start.
    fn read(&self, command: &CommandLine) -> Reading;
    /// The `work_vcs` verdict over `args` (the words after `git`) in the project.
    fn vet_git(&self, args: &[String]) -> GitVerdict;
    /// Where `command`'s words are read as programs or code.
    fn active(&self, command: &CommandLine) -> Active;
}

/// Commands that need the user's approval each time a step runs them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DestructiveCommands {
    /// Effects beyond the project's files: asked for every time.
    beyond: Vec<Vec<String>>,
    /// Deleting or overwriting files: asked for only when the step would run unconfined (a
    /// confined step's writes stay in the project's tree, where one `work_undo` restores them).
    files: Vec<Vec<String>>,
}

/// Butler's list of commands whose effects are beyond the project's files: they stop, kill,
/// remove or wipe services, containers, clusters, databases, devices and processes.
const BEYOND_FILES: &[&str] = &[
    "mkfs",
    "wipefs",
    "fdisk",
    "parted",
    "kill",
    "pkill",
    "killall",
    "reboot",
    "shutdown",
    "poweroff",
    "halt",
    "systemctl stop",
    "systemctl disable",
    "systemctl mask",
    "docker rm",
    "docker rmi",
    "docker kill",
    "docker prune",
    "docker down",
    "podman rm",
    "podman rmi",
    "podman kill",
    "kubectl delete",
    "kubectl drain",
    "helm uninstall",
    "terraform destroy",
    "dropdb",
    "redis-cli flushall",
    "redis-cli flushdb",
];

/// Commands that delete or overwrite files: in a confined step only the project's tree (undone
/// by the operation log) or declared paths (asked for) are writable, so these matter only
/// unconfined.
const FILES: &[&str] = &[
    "rm",
    "rmdir",
    "unlink",
    "shred",
    "dd",
    "truncate",
    "find -delete",
    "rsync --delete",
];

fn entries<'a>(list: impl Iterator<Item = &'a str>) -> Vec<Vec<String>> {
    list.map(|e| e.split_whitespace().map(str::to_owned).collect::<Vec<_>>())
        .filter(|words| !words.is_empty())
        .collect()
}

/// Whether `arg` is the long option `option` as option parsers read it: the option itself,
/// with a value (`--delete=x`), a longer option of the same family (`--delete-after`), or an
/// unambiguous abbreviation of at least three letters (`--del`).
fn is_option(arg: &str, option: &str) -> bool {
    if arg == option {
        return true;
    }
    if let Some(rest) = arg.strip_prefix(option) {
        return rest.starts_with('-') || rest.starts_with('=');
    }
    option.starts_with("--") && arg.len() >= 5 && option.starts_with(arg)
}

/// Whether `argv` falls under `entry`: the program's base name is the entry's first word and
/// the entry's other words appear among the arguments in order (an option word as
/// [`is_option`] reads it, up to a `--` that ends options).
fn falls_under(entry: &[String], argv: &[String]) -> bool {
    let Some(program) = argv.first() else {
        return false;
    };
    let name = program.rsplit('/').next().unwrap_or(program);
    if entry[0] != name {
        return false;
    }
    let mut args = argv[1..].iter();
    let mut options_end = false;
    entry[1..].iter().all(|w| {
        args.any(|a| {
            if a == "--" {
                options_end = true;
                return false;
            }
            if w.starts_with("--") {
                !options_end && is_option(a, w)
            } else {
                a == w
            }
        })
    })
}

impl DestructiveCommands {
    /// Butler's own lists and `extra` (each `"program word…"`, counted as beyond the files:
    /// the user listed it).
    pub fn with_extra(extra: &[String]) -> Self {
        Self {
            beyond: entries(
                BEYOND_FILES
                    .iter()
                    .copied()
                    .chain(extra.iter().map(String::as_str)),
            ),
            files: entries(FILES.iter().copied()),
        }
    }

    /// The entry `argv` falls under, when its step runs `confined` or not: its program's name
    /// (`/usr/bin/rm` is `rm`) is the entry's first word and the entry's other words appear
    /// among its arguments in order. Options between them do not matter (`docker -H x rm c` is
    /// `docker rm`); options are read as their parsers read them (`rsync --delete-after` is
    /// `rsync --delete`).
    pub(crate) fn matching(&self, argv: &[String], confined: bool) -> Option<String> {
        let files: &[Vec<String>] = if confined { &[] } else { &self.files };
        self.beyond
            .iter()
            .chain(files)
            .find(|entry| falls_under(entry, argv))
            .map(|entry| entry.join(" "))
    }
}

/// What running a command means for the gate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Assessment {
    /// Run it as it is.
    Run,
    /// A `work_vcs` operation: the git worker runs these arguments; `loss` (when any) is what
    /// to weigh first.
    Git {
        args: Vec<String>,
        loss: Vec<LossQuery>,
        globals: Vec<String>,
    },
    /// Run it only with the user's approval, each time: why.
    NeedsApproval { why: String },
    /// Never run it: why.
    Refused { reason: String },
}

/// The decision for one command line, for a step that runs `confined` (in the sandbox, its
/// writes to the project's tree undone by the operation log) or not.
pub fn assess(
    command: &CommandLine,
    judge: &dyn CommandJudge,
    destructive: &DestructiveCommands,
    confined: bool,
) -> Assessment {
    match judge.read(command) {
        Reading::Git(args) => match judge.vet_git(&args) {
            GitVerdict::Run(args) => Assessment::Git {
                args,
                loss: Vec::new(),
                globals: Vec::new(),
            },
            GitVerdict::RunUnlessLoss {
                args,
                loss,
                globals,
            } => Assessment::Git {
                args,
                loss,
                globals,
            },
            GitVerdict::Refused { reason } => Assessment::Refused { reason },
        },
        Reading::HiddenGit(shown) => Assessment::Refused {
            reason: format!(
                "it starts git inside another command (`{shown}`): give git its own step, \
                 `argv: [\"git\", …]`, so Butler can judge it"
            ),
        },
        Reading::Opaque(_) if confined => Assessment::Run,
        Reading::Opaque(shown) => Assessment::NeedsApproval {
            why: format!("what it runs is known only when it runs (`{shown}`)"),
        },
        Reading::Programs(programs) => {
            match programs
                .iter()
                .find_map(|argv| destructive.matching(argv, confined))
            {
                Some(entry) => Assessment::NeedsApproval {
                    why: format!("`{entry}` deletes, overwrites or stops things"),
                },
                None => Assessment::Run,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_owned).collect()
    }

    /// Reads argv as plain programs (`git …` as git); `sudo` wraps the rest.
    struct Plain;

    impl CommandJudge for Plain {
        fn read(&self, command: &CommandLine) -> Reading {
            match command {
                CommandLine::Argv(argv) if argv[0] == "git" => Reading::Git(argv[1..].to_vec()),
                CommandLine::Argv(argv) if argv[0] == "sudo" => {
                    Reading::Programs(vec![argv.clone(), argv[1..].to_vec()])
                }
                CommandLine::Argv(argv) => Reading::Programs(vec![argv.clone()]),
                CommandLine::Shell(s) if s.contains("git") => Reading::HiddenGit(s.clone()),
                CommandLine::Shell(s) => Reading::Opaque(s.clone()),
            }
        }

        fn vet_git(&self, args: &[String]) -> GitVerdict {
            match args.first().map(String::as_str) {
                Some("push") => GitVerdict::Refused {
                    reason: "use git_push".into(),
                },
                _ => GitVerdict::Run(args.to_vec()),
            }
        }

        fn active(&self, command: &CommandLine) -> Active {
            match command {
                CommandLine::Argv(argv)
                    if argv[0] == "sh" && argv.get(1).is_some_and(|w| w == "-c") =>
                {
                    Active {
                        programs: vec![argv[0].clone()],
                        code: argv.get(2).cloned().into_iter().collect(),
                    }
                }
                CommandLine::Argv(argv) if argv[0] == "sudo" => Active {
                    programs: vec![argv[0].clone(), argv[1].clone()],
                    code: Vec::new(),
                },
                CommandLine::Argv(argv) => Active {
                    programs: vec![argv[0].clone()],
                    code: Vec::new(),
                },
                CommandLine::Shell(s) => Active {
                    programs: Vec::new(),
                    code: vec![s.clone()],
                },
            }
        }
    }

    #[test]
    fn placeholders_that_would_be_programs_or_code_are_named() {
        let argv = |line: &str| words(line);
        assert!(placeholder_misuse(&argv("cat {target.file}"), &Plain).is_empty());
        assert_eq!(
            placeholder_misuse(&argv("sudo {target.p} x"), &Plain).len(),
            1
        );
        let script = vec![
            "sh".to_owned(),
            "-c".to_owned(),
            "echo {target.x}".to_owned(),
        ];
        let problems = placeholder_misuse(&script, &Plain);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].contains("code"), "{problems:?}");
    }

    fn decide(command: CommandLine) -> Assessment {
        decide_as(command, false)
    }

    fn decide_as(command: CommandLine, confined: bool) -> Assessment {
        let list = DestructiveCommands::with_extra(&["helm uninstall".into()]);
        assess(&command, &Plain, &list, confined)
    }

    #[test]
    fn options_are_read_as_their_parsers_read_them() {
        let list = DestructiveCommands::with_extra(&[]);
        for line in [
            "rsync -a --delete-after src/ dst/",
            "rsync --delete=x a b",
            "rsync --del a b",
            "rsync --delete-excluded a b",
        ] {
            assert_eq!(
                list.matching(&words(line), false).as_deref(),
                Some("rsync --delete"),
                "{line}"
            );
        }
        for line in [
            "rsync -a src/ dst/",
            "rsync --de a b",
            "rsync -- --delete b",
        ] {
            assert_eq!(list.matching(&words(line), false), None, "{line}");
        }
    }

    #[test]
    fn file_commands_count_only_unconfined_and_effects_beyond_the_files_always() {
        for line in [
            "rm -rf build",
            "truncate -s0 a.txt",
            "rsync --delete-after a b",
        ] {
            assert_eq!(
                decide_as(CommandLine::Argv(words(line)), true),
                Assessment::Run,
                "{line}"
            );
        }
        for line in ["docker rm web", "sudo kill 1", "helm uninstall api"] {
            assert!(
                matches!(
                    decide_as(CommandLine::Argv(words(line)), true),
                    Assessment::NeedsApproval { .. }
                ),
                "{line}"
            );
        }
        assert_eq!(
            decide_as(CommandLine::Shell("$CMD".into()), true),
            Assessment::Run,
            "confined, a run-time program is judged by what the sandbox lets it do"
        );
    }

    #[test]
    fn listed_commands_need_approval_wherever_their_program_lives() {
        for line in [
            "rm -rf build",
            "/bin/rm x",
            "sudo rm x",
            "docker -H tcp://h rm web",
            "find . -name *.o -delete",
            "helm uninstall api",
        ] {
            assert!(
                matches!(
                    decide(CommandLine::Argv(words(line))),
                    Assessment::NeedsApproval { .. }
                ),
                "{line}"
            );
        }
        for line in [
            "ls -l",
            "docker ps",
            "helm list",
            "echo rm",
            "systemctl status api",
        ] {
            assert_eq!(
                decide(CommandLine::Argv(words(line))),
                Assessment::Run,
                "{line}"
            );
        }
    }

    #[test]
    fn git_is_judged_by_its_policy_and_refused_when_hidden() {
        assert!(matches!(
            decide(CommandLine::Argv(words("git branch -a"))),
            Assessment::Git { .. }
        ));
        assert!(matches!(
            decide(CommandLine::Argv(words("git push"))),
            Assessment::Refused { .. }
        ));
        assert!(matches!(
            decide(CommandLine::Shell("cd x && git status".into())),
            Assessment::Refused { .. }
        ));
        assert!(matches!(
            decide(CommandLine::Shell("$CMD".into())),
            Assessment::NeedsApproval { .. }
        ));
    }
}
