//! The decisions: for an allowed command path and its normalised words, what is refused, what
//! the canonical command line is, and which effects could lose work.

use butler_worker::git::{FilesQuery, LossQuery, Source, Untracked};

use super::allow::{self, Class, Entry};
use super::normalise::{self, NormError, Word, Words};
use super::{Refusal, RepoFacts, Stop, Unread};
use crate::catalogue::Key;

type Decision = Result<Vec<LossQuery>, Stop>;

/// Subcommands refused for a reason worth naming (everything not on the allow-list is refused).
fn known_refusal(sub: &str) -> Option<(Key, Key)> {
    const SHARE: (Key, Key) = (Key::VcsWhyShares, Key::VcsHintShare);
    const PROGRAMS: (Key, Key) = (Key::VcsWhyRunsPrograms, Key::VcsHintAskUser);
    Some(match sub {
        "send-pack" | "send-email" | "request-pull" | "bundle" | "format-patch" | "imap-send"
        | "archive" | "fast-export" | "daemon" | "http-backend" | "upload-pack"
        | "receive-pack" | "upload-archive" | "instaweb" | "update-server-info" => SHARE,
        "difftool"
        | "mergetool"
        | "filter-branch"
        | "filter-repo"
        | "help"
        | "web--browse"
        | "credential"
        | "credential-store"
        | "credential-cache"
        | "credential-cache--daemon"
        | "hook"
        | "svn"
        | "p4"
        | "cvsimport"
        | "cvsserver"
        | "cvsexportcommit"
        | "archimport"
        | "quiltimport"
        | "gui"
        | "citool"
        | "gitk"
        | "for-each-repo"
        | "maintenance"
        | "submodule"
        | "var"
        | "fsmonitor--daemon"
        | "bugreport"
        | "diagnose" => PROGRAMS,
        "clone" | "init" | "init-db" => (Key::VcsWhyCreatesRepository, Key::VcsHintAskUser),
        _ => return None,
    })
}

/// Sub-subcommands git has that work_vcs does not offer, with why.
fn nested_refusal(sub: &str, nested: &str) -> Option<(Key, Key)> {
    Some(match (sub, nested) {
        ("bisect", "run") => (Key::VcsWhyRunsEveryStep, Key::VcsHintAskUser),
        ("bisect", "visualize" | "view") => (Key::VcsWhyHistoryViewer, Key::VcsHintAskUser),
        ("bisect", "replay") => (Key::VcsWhyReplaysLog, Key::VcsHintAskUser),
        ("stash", "save") => (Key::VcsWhyOldSpelling, Key::VcsHintStashPush),
        ("config", "edit") => (Key::VcsWhyOpensEditor, Key::VcsHintAskUser),
        ("config", "rename-section" | "remove-section") => {
            (Key::VcsWhyRewritesSections, Key::VcsHintSingleKeys)
        }
        _ => (Key::VcsWhyNotAmongOffered, Key::VcsHintAskUser),
    })
}

/// Where the command path ends in the arguments.
pub(super) struct Resolved {
    pub(super) path: Vec<&'static str>,
    /// Options of the top-level command before its sub-subcommand (`remote -v show`).
    prefix: usize,
    /// Arguments that belong to the path (the prefix and the sub-subcommand's name).
    consumed: usize,
}

/// The command path `sub` and `rest` name; `Ok(None)` when it is not on the allow-list.
pub(super) fn resolve_path(sub: &str, rest: &[String]) -> Result<Option<Resolved>, Stop> {
    let plain = |path: Vec<&'static str>| {
        Some(Resolved {
            path,
            prefix: 0,
            consumed: 0,
        })
    };
    let Some(&(sub, default)) = allow::NESTED.iter().find(|(s, _)| *s == sub) else {
        return Ok(allow::ENTRIES
            .iter()
            .find(|e| e.path.len() == 1 && e.path[0] == sub)
            .and_then(|e| plain(vec![e.path[0]])));
    };
    // `remote -v show x`: `remote`'s own options may come first.
    let first = if sub == "remote" {
        rest.iter().position(|t| !t.starts_with('-'))
    } else {
        rest.first().filter(|t| !t.starts_with('-')).map(|_| 0)
    };
    if let Some(k) = first {
        if let Some(nested) = allow::canonical_nested(sub, &rest[k]) {
            return Ok(Some(Resolved {
                path: vec![sub, nested],
                prefix: k,
                consumed: k + 1,
            }));
        }
        return match sub {
            "reflog" => Ok(plain(vec![sub, "show"])),
            "config" => Ok(plain(vec![sub])),
            _ => Err(Stop::Invalid(Unread::NotASubcommand {
                word: rest[k].clone(),
                sub: sub.to_owned(),
            })),
        };
    }
    match default {
        Some("") => Ok(plain(vec![sub])),
        Some(d) => Ok(plain(vec![
            sub,
            allow::canonical_nested(sub, d).expect("defaults are known"),
        ])),
        None => Err(Stop::Invalid(Unread::NameASubcommand {
            sub: sub.to_owned(),
            choices: allow::ENTRIES
                .iter()
                .filter(|e| e.path.len() == 2 && e.path[0] == sub)
                .map(|e| e.path[1].to_owned())
                .collect(),
        })),
    }
}

/// Decides `git <sub> <rest>`: the canonical words after `git` and the effects to weigh.
pub(super) fn command(
    sub: &str,
    rest: &[String],
    facts: &dyn RepoFacts,
) -> Result<(Vec<String>, Vec<LossQuery>), Stop> {
    if let Some((why, hint)) = known_refusal(sub) {
        return Err(Stop::Refused(Refusal::Subcommand {
            shown: sub.to_owned(),
            why,
            hint,
        }));
    }
    let Some(Resolved {
        path,
        prefix,
        consumed,
    }) = resolve_path(sub, rest)?
    else {
        return Err(Stop::Refused(Refusal::NotOffered {
            sub: sub.to_owned(),
        }));
    };
    let (prefix_tokens, tokens) = (&rest[..prefix], &rest[consumed..]);
    let shown = path.join(" ");
    let Some(entry) = allow::entry(&path) else {
        let (why, hint) = nested_refusal(path[0], path.get(1).copied().unwrap_or_default())
            .unwrap_or((Key::VcsWhyNotAmongOffered, Key::VcsHintAskUser));
        return Err(Stop::Refused(Refusal::Subcommand { shown, why, hint }));
    };
    let prefix = if prefix_tokens.is_empty() {
        Vec::new()
    } else {
        let top = allow::entry(&path[..1]).expect("remote is allowed");
        let words = normalise::parse(top, prefix_tokens).map_err(|e| norm_stop(&e, "remote"))?;
        // After `--` git reads no subcommand: the word would be an argument of `remote`.
        if !words.args().is_empty() || prefix_tokens.iter().any(|t| t == "--") {
            return Err(Stop::Invalid(Unread::RemoteOptionsFirst));
        }
        words
    };
    let mut words = normalise::parse(entry, tokens).map_err(|e| norm_stop(&e, &shown))?;
    check_options(entry, &words, facts, &shown)?;
    check_positionals(&words, facts, &shown)?;
    let loss = decide(&path, &mut words, facts)?;
    // Diff drivers and text conversions configured for people's terminals stay off for the
    // Brain: plain patches, no program started to show them.
    for (at, id) in quiet_drivers(&path).iter().enumerate() {
        if !words.mentions(id)
            && let Some(option) = entry.options().find(|o| o.id == *id)
        {
            words.insert(
                at.min(words.len()),
                Word::Opt(normalise::OptUse {
                    id: option.id,
                    negated: false,
                    value: None,
                    option,
                }),
            );
        }
    }
    let mut out: Vec<String> = vec![path[0].to_owned()];
    out.extend(normalise::render(&prefix));
    out.extend(path[1..].iter().map(|s| (*s).to_owned()));
    out.extend(normalise::render(&words));
    Ok((out, loss))
}

/// Options Butler adds so that showing history or stashes starts no configured program.
fn quiet_drivers(path: &[&str]) -> &'static [&'static str] {
    match path {
        ["reflog", "show"] | ["stash", "list"] | ["stash", "show"] => {
            &["no-ext-diff", "no-textconv"]
        }
        ["blame"] => &["no-textconv"],
        _ => &[],
    }
}

fn norm_stop(e: &NormError, shown: &str) -> Stop {
    let shown = shown.to_owned();
    match e.clone() {
        NormError::Unknown { word } => Stop::Refused(Refusal::UnknownOption { word, shown }),
        NormError::Ambiguous { word, candidates } => Stop::Invalid(Unread::Ambiguous {
            word,
            shown,
            candidates,
        }),
        NormError::MissingValue { option } => Stop::Invalid(Unread::MissingValue { option }),
        NormError::UnexpectedValue { option } => Stop::Invalid(Unread::UnexpectedValue { option }),
        NormError::EndOfOptions => Stop::Invalid(Unread::EndOfOptions),
    }
}

/// Options that run programs or are refused stop here; file names must stay inside.
fn check_options(
    entry: &Entry,
    words: &[Word],
    facts: &dyn RepoFacts,
    shown: &str,
) -> Result<(), Stop> {
    for w in words {
        let Word::Opt(o) = w else { continue };
        let spelled = o.render();
        match entry.class(o.id) {
            Class::Plain | Class::Effect => {}
            Class::ReadsFile => {
                if let Some(v) = &o.value
                    && !o.negated
                {
                    opened_inside(facts, v, &spelled)?;
                }
            }
            Class::RunsProgram(why) => {
                // A negation turns the program off (`--no-edit`, `--no-gpg-sign`).
                if !o.negated {
                    return Err(Stop::Refused(Refusal::OptionRunsProgram {
                        spelled,
                        shown: shown.to_owned(),
                        why,
                    }));
                }
            }
            Class::Refused(why) => {
                if !o.negated {
                    return Err(Stop::Refused(Refusal::OptionRefused {
                        spelled,
                        shown: shown.to_owned(),
                        why,
                    }));
                }
            }
        }
    }
    Ok(())
}

/// Names that start with `-` are never read as names (only after `--`, as paths), and paths
/// after `--` stay inside the project.
fn check_positionals(words: &[Word], facts: &dyn RepoFacts, shown: &str) -> Result<(), Stop> {
    for a in words.args() {
        if a.starts_with('-') && a != "-" {
            return Err(Stop::Invalid(Unread::DashName {
                arg: a.to_owned(),
                shown: shown.to_owned(),
            }));
        }
    }
    for p in words.paths() {
        pathspec_inside(facts, p)?;
    }
    Ok(())
}

/// A pathspec must not leave the project (git refuses too; this says why in Butler's words).
pub(super) fn pathspec_inside(facts: &dyn RepoFacts, spec: &str) -> Result<(), Stop> {
    let pattern = strip_magic(spec);
    // The part before any wildcard names directories: they must not lead elsewhere through
    // a symbolic link.
    let literal = pattern.find(['*', '?', '[', '\\']).map_or(pattern, |at| {
        pattern[..at].rsplit_once('/').map_or("", |(d, _)| d)
    });
    if escapes(pattern) || (!literal.is_empty() && !facts.inside(literal)) {
        return Err(Stop::Refused(Refusal::PathOutside {
            spec: spec.to_owned(),
        }));
    }
    Ok(())
}

/// The pattern of a pathspec without its `:(magic)` or `:!` prefix.
fn strip_magic(spec: &str) -> &str {
    if let Some(rest) = spec.strip_prefix(":(") {
        return rest.split_once(')').map_or("", |(_, p)| p);
    }
    if let Some(rest) = spec.strip_prefix(':') {
        let magic_end = rest
            .find(|c: char| !matches!(c, '/' | '!' | '^'))
            .unwrap_or(rest.len());
        let pattern = &rest[magic_end..];
        return pattern.strip_prefix(':').unwrap_or(pattern);
    }
    spec
}

/// Lexically: absolute, home-relative, or `..` above the start.
fn escapes(path: &str) -> bool {
    if path.starts_with('/') || path.starts_with('~') || path.starts_with('\\') {
        return true;
    }
    let mut depth: i64 = 0;
    for part in path.split(['/', '\\']) {
        match part {
            "" | "." => {}
            ".." => {
                depth -= 1;
                if depth < 0 {
                    return true;
                }
            }
            _ => depth += 1,
        }
    }
    false
}

/// A file git opens, or a directory it creates or enters, must be inside the project with every
/// symbolic link followed, the last one included.
fn opened_inside(facts: &dyn RepoFacts, path: &str, what: &str) -> Result<(), Stop> {
    if path.starts_with('~') || !facts.inside_followed(path) {
        return Err(Stop::Refused(Refusal::OpenedOutside {
            what: what.to_owned(),
            path: path.to_owned(),
        }));
    }
    Ok(())
}

/// A path git names (a link itself may be named) must be inside the project (the symbolic links
/// above it resolved).
fn file_inside(facts: &dyn RepoFacts, path: &str, what: &str) -> Result<(), Stop> {
    if path.starts_with('~') || !facts.inside(path) {
        return Err(Stop::Refused(Refusal::FileOutside {
            what: what.to_owned(),
            path: path.to_owned(),
        }));
    }
    Ok(())
}

/// A URL or path git fetches from must not name a program (`ext::`, transport helpers).
pub(super) fn url_ok(url: &str) -> Result<(), Stop> {
    if let Some((transport, _)) = url.split_once("::")
        && !transport.is_empty()
        && transport
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    {
        return Err(Stop::Refused(Refusal::TransportUrl {
            url: url.to_owned(),
            transport: transport.to_owned(),
        }));
    }
    if let Some((scheme, _)) = url.split_once("://") {
        let scheme = scheme.to_ascii_lowercase();
        if !matches!(
            scheme.as_str(),
            "http" | "https" | "ssh" | "git" | "file" | "git+ssh" | "ssh+git"
        ) {
            return Err(Stop::Refused(Refusal::HelperUrl {
                url: url.to_owned(),
                scheme,
            }));
        }
    }
    Ok(())
}

/// Refspecs that write local references are refused; plain names are fetched as usual.
fn refspec_ok(spec: &str) -> Result<(), Stop> {
    if spec.contains(':') || spec.starts_with('+') {
        return Err(Stop::Refused(Refusal::Refspec {
            spec: spec.to_owned(),
        }));
    }
    Ok(())
}

const STRATEGIES: &[&str] = &["ort", "recursive", "resolve", "octopus", "ours", "subtree"];

fn strategy_ok(words: &[Word]) -> Result<(), Stop> {
    for s in words.values("strategy") {
        if !STRATEGIES.contains(&s) {
            return Err(Stop::Refused(Refusal::Strategy {
                name: s.to_owned(),
                allowed: STRATEGIES,
            }));
        }
    }
    Ok(())
}

fn files(source: Source, pathspecs: Option<Vec<String>>) -> FilesQuery {
    FilesQuery {
        source,
        pathspecs,
        worktree: true,
        index: true,
        edits: true,
        untracked: Untracked::None,
        overlay: false,
    }
}

fn owned(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| (*s).to_owned()).collect()
}

/// Branch target of `checkout`/`switch`: `-` is the previous branch; a guessed remote branch
/// is read from its remote-tracking ref.
fn switch_target(facts: &dyn RepoFacts, name: &str, guess: bool) -> String {
    if name == "-" {
        return "@{-1}".to_owned();
    }
    if !facts.is_commit(name)
        && guess
        && let Some(remote) = facts.guessed_remote_branch(name)
    {
        return remote;
    }
    name.to_owned()
}

/// What switching HEAD to `target` may lose, given the options.
fn switching(words: &[Word], target: &str, force: bool) -> Vec<LossQuery> {
    let mut loss = Vec::new();
    if force {
        loss.push(LossQuery::Files(FilesQuery {
            untracked: Untracked::All,
            ..files(Source::Tree(target.to_owned()), None)
        }));
    } else {
        if !words.mentions("overwrite-ignore") || words.has("overwrite-ignore") {
            loss.push(LossQuery::Files(FilesQuery {
                edits: false,
                untracked: Untracked::IgnoredOnly,
                ..files(Source::Tree(target.to_owned()), None)
            }));
        }
        if words.has("merge") {
            loss.push(LossQuery::StagedVersions { pathspecs: None });
        }
    }
    loss
}

/// Whether the operation stashes local changes around itself: the stash is re-applied without
/// the index, so staged versions that differ from the working file are lost.
fn autostash(words: &[Word], facts: &dyn RepoFacts, keys: &[&str]) -> bool {
    if words.mentions("autostash") {
        words.has("autostash")
    } else {
        keys.iter().any(|k| facts.config_bool(k) == Some(true))
    }
}

/// A fetch that prunes (by option or by configuration) deletes remote-tracking refs the
/// remote no longer has; commits only they reach are weighed.
fn pruning(words: &[Word], facts: &dyn RepoFacts, remotes: Option<Vec<String>>) -> Vec<LossQuery> {
    let configured = || {
        facts.config_bool("fetch.prune") == Some(true)
            || remotes.as_deref().is_some_and(|rs| {
                rs.iter()
                    .any(|r| facts.config_bool(&format!("remote.{r}.prune")) == Some(true))
            })
            || (remotes.as_deref().is_some_and(<[String]>::is_empty)
                && facts.config_bool("remote.origin.prune") == Some(true))
    };
    let prune = if words.mentions("prune") {
        words.has("prune")
    } else {
        configured()
    };
    if prune {
        vec![LossQuery::StaleRemoteRefs { remotes }]
    } else {
        vec![]
    }
}

/// The ref a branch option resets when the branch exists (`-B x`, `-C x`).
fn reset_branch(name: &str, to: &str) -> LossQuery {
    LossQuery::Refs {
        names: vec![format!("refs/heads/{name}")],
        to: Some(to.to_owned()),
    }
}

fn head_gone(facts: &dyn RepoFacts) -> Vec<String> {
    match facts.head_ref() {
        Some(r) => vec![r, "HEAD".to_owned()],
        None => vec!["HEAD".to_owned()],
    }
}

fn decide(path: &[&str], words: &mut Vec<Word>, facts: &dyn RepoFacts) -> Decision {
    let args = owned(&words.args());
    let paths = owned(&words.paths());
    match path {
        ["blame"] => {
            // `blame [<rev>] [--] <file>`: the file is the last argument.
            if !words.has_dashdash()
                && let Some(file) = args.last()
            {
                pathspec_inside(facts, file)?;
            }
            Ok(vec![])
        }
        ["check-ignore"] | ["ls-files"] => {
            for a in &args {
                pathspec_inside(facts, a)?;
            }
            Ok(vec![])
        }
        ["grep"] => {
            let pattern_given = words.mentions("-e") || words.mentions("-f");
            // git's grep skips a `--` that comes before its pattern and reads the next word
            // as the pattern and the ones after as revisions: not the paths `--` means
            // elsewhere. Butler does not read it that way, so it is refused.
            if !pattern_given && words.has_dashdash() && args.is_empty() {
                return Err(Stop::Invalid(Unread::GrepPatternFirst));
            }
            for a in args.iter().skip(usize::from(!pattern_given)) {
                pathspec_inside(facts, a)?;
            }
            Ok(vec![])
        }
        ["ls-remote"] => {
            if let Some(repo) = args.first() {
                url_ok(repo)?;
            }
            Ok(vec![])
        }
        ["ls-tree"] => {
            for a in args.iter().skip(1) {
                pathspec_inside(facts, a)?;
            }
            Ok(vec![])
        }
        ["am"] => am(words),
        ["bisect", "start"] => Ok(vec![]),
        ["branch"] => branch(words, facts),
        ["checkout"] => checkout(words, facts),
        ["cherry-pick"] | ["revert"] => {
            strategy_ok(words)?;
            Ok(if words.has("abort") || words.has("skip") {
                vec![LossQuery::Resolution]
            } else {
                vec![]
            })
        }
        ["clean"] => {
            for a in &args {
                pathspec_inside(facts, a)?;
            }
            let dry = words.has("dry-run");
            let enforced = facts.config_bool("clean.requireForce") != Some(false);
            if dry || (enforced && !words.has("force")) {
                // A dry run, or git refuses without --force.
                return Ok(vec![]);
            }
            Ok(vec![LossQuery::Clean {
                args: normalise::render(words),
            }])
        }
        ["config", ..] => {
            config(path, words, facts)?;
            Ok(vec![])
        }
        ["fetch"] => {
            let several = words.has("multiple") || words.has("all");
            if several {
                for a in &args {
                    url_ok(a)?;
                }
            } else if let Some((repo, specs)) = args.split_first() {
                url_ok(repo)?;
                for s in specs {
                    refspec_ok(s)?;
                }
            }
            let remotes = if words.has("all") {
                None
            } else if several {
                Some(args.clone())
            } else {
                Some(args.first().cloned().into_iter().collect())
            };
            Ok(pruning(words, facts, remotes))
        }
        ["gc"] => Ok(match words.value("prune") {
            Some(date) if words.has("prune") => vec![LossQuery::Unreachable {
                expire: date.to_owned(),
            }],
            _ => vec![],
        }),
        ["merge"] => {
            strategy_ok(words)?;
            if words.has("abort") {
                return Ok(vec![LossQuery::Resolution]);
            }
            if words.has("continue") || words.has("quit") {
                return Ok(vec![]);
            }
            let overwrite = !words.mentions("overwrite-ignore") || words.has("overwrite-ignore");
            let targets = if args.is_empty() {
                vec!["@{upstream}".to_owned()]
            } else {
                args.clone()
            };
            let mut loss: Vec<LossQuery> = if overwrite {
                targets
                    .into_iter()
                    .map(|t| {
                        LossQuery::Files(FilesQuery {
                            edits: false,
                            untracked: Untracked::IgnoredOnly,
                            ..files(Source::Tree(t), None)
                        })
                    })
                    .collect()
            } else {
                vec![]
            };
            if autostash(words, facts, &["merge.autoStash"]) {
                loss.push(LossQuery::StagedVersions { pathspecs: None });
            }
            Ok(loss)
        }
        ["mv"] => {
            for a in &args {
                pathspec_inside(facts, a)?;
                file_inside(facts, a, "mv")?;
            }
            // A directory named last is moved into, through a link if it is one.
            if let Some(dest) = args.last() {
                opened_inside(facts, dest, "mv")?;
            }
            if words.has("force") && !words.has("dry-run") && args.len() >= 2 {
                let (dest, sources) = args.split_last().expect("two or more");
                return Ok(vec![LossQuery::MoveOnto {
                    sources: sources.to_vec(),
                    dest: dest.clone(),
                }]);
            }
            Ok(vec![])
        }
        ["pull"] => {
            strategy_ok(words)?;
            if let Some(mode) = words.value("rebase")
                && words.has("rebase")
                && matches!(mode, "interactive" | "i")
            {
                return Err(Stop::Refused(Refusal::PullInteractive));
            }
            if let Some((repo, specs)) = args.split_first() {
                url_ok(repo)?;
                for s in specs {
                    refspec_ok(s)?;
                }
            }
            let mut loss = pruning(
                words,
                facts,
                Some(args.first().cloned().into_iter().collect()),
            );
            if autostash(words, facts, &["rebase.autoStash", "merge.autoStash"]) {
                loss.push(LossQuery::StagedVersions { pathspecs: None });
            }
            Ok(loss)
        }
        ["rebase"] => rebase(words, facts),
        ["reflog", "expire" | "delete"] => {
            if words.has("dry-run") {
                return Ok(vec![]);
            }
            let mut args = vec![path[1].to_owned()];
            args.extend(normalise::render(words));
            Ok(vec![LossQuery::Reflog { args }])
        }
        ["remote"] => {
            if !args.is_empty() {
                return Err(Stop::Invalid(Unread::NotASubcommand {
                    word: args[0].to_owned(),
                    sub: "remote".to_owned(),
                }));
            }
            Ok(vec![])
        }
        ["remote", "prune"] => Ok(if words.has("dry-run") {
            vec![]
        } else {
            vec![LossQuery::StaleRemoteRefs {
                remotes: Some(args.clone()),
            }]
        }),
        ["remote", "update"] => Ok(pruning(
            words,
            facts,
            (!args.is_empty()).then(|| args.clone()),
        )),
        ["remote", "remove"] => Ok(args
            .first()
            .map(|r| LossQuery::RemoteRefs { remote: r.clone() })
            .into_iter()
            .collect()),
        ["remote", "add"] => {
            if let Some(url) = args.get(1) {
                url_ok(url)?;
            }
            Ok(vec![])
        }
        ["remote", "set-url"] => {
            if !words.has("delete")
                && let Some(url) = args.get(1)
            {
                url_ok(url)?;
            }
            Ok(vec![])
        }
        ["reset"] => reset(words, facts),
        ["restore"] => restore(words, facts, &args, &paths),
        ["rm"] => {
            let specs: Vec<String> = args.iter().chain(paths.iter()).cloned().collect();
            for a in &args {
                pathspec_inside(facts, a)?;
            }
            Ok(
                if words.has("force") && !words.has("cached") && !words.has("dry-run") {
                    vec![LossQuery::EditedPaths { pathspecs: specs }]
                } else {
                    vec![]
                },
            )
        }
        ["stash", "drop"] => Ok(vec![LossQuery::Stashes {
            which: Some(if args.is_empty() {
                vec!["stash@{0}".to_owned()]
            } else {
                args.clone()
            }),
        }]),
        ["stash", "clear"] => Ok(vec![LossQuery::Stashes { which: None }]),
        ["stash", "pop"] if !words.has("index") => Ok(vec![LossQuery::StashIndex {
            which: args.first().map_or("stash@{0}".to_owned(), |a| a.clone()),
        }]),
        ["stash", "push"] => {
            for a in &args {
                pathspec_inside(facts, a)?;
            }
            Ok(vec![])
        }
        ["switch"] => switch(words, facts),
        ["tag"] => tag(words),
        ["update-ref"] => update_ref(words, facts),
        ["worktree", sub] => worktree(sub, words, facts),
        _ => Ok(vec![]),
    }
}

fn am(words: &[Word]) -> Decision {
    const STATES: &[&str] = &["continue", "resolved", "skip", "abort", "quit", "retry"];
    if !STATES.iter().any(|s| words.has(s)) || !words.args().is_empty() {
        return Err(Stop::Refused(Refusal::AmStates));
    }
    Ok(if words.has("abort") || words.has("skip") {
        vec![LossQuery::Resolution]
    } else {
        vec![]
    })
}

fn branch(words: &[Word], facts: &dyn RepoFacts) -> Decision {
    let args = words.args();
    let remotes = words.has("remotes");
    let force = words.has("force");
    let full = |name: &str| {
        if remotes {
            format!("refs/remotes/{name}")
        } else {
            format!("refs/heads/{name}")
        }
    };
    if words.has("set-upstream-to") || words.has("unset-upstream") || words.has("show-current") {
        return Ok(vec![]);
    }
    if words.has("delete") || words.has("-D") {
        // git checks that a branch is merged unless forced; remote-tracking ones never.
        let forced = words.has("-D") || force || remotes;
        return Ok(if forced && !args.is_empty() {
            vec![LossQuery::Refs {
                names: args.iter().map(|a| full(a)).collect(),
                to: None,
            }]
        } else {
            vec![]
        });
    }
    let moving = words.has("move") || words.has("-M");
    let copying = words.has("copy") || words.has("-C");
    if moving || copying {
        let over = words.has("-M") || words.has("-C") || force;
        let (old, new) = match args.as_slice() {
            [new] => (facts.head_ref(), *new),
            [old, new] => (Some(format!("refs/heads/{old}")), *new),
            _ => return Ok(vec![]),
        };
        return Ok(match (over, old) {
            (true, Some(old)) => vec![reset_branch(new, &old)],
            _ => vec![],
        });
    }
    let listing = words.has("list")
        || args.is_empty()
        || [
            "all",
            "contains",
            "no-contains",
            "with",
            "without",
            "merged",
            "no-merged",
            "points-at",
            "format",
            "sort",
            "column",
        ]
        .iter()
        .any(|o| words.mentions(o));
    if listing {
        return Ok(vec![]);
    }
    // Creating: `branch [-f] <name> [<start>]`.
    Ok(match (force, args.as_slice()) {
        (true, [name]) => vec![reset_branch(name, "HEAD")],
        (true, [name, start]) => vec![reset_branch(name, start)],
        _ => vec![],
    })
}

fn checkout(words: &mut Vec<Word>, facts: &dyn RepoFacts) -> Decision {
    let args = owned(&words.args());
    let paths = owned(&words.paths());
    let force = words.has("force");
    let guess = !words.mentions("guess") || words.has("guess");
    let creating = ["-b", "-B", "orphan", "detach"]
        .iter()
        .any(|o| words.has(o));
    if creating {
        if !paths.is_empty() || args.len() > 1 {
            return Err(Stop::Invalid(Unread::BranchAndPaths));
        }
        let start = args
            .first()
            .map_or("HEAD".to_owned(), |a| switch_target(facts, a, guess));
        let mut loss = if words.has("orphan") && !force {
            vec![]
        } else {
            switching(words, &start, force)
        };
        if let Some(name) = words.value("-B") {
            loss.push(reset_branch(name, &start));
        }
        return Ok(loss);
    }
    // Which of `checkout <branch>`, `checkout [<tree-ish>] -- <paths>` is meant, decided as
    // git decides it, then written with an explicit `--` so git cannot read it otherwise.
    let (tree, pathspecs): (Option<String>, Vec<String>) = if words.has_dashdash() {
        if args.len() > 1 {
            return Err(Stop::Invalid(Unread::OneRevision));
        }
        (args.first().cloned(), paths)
    } else if let Some(first) = args.first() {
        let is_rev = first == "-"
            || facts.is_commit(first)
            || (args.len() == 1 && guess && facts.guessed_remote_branch(first).is_some());
        if is_rev {
            (Some(first.clone()), args[1..].to_vec())
        } else {
            (None, args.clone())
        }
    } else {
        return Ok(vec![]);
    };
    for p in &pathspecs {
        pathspec_inside(facts, p)?;
    }
    words.retain(|w| !matches!(w, Word::Arg(_) | Word::Path(_) | Word::DashDash));
    if let Some(t) = &tree {
        words.push(Word::Arg(t.clone()));
    }
    words.push(Word::DashDash);
    words.extend(pathspecs.iter().cloned().map(Word::Path));
    if pathspecs.is_empty() {
        let Some(t) = tree else { return Ok(vec![]) };
        let target = switch_target(facts, &t, guess);
        return Ok(switching(words, &target, force));
    }
    // Paths: their uncommitted content is replaced from the index or the tree-ish.
    let conflict_side = words.has("ours") || words.has("theirs") || words.has("merge");
    let source = match (&tree, conflict_side) {
        (Some(t), false) => Source::Tree(t.clone()),
        _ => Source::Index,
    };
    let from_tree = matches!(source, Source::Tree(_));
    let overlay = !words.mentions("overlay") || words.has("overlay");
    Ok(vec![LossQuery::Files(FilesQuery {
        index: from_tree,
        untracked: if from_tree {
            Untracked::All
        } else {
            Untracked::None
        },
        overlay,
        ..files(source, Some(pathspecs))
    })])
}

fn config(path: &[&str], words: &[Word], facts: &dyn RepoFacts) -> Result<(), Stop> {
    let args = words.args();
    let outside = || {
        ["global", "system", "file", "blob"]
            .iter()
            .find(|o| words.has(o))
            .map(|o| {
                Stop::Refused(Refusal::ConfigOutside {
                    option: (*o).to_owned(),
                })
            })
    };
    match path {
        ["config", "set"] => {
            if let Some(e) = outside() {
                return Err(e);
            }
            let key = args.first().copied().unwrap_or_default();
            writable_key(key, args.get(1).copied())
        }
        ["config", "unset"] => {
            if let Some(e) = outside() {
                return Err(e);
            }
            writable_key(args.first().copied().unwrap_or_default(), None)
        }
        ["config"] => {
            if let Some(file) = words.value("file")
                && words.has("file")
            {
                opened_inside(facts, file, "--file")?;
            }
            const WRITES: &[&str] = &["add", "replace-all", "unset", "unset-all"];
            const READS: &[&str] = &[
                "get",
                "get-all",
                "get-regexp",
                "get-urlmatch",
                "get-color",
                "get-colorbool",
                "list",
            ];
            let write = WRITES.iter().any(|o| words.has(o));
            let read = READS.iter().any(|o| words.has(o));
            if read && !write {
                return Ok(());
            }
            if !write && args.len() < 2 {
                return Ok(());
            }
            if let Some(e) = outside() {
                return Err(e);
            }
            let unsetting = words.has("unset") || words.has("unset-all");
            let key = args.first().copied().unwrap_or_default();
            writable_key(
                key,
                if unsetting {
                    None
                } else {
                    args.get(1).copied()
                },
            )
        }
        _ => Ok(()),
    }
}

/// The configuration keys work_vcs may write: identity, upstream settings of branches, and
/// how pulling, merging and rebasing behave. Everything else — keys that name programs,
/// hooks, pagers, editors, filters, credential helpers, aliases, URL rewrites, includes, or
/// change what the repository is — is read-only through work_vcs.
pub(crate) const WRITABLE_KEYS: &[&str] = &[
    "user.name",
    "user.email",
    "branch.<name>.remote",
    "branch.<name>.merge",
    "branch.<name>.rebase",
    "branch.<name>.description",
    "pull.rebase",
    "pull.ff",
    "merge.ff",
    "merge.conflictStyle",
    "rebase.autoStash",
    "rebase.autoSquash",
    "rebase.updateRefs",
    "fetch.prune",
    "rerere.enabled",
    "rerere.autoUpdate",
    "color.ui",
    "advice.<name>",
];

pub(super) fn writable_key(key: &str, value: Option<&str>) -> Result<(), Stop> {
    let lower = key.to_ascii_lowercase();
    let (section, rest) = lower.split_once('.').unwrap_or((lower.as_str(), ""));
    let (subsection, name) = match rest.rsplit_once('.') {
        Some((sub, name)) => (Some(sub), name),
        None => (None, rest),
    };
    let allowed = WRITABLE_KEYS.iter().any(|pattern| {
        let p = pattern.to_ascii_lowercase();
        let (ps, prest) = p.split_once('.').unwrap_or((p.as_str(), ""));
        let (psub, pname) = match prest.rsplit_once('.') {
            Some((s, n)) => (Some(s), n),
            None => (None, prest),
        };
        ps == section
            && match (psub, subsection) {
                (None, None) => pname == name || (pname == "<name>" && !name.is_empty()),
                (Some("<name>"), Some(s)) => !s.is_empty() && pname == name,
                _ => false,
            }
    });
    if !allowed {
        return Err(Stop::Refused(Refusal::ConfigKey {
            key: key.to_owned(),
            allowed: WRITABLE_KEYS,
        }));
    }
    if name == "rebase"
        && let Some(v) = value
        && matches!(v.to_ascii_lowercase().as_str(), "interactive" | "i")
    {
        return Err(Stop::Refused(Refusal::ConfigInteractive {
            setting: format!("{key}={v}"),
        }));
    }
    Ok(())
}

fn rebase(words: &[Word], facts: &dyn RepoFacts) -> Decision {
    strategy_ok(words)?;
    if words.has("abort") {
        return Ok(vec![LossQuery::RebaseAbort { skip: false }]);
    }
    if words.has("skip") {
        return Ok(vec![LossQuery::RebaseAbort { skip: true }]);
    }
    if words.has("continue") || words.has("quit") {
        return Ok(vec![]);
    }
    let mut loss = Vec::new();
    if autostash(words, facts, &["rebase.autoStash"]) {
        loss.push(LossQuery::StagedVersions { pathspecs: None });
    }
    let args = words.args();
    let Some(onto) = words.value("onto").filter(|_| words.has("onto")) else {
        return Ok(loss);
    };
    if words.has("root") || words.has("keep-base") {
        return Ok(loss);
    }
    // `rebase --onto <new> <upstream> [<branch>]`: commits of <branch> that are in <upstream>
    // and not in <new> are left behind.
    let upstream = args
        .first()
        .map_or("@{upstream}".to_owned(), |u| (*u).to_owned());
    let (tip, gone) = match args.get(1) {
        Some(branch) => ((*branch).to_owned(), vec![format!("refs/heads/{branch}")]),
        None => ("HEAD".to_owned(), head_gone(facts)),
    };
    loss.push(LossQuery::Commits {
        tip,
        gone,
        kept: vec![onto.to_owned()],
        replayed_from: Some(upstream),
    });
    Ok(loss)
}

fn reset(words: &mut Vec<Word>, facts: &dyn RepoFacts) -> Decision {
    let args = owned(&words.args());
    let paths = owned(&words.paths());
    let (rev, pathspecs): (Option<String>, Vec<String>) = if words.has_dashdash() {
        if args.len() > 1 {
            return Err(Stop::Invalid(Unread::OneRevision));
        }
        (args.first().cloned(), paths)
    } else if let Some(first) = args.first() {
        if facts.is_commit(first) {
            (Some(first.clone()), args[1..].to_vec())
        } else if facts.exists(first) {
            (None, args.clone())
        } else {
            // git refuses an argument that is neither; with `--` it would be a silent no-op.
            return Err(Stop::Invalid(Unread::NeitherRevNorFile {
                word: first.clone(),
            }));
        }
    } else {
        (None, vec![])
    };
    for p in &pathspecs {
        pathspec_inside(facts, p)?;
    }
    words.retain(|w| !matches!(w, Word::Arg(_) | Word::Path(_) | Word::DashDash));
    if let Some(r) = &rev {
        words.push(Word::Arg(r.clone()));
    }
    words.push(Word::DashDash);
    words.extend(pathspecs.iter().cloned().map(Word::Path));
    if !pathspecs.is_empty() {
        // Only the index changes: the files keep their content, staged versions go.
        return Ok(vec![LossQuery::StagedVersions {
            pathspecs: Some(pathspecs),
        }]);
    }
    let target = rev.unwrap_or_else(|| "HEAD".to_owned());
    let mut loss = vec![LossQuery::Refs {
        names: vec![facts.head_ref().unwrap_or_else(|| "HEAD".to_owned())],
        to: Some(target.clone()),
    }];
    if !words.has("soft") && !words.has("hard") {
        // --mixed (the default), --merge and --keep reset the index.
        loss.push(LossQuery::StagedVersions { pathspecs: None });
    }
    if words.has("hard") {
        loss.push(LossQuery::Files(FilesQuery {
            untracked: Untracked::All,
            ..files(Source::Tree(target), None)
        }));
    } else if words.has("merge") {
        loss.push(LossQuery::Files(FilesQuery {
            worktree: false,
            ..files(Source::Tree(target), None)
        }));
    }
    Ok(loss)
}

fn restore(words: &[Word], facts: &dyn RepoFacts, args: &[String], paths: &[String]) -> Decision {
    let specs: Vec<String> = args.iter().chain(paths.iter()).cloned().collect();
    for p in args {
        pathspec_inside(facts, p)?;
    }
    let staged = words.has("staged");
    let worktree = words.has("worktree") || !staged;
    let conflict_side = words.has("ours") || words.has("theirs") || words.has("merge");
    let source = match words.value("source").filter(|_| words.has("source")) {
        Some(s) => Source::Tree(s.to_owned()),
        None if staged => Source::Tree("HEAD".to_owned()),
        None => Source::Index,
    };
    let source = if conflict_side { Source::Index } else { source };
    let from_tree = matches!(source, Source::Tree(_));
    Ok(vec![LossQuery::Files(FilesQuery {
        worktree,
        index: staged,
        untracked: if from_tree && worktree {
            Untracked::All
        } else {
            Untracked::None
        },
        overlay: words.has("overlay"),
        ..files(source, Some(specs))
    })])
}

fn switch(words: &[Word], facts: &dyn RepoFacts) -> Decision {
    let args = words.args();
    let force = words.has("force") || words.has("discard-changes");
    let guess = !words.mentions("guess") || words.has("guess");
    let creating = ["create", "force-create", "orphan", "detach"]
        .iter()
        .any(|o| words.has(o));
    if words.has("orphan") && !force {
        // git refuses to switch to an orphan branch over local changes.
        return Ok(vec![]);
    }
    let target = match args.first() {
        Some(a) => switch_target(facts, a, guess && !creating),
        None if creating => "HEAD".to_owned(),
        None => return Ok(vec![]),
    };
    let mut loss = switching(words, &target, force);
    if let Some(name) = words
        .value("force-create")
        .filter(|_| words.has("force-create"))
    {
        loss.push(reset_branch(name, &target));
    }
    Ok(loss)
}

fn tag(words: &[Word]) -> Decision {
    let args = words.args();
    if words.has("delete") {
        return Ok(vec![LossQuery::Refs {
            names: args.iter().map(|a| format!("refs/tags/{a}")).collect(),
            to: None,
        }]);
    }
    let listing = words.has("list") || args.is_empty();
    if listing {
        return Ok(vec![]);
    }
    let has_message = words.has("message") || words.has("file");
    if words.has("annotate") && !has_message {
        return Err(Stop::Invalid(Unread::AnnotatedTag));
    }
    Ok(match (words.has("force"), args.as_slice()) {
        (true, [name]) => vec![LossQuery::Refs {
            names: vec![format!("refs/tags/{name}")],
            to: Some("HEAD".to_owned()),
        }],
        (true, [name, object]) => vec![LossQuery::Refs {
            names: vec![format!("refs/tags/{name}")],
            to: Some((*object).to_owned()),
        }],
        _ => vec![],
    })
}

fn update_ref(words: &[Word], facts: &dyn RepoFacts) -> Decision {
    let args = words.args();
    let Some(reference) = args.first() else {
        return Ok(vec![]);
    };
    if words.has("-d") && *reference == "HEAD" {
        return Err(Stop::Refused(Refusal::DeleteHead));
    }
    if words.has("-d") && *reference == "refs/stash" {
        return Ok(vec![LossQuery::Stashes { which: None }]);
    }
    if *reference != "HEAD" && !reference.starts_with("refs/") {
        return Err(Stop::Refused(Refusal::NotFullRef {
            reference: (*reference).to_owned(),
        }));
    }
    let names = if *reference == "HEAD" && !words.has("no-deref") {
        vec![facts.head_ref().unwrap_or_else(|| "HEAD".to_owned())]
    } else {
        vec![(*reference).to_owned()]
    };
    if words.has("-d") {
        return Ok(vec![LossQuery::Refs { names, to: None }]);
    }
    Ok(match args.get(1) {
        Some(new) => vec![LossQuery::Refs {
            names,
            to: Some((*new).to_owned()),
        }],
        None => vec![],
    })
}

fn worktree(sub: &str, words: &[Word], facts: &dyn RepoFacts) -> Decision {
    let args = words.args();
    let new_place = |p: &str| -> Result<(), Stop> {
        opened_inside(facts, p, "worktree")?;
        if !facts.is_ignored(p) {
            return Err(Stop::Refused(Refusal::WorktreeNotIgnored {
                path: p.to_owned(),
            }));
        }
        Ok(())
    };
    match sub {
        "add" => {
            let Some(place) = args.first() else {
                return Ok(vec![]);
            };
            new_place(place)?;
            let start = args.get(1).map_or("HEAD", |s| *s);
            Ok(match words.value("-B").filter(|_| words.has("-B")) {
                Some(name) => vec![reset_branch(name, start)],
                None => vec![],
            })
        }
        "move" => {
            if let Some(from) = args.first() {
                opened_inside(facts, from, "worktree")?;
            }
            if let Some(to) = args.get(1) {
                new_place(to)?;
            }
            Ok(vec![])
        }
        "remove" => {
            let Some(place) = args.first() else {
                return Ok(vec![]);
            };
            opened_inside(facts, place, "worktree")?;
            Ok(if words.has("force") {
                vec![LossQuery::Worktree {
                    path: (*place).to_owned(),
                }]
            } else {
                vec![]
            })
        }
        "lock" | "unlock" | "repair" => {
            for a in &args {
                opened_inside(facts, a, "worktree")?;
            }
            Ok(vec![])
        }
        _ => Ok(vec![]),
    }
}
