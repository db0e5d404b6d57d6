//! `work_vcs` over generated spellings of every option of every allowed command path, taken
//! from the option tables derived from git itself.
//!
//! Every option is spelled the ways git's parse-options accepts it — each prefix of its long
//! name, negated, with its value after `=` or in the next argument, its short name alone,
//! clustered with another flag, with the value glued on — and:
//! - decided purely (the policy over a table of repository facts): a unique prefix decides
//!   exactly like the full name, an ambiguous or unknown one never runs, an option that runs a
//!   program or is refused never runs in any spelling, a file outside the project is never
//!   accepted, and what would run is a fixed point of the policy;
//! - for a deterministic sample, sent to the real `butler` binary over MCP against a project
//!   with unrecorded edits, a staged version, untracked and ignored files, extra branches, a
//!   tag, a stash, editors/pagers/signing programs configured to a marker script, and a
//!   sentinel directory beside it. After every call (never approved): no marker was written,
//!   the sentinel is unchanged, and every edit, file, commit, tag and stash is still somewhere
//!   in the repository — unless the call returned `need_input`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::common::{StartBrain, World};
use butler_orchestrator::vcs_policy::allow::{self, Class, Entry, Kind};
use butler_orchestrator::vcs_policy::parsing::{self, DashDash};
use butler_orchestrator::vcs_policy::table::{Arg, RawOption};
use butler_orchestrator::vcs_policy::{RepoFacts, Verdict, vet};
use serde_json::json;

/// The project the pure decisions assume.
struct Table;

impl RepoFacts for Table {
    fn is_commit(&self, rev: &str) -> bool {
        matches!(rev, "HEAD" | "HEAD~1" | "main" | "feature" | "b1" | "t1")
    }
    fn guessed_remote_branch(&self, _name: &str) -> Option<String> {
        None
    }
    fn inside(&self, path: &str) -> bool {
        !path.starts_with('/') && !path.split('/').any(|p| p == "..")
    }
    fn is_ignored(&self, path: &str) -> bool {
        path.starts_with("build/")
    }
    fn exists(&self, path: &str) -> bool {
        matches!(path, "a" | "a.txt" | "b.txt" | "c.txt" | "src/a.rs" | ".")
    }
    fn head_ref(&self) -> Option<String> {
        Some("refs/heads/main".to_owned())
    }
    fn config_bool(&self, _key: &str) -> Option<bool> {
        None
    }
}

/// Positional arguments that make each command path do its usual thing.
fn positionals(path: &[&str]) -> Vec<&'static str> {
    match path {
        ["reset"] => vec!["HEAD~1"],
        ["checkout"] | ["switch"] | ["rebase"] => vec!["main"],
        ["branch"] => vec!["b1"],
        ["tag"] => vec!["t1"],
        ["restore"] | ["rm"] | ["blame"] => vec!["a.txt"],
        ["mv"] => vec!["b.txt", "a.txt"],
        ["merge"] | ["cherry-pick"] | ["revert"] => vec!["feature"],
        ["fetch"] | ["pull"] | ["ls-remote"] => vec!["origin"],
        ["remote", "add"] => vec!["x", "https://example.invalid/x.git"],
        ["remote", "set-url"] => vec!["origin", "https://example.invalid/y.git"],
        ["remote", "rename"] => vec!["origin", "o2"],
        ["remote", "set-head" | "set-branches"] => vec!["origin", "main"],
        ["remote", _] => vec!["origin"],
        ["config"] | ["config", "get" | "unset"] => vec!["user.name"],
        ["config", "set"] => vec!["user.name", "X"],
        ["update-ref"] => vec!["refs/heads/b1", "HEAD~1"],
        ["worktree", "move"] => vec!["build/wt", "build/wt2"],
        ["worktree", "add" | "remove" | "lock" | "unlock"] => vec!["build/wt"],
        ["grep"] => vec!["foo"],
        ["ls-tree"] | ["cat-file"] | ["name-rev"] | ["rev-parse"] | ["rev-list"] => vec!["HEAD"],
        ["merge-base"] => vec!["HEAD", "main"],
        ["bisect", "good" | "bad" | "skip"] => vec!["HEAD"],
        _ => vec![],
    }
}

/// A value for an option: where it names a program, a marker script; where a file, one
/// outside the project.
fn value_for(class: Class, marker: &str) -> String {
    match class {
        Class::RunsProgram(_) | Class::Refused(_) => marker.to_owned(),
        Class::ReadsFile => "../sentinel/file".to_owned(),
        Class::Plain | Class::Effect => "HEAD".to_owned(),
    }
}

/// One generated spelling.
#[derive(Debug, Clone)]
struct Spelling {
    /// The words after `git`.
    args: Vec<String>,
    /// The option it names, when the spelling is unambiguous by the oracle below, with whether
    /// it is negated; `None` when ambiguous or unknown.
    means: Option<(&'static RawOption, bool)>,
    /// The same meaning written with the full option name.
    canonical: Vec<String>,
    class: Class,
    /// The value given names a program or a file outside.
    hostile_value: bool,
}

/// Every name a long option can be written with, for prefix matching: the name, and its
/// negation when negatable.
fn spellable(entry: &Entry) -> Vec<(String, &'static RawOption, bool)> {
    let mut out = Vec::new();
    for o in entry.options() {
        let Some(long) = o.long else { continue };
        out.push((long.to_owned(), o, false));
        if o.negatable {
            match long.strip_prefix("no-") {
                Some(positive) => out.push((positive.to_owned(), o, true)),
                None => out.push((format!("no-{long}"), o, true)),
            }
        }
    }
    out
}

/// An independent reading of a long-option word: exact name first, else the one option (up
/// to aliases) whose name it prefixes.
fn oracle(entry: &Entry, word: &str) -> Option<(&'static RawOption, bool)> {
    let names = spellable(entry);
    if let Some((_, o, neg)) = names.iter().find(|(n, _, _)| n == word) {
        return Some((o, *neg));
    }
    let hits: BTreeSet<(&str, bool)> = names
        .iter()
        .filter(|(n, o, _)| o.abbrev && n.starts_with(word))
        .map(|(_, o, neg)| (o.id, *neg))
        .collect();
    if hits.len() != 1 {
        return None;
    }
    let (id, neg) = hits.into_iter().next().expect("one");
    names
        .iter()
        .find(|(_, o, n)| o.id == id && *n == neg)
        .map(|(_, o, _)| (*o, neg))
}

fn full_name(o: &RawOption, negated: bool) -> String {
    let long = o.alias_of.or(o.long).expect("long");
    match (negated, long.strip_prefix("no-")) {
        (false, _) => long.to_owned(),
        (true, Some(p)) => p.to_owned(),
        (true, None) => format!("no-{long}"),
    }
}

/// Every spelling of every option of every allowed path.
fn generate(marker: &str) -> Vec<Spelling> {
    let mut out = Vec::new();
    for entry in allow::ENTRIES {
        let base: Vec<String> = entry.path.iter().map(|s| (*s).to_owned()).collect();
        let tail: Vec<String> = positionals(entry.path)
            .into_iter()
            .map(str::to_owned)
            .collect();
        let build = |words: Vec<String>| {
            let mut a = base.clone();
            a.extend(words);
            a.extend(tail.iter().cloned());
            a
        };
        // A flag to cluster with: the first plain short flag of the path.
        let partner = entry
            .options()
            .find(|o| {
                o.short.is_some()
                    && !o.nodash
                    && o.arg == Arg::None
                    && entry.class(o.id) == Class::Plain
            })
            .and_then(|o| o.short);
        for o in entry.options() {
            let class = entry.class(o.id);
            let value = value_for(class, marker);
            let hostile = matches!(
                class,
                Class::RunsProgram(_) | Class::Refused(_) | Class::ReadsFile
            );
            if let Some(long) = o.long {
                let lens: Vec<usize> = if o.abbrev {
                    (1..=long.len()).collect()
                } else {
                    vec![long.len()]
                };
                for k in lens {
                    if !long.is_char_boundary(k) {
                        continue;
                    }
                    for negated_form in [false, true] {
                        let word = if negated_form {
                            if !o.negatable || long.starts_with("no-") {
                                continue;
                            }
                            format!("no-{}", &long[..k])
                        } else {
                            long[..k].to_owned()
                        };
                        let means = oracle(entry, &word);
                        // Values and classes follow what the word means (a prefix of one option
                        // can be the full name of another: `--prune` of `--prune-tags`).
                        let (meant, meant_neg) = means.unwrap_or((o, negated_form));
                        let class = entry.class(meant.id);
                        let value = value_for(class, marker);
                        let hostile = matches!(
                            class,
                            Class::RunsProgram(_) | Class::Refused(_) | Class::ReadsFile
                        );
                        let forms: Vec<(Vec<String>, bool)> = match (meant.arg, meant_neg) {
                            (_, true) | (Arg::None, _) => vec![(vec![format!("--{word}")], false)],
                            (Arg::Optional, _) => vec![
                                (vec![format!("--{word}")], false),
                                (vec![format!("--{word}={value}")], true),
                            ],
                            (Arg::Required | Arg::RequiredUnlessLast, _) => vec![
                                (vec![format!("--{word}={value}")], true),
                                (vec![format!("--{word}"), value.clone()], true),
                            ],
                        };
                        for (words, with_value) in forms {
                            let canonical = means.map(|(m, neg)| {
                                let name = full_name(m, neg);
                                if with_value {
                                    build(vec![format!("--{name}={value}")])
                                } else {
                                    build(vec![format!("--{name}")])
                                }
                            });
                            out.push(Spelling {
                                args: build(words),
                                means,
                                canonical: canonical.unwrap_or_default(),
                                class,
                                hostile_value: hostile && with_value,
                            });
                        }
                    }
                }
            }
            if let Some(c) = o.short.filter(|_| !o.nodash) {
                let canonical_with = |v: Option<&str>| match o.long {
                    Some(_) => build(vec![match v {
                        Some(v) => format!("--{}={v}", full_name(o, false)),
                        None => format!("--{}", full_name(o, false)),
                    }]),
                    None => build(vec![format!("-{c}{}", v.unwrap_or_default())]),
                };
                let mut forms: Vec<(Vec<String>, Option<&str>)> = match o.arg {
                    Arg::None => vec![(vec![format!("-{c}")], None)],
                    Arg::Optional => vec![
                        (vec![format!("-{c}")], None),
                        (vec![format!("-{c}{value}")], Some(value.as_str())),
                    ],
                    Arg::Required | Arg::RequiredUnlessLast => vec![
                        (vec![format!("-{c}{value}")], Some(value.as_str())),
                        (vec![format!("-{c}"), value.clone()], Some(value.as_str())),
                    ],
                };
                if let Some(p) = partner.filter(|p| *p != c) {
                    let glued = match o.arg {
                        Arg::None => format!("-{p}{c}"),
                        _ => format!("-{p}{c}{value}"),
                    };
                    let v = (o.arg != Arg::None).then_some(value.as_str());
                    forms.push((vec![glued], v));
                }
                for (words, v) in forms {
                    let mut canonical = canonical_with(v);
                    if words[0].len() > 2
                        && partner.is_some_and(|p| words[0].starts_with(&format!("-{p}")))
                        && o.short != partner
                    {
                        // The partner flag comes first in the cluster.
                        let p = partner.expect("partner");
                        let po = entry
                            .options()
                            .find(|x| x.short == Some(p))
                            .expect("partner option");
                        let spelled = match po.long {
                            Some(_) => format!("--{}", full_name(po, false)),
                            None => format!("-{p}"),
                        };
                        canonical.insert(entry.path.len(), spelled);
                    }
                    out.push(Spelling {
                        args: build(words),
                        means: Some((o, false)),
                        canonical,
                        class,
                        hostile_value: hostile && v.is_some(),
                    });
                }
            }
        }
    }
    out
}

fn runs(v: &Verdict) -> Option<&Vec<String>> {
    match v {
        Verdict::Run { args } | Verdict::RunUnlessLoss { args, .. } => Some(args),
        _ => None,
    }
}

/// The verdict without the details that legitimately differ between spellings (the wording
/// of a refusal names the option as it was written).
fn shape(v: &Verdict) -> String {
    match v {
        Verdict::Run { args } => format!("run {args:?}"),
        Verdict::RunUnlessLoss { args, loss, .. } => format!("weigh {args:?} {loss:?}"),
        Verdict::Invalid { .. } => "invalid".to_owned(),
        Verdict::UseProperTool { tool, .. } => format!("proper {tool}"),
        Verdict::Refused { .. } => "refused".to_owned(),
    }
}

#[test]
fn every_spelling_decides_like_the_full_name_and_never_runs_what_it_must_not() {
    let marker = "/nonexistent/marker";
    let spellings = generate(marker);
    assert!(spellings.len() > 5000, "generated {}", spellings.len());
    let mut problems = Vec::new();
    let mut by_kind: BTreeMap<&str, usize> = BTreeMap::new();
    for s in &spellings {
        let verdict = vet(&s.args, &Table);
        *by_kind
            .entry(match &verdict {
                Verdict::Run { .. } => "run",
                Verdict::RunUnlessLoss { .. } => "weigh",
                Verdict::Invalid { .. } => "invalid",
                Verdict::UseProperTool { .. } => "proper",
                Verdict::Refused { .. } => "refused",
            })
            .or_default() += 1;
        let ran = runs(&verdict);
        match s.means {
            None => {
                if ran.is_some() {
                    problems.push(format!("{:?}: ambiguous or unknown, yet runs", s.args));
                }
            }
            Some((_, negated)) => {
                let canonical = vet(&s.canonical, &Table);
                if shape(&verdict) != shape(&canonical) {
                    problems.push(format!(
                        "{:?} → {}\n  but {:?} → {}",
                        s.args,
                        shape(&verdict),
                        s.canonical,
                        shape(&canonical)
                    ));
                }
                let forbidden =
                    matches!(s.class, Class::RunsProgram(_) | Class::Refused(_)) && !negated;
                if forbidden && ran.is_some() {
                    problems.push(format!("{:?}: {:?} option runs", s.args, s.class));
                }
            }
        }
        if s.hostile_value
            && ran.is_some_and(|a| {
                a.iter()
                    .any(|w| w.contains(marker) || w.contains("../sentinel"))
            })
        {
            problems.push(format!(
                "{:?}: a program or an outside file is accepted",
                s.args
            ));
        }
        if let Some(args) = ran {
            let again = vet(args, &Table);
            if shape(&again) != shape(&verdict) {
                problems.push(format!(
                    "{:?}: its canonical form {args:?} decides differently: {}",
                    s.args,
                    shape(&again)
                ));
            }
        }
    }
    eprintln!("{} spellings: {by_kind:?}", spellings.len());
    assert!(
        problems.is_empty(),
        "{} problem(s):\n{}",
        problems.len(),
        problems
            .iter()
            .take(40)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// Positionals the policy must refuse wherever they stand: keys, addresses, refspecs and
/// paths that would run a program or reach outside the project.
fn hostile_positionals(path: &[&str], marker: &str) -> Vec<Vec<String>> {
    let owned = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    match path {
        ["config"] | ["config", "set"] => vec![
            owned(&["core.fsmonitor", marker]),
            owned(&["core.sshCommand", marker]),
            owned(&["core.hooksPath", "evil-hooks"]),
            owned(&["core.bare", "true"]),
            owned(&["alias.x", &format!("!{marker}")]),
            owned(&["protocol.ext.allow", "always"]),
            owned(&["user.name", &format!("--default={marker}")]),
        ],
        ["config", "unset"] => vec![owned(&["core.repositoryformatversion"])],
        ["ls-remote"] => vec![owned(&[&format!("ext::{marker}")])],
        ["fetch"] | ["pull"] => vec![
            owned(&[&format!("ext::{marker}")]),
            owned(&["origin", "+refs/heads/*:refs/heads/*"]),
        ],
        ["remote", "add"] | ["remote", "set-url"] => {
            vec![owned(&["origin", &format!("ext::{marker}")])]
        }
        ["worktree", "add"] => vec![owned(&["../sentinel/wt"]), owned(&["src"])],
        ["worktree", "move"] => vec![owned(&["build/wt", "../sentinel/wt"])],
        ["worktree", "remove" | "lock" | "unlock" | "repair"] => {
            vec![owned(&["../sentinel/repo"])]
        }
        ["mv"] => vec![owned(&["a.txt", "../sentinel/moved"])],
        ["update-ref"] => vec![owned(&["main", "HEAD"])],
        ["blame"]
        | ["rm"]
        | ["restore"]
        | ["clean"]
        | ["stash", "push"]
        | ["checkout"]
        | ["reset"]
        | ["ls-files"]
        | ["check-ignore"] => {
            vec![owned(&["../sentinel/file"])]
        }
        ["grep"] => vec![owned(&["x", "../sentinel/file"])],
        _ => vec![],
    }
}

/// The verdict with its argument list as a set: where an option stands does not change what
/// it means for commands that read options anywhere.
fn meaning(v: &Verdict) -> String {
    let sorted = |a: &Vec<String>| {
        let mut a = a.clone();
        a.sort();
        a
    };
    match v {
        Verdict::Run { args } => format!("run {:?}", sorted(args)),
        Verdict::RunUnlessLoss { args, loss, .. } => format!("weigh {:?} {loss:?}", sorted(args)),
        other => shape(other),
    }
}

/// Where each option stands, judged against how git reads it: before and after `--`, after
/// the positionals, behind `--end-of-options`; and positionals that must be refused, behind
/// `--` or not.
#[test]
fn every_placement_decides_as_git_reads_it() {
    let marker = "/nonexistent/marker";
    let spellings = generate(marker);
    let mut problems = Vec::new();
    let mut judged = 0usize;
    for s in spellings.iter().filter(|s| s.means.is_some()) {
        let entry = allow::ENTRIES
            .iter()
            .filter(|e| {
                s.args
                    .starts_with(&e.path.iter().map(|p| (*p).to_owned()).collect::<Vec<_>>())
            })
            .max_by_key(|e| e.path.len())
            .expect("an allowed path");
        let rules = parsing::rules(entry.path);
        let base = entry.path.len();
        let tail_len = positionals(entry.path).len();
        let words = &s.args[base..s.args.len() - tail_len];
        let tail = &s.args[s.args.len() - tail_len..];
        let join = |parts: &[&[String]]| parts.concat();
        let head = &s.args[..base];
        let original = vet(&s.args, &Table);
        let marker_runs = |v: &Verdict| {
            runs(v).is_some_and(|a| {
                a.iter()
                    .any(|w| w.contains(marker) || w.contains("../sentinel"))
            })
        };
        // `--` in front of the positionals.
        if !tail.is_empty() {
            let dashed = join(&[head, words, &["--".to_owned()], tail]);
            let v = vet(&dashed, &Table);
            judged += 1;
            match rules.dashdash {
                DashDash::Ends if shape(&v) != shape(&original) => problems.push(format!(
                    "{dashed:?} → {} but without `--` → {} (git drops `--` here)",
                    shape(&v),
                    shape(&original)
                )),
                DashDash::Literal if runs(&v).is_some() => {
                    problems.push(format!("{dashed:?}: `--` is a revision here, yet runs"))
                }
                _ => {}
            }
            if marker_runs(&v) {
                problems.push(format!("{dashed:?}: a program or outside file accepted"));
            }
        }
        // The options after the positionals.
        if !tail.is_empty() && !words.is_empty() {
            let late = join(&[head, tail, words]);
            let v = vet(&late, &Table);
            judged += 1;
            if rules.stops_at_non_option {
                if runs(&v).is_some() && words.iter().any(|w| w.starts_with('-')) {
                    problems.push(format!(
                        "{late:?}: git reads the options here as values, yet it runs"
                    ));
                }
            } else if meaning(&v) != meaning(&original) && rules.dashdash != DashDash::Literal {
                problems.push(format!(
                    "{late:?} → {} but in order → {} (git reads options anywhere here)",
                    shape(&v),
                    shape(&original)
                ));
            }
            if marker_runs(&v) {
                problems.push(format!("{late:?}: a program or outside file accepted"));
            }
        }
        // Behind `--end-of-options`: never read as Butler would not know how.
        let eoo = join(&[head, words, &["--end-of-options".to_owned()], tail]);
        judged += 1;
        if marker_runs(&vet(&eoo, &Table)) {
            problems.push(format!("{eoo:?}: a program or outside file accepted"));
        }
        // The option behind `--`: never an option there (git reads a word or a path).
        if !words.is_empty() {
            let behind = join(&[head, &["--".to_owned()], words, tail]);
            let v = vet(&behind, &Table);
            judged += 1;
            // Behind a kept `--` the words are paths (checked as paths), never options.
            if marker_runs(&v) && rules.dashdash != DashDash::Separates {
                problems.push(format!("{behind:?}: a program or outside file accepted"));
            }
            if let Some(args) = runs(&v)
                && words.iter().any(|w| w.starts_with('-'))
                && rules.dashdash != DashDash::Separates
            {
                problems.push(format!(
                    "{behind:?}: runs {args:?}, an option-like word as a name"
                ));
            }
        }
    }
    for entry in allow::ENTRIES {
        let head: Vec<String> = entry.path.iter().map(|p| (*p).to_owned()).collect();
        for hostile in hostile_positionals(entry.path, marker) {
            for dashed in [false, true] {
                let mut args = head.clone();
                if dashed {
                    args.push("--".to_owned());
                }
                args.extend(hostile.iter().cloned());
                judged += 1;
                let v = vet(&args, &Table);
                if runs(&v).is_some() {
                    problems.push(format!("{args:?} runs: {}", shape(&v)));
                }
            }
        }
    }
    eprintln!("{judged} placements judged");
    assert!(judged > 20_000, "judged {judged}");
    assert!(
        problems.is_empty(),
        "{} problem(s):\n{}",
        problems.len(),
        problems
            .iter()
            .take(40)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

// ---------------------------------------------------------------------------- real git

/// A project in a known state with hostile configuration, and what must survive in it.
struct Stage {
    w: World,
    marker_file: PathBuf,
    sentinel: PathBuf,
    precious: Vec<&'static str>,
    commits: Vec<String>,
    tags: Vec<&'static str>,
}

fn write(path: &Path, content: &str) {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("mkdir");
    }
    std::fs::write(path, content).expect("write");
}

fn stage() -> Stage {
    let mut w = World::published();
    let tmp = w.tmp.path().to_path_buf();
    let marker_file = tmp.join("MARKER");
    let marker = tmp.join("bin/marker");
    butler_testkit::write_executable(
        &marker,
        format!("#!/bin/sh\necho \"$0 $*\" >> '{}'\n", marker_file.display()),
    );
    let m = marker.display().to_string();
    for (k, v) in [
        ("GIT_EDITOR", &m),
        ("GIT_SEQUENCE_EDITOR", &m),
        ("GIT_PAGER", &m),
        ("PAGER", &m),
        ("EDITOR", &m),
        ("VISUAL", &m),
    ] {
        w.env.push((k.to_owned(), v.clone()));
    }
    let p = w.project.clone();
    let git = |args: &[&str]| w.git(&p, args);
    for (k, v) in [
        ("core.pager", m.as_str()),
        ("core.editor", m.as_str()),
        ("sequence.editor", m.as_str()),
        ("gpg.program", m.as_str()),
        ("alias.pwn", &format!("!{m}")),
        ("difftool.pwn.cmd", m.as_str()),
        ("mergetool.pwn.cmd", m.as_str()),
        ("diff.tool", "pwn"),
        ("merge.tool", "pwn"),
        ("diff.external", m.as_str()),
        ("diff.shown.textconv", m.as_str()),
    ] {
        git(&["config", k, v]);
    }
    // Hooks the Brain might try to point git at (never the repository's own hooks).
    write(
        &p.join("evil-hooks/post-checkout"),
        &format!("#!/bin/sh\n'{m}' hook\n"),
    );
    write(&p.join(".gitignore"), "*.log\nbuild/\n.env\n");
    // Text files go through a (marker) text conversion when shown to a person.
    write(&p.join(".gitattributes"), "*.txt diff=shown\n");
    write(&p.join("a.txt"), "a\n");
    write(&p.join("b.txt"), "b\n");
    write(&p.join("c.txt"), "c\n");
    git(&["add", "-A"]);
    git(&["commit", "-q", "-m", "Files"]);
    git(&["push", "-q", "origin", "main"]);
    // Extra lines of work and a tag only they reach.
    git(&["switch", "-q", "-c", "feature"]);
    write(&p.join("f.txt"), "feature-commit-content\n");
    git(&["add", "f.txt"]);
    git(&["commit", "-q", "-m", "Feature work"]);
    git(&["switch", "-q", "-c", "b1", "main"]);
    write(&p.join("g.txt"), "b1-commit-content\n");
    git(&["add", "g.txt"]);
    git(&["commit", "-q", "-m", "B1 work"]);
    git(&["tag", "t1"]);
    git(&["switch", "-q", "-c", "tracks-env", "main"]);
    write(&p.join(".env"), "tracked-env-content\n");
    git(&["add", "-f", ".env"]);
    git(&["commit", "-q", "-m", "Track .env"]);
    git(&["switch", "-q", "main"]);
    // A stash.
    write(&p.join("b.txt"), "precious-stashed-b\n");
    git(&["stash", "push", "-q", "-m", "wip"]);
    // Unrecorded work of every kind.
    write(&p.join("a.txt"), "precious-edit-a\n");
    write(&p.join("c.txt"), "precious-staged-c\n");
    git(&["add", "c.txt"]);
    write(&p.join("c.txt"), "precious-worktree-c\n");
    write(&p.join("u.txt"), "precious-untracked-u\n");
    write(&p.join("x.log"), "precious-ignored-x\n");
    write(&p.join(".env"), "precious-ignored-env\n");
    write(&p.join("build/keep.txt"), "precious-ignored-build\n");
    // The sentinel beside the project: a directory and a repository.
    let sentinel = tmp.join("sentinel");
    write(&sentinel.join("file"), "sentinel\n");
    std::fs::create_dir_all(sentinel.join("repo")).expect("mkdir");
    w.git(&sentinel.join("repo"), &["init", "-q", "-b", "main"]);
    write(&sentinel.join("repo/s.txt"), "s\n");
    w.git(&sentinel.join("repo"), &["add", "-A"]);
    w.git(&sentinel.join("repo"), &["commit", "-q", "-m", "sentinel"]);
    let commits = ["main", "feature", "b1", "tracks-env", "refs/stash"]
        .iter()
        .map(|r| git(&["rev-parse", r]).trim().to_owned())
        .collect();
    Stage {
        w,
        marker_file,
        sentinel,
        precious: vec![
            "precious-edit-a",
            "precious-staged-c",
            "precious-worktree-c",
            "precious-untracked-u",
            "precious-ignored-x",
            "precious-ignored-env",
            "precious-ignored-build",
            "precious-stashed-b",
            "feature-commit-content",
            "b1-commit-content",
            "tracked-env-content",
        ],
        commits,
        tags: vec!["t1"],
    }
}

/// Every file under `dir` with its content (the sentinel's fingerprint).
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("read_dir") {
            let e = e.expect("entry");
            let path = e.path();
            if e.file_type().expect("type").is_dir() {
                stack.push(path);
            } else {
                out.insert(path.clone(), std::fs::read(&path).unwrap_or_default());
            }
        }
    }
    out
}

impl Stage {
    /// What has gone missing from the project.
    fn missing(&self) -> Vec<String> {
        let p = &self.w.project;
        let mut missing = Vec::new();
        let worktree = snapshot(p)
            .into_iter()
            .filter(|(path, _)| !path.starts_with(p.join(".git")))
            .map(|(_, c)| String::from_utf8_lossy(&c).into_owned())
            .collect::<Vec<_>>()
            .join("\n");
        // Stash entries live in the stash's reflog; they are kept work.
        let stashes = self.w.git(p, &["stash", "list", "--format=%H"]);
        let mut rev_list = vec!["rev-list", "--all"];
        rev_list.extend(stashes.lines());
        let refs: Vec<String> = self
            .w
            .git(p, &rev_list)
            .lines()
            .map(str::to_owned)
            .collect();
        let found = |extra: &[&str]| -> BTreeSet<String> {
            let mut args = vec!["grep", "-h", "-o", "-F"];
            for s in &self.precious {
                args.extend(["-e", s]);
            }
            args.extend_from_slice(extra);
            let out = self.w.git_output(p, &args);
            String::from_utf8_lossy(&out.stdout)
                .lines()
                .map(str::to_owned)
                .collect()
        };
        let in_index = found(&["--cached"]);
        let rev_args: Vec<&str> = refs.iter().map(String::as_str).collect();
        let in_commits = found(&rev_args);
        for s in &self.precious {
            if !worktree.contains(s) && !in_index.contains(*s) && !in_commits.contains(*s) {
                missing.push(format!("content `{s}`"));
            }
        }
        for c in &self.commits {
            if !refs.contains(c) {
                missing.push(format!("commit {c}"));
            }
        }
        let tags = self.w.git(p, &["tag", "-l"]);
        for t in &self.tags {
            if !tags.lines().any(|l| l == *t) {
                missing.push(format!("tag {t}"));
            }
        }
        missing
    }
}

/// Spellings of the options that can lose work or run programs, and a stride through the
/// rest, plus hand-written destructive command lines: sent to the real binary.
fn sample(marker: &str) -> Vec<Vec<String>> {
    let all = generate(marker);
    let mut chosen: Vec<Vec<String>> = Vec::new();
    let mut seen_option: BTreeMap<(String, &str), usize> = BTreeMap::new();
    let mut stride = 0usize;
    let mut effects = 0usize;
    for s in &all {
        let Some((o, _)) = s.means else { continue };
        let entry = allow::entry(
            &s.args
                .iter()
                .take(2)
                .map(String::as_str)
                .take_while(|w| !w.starts_with('-'))
                .collect::<Vec<_>>(),
        );
        let writes = entry.is_some_and(|e| e.kind == Kind::Writes);
        let key = (entry.map_or(String::new(), |e| e.path.join(" ")), o.id);
        let n = seen_option.entry(key).or_default();
        // One spelling (the shortest) of every other option that changes what a writing
        // command does, and one spelling in eighty of the rest (all of them are decided in the
        // pure test above; this keeps the real-git part to seconds).
        let interesting = s.class == Class::Effect && writes;
        if *n == 0 {
            if interesting {
                if effects.is_multiple_of(2) {
                    chosen.push(s.args.clone());
                }
                effects += 1;
            } else if stride.is_multiple_of(80) {
                chosen.push(s.args.clone());
            }
            stride += 1;
        }
        *n += 1;
    }
    let tmp_outside = "../sentinel";
    for line in [
        "blame a.txt",
        "reflog show -p -2",
        "stash show -p",
        "stash show --stat",
        "stash list -p",
        "grep -n a",
        "cat-file -p HEAD:a.txt",
        "rebase --show-current-patch",
        "am --show-current-patch",
        "reset --har",
        "reset --hard HEAD~1",
        "reset --merge",
        "reset --soft HEAD~1",
        "reset HEAD~1",
        "reset --keep HEAD~1",
        "clean -fdx",
        "clean --for -d -X",
        "clean -ffdx",
        "checkout -- .",
        "checkout .",
        "checkout a.txt",
        "checkout -f feature",
        "checkout --forc tracks-env",
        "checkout tracks-env",
        "checkout -B b1 main",
        "checkout main -- c.txt",
        "checkout --no-overlay main -- .",
        "restore a.txt",
        "restore --staged c.txt",
        "restore -SW c.txt",
        "restore --source=HEAD~1 .",
        "switch -f feature",
        "switch --disc feature",
        "switch -C b1 main",
        "switch tracks-env",
        "switch -m feature",
        "branch -D b1",
        "branch --delete --force b1",
        "branch -df b1",
        "branch -f b1 main",
        "branch -M feature b1",
        "branch -C feature b1",
        "tag -d t1",
        "tag -f t1 main",
        "stash drop",
        "stash clear",
        "stash push -u",
        "stash pop",
        "update-ref -d refs/heads/b1",
        "update-ref refs/tags/t1 main",
        "update-ref refs/heads/feature main",
        "reflog expire --expire=now --all",
        "gc --prune=now",
        "rm -f a.txt",
        "rm -r --force -- .",
        "mv -f u.txt a.txt",
        "rebase --onto main feature b1",
        "merge tracks-env",
        "pwn",
        "difftool",
        "mergetool",
        "config core.hooksPath evil-hooks",
        "config --add core.hooksPath evil-hooks",
        "tag -a t9",
        "merge -e feature",
        "commit --amend",
        "branch --edit-description",
        // `--` and options after positionals, as git reads them.
        "config -- core.hooksPath evil-hooks",
        "config -- core.bare true",
        "config -- core.repositoryformatversion 1",
        "config --add -- core.hooksPath evil-hooks",
        "config set -- core.hooksPath evil-hooks",
        "config core.hooksPath --default=evil-hooks",
        "config user.name --comment=x",
        "branch -D -- b1",
        "branch --delete --force -- b1",
        "branch -f -- b1 main",
        "branch -M -- feature b1",
        "branch -C -- feature b1",
        "tag -d -- t1",
        "tag -f -- t1 main",
        "update-ref -- refs/heads/b1 main",
        "update-ref -d -- refs/heads/b1",
        "update-ref -d -- refs/stash",
        "switch --discard-changes -- feature",
        "switch -f -- feature",
        "mv -f -- u.txt a.txt",
        "worktree add -B b1 -- build/wt main",
        "worktree add -- ../sentinel/wt",
        "remote remove -- origin",
        "remote -- remove origin",
        "stash drop -- stash@{0}",
        "fetch origin -- +refs/heads/*:refs/heads/*",
        "reset --end-of-options --hard",
        "clean --end-of-options -fdx",
    ] {
        chosen.push(line.split_whitespace().map(str::to_owned).collect());
    }
    for line in [
        vec![
            "-c".to_owned(),
            format!("core.pager={marker}"),
            "branch".to_owned(),
        ],
        vec![
            "-c".to_owned(),
            "core.hooksPath=evil-hooks".to_owned(),
            "checkout".to_owned(),
            "feature".to_owned(),
        ],
        vec![
            format!(
                "--exec-path={}",
                Path::new(marker).parent().expect("dir").display()
            ),
            "branch".to_owned(),
        ],
        vec![
            "-C".to_owned(),
            format!("{tmp_outside}/repo"),
            "branch".to_owned(),
            "x".to_owned(),
        ],
        vec![
            format!("--git-dir={tmp_outside}/repo/.git"),
            "branch".to_owned(),
            "x".to_owned(),
        ],
        vec![
            "--work-tree".to_owned(),
            tmp_outside.to_owned(),
            "checkout".to_owned(),
            "--".to_owned(),
            ".".to_owned(),
        ],
        vec![
            "worktree".to_owned(),
            "add".to_owned(),
            format!("{tmp_outside}/wt"),
        ],
        vec![
            "clone".to_owned(),
            ".".to_owned(),
            format!("{tmp_outside}/clone"),
        ],
        vec![
            "bundle".to_owned(),
            "create".to_owned(),
            format!("{tmp_outside}/b"),
            "--all".to_owned(),
        ],
        vec![
            "config".to_owned(),
            format!("--file={tmp_outside}/file"),
            "user.name".to_owned(),
            "x".to_owned(),
        ],
        vec![
            "fetch".to_owned(),
            format!("--upload-pac={marker}"),
            "origin".to_owned(),
        ],
        vec![
            "fetch".to_owned(),
            "--upload-pack".to_owned(),
            marker.to_owned(),
            "origin".to_owned(),
        ],
        vec![
            "ls-remote".to_owned(),
            format!("--exe={marker}"),
            "origin".to_owned(),
        ],
        vec![
            "remote".to_owned(),
            "add".to_owned(),
            "evil".to_owned(),
            format!("ext::{marker}"),
        ],
        vec![
            "rebase".to_owned(),
            format!("-x{marker}"),
            "main".to_owned(),
        ],
        vec![
            "rebase".to_owned(),
            "--ex".to_owned(),
            marker.to_owned(),
            "main".to_owned(),
        ],
        vec!["grep".to_owned(), format!("-O{marker}"), "a".to_owned()],
        vec![
            "config".to_owned(),
            "--".to_owned(),
            "core.pager".to_owned(),
            marker.to_owned(),
        ],
        vec![
            "config".to_owned(),
            "core.fsmonitor".to_owned(),
            format!("--default={marker}"),
        ],
        vec![
            "config".to_owned(),
            "--".to_owned(),
            "alias.pwn2".to_owned(),
            format!("!{marker}"),
        ],
        vec![
            "remote".to_owned(),
            "add".to_owned(),
            "--".to_owned(),
            "evil".to_owned(),
            format!("ext::{marker}"),
        ],
        vec![
            "fetch".to_owned(),
            "--".to_owned(),
            format!("ext::{marker}"),
        ],
        vec!["merge".to_owned(), "-S".to_owned(), "feature".to_owned()],
        vec![
            "tag".to_owned(),
            "-s".to_owned(),
            "t8".to_owned(),
            "-m".to_owned(),
            "x".to_owned(),
        ],
        vec![
            "mv".to_owned(),
            "a.txt".to_owned(),
            format!("{tmp_outside}/moved"),
        ],
        vec![
            "blame".to_owned(),
            format!("--contents={tmp_outside}/file"),
            "a.txt".to_owned(),
        ],
    ] {
        chosen.push(line);
    }
    chosen
}

/// The sample is sent in shards, every `SHARDS`th call each on a stage of its own, so that they
/// run side by side: sent one after another, its 190 calls were the suite's last 40 seconds.
const SHARDS: usize = 4;

#[tokio::test]
async fn generated_spellings_against_real_git_lose_nothing_and_run_nothing_shard_1() {
    spellings_against_real_git(0).await;
}

#[tokio::test]
async fn generated_spellings_against_real_git_lose_nothing_and_run_nothing_shard_2() {
    spellings_against_real_git(1).await;
}

#[tokio::test]
async fn generated_spellings_against_real_git_lose_nothing_and_run_nothing_shard_3() {
    spellings_against_real_git(2).await;
}

#[tokio::test]
async fn generated_spellings_against_real_git_lose_nothing_and_run_nothing_shard_4() {
    spellings_against_real_git(3).await;
}

async fn spellings_against_real_git(shard: usize) {
    let s = stage();
    let marker = s.w.tmp.path().join("bin/marker").display().to_string();
    let sample = sample(&marker);
    assert!(
        (100..=250).contains(&sample.len()),
        "a sample of {}: keep it big enough to mean something and small enough to stay fast",
        sample.len()
    );
    // Each call keeps its place in the whole sample, so a failure names the same call in any shard.
    let calls: Vec<(usize, &Vec<String>)> = sample
        .iter()
        .enumerate()
        .skip(shard)
        .step_by(SHARDS)
        .collect();
    let sentinel_before = snapshot(&s.sentinel);
    let brain = s.w.session().await;
    assert!(
        s.missing().is_empty(),
        "the stage is complete: {:?}",
        s.missing()
    );
    let mut asked = 0;
    let mut ran_ok = 0;
    let started = std::time::Instant::now();
    let mut checked = 0;
    for &(i, args) in &calls {
        let a = brain.call("work_vcs", json!({"args": args})).await;
        let code = a.error_code().to_owned();
        if code == "need_input" && a.data().get("approval").is_some() {
            asked += 1;
        }
        if a.status() == "ok" {
            ran_ok += 1;
        }
        assert!(
            !s.marker_file.exists(),
            "{args:?} ran a program: {} → {}",
            std::fs::read_to_string(&s.marker_file).unwrap_or_default(),
            a.envelope
        );
        assert_eq!(
            snapshot(&s.sentinel),
            sentinel_before,
            "{args:?} wrote outside the project: {}",
            a.envelope
        );
        // Refusals and approval requests run nothing (by construction: the policy decided
        // before git was started); what did run is checked against the repository.
        if std::env::var_os("BUTLER_TEST_TRACE").is_some() {
            eprintln!(
                "{i} {args:?} → {} {}",
                a.status(),
                a.envelope["data"]["message"]
                    .as_str()
                    .unwrap_or(a.envelope["summary"].as_str().unwrap_or_default())
                    .lines()
                    .next()
                    .unwrap_or_default()
            );
        }
        if a.status() == "ok" || a.data().get("ran").is_some() {
            checked += 1;
            let missing = s.missing();
            assert!(
                missing.is_empty(),
                "call {i}: {args:?} lost {missing:?} without asking: {}",
                a.envelope
            );
        }
    }
    eprintln!(
        "shard {shard}: {} real calls in {:?}: {ran_ok} ran, {asked} asked for approval, {checked} checked in the repository",
        calls.len(),
        started.elapsed()
    );
    assert!(
        asked >= 5 && ran_ok >= 5,
        "each shard exercises both: {asked} asked, {ran_ok} ran"
    );
}
