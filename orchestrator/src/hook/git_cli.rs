//! git's own command line: the global options before the subcommand.
//!
//! This is the one parser of git's global options in Butler. The hook uses it to name the real
//! subcommand of a blocked command (`git -C x --no-pager log` is a `log`), and `work_vcs`'s
//! policy ([`crate::vcs_policy`]) uses it to allow only the global options that neither run
//! programs nor reach outside the project. The table follows `handle_options()` in git's
//! `git.c` (2.47): global options match exactly (no prefixes), `--exec-path` is a prefix
//! match of its own, and `--help`/`-h`/`--version`/`-v` stop the scan.

/// One global option as it was given, e.g. `-C` with `Some("repo")`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GlobalOption {
    /// The option's canonical name (`-C`, `-c`, `--git-dir`, `--no-pager`, …).
    pub name: String,
    /// Its value, whether attached with `=` or given as the next argument.
    pub value: Option<String>,
}

/// A git command line split at its subcommand.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GitInvocation {
    /// Global options before the subcommand, in order.
    pub globals: Vec<GlobalOption>,
    /// The subcommand (`status`, `log`, …); `--version`/`-v` read as `version` and
    /// `--help`/`-h` as `help`, as git itself does. `None` for a bare `git`.
    pub subcommand: Option<String>,
    /// Everything after the subcommand.
    pub rest: Vec<String>,
    /// An unknown option stood where the subcommand should be (git would refuse it).
    pub unknown_option: Option<String>,
}

impl GitInvocation {
    /// The subcommand followed by its arguments, without the global options: the list the
    /// Brain should pass to `work_vcs`.
    pub fn command_args(&self) -> Vec<String> {
        let mut out = Vec::with_capacity(self.rest.len() + 1);
        out.extend(self.subcommand.clone());
        out.extend(self.rest.iter().cloned());
        out
    }
}

/// Global options that take a value in the next argument (or after `=` for the long ones).
/// `--super-prefix` is gone from git 2.47 but older gits take it.
const WITH_VALUE: &[&str] = &[
    "-C",
    "-c",
    "--git-dir",
    "--work-tree",
    "--namespace",
    "--super-prefix",
    "--config-env",
    "--attr-source",
    "--shallow-file",
];

/// Long global options whose value may only be attached with `=`.
const ATTACHED_ONLY: &[&str] = &["--list-cmds"];

/// Global options without a value.
const FLAGS: &[&str] = &[
    "-p",
    "--paginate",
    "-P",
    "--no-pager",
    "--no-replace-objects",
    "--no-lazy-fetch",
    "--no-optional-locks",
    "--no-advice",
    "--bare",
    "--literal-pathspecs",
    "--no-literal-pathspecs",
    "--glob-pathspecs",
    "--noglob-pathspecs",
    "--icase-pathspecs",
    "--html-path",
    "--man-path",
    "--info-path",
];

/// Split `args` (the words after `git`) into global options, subcommand and the rest.
pub fn parse(args: &[String]) -> GitInvocation {
    let mut inv = GitInvocation::default();
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_str();
        if !arg.starts_with('-') || arg == "-" {
            inv.subcommand = Some(arg.to_owned());
            inv.rest = args[i + 1..].to_vec();
            return inv;
        }
        match arg {
            "--version" | "-v" => return with_pseudo(inv, "version", &args[i + 1..]),
            "--help" | "-h" => return with_pseudo(inv, "help", &args[i + 1..]),
            "--" => {
                // git itself refuses `--` here; the hook reads past it, `work_vcs` refuses it.
                inv.globals.push(GlobalOption {
                    name: "--".to_owned(),
                    value: None,
                });
                i += 1;
                continue;
            }
            _ => {}
        }
        if let Some(rest) = arg.strip_prefix("--exec-path") {
            // git matches `--exec-path` as a prefix: `=dir` sets it, anything else prints it.
            inv.globals.push(GlobalOption {
                name: "--exec-path".to_owned(),
                value: rest.strip_prefix('=').map(str::to_owned),
            });
            i += 1;
            continue;
        }
        if FLAGS.contains(&arg) {
            inv.globals.push(GlobalOption {
                name: arg.to_owned(),
                value: None,
            });
            i += 1;
            continue;
        }
        if let Some((name, value)) = arg.split_once('=')
            && (WITH_VALUE.contains(&name) || ATTACHED_ONLY.contains(&name))
            && name.starts_with("--")
        {
            inv.globals.push(GlobalOption {
                name: name.to_owned(),
                value: Some(value.to_owned()),
            });
            i += 1;
            continue;
        }
        if WITH_VALUE.contains(&arg) {
            let value = args.get(i + 1).cloned();
            inv.globals.push(GlobalOption {
                name: arg.to_owned(),
                value,
            });
            i += 2;
            continue;
        }
        inv.unknown_option = Some(arg.to_owned());
        inv.subcommand = Some(arg.to_owned());
        inv.rest = args[i + 1..].to_vec();
        return inv;
    }
    inv
}

fn with_pseudo(mut inv: GitInvocation, name: &str, rest: &[String]) -> GitInvocation {
    inv.subcommand = Some(name.to_owned());
    inv.rest = rest.to_vec();
    inv
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> GitInvocation {
        parse(&s.split_whitespace().map(str::to_owned).collect::<Vec<_>>())
    }

    #[test]
    fn skips_global_options_to_the_subcommand() {
        let inv = p("-C repo -c a.b=c --no-pager --git-dir=.git --work-tree w log -5");
        assert_eq!(inv.subcommand.as_deref(), Some("log"));
        assert_eq!(inv.rest, vec!["-5"]);
        let names: Vec<_> = inv.globals.iter().map(|g| g.name.as_str()).collect();
        assert_eq!(
            names,
            ["-C", "-c", "--no-pager", "--git-dir", "--work-tree"]
        );
        assert_eq!(inv.globals[3].value.as_deref(), Some(".git"));
        assert_eq!(inv.globals[4].value.as_deref(), Some("w"));
    }

    #[test]
    fn version_and_help_are_pseudo_subcommands() {
        assert_eq!(p("--version").subcommand.as_deref(), Some("version"));
        assert_eq!(p("-p --help log").subcommand.as_deref(), Some("help"));
        assert_eq!(p("").subcommand, None);
    }

    #[test]
    fn exec_path_takes_no_separate_value() {
        let inv = p("--exec-path status");
        assert_eq!(inv.subcommand.as_deref(), Some("status"));
        let inv = p("--exec-path=/x status");
        assert_eq!(inv.globals[0].value.as_deref(), Some("/x"));
    }

    #[test]
    fn follows_git_2_47_handle_options() {
        let inv = p("--exec-pathology status");
        assert_eq!(inv.globals[0].name, "--exec-path");
        assert_eq!(inv.subcommand.as_deref(), Some("status"));
        let inv = p("--shallow-file f log");
        assert_eq!(inv.subcommand.as_deref(), Some("log"));
        let inv = p("--list-cmds=main status");
        assert_eq!(inv.subcommand.as_deref(), Some("status"));
        assert_eq!(
            p("--list-cmds main").unknown_option.as_deref(),
            Some("--list-cmds")
        );
        let inv = p("--no-literal-pathspecs -- log");
        assert_eq!(inv.subcommand.as_deref(), Some("log"));
        assert_eq!(inv.globals[1].name, "--");
    }

    #[test]
    fn unknown_option_is_reported() {
        let inv = p("--frobnicate status");
        assert_eq!(inv.unknown_option.as_deref(), Some("--frobnicate"));
    }
}
