//! Reading an argument list the way git's parse-options does, before anything is decided.
//!
//! Long options expand from any unambiguous prefix of the command's real option list
//! (`--har` is `--hard`), `--no-` negates (and its own prefixes, `--no-har`), values come
//! attached (`--opt=v`, `-ov`) or in the next argument (`--opt v`, `-o v`) as the option's
//! table says, short flags cluster (`-fd`), `--` ends the options. The port follows
//! `parse_long_opt`, `parse_short_opt` and `parse_options_step` of git's `parse-options.c`.
//!
//! The result renders back into one canonical argument list — full option names, `=` or
//! glued values, clusters split — which is what Butler runs and what an approval is bound to,
//! so git never has to guess what Butler decided about.

use super::allow::Entry;
use super::parsing::{self, DashDash};
use super::table::{Arg, RawOption};

/// One word of a normalised command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Word {
    Opt(OptUse),
    /// A positional argument: before `--`, or after it where git drops `--`
    /// ([`DashDash::Ends`]), or after the first positional where git stops reading options.
    Arg(String),
    /// `--` where the command keeps it ([`DashDash::Separates`]); every word after it is
    /// [`Word::Path`].
    DashDash,
    /// An argument after a kept `--`: a path.
    Path(String),
}

/// An option as given, resolved to git's option.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OptUse {
    /// The option's id (its long name, or `-x`).
    pub id: &'static str,
    /// `--no-…`.
    pub negated: bool,
    pub value: Option<String>,
    pub option: &'static RawOption,
}

impl OptUse {
    /// The canonical spelling.
    pub fn render(&self) -> String {
        let o = self.option;
        if o.number {
            return format!("-{}", self.value.as_deref().unwrap_or_default());
        }
        if o.nodash {
            return o.short.map(String::from).unwrap_or_default();
        }
        // Aliases render as their target (same id, same meaning).
        let long = o.alias_of.or(o.long);
        match (long, o.short) {
            (Some(long), _) => {
                let name = match (self.negated, long.strip_prefix("no-")) {
                    (false, _) => long.to_owned(),
                    (true, Some(positive)) => positive.to_owned(),
                    (true, None) => format!("no-{long}"),
                };
                match &self.value {
                    Some(v) => format!("--{name}={v}"),
                    None => format!("--{name}"),
                }
            }
            (None, Some(c)) => format!("-{c}{}", self.value.as_deref().unwrap_or_default()),
            (None, None) => String::new(),
        }
    }
}

/// Why an argument list cannot be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NormError {
    /// Not an option of this command.
    Unknown { word: String },
    /// A prefix of several options.
    Ambiguous {
        word: String,
        candidates: Vec<String>,
    },
    /// The option needs a value and none follows.
    MissingValue { option: String },
    /// A value was attached to an option that takes none (or to a negation).
    UnexpectedValue { option: String },
    /// `--end-of-options` (positionals that start with `-` are refused, so it is never
    /// needed).
    EndOfOptions,
}

/// A long option that matched, with whether it is negated.
#[derive(Clone, Copy)]
struct Found {
    option: &'static RawOption,
    negated: bool,
}

fn is_alias(a: &RawOption, b: &RawOption) -> bool {
    let target = |o: &RawOption| o.alias_of.or(o.long);
    (a.alias_of.is_some() || b.alias_of.is_some()) && target(a) == target(b)
}

/// git's `parse_long_opt`: `arg` is the word without its leading `--`, up to any `=`.
fn find_long(options: &[&'static RawOption], arg: &str) -> Result<Found, NormError> {
    let mut unset = false;
    let mut no_no = false;
    let mut start = arg;
    if let Some(rest) = start.strip_prefix("no-") {
        start = rest;
        if let Some(rest) = start.strip_prefix("no-") {
            start = rest;
            no_no = true;
        } else {
            unset = true;
        }
    }
    let mut abbrev: Option<Found> = None;
    let mut ambiguous: Option<Found> = None;
    let mut register = |found: Found, abbrev: &mut Option<Found>| {
        if let Some(prev) = *abbrev
            && !(prev.negated == found.negated && is_alias(prev.option, found.option))
        {
            ambiguous = Some(prev);
        }
        *abbrev = Some(found);
    };
    for &o in options {
        let Some(long) = o.long else { continue };
        if o.nodash || o.number {
            continue;
        }
        let (name, opt_unset) = match long.strip_prefix("no-") {
            Some(rest) => (rest, true),
            None if no_no => continue,
            None => (long, false),
        };
        let negated = unset ^ opt_unset;
        if negated && !o.negatable {
            continue;
        }
        if start == name {
            return Ok(Found { option: o, negated });
        }
        if !o.abbrev {
            continue;
        }
        if name.starts_with(start) {
            register(Found { option: o, negated }, &mut abbrev);
        }
        // "negated and abbreviated very much": `--n`, `--no` are prefixes of every negation.
        if o.negatable && "no-".starts_with(arg) {
            register(
                Found {
                    option: o,
                    negated: !opt_unset,
                },
                &mut abbrev,
            );
        }
    }
    let spelled = |f: &Found| {
        let long = f.option.long.unwrap_or_default();
        match (f.negated, long.strip_prefix("no-")) {
            (false, _) => format!("--{long}"),
            (true, Some(p)) => format!("--{p}"),
            (true, None) => format!("--no-{long}"),
        }
    };
    match (abbrev, ambiguous) {
        (Some(a), Some(b)) => Err(NormError::Ambiguous {
            word: format!("--{arg}"),
            candidates: vec![spelled(&b), spelled(&a)],
        }),
        (Some(a), None) => Ok(a),
        (None, _) => Err(NormError::Unknown {
            word: format!("--{arg}"),
        }),
    }
}

/// Reads `tokens` (the words after the command path) against `entry`'s options, with git's
/// rules for `--` and for options after positionals ([`parsing::rules`]).
pub fn parse(entry: &Entry, tokens: &[String]) -> Result<Vec<Word>, NormError> {
    let options: Vec<&'static RawOption> = entry.options().collect();
    let rules = parsing::rules(entry.path);
    let mut words = Vec::with_capacity(tokens.len());
    let mut i = 0;
    // After a kept `--`: paths. After a dropped `--`, or the first positional of a command
    // that stops there: positionals, whatever they look like.
    let mut after_dashdash = false;
    let mut options_done = false;
    while i < tokens.len() {
        let token = &tokens[i];
        i += 1;
        if after_dashdash {
            words.push(Word::Path(token.clone()));
            continue;
        }
        if token == "--" {
            match rules.dashdash {
                // git's grep stops at its pattern and still looks for `--` itself.
                DashDash::Separates => {
                    words.push(Word::DashDash);
                    after_dashdash = true;
                }
                DashDash::Ends if !options_done => options_done = true,
                // After parse-options stopped, or for a command that has no `--`: a word.
                DashDash::Ends | DashDash::Literal => words.push(Word::Arg(token.clone())),
            }
            continue;
        }
        if options_done {
            words.push(Word::Arg(token.clone()));
            continue;
        }
        if token == "--end-of-options" {
            return Err(NormError::EndOfOptions);
        }
        let mut chars = token.chars();
        if let (Some(c), None) = (chars.next(), chars.next())
            && let Some(o) = options.iter().find(|o| o.nodash && o.short == Some(c))
        {
            words.push(Word::Opt(OptUse {
                id: o.id,
                negated: false,
                value: None,
                option: o,
            }));
            continue;
        }
        if let Some(body) = token.strip_prefix("--") {
            let (name, attached) = match body.split_once('=') {
                Some((n, v)) => (n, Some(v.to_owned())),
                None => (body, None),
            };
            let found = find_long(&options, name)?;
            let spelled = || {
                OptUse {
                    id: found.option.id,
                    negated: found.negated,
                    value: None,
                    option: found.option,
                }
                .render()
            };
            let value = if found.negated {
                if attached.is_some() {
                    return Err(NormError::UnexpectedValue { option: spelled() });
                }
                None
            } else {
                match found.option.arg {
                    Arg::None => {
                        if attached.is_some() {
                            return Err(NormError::UnexpectedValue { option: spelled() });
                        }
                        None
                    }
                    Arg::Optional => attached,
                    Arg::Required | Arg::RequiredUnlessLast => match attached {
                        Some(v) => Some(v),
                        None if i < tokens.len() => {
                            i += 1;
                            Some(tokens[i - 1].clone())
                        }
                        None if found.option.arg == Arg::RequiredUnlessLast => None,
                        None => return Err(NormError::MissingValue { option: spelled() }),
                    },
                }
            };
            words.push(Word::Opt(OptUse {
                id: found.option.id,
                negated: found.negated,
                value,
                option: found.option,
            }));
            continue;
        }
        if let Some(cluster) = token.strip_prefix('-')
            && !cluster.is_empty()
        {
            let mut rest = cluster;
            while let Some(c) = rest.chars().next() {
                let after = &rest[c.len_utf8()..];
                if let Some(o) = options
                    .iter()
                    .find(|o| o.short == Some(c) && !o.nodash && !o.number)
                {
                    let (value, next_rest) = match o.arg {
                        Arg::None => (None, after),
                        Arg::Optional => ((!after.is_empty()).then(|| after.to_owned()), ""),
                        Arg::Required | Arg::RequiredUnlessLast => {
                            if !after.is_empty() {
                                (Some(after.to_owned()), "")
                            } else if i < tokens.len() {
                                i += 1;
                                (Some(tokens[i - 1].clone()), "")
                            } else if o.arg == Arg::RequiredUnlessLast {
                                (None, "")
                            } else {
                                return Err(NormError::MissingValue {
                                    option: format!("-{c}"),
                                });
                            }
                        }
                    };
                    words.push(Word::Opt(OptUse {
                        id: o.id,
                        negated: false,
                        value,
                        option: o,
                    }));
                    rest = next_rest;
                    continue;
                }
                if c.is_ascii_digit()
                    && let Some(o) = options.iter().find(|o| o.number)
                {
                    let end = rest
                        .find(|ch: char| !ch.is_ascii_digit())
                        .unwrap_or(rest.len());
                    words.push(Word::Opt(OptUse {
                        id: o.id,
                        negated: false,
                        value: Some(rest[..end].to_owned()),
                        option: o,
                    }));
                    rest = &rest[end..];
                    continue;
                }
                return Err(NormError::Unknown {
                    word: format!("-{c}"),
                });
            }
            continue;
        }
        words.push(Word::Arg(token.clone()));
        if rules.stops_at_non_option {
            options_done = true;
        }
    }
    Ok(words)
}

/// Renders normalised words back into arguments.
pub fn render(words: &[Word]) -> Vec<String> {
    words
        .iter()
        .map(|w| match w {
            Word::Opt(o) => o.render(),
            Word::Arg(a) | Word::Path(a) => a.clone(),
            Word::DashDash => "--".to_owned(),
        })
        .collect()
}

/// Questions about normalised words, as the decisions ask them.
pub trait Words {
    /// How many times option `id` is in effect (each use counts; a negation resets).
    fn count(&self, id: &str) -> usize;
    /// Whether option `id` is in effect.
    fn has(&self, id: &str) -> bool {
        self.count(id) > 0
    }
    /// Whether option `id` appears at all (even negated).
    fn mentions(&self, id: &str) -> bool;
    /// The value option `id` ends up with (the last one given; `None` after a negation).
    fn value(&self, id: &str) -> Option<&str>;
    /// Every value given to option `id` since its last negation (list options).
    fn values(&self, id: &str) -> Vec<&str>;
    /// Positional arguments before `--`.
    fn args(&self) -> Vec<&str>;
    /// Arguments after `--`.
    fn paths(&self) -> Vec<&str>;
    fn has_dashdash(&self) -> bool;
}

impl Words for [Word] {
    fn count(&self, id: &str) -> usize {
        let mut n = 0;
        for w in self {
            if let Word::Opt(o) = w
                && o.id == id
            {
                n = if o.negated { 0 } else { n + 1 };
            }
        }
        n
    }

    fn mentions(&self, id: &str) -> bool {
        self.iter().any(|w| matches!(w, Word::Opt(o) if o.id == id))
    }

    fn value(&self, id: &str) -> Option<&str> {
        let mut v = None;
        for w in self {
            if let Word::Opt(o) = w
                && o.id == id
            {
                v = if o.negated { None } else { o.value.as_deref() };
            }
        }
        v
    }

    fn values(&self, id: &str) -> Vec<&str> {
        let mut v = Vec::new();
        for w in self {
            if let Word::Opt(o) = w
                && o.id == id
            {
                if o.negated {
                    v.clear();
                } else if let Some(value) = &o.value {
                    v.push(value.as_str());
                }
            }
        }
        v
    }

    fn args(&self) -> Vec<&str> {
        self.iter()
            .filter_map(|w| match w {
                Word::Arg(a) => Some(a.as_str()),
                _ => None,
            })
            .collect()
    }

    fn paths(&self) -> Vec<&str> {
        self.iter()
            .filter_map(|w| match w {
                Word::Path(a) => Some(a.as_str()),
                _ => None,
            })
            .collect()
    }

    fn has_dashdash(&self) -> bool {
        self.contains(&Word::DashDash)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vcs_policy::allow;

    fn norm(path: &[&str], args: &str) -> Result<Vec<String>, NormError> {
        let entry = allow::entry(path).expect("allowed path");
        let tokens: Vec<String> = args.split_whitespace().map(str::to_owned).collect();
        parse(entry, &tokens).map(|w| render(&w))
    }

    fn ok(path: &[&str], args: &str) -> String {
        norm(path, args).expect(args).join(" ")
    }

    #[test]
    fn long_prefixes_expand_like_git() {
        assert_eq!(ok(&["reset"], "--har"), "--hard");
        assert_eq!(ok(&["reset"], "--ha HEAD"), "--hard HEAD");
        assert_eq!(ok(&["branch"], "--delete --forc x"), "--delete --force x");
        assert!(matches!(
            norm(&["reset"], "--m"),
            Err(NormError::Ambiguous { .. })
        ));
        assert!(matches!(
            norm(&["reset"], "--frobnicate"),
            Err(NormError::Unknown { .. })
        ));
    }

    #[test]
    fn negations_and_their_prefixes() {
        assert_eq!(ok(&["checkout"], "--no-overl"), "--no-overlay");
        assert_eq!(ok(&["merge"], "--verify"), "--verify");
        assert_eq!(ok(&["merge"], "--no-verify"), "--no-verify");
        assert_eq!(ok(&["merge"], "--no-no-verify"), "--verify");
        assert!(matches!(
            norm(&["merge"], "--no"),
            Err(NormError::Ambiguous { .. })
        ));
        assert!(matches!(
            norm(&["merge"], "--no-ff-only"),
            Err(NormError::Unknown { .. })
        ));
        assert!(matches!(
            norm(&["checkout"], "--no-force=x"),
            Err(NormError::UnexpectedValue { .. })
        ));
    }

    #[test]
    fn values_attached_separate_glued() {
        assert_eq!(ok(&["checkout"], "-b topic"), "-btopic");
        assert_eq!(ok(&["checkout"], "-btopic"), "-btopic");
        assert_eq!(ok(&["checkout"], "-fbtopic"), "--force -btopic");
        assert_eq!(ok(&["merge"], "-m msg x"), "--message=msg x");
        assert_eq!(ok(&["merge"], "--mess=msg x"), "--message=msg x");
        assert_eq!(ok(&["merge"], "--message msg x"), "--message=msg x");
        assert_eq!(ok(&["clean"], "-fdx"), "--force -d -x");
        assert_eq!(ok(&["gc"], "--prune now"), "--prune now");
        assert_eq!(ok(&["gc"], "--prune=now"), "--prune=now");
        assert_eq!(ok(&["branch"], "--contains"), "--contains");
        assert!(matches!(
            norm(&["merge"], "-m"),
            Err(NormError::MissingValue { .. })
        ));
    }

    #[test]
    fn dashdash_numbers_and_nodash() {
        assert_eq!(
            ok(&["checkout"], "main -- -f x"),
            "main -- -f x",
            "after -- nothing is an option"
        );
        assert_eq!(ok(&["grep"], "-3 ( -e a ) x"), "-3 ( -ea ) x");
        assert_eq!(ok(&["reflog", "show"], "-n5"), "--max-count=5");
        assert_eq!(ok(&["reflog", "show"], "-5"), "-5");
        assert_eq!(
            ok(&["checkout"], "-2 x"),
            "--ours x",
            "a digit option before -NUM"
        );
        assert!(matches!(
            norm(&["reset"], "--end-of-options x"),
            Err(NormError::EndOfOptions)
        ));
    }

    #[test]
    fn exact_only_options_do_not_expand() {
        assert!(matches!(
            norm(&["rev-parse"], "--show-top"),
            Err(NormError::Unknown { .. })
        ));
        assert_eq!(ok(&["rev-parse"], "--show-toplevel"), "--show-toplevel");
        assert_eq!(ok(&["rev-list"], "--no-merges HEAD"), "--no-merges HEAD");
    }

    #[test]
    fn aliases_render_as_their_target_and_are_not_ambiguous() {
        assert_eq!(ok(&["cat-file"], "--mailmap -p x"), "--use-mailmap -p x");
    }

    #[test]
    fn words_answer_the_last_state() {
        let entry = allow::entry(&["clean"]).expect("clean");
        let tokens: Vec<String> = ["-f", "-f", "--no-force", "-f", "x"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let w = parse(entry, &tokens).expect("parses");
        assert_eq!(w.count("force"), 1);
        assert_eq!(w.args(), vec!["x"]);
    }
}
