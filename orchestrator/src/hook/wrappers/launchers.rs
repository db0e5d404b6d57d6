//! Tools that run a command after a verb of their own: `uv run CMD…`, `bundle exec CMD…`,
//! `direnv exec DIR CMD…`, `nix develop -c CMD…`, `nix-shell --run SCRIPT`, ….

use super::super::getopt::{self, Grammar, flag, value, words};
use super::{Runs, any_later_command, skip_assignments};

/// A tool that runs a command after a verb of its own (`uv run CMD…`, `bundle exec CMD…`).
pub(super) struct Launcher {
    pub(super) name: &'static str,
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

pub(super) const fn launcher(
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

pub(super) const UV_RUN: Grammar = Grammar::new(
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

pub(super) const GENERIC_RUN: Grammar = Grammar::new(
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

pub(super) const NIX_SHELL: Grammar = Grammar::new(
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

pub(super) const NIX: Grammar = Grammar::new(
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

pub(super) const LAUNCHERS: &[Launcher] = &[
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

pub(super) fn launch(launcher: &Launcher, argv: &[String]) -> Runs {
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
        if let Some(from) = p.operands_from_any {
            runs.push(any_later_command(args, from));
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
