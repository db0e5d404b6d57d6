//! The engine's [`CommandJudge`] for a project: command lines read by the git hook's parser
//! (the one that finds git anywhere in a shell line), git's arguments judged by `work_vcs`'s
//! policy in the project's repository.

use butler_worker::git::GitRepo;
use butler_worker::ops::{Active, CommandJudge, CommandLine, GitVerdict, Reading};

use crate::catalogue::{Key, fill};
use crate::hook::programs::git_prefix;
use crate::hook::walk::{self, Found};
use crate::vcs_policy::{Verdict, vet};
use crate::work::vcs::Facts;

/// Judges the commands of one project's procedures.
pub struct ProjectJudge {
    repo: GitRepo,
}

impl ProjectJudge {
    pub fn new(repo: GitRepo) -> Self {
        Self { repo }
    }
}

/// `argv` as one shell line, every word quoted (so the parser reads exactly these words).
/// Deliberately not `shlex`, which leaves words it deems safe bare: a bare first word
/// `NAME=value` is an assignment to the shell, not the program the step names.
fn quoted(argv: &[String]) -> String {
    argv.iter()
        .map(|w| format!("'{}'", w.replace('\'', "'\\''")))
        .collect::<Vec<_>>()
        .join(" ")
}

fn reading_of(script: &str) -> Reading {
    let (found, seen) = walk::commands(script);
    match found {
        Some(Found::Git(args)) => return Reading::HiddenGit(format!("git {}", args.join(" "))),
        Some(Found::Dynamic(word)) => return Reading::HiddenGit(word),
        None => {}
    }
    match seen.opaque {
        Some(what) => Reading::Opaque(what),
        None => Reading::Programs(seen.programs),
    }
}

impl CommandJudge for ProjectJudge {
    fn read(&self, command: &CommandLine) -> Reading {
        match command {
            CommandLine::Argv(argv) => {
                if let Some(mut args) = argv.first().and_then(|p| git_prefix(p)) {
                    args.extend(argv[1..].iter().cloned());
                    return Reading::Git(args);
                }
                reading_of(&quoted(argv))
            }
            CommandLine::Shell(script) => reading_of(script),
        }
    }

    fn active(&self, command: &CommandLine) -> Active {
        let script = match command {
            CommandLine::Argv(argv) => quoted(argv),
            CommandLine::Shell(script) => script.clone(),
        };
        let (_, seen) = walk::commands(&script);
        Active {
            programs: seen
                .programs
                .iter()
                .filter_map(|argv| argv.first().cloned())
                .collect(),
            code: seen.code,
        }
    }

    fn vet_git(&self, args: &[String]) -> GitVerdict {
        match vet(args, &Facts(&self.repo)) {
            Verdict::Run { args } => GitVerdict::Run(args),
            Verdict::RunUnlessLoss {
                args,
                loss,
                globals,
            } => GitVerdict::RunUnlessLoss {
                args,
                loss,
                globals,
            },
            Verdict::Invalid { why } => GitVerdict::Refused {
                reason: why.reason(),
            },
            Verdict::UseProperTool { subcommand, .. } => GitVerdict::Refused {
                reason: fill(Key::StepGitProperWay, &[("subcommand", &subcommand)]),
            },
            Verdict::Refused { why } => GitVerdict::Refused {
                reason: fill(
                    Key::StepGitRefused,
                    &[("reason", &why.reason()), ("hint", &why.hint())],
                ),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use butler_worker::ops::{Assessment, DestructiveCommands, assess};

    use super::*;

    fn judge() -> (butler_testkit::World, ProjectJudge) {
        let w = butler_testkit::World::committed(&[("a.txt", "a")]);
        let repo = GitRepo::discover(&w.project).expect("repo");
        (w, ProjectJudge::new(repo))
    }

    fn argv(line: &str) -> CommandLine {
        CommandLine::Argv(line.split_whitespace().map(str::to_owned).collect())
    }

    fn decide(j: &ProjectJudge, command: CommandLine) -> Assessment {
        assess(&command, j, &DestructiveCommands::with_extra(&[]), false)
    }

    #[test]
    fn git_is_judged_by_the_work_vcs_policy() {
        let (_dir, j) = judge();
        assert!(matches!(
            decide(&j, argv("git branch -a")),
            Assessment::Git { .. }
        ));
        assert!(matches!(
            decide(&j, argv("/usr/bin/git stash list")),
            Assessment::Git { .. }
        ));
        for refused in ["git push", "git -c core.pager=x log", "git commit -m x"] {
            assert!(
                matches!(decide(&j, argv(refused)), Assessment::Refused { .. }),
                "{refused}"
            );
        }
    }

    /// A taught step's git command refused by the policy reads in the session's language.
    #[test]
    fn a_refused_step_reads_japanese_in_a_japanese_session() {
        let (_dir, j) = judge();
        crate::catalogue::sync_scope(crate::catalogue::Lang::Ja, || {
            for refused in [
                "git -c core.pager=x branch",
                "git commit -m x",
                "git rebase --exec=make HEAD",
                "git branch -- --x",
            ] {
                let Assessment::Refused { reason } = decide(&j, argv(refused)) else {
                    panic!("{refused} must be refused");
                };
                assert!(
                    reason
                        .chars()
                        .any(|c| ('\u{3040}'..='\u{30ff}').contains(&c)),
                    "{refused}: {reason}"
                );
            }
        });
    }

    #[test]
    fn git_hidden_in_a_shell_line_or_behind_a_wrapper_is_refused() {
        let (_dir, j) = judge();
        for hidden in [
            CommandLine::Shell("cd src && git status".into()),
            CommandLine::Shell("echo x | xargs git add".into()),
            argv("env GIT_DIR=x git log"),
            argv("sh -c git\tstatus"),
            CommandLine::Argv(vec!["sh".into(), "-c".into(), "g''it push".into()]),
        ] {
            assert!(
                matches!(decide(&j, hidden.clone()), Assessment::Refused { .. }),
                "{hidden:?}"
            );
        }
    }

    #[test]
    fn destructive_commands_are_found_through_wrappers_and_scripts() {
        let (_dir, j) = judge();
        for line in [
            CommandLine::Shell("cd build && r''m -rf out".into()),
            CommandLine::Shell("make && sudo -u app rm -f x".into()),
            CommandLine::Shell("echo $(kill 1)".into()),
            CommandLine::Shell("timeout 5 docker rm web".into()),
            argv("nice -n 5 rm x"),
            CommandLine::Shell("$CMD x".into()),
            CommandLine::Shell("python3 -c 'import os'".into()),
        ] {
            assert!(
                matches!(decide(&j, line.clone()), Assessment::NeedsApproval { .. }),
                "{line:?}"
            );
        }
        for line in [
            CommandLine::Shell("curl -fs localhost:8080/health | grep -q ok".into()),
            CommandLine::Shell("echo rm git && ls -l".into()),
            argv("docker ps -a"),
            argv("systemctl restart api"),
        ] {
            assert_eq!(decide(&j, line.clone()), Assessment::Run, "{line:?}");
        }
    }
}
