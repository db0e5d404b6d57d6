//! Programs whose way of naming the command they run is their own: `find -exec … ;`,
//! `fd -x`, `gdb --args`/`-ex 'shell …'`, `sg`, `wsl`, `cmd /c`, PowerShell's `-Command` and
//! `-EncodedCommand`, and tmux's commands.

use super::super::getopt::{self, Grammar, flag, value};
use super::{Runs, with_placeholders};

/// `find … -exec cmd … ;` (also `-execdir`, `-ok`, `-okdir`, ended by `;` or `+`); `{}` is a
/// path found at run time.
pub(super) fn find(argv: &[String]) -> Runs {
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
pub(super) fn fd(argv: &[String]) -> Runs {
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
pub(super) fn gdb(argv: &[String]) -> Runs {
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
pub(super) fn sg(argv: &[String]) -> Runs {
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

/// `wsl [options] [--] command line` (through the default shell), `wsl -e prog args…`.
pub(super) fn wsl(argv: &[String]) -> Runs {
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
pub(super) fn cmd(argv: &[String]) -> Runs {
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
pub(super) fn powershell(argv: &[String]) -> Runs {
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

pub(super) fn decode_utf16le_base64(text: &str) -> Option<String> {
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
pub(super) fn tmux(argv: &[String]) -> Runs {
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
