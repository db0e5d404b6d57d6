//! The git-hook corpus (`hook_corpus.txt`) run through `hook::analyze`: every command that runs
//! git must be denied with the right subcommand, every command that only mentions git allowed.

// The real-program check starts bash with a stand-in git, as a person's shell would.
#![allow(clippy::disallowed_methods)]

use butler_orchestrator::hook::{Blocked, Decision, analyze};

struct Case {
    line: usize,
    command: String,
    /// `None` = allow; `Some(sub)` = deny naming `sub`.
    expected: Option<String>,
}

fn corpus() -> Vec<Case> {
    let text = include_str!("hook_corpus.txt");
    let mut cases = Vec::new();
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let (head, command) = line
            .split_once('\t')
            .expect("each case is `decision<TAB>command`");
        let expected = match head.split_once(' ') {
            None if head == "allow" => None,
            Some(("deny", "-")) => Some(String::new()),
            Some(("deny", sub)) => Some(sub.to_owned()),
            _ => panic!("line {}: bad decision `{head}`", index + 1),
        };
        cases.push(Case {
            line: index + 1,
            command: command.replace('⏎', "\n"),
            expected,
        });
    }
    cases
}

#[test]
fn corpus_is_large_enough() {
    let cases = corpus();
    let denies = cases.iter().filter(|c| c.expected.is_some()).count();
    let allows = cases.len() - denies;
    assert!(denies >= 200, "only {denies} commands that run git");
    assert!(
        allows >= 100,
        "only {allows} commands that only mention git"
    );
}

#[test]
fn every_corpus_command_gets_its_decision() {
    let mut failures = Vec::new();
    for case in corpus() {
        let got = match analyze(&case.command) {
            Decision::Allow => None,
            Decision::Deny { blocked, reason } => {
                assert!(
                    reason.contains("was blocked"),
                    "line {}: reason `{reason}`",
                    case.line
                );
                assert!(
                    reason.contains("work_"),
                    "line {}: no tool in `{reason}`",
                    case.line
                );
                Some(match blocked {
                    Blocked::Git { subcommand } => subcommand,
                    Blocked::DynamicCommand { .. } => "(dynamic)".to_owned(),
                })
            }
        };
        if got != case.expected {
            failures.push(format!(
                "line {}: {:?}\n    expected {:?}, got {:?}",
                case.line, case.command, case.expected, got
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} corpus failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn deny_messages_name_the_mapped_call() {
    let reason = |command: &str| match analyze(command) {
        Decision::Deny { reason, .. } => reason,
        Decision::Allow => panic!("`{command}` must be denied"),
    };
    assert_eq!(
        reason("git status"),
        "`git status` was blocked. Use work_observe() instead."
    );
    assert!(reason("git log -5 -- src/").contains(r#"work_history(n=5, path="src/")"#));
    assert!(reason("cd x && git diff src/a.rs").contains(r#"work_diff(path="src/a.rs")"#));
    assert!(reason("git diff").contains(r#"work_diff(level="full")"#));
    assert!(reason("git show 0123abc").contains(r#"work_diff(record_id="0123abc")"#));
    assert!(reason("git commit -m 'x y'").contains(r#"work_record(message="x y")"#));
    assert!(reason("sudo git push").contains("work_publish()"));
    let heredoc_commit = "git commit -m \"$(cat <<'EOF'\nFix it\n\nBody.\nEOF\n)\"";
    assert!(reason(heredoc_commit).contains(r#"work_record(message="Fix it\n\nBody.")"#));
    assert!(reason("git -C repo branch -a").contains(r#"work_vcs(["branch", "-a"])"#));
}

#[test]
/// Huge and deeply nested inputs are decided (without exhausting the stack); how fast the hook
/// decides is measured by `benches/hook_vs_git.rs`, not asserted here.
fn huge_and_deeply_nested_commands_are_decided() {
    let big = "echo hello; ".repeat(200_000);
    assert_eq!(analyze(&big), Decision::Allow);
    let big_git = format!("{big}git status");
    assert!(matches!(analyze(&big_git), Decision::Deny { .. }));
    let nested = format!("{}git log{}", "$(".repeat(10_000), ")".repeat(10_000));
    assert!(matches!(analyze(&nested), Decision::Deny { .. }));
    let ifs = format!(
        "{}git log{}",
        "if true; then ".repeat(2_000),
        "; fi".repeat(2_000)
    );
    assert!(matches!(analyze(&ifs), Decision::Deny { .. }));
    // Patterns, parameter operations and output crafted to cost time (each once took seconds).
    let bracket = format!("G=git; *[{}] ; $G status", "a".repeat(40_000));
    let stars = format!("/usr/bin/g{}t status", "*".repeat(20_000));
    let operations = format!(
        "x={}; p='*{}b'; {} G=git; $G status",
        "a".repeat(256),
        "a".repeat(62),
        ": ${x//$p};".repeat(12)
    );
    let escapes = format!(
        "echo '{}' >/dev/null; G=git; $G status",
        r"\t".repeat(62_000)
    );
    let words = format!("echo {}; G=gi; G+=t; $G status", "*-x ".repeat(20_000));
    let padding = format!(
        "printf '{}' {} | sh; G=git; $G status",
        "%4096s".repeat(900),
        "a ".repeat(1_000)
    );
    for line in [bracket, stars, operations, escapes, words, padding] {
        assert!(
            matches!(analyze(&line), Decision::Deny { .. }),
            "{}",
            &line[..80]
        );
    }
    for levels in [6, 14] {
        let mut script = "git log".to_owned();
        for _ in 0..levels {
            script = format!("sh -c '{}'", script.replace('\'', r"'\''"));
        }
        assert!(
            matches!(analyze(&script), Decision::Deny { .. }),
            "{levels} levels of sh -c"
        );
    }
}

// ── Generated cases ─────────────────────────────────────────────────────────────────────────
//
// Every known wrapper in the option spellings its real program accepts (`@` is where the wrapped
// command goes), with a command that runs git (must be denied, naming the subcommand) and one
// that only mentions it (must be allowed); each also inside other shell constructs. Spellings
// marked runnable are also run for real through bash with a stand-in `git` first on PATH (see
// `real_programs_agree`), when the wrapper is installed.

/// Spellings of one wrapper; `runnable` ones are safe to run here for real.
struct Spellings {
    runnable: bool,
    templates: &'static [&'static str],
}

const fn run(templates: &'static [&'static str]) -> Spellings {
    Spellings {
        runnable: true,
        templates,
    }
}

const fn analyzed(templates: &'static [&'static str]) -> Spellings {
    Spellings {
        runnable: false,
        templates,
    }
}

const SPELLINGS: &[Spellings] = &[
    analyzed(&[
        "sudo @",
        "sudo -u root @",
        "sudo -uroot @",
        "sudo --user=root @",
        "sudo --user root @",
        "sudo --us root @",
        "sudo -E @",
        "sudo -Eu root @",
        "sudo -EHu root @",
        "sudo -H -u root @",
        "sudo -g wheel @",
        "sudo -u root -g wheel -- @",
        "sudo -D /tmp @",
        "sudo --chdir=/tmp @",
        "sudo -C 3 @",
        "sudo -p 'pw:' @",
        "sudo --prompt 'pw:' @",
        "sudo -n @",
        "sudo --non-interactive @",
        "sudo -hlocalhost @",
        "sudo --host=localhost @",
        "sudo -s @",
        "sudo -i @",
        "sudo --login @",
        "sudo --preserve-env @",
        "sudo --preserve-env=PATH,HOME @",
        "sudo -T 60 @",
        "sudo --command-timeout=60 @",
        "sudo -- @",
        "sudo FOO=1 @",
        "sudo -u root FOO=1 BAR=2 @",
        "sudo -r role -t type @",
        "sudo -R /srv @",
        "sudo -k @",
        "sudo -A @",
        "sudo -B -b @",
        "sudo -P -S @",
        "sudo -c class @",
        "sudo --login-class=class @",
        "doas @",
        "doas -u root @",
        "doas -n @",
        "doas -nu root @",
        "doas -a style @",
        "run0 @",
        "run0 -u root @",
        "run0 --user=root @",
        "run0 --nice 5 @",
        "run0 -D /tmp @",
        "run0 --setenv A=1 @",
        "pkexec @",
        "pkexec --user root @",
        "pkexec --disable-internal-agent @",
        "pkexec --keep-cwd @",
    ]),
    run(&[
        "env @",
        "env A=1 @",
        "env A=1 B='two words' @",
        "env -u HOME @",
        "env -uHOME @",
        "env --unset=HOME @",
        "env --unset HOME @",
        "env --unse=HOME @",
        "env -C /tmp @",
        "env -C/tmp @",
        "env --chdir=/tmp @",
        "env --chdir /tmp @",
        "env -v @",
        "env --debug @",
        "env -- @",
        "env - PATH=\"$PATH\" @",
        "env -i PATH=\"$PATH\" @",
        "env --ignore-environment PATH=\"$PATH\" @",
        "env -iv PATH=\"$PATH\" @",
        "env --block-signal @",
        "env --block-signal=INT @",
        "env --default-signal=INT @",
        "env --ignore-signal=INT @",
        "env -u A -u B -- C=1 @",
        "env -S '@'",
        "env -S'@'",
        "env --split-string='@'",
        "env --split-string '@'",
        "env -vS '@'",
        "env -S 'A=1 @'",
        "env -S '-u HOME @'",
        "env -S '-- @'",
    ]),
    analyzed(&["env -a name @", "env -P /usr/bin @", "env -0i @"]),
    run(&[
        "nice @",
        "nice -n 5 @",
        "nice -n5 @",
        "nice --adjustment=5 @",
        "nice --adjustment 5 @",
        "nice --adj=5 @",
        "nice --adj 5 @",
        "nice -5 @",
        "nice --5 @",
        "nice -+5 @",
        "nice -- @",
        "nice -n 5 -- @",
        "timeout 5 @",
        "timeout 5s @",
        "timeout 0.5m @",
        "timeout -s KILL 5 @",
        "timeout -sKILL 5 @",
        "timeout --signal=KILL 5 @",
        "timeout --signal KILL 5 @",
        "timeout --sig=TERM 5 @",
        "timeout -k 1 5 @",
        "timeout -k1 -sINT 10 @",
        "timeout --kill-after=1 5 @",
        "timeout --foreground 5 @",
        "timeout --preserve-status 5 @",
        "timeout -v 5 @",
        "timeout --verbose 5 @",
        "timeout -- 5 @",
        "stdbuf -oL @",
        "stdbuf -o L @",
        "stdbuf -o0 @",
        "stdbuf --output=L @",
        "stdbuf --output L @",
        "stdbuf --out=L @",
        "stdbuf -i0 -oL -eL @",
        "stdbuf -eL @",
        "nohup @",
        "nohup -- @",
        "setsid @",
        "setsid -w @",
        "setsid --wait @",
        "chrt -o 0 @",
        "chrt --other 0 @",
        "chrt -b 0 @",
        "chrt --batch 0 @",
        "chrt -i 0 @",
        "chrt --idle 0 @",
        "chrt -v -o 0 @",
        "taskset 1 @",
        "taskset 0x1 @",
        "taskset -c 0 @",
        "taskset --cpu-list 0 @",
        "ionice -c 3 @",
        "ionice -c3 @",
        "ionice --class idle @",
        "ionice --class=idle @",
        "ionice -c 2 -n 7 @",
        "ionice -c2 -n7 @",
        "ionice -t -c 3 @",
        "ionice --classdata 7 -c 2 @",
        "ionice @",
        "flock lk @",
        "flock -n lk @",
        "flock --nonblock lk @",
        "flock --nonb lk @",
        "flock -x lk @",
        "flock -s lk @",
        "flock -w 5 lk @",
        "flock -w5 lk @",
        "flock --timeout=5 lk @",
        "flock --wait 5 lk @",
        "flock -E 3 lk @",
        "flock -o lk @",
        "flock --verbose lk @",
        "flock lk -c '@'",
        "flock -n lk -c '@'",
        "flock lk --command '@'",
        "script -q -c '@' /dev/null",
        "script -qc '@' /dev/null",
        "script --command='@' /dev/null",
        "script --command '@' -q /dev/null",
        "script /dev/null -q -c '@'",
        "script -e -q -c '@' /dev/null",
        "time @",
        "time -p @",
        "command @",
        "command -- @",
        "exec @",
        "exec -a name @",
        "exec -c @",
        "exec -l @",
        "builtin command @",
        "builtin exec @",
        "setpriv --no-new-privs @",
        "setpriv --nnp @",
        "setpriv --pdeathsig=KILL @",
        "setpriv --pdeathsig KILL @",
        "prlimit --nofile=1024 @",
        "prlimit -n1024 @",
        "prlimit --cpu=100 @",
        "prlimit -t100 @",
        "prlimit --nofile=1024:2048 --cpu=100 @",
        "unshare -r @",
        "unshare --map-root-user @",
        "unshare -U @",
        "unshare -r -m @",
        "unshare -rm @",
        "unshare -r --mount @",
        "unshare -r -w /tmp @",
        "unshare -r --wd=/tmp @",
        "strace -o /dev/null @",
        "strace -f -o /dev/null @",
        "strace -fo /dev/null @",
        "strace -o/dev/null @",
        "strace --output=/dev/null @",
        "strace -o /dev/null -e trace=execve @",
        "strace -o /dev/null -etrace=execve @",
        "strace -o /dev/null --trace=execve @",
        "strace -o /dev/null -s 200 @",
        "strace -o /dev/null -fe execve @",
        "strace -c -o /dev/null @",
        "strace -qq -o /dev/null @",
        "strace -o /dev/null -E A=1 @",
        "strace -o /dev/null -P /tmp @",
    ]),
    analyzed(&[
        "nice -n -5 @",
        "command -p @",
        "chrt -f 10 @",
        "chrt --fifo 10 @",
        "chrt -r 10 @",
        "chrt -R -b 0 @",
        "taskset -a 1 @",
        "ionice -c 1 -n 0 @",
        "setsid -f @",
        "setsid --fork @",
        "setsid -c @",
        "setpriv --reset-env @",
        "flock -F lk @",
        "numactl --interleave=all @",
        "numactl -i all @",
        "numactl --cpunodebind=0 --membind=0 @",
        "numactl -N 0 -m 0 @",
        "numactl -C 0-3 @",
        "numactl --physcpubind=0 @",
        "numactl -l @",
        "numactl --localalloc @",
        "numactl --preferred=0 @",
        "cpulimit -l 50 @",
        "cpulimit -l 50 -- @",
        "cpulimit --limit=50 @",
        "cpulimit -l50 -f @",
        "trickle -d 100 -u 50 @",
        "trickle -s @",
        "systemd-run @",
        "systemd-run --user @",
        "systemd-run --user --wait @",
        "systemd-run -p CPUQuota=20% @",
        "systemd-run --property=CPUQuota=20% @",
        "systemd-run --scope @",
        "systemd-run -t @",
        "systemd-run --unit=x @",
        "systemd-run -u x @",
        "systemd-run --nice=5 @",
        "systemd-run -E A=1 @",
        "systemd-run --setenv=A=1 @",
        "systemd-run -- @",
        "systemd-run --on-active=30 @",
        "systemd-run -qPG --wait @",
        "unbuffer @",
        "unbuffer -p @",
        "chroot / @",
        "chroot --userspec=1000:1000 / @",
        "chroot --userspec 1000 / @",
        "chroot --groups=x / @",
        "chroot --skip-chdir / @",
        "su -c '@'",
        "su -c '@' bob",
        "su bob -c '@'",
        "su - bob -c '@'",
        "su -l bob -c '@'",
        "su --command='@' bob",
        "su --command '@' bob",
        "su -lc '@' bob",
        "su -s /bin/sh -c '@' bob",
        "su -m -c '@'",
        "su --session-command='@' bob",
        "runuser -u bob @",
        "runuser -u bob -- @",
        "runuser --user=bob @",
        "runuser -u bob -g staff @",
        "runuser -l bob -c '@'",
        "runuser bob -c '@'",
        "runuser -c '@' bob",
        "script -q /dev/null @",
        "script -q /dev/null -- @",
        "script -a log @",
        "asciinema rec -c '@'",
        "asciinema rec --command='@' out.cast",
        "asciinema rec out.cast -c '@'",
        "asciinema rec -y -q -c '@' x.cast",
        "asciinema record --command '@'",
        "asciinema rec --overwrite -i 2 -c '@' x",
        "ttyrec -e '@'",
        "ttyrec -e '@' out",
        "ttyrec -a -e '@' out",
        "ttyrec out -e '@'",
        "watch @",
        "watch -n 2 @",
        "watch -n2 @",
        "watch --interval=2 @",
        "watch --interval 2 @",
        "watch -d @",
        "watch -d=permanent @",
        "watch --differences @",
        "watch -t @",
        "watch -x @",
        "watch --exec @",
        "watch -c @",
        "watch -e -g @",
        "watch -q 3 @",
        "watch -bn1 @",
        "watch '@'",
        "/usr/bin/time @",
        "/usr/bin/time -v @",
        "/usr/bin/time -f %e @",
        "/usr/bin/time --format=%e @",
        "/usr/bin/time -o t.txt @",
        "/usr/bin/time -ao t.txt @",
        "gtime -p @",
        "chronic @",
        "chronic -e @",
        "eatmydata @",
        "catchsegv @",
        "nocorrect @",
        "noglob @",
        "caffeinate @",
        "caffeinate -i @",
        "caffeinate -dims @",
        "caffeinate -t 60 @",
        "caffeinate -w 123 @",
        "sandbox-exec -n no-network @",
        "sandbox-exec -f p.sb @",
        "sandbox-exec -p '(version 1)' @",
        "arch -x86_64 @",
        "arch -arm64 @",
        "arch -arch x86_64 @",
        "arch -e A=1 -arm64 @",
        "xcrun @",
        "xcrun --sdk macosx @",
        "xcrun -sdk macosx @",
        "xcrun -r @",
        "xcrun --run @",
        "proxychains @",
        "proxychains4 -q @",
        "proxychains -f p.conf @",
        "torsocks @",
        "torsocks -i @",
        "torsocks -P 9050 @",
        "sshpass -p pw @",
        "sshpass -e @",
        "sshpass -f pwfile @",
        "daemonize -o out.log @",
        "chpst -u bob @",
        "chpst -n 5 @",
        "firejail @",
        "firejail --quiet @",
        "firejail --net=none @",
        "firejail --private @",
        "valgrind @",
        "valgrind -q @",
        "valgrind --tool=memcheck @",
        "valgrind --leak-check=full -v @",
        "ltrace @",
        "ltrace -f @",
        "ltrace -o t @",
        "ltrace -e malloc @",
        "strace @",
        "strace -u root @",
        "unshare -m @",
        "unshare --mount=/x @",
        "unshare -R /srv @",
        "unshare --root=/srv @",
        "unshare --fork --pid @",
        "unshare -fp @",
        "unshare -S 0 -G 0 @",
        "unshare --propagation private @",
        "nsenter -t 1 -m @",
        "nsenter --target 1 --mount @",
        "nsenter -t1 -a @",
        "nsenter -m/proc/1/ns/mnt @",
        "nsenter --mount=/proc/1/ns/mnt @",
        "nsenter -t 1 -S 0 -G 0 @",
        "nsenter -t 1 -r @",
        "nsenter -t 1 -w/tmp @",
        "bwrap --bind / / @",
        "bwrap --ro-bind / / --dev /dev @",
        "bwrap --ro-bind /usr /usr --symlink usr/bin /bin --proc /proc @",
        "bwrap --unshare-all --share-net --ro-bind / / @",
        "bwrap --setenv A 1 --ro-bind / / @",
        "bwrap --chdir /tmp --bind / / @",
        "bwrap --die-with-parent --ro-bind / / -- @",
        "screen @",
        "screen -dm @",
        "screen -dmS name @",
        "screen -S name -dm @",
        "screen -L -Logfile x.log -dm @",
        "screen -d -m -S x @",
        "winpty @",
        "busybox env @",
        "busybox nohup @",
        "busybox timeout 5 @",
        "busybox nice @",
        "busybox sh -c '@'",
        "gdb --args @",
        "gdb -q --args @",
        "gdb -ex 'shell @' -batch",
        "gdb -batch -ex '!@'",
        "gdb --batch --eval-command='shell @'",
    ]),
    // Commands that take the wrapped command from their input or from a tree walk.
    run(&[
        "xargs @",
        "xargs -0 @",
        "xargs --null @",
        "xargs -n1 @",
        "xargs -n 1 @",
        "xargs --max-args=1 @",
        "xargs --max-args 1 @",
        "xargs -P4 @",
        "xargs -P 4 -n 1 @",
        "xargs --max-procs=4 @",
        "xargs -r @",
        "xargs --no-run-if-empty @",
        "xargs -t @",
        "xargs -L1 @",
        "xargs -L 1 @",
        "xargs -l @",
        "xargs -l1 @",
        "xargs -s 1000 @",
        "xargs -d '\\n' @",
        "xargs -d'\\n' @",
        "xargs --delimiter='\\n' @",
        "xargs -a list.txt @",
        "xargs --arg-file=list.txt @",
        "xargs -E END @",
        "xargs -eEND @",
        "xargs -I % @",
        "xargs -I% @",
        "xargs -i @",
        "xargs -i% @",
        "xargs --replace @",
        "xargs --replace=% @",
        "xargs --process-slot-var=SLOT @",
        "xargs -0 -n1 -P2 -r @",
        "find . -maxdepth 0 -exec @ \\;",
        "find . -maxdepth 0 -exec @ {} \\;",
        "find . -maxdepth 0 -exec @ {} +",
        "find . -maxdepth 0 -execdir @ \\;",
        "find . -maxdepth 0 -type d -exec @ ';'",
        "find -L . -maxdepth 0 -exec @ \\;",
        "find . -maxdepth 0 \\( -name . \\) -exec @ \\;",
        "find . -maxdepth 0 -name nothing -o -exec @ \\;",
    ]),
    analyzed(&[
        "find . -ok @ \\;",
        "find . -okdir @ {} \\;",
        "fd -x @",
        "fd --exec @",
        "fd -X @",
        "fd --exec-batch @",
        "fd -e rs -x @",
        "fd . src -x @ \\;",
        "fdfind -x @",
        "fd -H -x @",
        "fd -Hx @",
        "parallel @ ::: a",
        "parallel -j4 @ ::: a",
        "parallel --jobs 4 @ ::: a",
        "parallel -k @ ::: a b",
        "parallel --will-cite @ ::: a",
        "parallel ::: '@'",
        "parallel -j2 ::: '@' 'ls'",
        "sem -j2 @",
        "xargs -o @",
        "xargs -p @",
        "xargs -J % @",
    ]),
    // Tools that run a command after a verb of their own.
    analyzed(&[
        "uv run @",
        "uv run --frozen @",
        "uv run --with requests @",
        "uv run -p 3.12 @",
        "uv --directory x run @",
        "poetry run @",
        "pipenv run @",
        "pdm run @",
        "hatch run @",
        "bundle exec @",
        "mise exec -- @",
        "mise x node20 -- @",
        "direnv exec . @",
        "nix develop -c @",
        "nix develop --command @",
        "nix shell nixpkgs#hello -c @",
        "nix-shell --run '@'",
        "nix-shell -p hello --run '@'",
        "nix-shell --command '@'",
        "conda run -n base @",
        "conda run --no-capture-output -n base @",
        "pixi run @",
        "devbox run @",
        "op run -- @",
        "doppler run -- @",
        "aws-vault exec prod -- @",
        "dotenv -- @",
        "env-cmd -f .env @",
        "cross-env NODE_ENV=x @",
        "npm exec -- @",
        "pnpm exec @",
        "yarn exec @",
        "flatpak-spawn --host @",
        "toolbox run @",
        "toolbox run -c fedora @",
        "distrobox enter box -- @",
        "distrobox-enter -n box -- @",
        "host-spawn @",
        "chamber exec svc -- @",
        "dotenvx run -- @",
        "infisical run -- @",
    ]),
    // Terminal multiplexers.
    analyzed(&[
        "tmux new-session -d '@'",
        "tmux new -d '@'",
        "tmux new-window '@'",
        "tmux neww -d '@'",
        "tmux split-window -h '@'",
        "tmux splitw -v -l 10 '@'",
        "tmux run-shell '@'",
        "tmux run '@'",
        "tmux -c '@'",
        "tmux display-popup -E '@'",
        "tmux popup '@'",
        "tmux respawn-pane -k '@'",
        "tmux pipe-pane -o '@'",
        "tmux send-keys '@' Enter",
        "tmux send -t x '@' C-m",
        "tmux if-shell '@' 'display ok'",
        "tmux new -d -s name -n win '@'",
        "tmux new -d -s x \\; new-window '@'",
    ]),
];

/// Wrappers given an option their table does not know: read both ways, so still blocked.
const UNKNOWN_OPTIONS: &[&str] = &[
    "nice --zz-unknown @",
    "nice -Z @",
    "env --zz-unknown @",
    "stdbuf --zz-unknown @",
    "setsid -Z @",
    "timeout --zz-unknown 5 @",
    "timeout -Z 5 @",
    "chrt -Z -o 0 @",
    "taskset -Z 1 @",
    "ionice -Z -c 3 @",
    "nohup --zz-unknown @",
    "sudo --zz-unknown @",
    "sudo -Z @",
    "doas -Z @",
    "strace --zz-unknown @",
    "unshare --zz-unknown @",
    "nsenter --zz-unknown @",
    "prlimit --zz-unknown @",
    "setpriv --zz-unknown @",
    "numactl --zz-unknown @",
    "flock --zz-unknown lk @",
    "chroot --zz-unknown / @",
    "watch --zz-unknown @",
    "systemd-run --zz-unknown @",
    "xargs --zz-unknown @",
    "sudo -Z -Y -X -W @",
    "sudo --aa 1 --bb 2 --cc 3 --dd 4 --ee 5 @",
];

/// The commands put in each template, and the decision each must get.
const WRAPPED_COMMANDS: &[(&str, Option<&str>)] = &[
    ("git status", Some("status")),
    ("git --no-pager log -3", Some("log")),
    ("echo git status", None),
];

/// Shell constructs each generated command is also tried inside (`@` is the command).
const CONTEXTS: &[&str] = &[
    "cd /tmp && @",
    "( @ )",
    "x=$(@)",
    "bash -c '@'",
    "if true; then @; fi",
    "true | @",
];

fn fill(template: &str, command: &str) -> String {
    template.replace('@', command)
}

/// Put `command` inside `context`, quoting it for a single-quoted context.
fn within(context: &str, command: &str) -> String {
    if context.contains("'@'") {
        context.replace('@', &command.replace('\'', r"'\''"))
    } else {
        context.replace('@', command)
    }
}

/// The generated cases: `(command, expected)`.
fn generated() -> Vec<(String, Option<String>)> {
    let mut cases = Vec::new();
    let templates = SPELLINGS.iter().flat_map(|s| s.templates.iter());
    for template in templates {
        for (command, expected) in WRAPPED_COMMANDS {
            let line = fill(template, command);
            let expected = expected.map(str::to_owned);
            if !command.contains("--no-pager") {
                for context in CONTEXTS {
                    cases.push((within(context, &line), expected.clone()));
                }
            }
            cases.push((line, expected));
        }
    }
    for template in UNKNOWN_OPTIONS {
        cases.push((fill(template, "git status"), Some("status".to_owned())));
    }
    cases
}

#[test]
fn generated_wrapper_spellings_get_their_decision() {
    let cases = generated();
    let mut failures = Vec::new();
    for (command, expected) in &cases {
        let got = match analyze(command) {
            Decision::Allow => None,
            Decision::Deny { blocked, .. } => Some(match blocked {
                Blocked::Git { subcommand } => subcommand,
                Blocked::DynamicCommand { word } => format!("(dynamic {word})"),
            }),
        };
        if got.as_ref() != expected.as_ref() {
            failures.push(format!("{command:?}: expected {expected:?}, got {got:?}"));
        }
    }
    let denies = cases.iter().filter(|(_, e)| e.is_some()).count();
    eprintln!(
        "generated: {} cases ({denies} denied, {} allowed)",
        cases.len(),
        cases.len() - denies
    );
    assert!(
        failures.is_empty(),
        "{} of {} generated cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

/// Commands run for real by `real_programs_agree`, beyond the runnable wrapper spellings, and
/// whether they start git.
const RUN_FOR_REAL: &[(&str, bool)] = &[
    ("python3 -c \"print('git status')\"", false),
    ("python3 -c 'import sys; print(sys.argv)' git status", false),
    (
        "python3 -c \"import subprocess; subprocess.run(['git','status'])\"",
        true,
    ),
    (
        "python3 -c 'import os; os.system(\"git commit -m x\")'",
        true,
    ),
    (
        "python3 -c \"import os; print(os.popen('git diff').read())\"",
        true,
    ),
    (
        "python3 -Ic \"__import__('os').system('git status')\"",
        true,
    ),
    (
        "python3 -c \"exec(\\\"import os; os.system('git log')\\\")\"",
        true,
    ),
    (
        "echo 'import os; os.system(\"git status\")' | python3",
        true,
    ),
    ("echo 'print(\"git status\")' | python3", false),
    (
        "python3 - <<'EOF'\nimport subprocess\nsubprocess.run(['git', 'log'])\nEOF",
        true,
    ),
    ("python3 <<'EOF'\nprint('git status')\nEOF", false),
    ("perl -e 'print \"git\\n\"'", false),
    ("perl -ne 'print if /git/' file", false),
    ("perl -e 'system(\"git log\")'", true),
    ("perl -e 'print `git log`'", true),
    ("perl -le 'print qx(git log -1)'", true),
    ("perl -e 'exec \"git\", \"log\"'", true),
    ("perl <<< 'system(\"git status\")'", true),
    ("node -e \"console.log('git')\"", false),
    ("node -p '\"git status\"'", false),
    (
        "node -e \"require('child_process').execSync('git status')\"",
        true,
    ),
    (
        "node --eval=\"require('child_process').execSync('git status')\"",
        true,
    ),
    (
        "node -e \"const {spawnSync} = require('child_process'); spawnSync('git', ['log'])\"",
        true,
    ),
    ("awk '{print \"git\"}' file", false),
    ("awk '/git/ || /hg/' file", false),
    ("awk 'BEGIN { system(\"git status\") }'", true),
    (
        "awk 'BEGIN { while ((\"git log\" | getline line) > 0) print line }'",
        true,
    ),
    ("awk '{ print | \"git status\" }' file", true),
    ("sed 's/git/jj/g' file", false),
    ("sed -n '/git/p' file", false),
    ("sed -n '1e git status' file", true),
    ("sed 's/.*/git log/e' file", true),
    ("{git,status}", true),
    ("g{i,}t status", true),
    ("{,git} status", true),
    ("echo {git,status}", false),
    ("$(echo git) status", true),
    ("`echo git` status", true),
    ("eval \"$(echo git status)\"", true),
    ("G=git; $G status", true),
    ("echo git | xargs -I{} {} status", false),
    ("echo git | xargs -I{} sh -c '{} status'", true),
    ("echo status | xargs -I% git %", true),
    ("echo git status | xargs", false),
    ("echo status | xargs git", true),
    ("find . -maxdepth 0 -exec echo git status \\;", false),
    ("bash <(echo 'git status')", true),
    ("source <(echo git status)", true),
    ("bash < <(echo git status)", true),
    ("cat <(echo git status)", false),
    ("flock git ls", false),
    ("strace -o git ls", false),
    ("timeout 5 ls git", false),
    ("timeout -s KILL 5 ls git", false),
    ("nice -n 5 ls git", false),
    ("env -u GIT_DIR ls", false),
    ("xargs -I git echo git", false),
    ("xargs -E git echo", false),
    ("script -q -c ls git", false),
    ("flock git git status", true),
    ("timeout 5 git status", true),
    // Patterns: bash runs the file names they match (`bin/git` is the stand-in).
    ("$HOME/bin/gi? status", true),
    ("$HOME/bin/g*t status", true),
    ("$HOME/bin/g[i]t log", true),
    ("$HOME/bin/'gi?' status", false),
    ("$HOME/bin/gi\\? status", false),
    ("$HOME/bin/gi[ status", false),
    ("env $HOME/bin/gi? status", true),
    ("env \"$HOME/bin/gi?\" status", false),
    ("G='gi?'; $HOME/bin/$G status", true),
    ("G='gi?'; \"$HOME/bin/$G\" status", false),
    ("echo $HOME/bin/gi? status | sh", true),
    ("sh -c '$HOME/bin/g?t status'", true),
    ("echo $HOME/bin/gi?", false),
    // A run-time part in the program's name, and a default value that names git.
    ("$HOME/bin/g${X:-i}t status", true),
    ("G=${G:-git}; $G status", true),
    ("$HOME/bin/${TOOL}", false),
    // A value split into words, and an empty expansion that is no word.
    ("G=\"git status\"; $G", true),
    ("G=\"git status\"; \"$G\"", false),
    ("G=; $G git status", true),
    ("G=; \"$G\" git status", false),
    ("G=\"echo git\"; $G status", false),
    ("G=gitxstatus; IFS=x; $G", true),
    ("GIT=git; declare -n G=GIT; $G status", true),
    // `hash -p FILE NAME` makes NAME run FILE.
    ("hash -p $HOME/bin/git g; g status", true),
    ("hash -p /nonexistent/x g; g status", false),
    ("hash -r git", false),
    // Operations on a value set on the line, and output worked out.
    ("G=legit; ${G:2} status", true),
    ("G=xgit; ${G#x} status", true),
    ("G=gat; ${G/a/i} status", true),
    ("G=gaat; ${G//a/i} status", false),
    ("G=gi; G+=t; $G status", true),
    ("G=x; $(printf 'g\\151t') status", true),
    ("printf 'g\\151t status' | bash", true),
    ("printf '%s%s status' g it | sh", true),
    ("echo -e 'g\\x69t status' | sh", true),
    ("echo -E 'g\\x69t status' | sh", false),
    ("echo 'git status' | tee /dev/null | sh", true),
    ("bash /dev/stdin <<< 'git status'", true),
    ("eval -- 'git status'", true),
    ("G=\"'g'it\"; bash <<EOF\n$G status\nEOF", true),
];

/// Whether `program` can be run here (a shell keyword or builtin, or found on PATH).
fn installed(program: &str) -> bool {
    if matches!(
        program,
        "time" | "command" | "exec" | "builtin" | "eval" | "echo" | "source" | "." | "hash"
    ) {
        return true;
    }
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(program).is_file()))
}

/// Run `line` through bash with a stand-in `git` first on PATH; whether the stand-in ran.
fn starts_git_for_real(dir: &std::path::Path, line: &str) -> bool {
    use std::process::{Command, Stdio};
    let marker = dir.join("git-ran");
    let _ = std::fs::remove_file(&marker);
    let path = format!(
        "{}:{}",
        dir.join("bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut child = Command::new("bash")
        .arg("-c")
        .arg(line)
        .current_dir(dir)
        .env("PATH", path)
        .env("HOME", dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn bash");
    if let Some(mut stdin) = child.stdin.take() {
        use std::io::Write;
        let _ = stdin.write_all(b"x\n");
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        match child.try_wait().expect("try_wait") {
            Some(_) => break,
            None if std::time::Instant::now() > deadline => {
                let _ = child.kill();
                let _ = child.wait();
                break;
            }
            None => std::thread::sleep(std::time::Duration::from_millis(5)),
        }
    }
    marker.exists()
}

const RUNNERS: usize = 16;

/// A directory with a stand-in `git` in `bin/` that notes each run in `git-ran`, and the files
/// the corpus's command lines read.
fn stand_in_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).expect("bin");
    let fake = bin.join("git");
    let marker = dir.path().join("git-ran");
    butler_testkit::write_executable(
        &fake,
        format!("#!/bin/sh\necho \"$*\" >> '{}'\n", marker.display()),
    );
    std::fs::write(dir.path().join("file"), "a line\n").expect("file");
    std::fs::write(dir.path().join("list.txt"), "x\n").expect("list");
    dir
}

/// The runnable spellings and [`RUN_FOR_REAL`], run for real: the hook denies exactly the
/// commands that start git. Wrappers not installed here are skipped (and named). The lines run
/// [`RUNNERS`] at a time, each runner in its own directory: most of the time is waiting
/// (`script` lingers two seconds after its input ends).
#[test]
fn real_programs_agree() {
    let mut lines: Vec<(String, bool)> = Vec::new();
    let mut skipped = std::collections::BTreeSet::new();
    for spellings in SPELLINGS.iter().filter(|s| s.runnable) {
        for template in spellings.templates {
            let program = template.split_whitespace().next().unwrap_or("");
            if !installed(program) {
                skipped.insert(program);
                continue;
            }
            for (command, expected) in WRAPPED_COMMANDS {
                lines.push((fill(template, command), expected.is_some()));
            }
        }
    }
    for (line, runs) in RUN_FOR_REAL {
        let program = line.split_whitespace().next().unwrap_or("");
        if line.starts_with(['{', '$', '`', 'G', 'g', 'e']) || installed(program) {
            lines.push(((*line).to_owned(), *runs));
        } else {
            skipped.insert(program);
        }
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let failures = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..RUNNERS {
            scope.spawn(|| {
                let dir = stand_in_dir();
                while let Some((line, expected)) =
                    lines.get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
                {
                    let ran = starts_git_for_real(dir.path(), line);
                    let denied = matches!(analyze(line), Decision::Deny { .. });
                    let mut found = Vec::new();
                    if ran != *expected {
                        found.push(format!(
                            "{line:?}: the table says runs={expected}, bash says {ran}"
                        ));
                    }
                    if denied != ran {
                        found.push(format!("{line:?}: git ran={ran}, hook denied={denied}"));
                    }
                    failures
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .extend(found);
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap_or_else(|e| e.into_inner());
    eprintln!(
        "real programs: {} command lines run; not installed here: {:?}",
        lines.len(),
        skipped
    );
    assert!(
        failures.is_empty(),
        "{} disagreements:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
