//! The git-hook corpus (`hook_corpus.txt`) run through `hook::analyze`: every command that runs
//! git must be denied with the right subcommand, every command that only mentions git allowed.

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
fn huge_and_deeply_nested_commands_decide_quickly() {
    let started = std::time::Instant::now();
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
    assert!(
        started.elapsed() < std::time::Duration::from_secs(20),
        "took {:?}",
        started.elapsed()
    );
}
