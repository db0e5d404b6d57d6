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
//!   (Butler's own and the configured `[delegation] destructive_commands`): then it needs the
//!   user's approval each time it runs, even inside an active procedure.
//! - A command whose programs are only known at run time (`$CMD`, code of another language, a
//!   script read from standard input) needs approval each time.

use crate::git::LossQuery;
use crate::ops::procedure::CommandLine;

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
            for name in crate::ops::procedure::placeholder_names(w) {
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
pub struct DestructiveCommands(Vec<Vec<String>>);

/// Butler's own list: commands that delete, overwrite, stop or kill.
const DESTRUCTIVE: &[&str] = &[
    "rm",
    "rmdir",
    "unlink",
    "shred",
    "dd",
    "truncate",
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
    "find -delete",
    "rsync --delete",
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

impl DestructiveCommands {
    /// Butler's own list and `extra` (each `"program word…"`).
    pub fn with_extra(extra: &[String]) -> Self {
        let entries = DESTRUCTIVE
            .iter()
            .map(|e| (*e).to_owned())
            .chain(extra.iter().cloned())
            .map(|e| e.split_whitespace().map(str::to_owned).collect::<Vec<_>>())
            .filter(|words| !words.is_empty())
            .collect();
        Self(entries)
    }

    /// The entry `argv` falls under: its program's name (`/usr/bin/rm` is `rm`) is the entry's
    /// first word and the entry's other words appear among its arguments in order. Options
    /// between them do not matter (`docker -H x rm c` is `docker rm`).
    pub fn matching(&self, argv: &[String]) -> Option<String> {
        let program = argv.first()?;
        let name = program.rsplit('/').next().unwrap_or(program);
        self.0
            .iter()
            .find(|entry| {
                entry[0] == name && {
                    let mut args = argv[1..].iter();
                    entry[1..].iter().all(|w| args.any(|a| a == w))
                }
            })
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

/// The decision for one command line.
pub fn assess(
    command: &CommandLine,
    judge: &dyn CommandJudge,
    destructive: &DestructiveCommands,
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
        Reading::Opaque(shown) => Assessment::NeedsApproval {
            why: format!("what it runs is known only when it runs (`{shown}`)"),
        },
        Reading::Programs(programs) => {
            match programs.iter().find_map(|argv| destructive.matching(argv)) {
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
        let list = DestructiveCommands::with_extra(&["helm uninstall".into()]);
        assess(&command, &Plain, &list)
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
