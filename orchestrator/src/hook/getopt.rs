//! A program's own options, split from its operands the way getopt and getopt_long split them.
//!
//! A [`Grammar`] is written like the program's source declares it: getopt's option string
//! (`"+n:"`: `n` takes a value; `"i::"`: `i` takes a value only when attached) and the
//! getopt_long table. Parsing follows glibc: short options cluster (`-Eu root`), a short
//! option's value may be attached (`-n5`, `-I{}`) or the next word; long options take
//! `--name=value` or `--name value` and may be shortened to any unambiguous prefix
//! (`--adj=5`); `--` ends the options; with `+` (POSIX order) the first operand ends them,
//! otherwise options and operands mix.
//!
//! An option the grammar does not know is taken both ways — as a flag and as taking the next
//! word as its value — so every reading the real program could have is considered (the hook
//! then blocks if any of them runs git). The number of readings is bounded; past the bound, a
//! last reading says that every later word may be the first operand
//! ([`Parsed::operands_from_any`]).

/// Whether an option takes a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arg {
    /// No value.
    No,
    /// A value: attached (`-n5`, `--adjustment=5`) or the next word.
    Required,
    /// A value only when attached (`-i{}`, `--replace={}`): getopt's `::`.
    Optional,
    /// This many values, each a word of its own (bubblewrap's `--bind SRC DEST`).
    Words(usize),
}

/// One long option: its name, whether it takes a value, and the key it is reported under
/// (usually its short letter, so that `-u` and `--user` read the same).
#[derive(Debug, Clone, Copy)]
pub struct Long {
    pub name: &'static str,
    pub arg: Arg,
    pub key: &'static str,
}

/// A long option without a value.
pub const fn flag(name: &'static str, key: &'static str) -> Long {
    Long {
        name,
        arg: Arg::No,
        key,
    }
}

/// A long option with a value.
pub const fn value(name: &'static str, key: &'static str) -> Long {
    Long {
        name,
        arg: Arg::Required,
        key,
    }
}

/// A long option with a value only when attached (`--name=value`).
pub const fn optional(name: &'static str, key: &'static str) -> Long {
    Long {
        name,
        arg: Arg::Optional,
        key,
    }
}

/// A long option followed by `n` value words.
pub const fn words(name: &'static str, n: usize, key: &'static str) -> Long {
    Long {
        name,
        arg: Arg::Words(n),
        key,
    }
}

/// Where options may stand relative to operands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// The first operand ends the options (getopt's leading `+`, POSIX, BSD).
    Posix,
    /// Options and operands mix (GNU getopt's default permutation).
    Permute,
    /// Both readings are considered (a program whose GNU and BSD versions differ).
    Either,
}

/// How an option missing from the grammar is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unknown {
    /// It may or may not take the next word as its value: both readings are considered.
    Either,
    /// It never takes a separate value (the program only accepts `--name=value`).
    Flag,
}

/// A program's option grammar.
#[derive(Debug, Clone, Copy)]
pub struct Grammar {
    /// getopt's option string: a letter, then `:` for a value or `::` for an attached-only
    /// value. A leading `+` means [`Order::Posix`] unless `order` says otherwise.
    pub short: &'static str,
    pub long: &'static [Long],
    pub order: Order,
    /// getopt_long_only: `-name` is tried as a long option before as a cluster (`gdb -ex`).
    pub single_dash_long: bool,
    /// `-NUM` (also `--NUM`, `-+NUM`) is an option of its own, as in `nice -10`.
    pub numeric: bool,
    pub unknown: Unknown,
}

impl Grammar {
    /// A grammar from getopt's option string and the long-option table, in the order the
    /// string says (`+` → POSIX, else permuting), unknown options read both ways.
    pub const fn new(short: &'static str, long: &'static [Long]) -> Self {
        let posix = !short.is_empty() && short.as_bytes()[0] == b'+';
        Self {
            short,
            long,
            order: if posix { Order::Posix } else { Order::Permute },
            single_dash_long: false,
            numeric: false,
            unknown: Unknown::Either,
        }
    }

    pub const fn order(mut self, order: Order) -> Self {
        self.order = order;
        self
    }

    pub const fn single_dash_long(mut self) -> Self {
        self.single_dash_long = true;
        self
    }

    pub const fn numeric(mut self) -> Self {
        self.numeric = true;
        self
    }

    pub const fn unknown_flags(mut self) -> Self {
        self.unknown = Unknown::Flag;
        self
    }

    fn short_arg(&self, c: char) -> Option<(&'static str, Arg)> {
        if c == ':' || c == '+' {
            return None;
        }
        let s = self.short;
        let pos = s.find(c)?;
        let key = &s[pos..pos + c.len_utf8()];
        let rest = &s[pos + c.len_utf8()..];
        let arg = if rest.starts_with("::") {
            Arg::Optional
        } else if rest.starts_with(':') {
            Arg::Required
        } else {
            Arg::No
        };
        Some((key, arg))
    }

    /// The long option `name` stands for: an exact name, or a prefix of names that all mean
    /// the same option.
    fn long_option(&self, name: &str) -> Option<&'static Long> {
        if name.is_empty() {
            return None;
        }
        if let Some(exact) = self.long.iter().find(|l| l.name == name) {
            return Some(exact);
        }
        let mut matches = self.long.iter().filter(|l| l.name.starts_with(name));
        let first = matches.next()?;
        matches
            .all(|l| l.key == first.key && l.arg == first.arg)
            .then_some(first)
    }
}

/// One option as given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Opt {
    /// The option's key (`"u"` for `-u` and `--user`); `"?"` for an option the grammar does not
    /// know; `"#"` for a numeric option (`-10`).
    pub key: &'static str,
    pub value: Option<String>,
    /// The words this option occupies in the arguments: `first..end`.
    pub words: (usize, usize),
}

/// One reading of a command line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Parsed {
    pub options: Vec<Opt>,
    /// The operands, in order (after `--`, or from the first operand on in POSIX order).
    pub operands: Vec<String>,
    /// A value was missing at the end: the program would refuse to run.
    pub incomplete: bool,
    /// Too many unknown options to follow every reading: any word from this index of the
    /// arguments on may be the first operand.
    pub operands_from_any: Option<usize>,
}

impl Parsed {
    /// Whether any of `keys` was given.
    pub fn has(&self, keys: &[&str]) -> bool {
        self.options.iter().any(|o| keys.contains(&o.key))
    }

    /// The values of the options with one of `keys`, in order.
    pub fn values<'a>(&'a self, keys: &'a [&str]) -> impl Iterator<Item = &'a str> + 'a {
        self.options
            .iter()
            .filter(move |o| keys.contains(&o.key))
            .filter_map(|o| o.value.as_deref())
    }

    /// The value of the last option with one of `keys`.
    pub fn value(&self, keys: &[&str]) -> Option<&str> {
        self.options
            .iter()
            .rev()
            .find(|o| keys.contains(&o.key))
            .and_then(|o| o.value.as_deref())
    }
}

/// Readings considered for one command line before giving up on precision.
const MAX_READINGS: usize = 16;

/// Every reading of `args` (the words after the program name) under `grammar`; usually one.
pub fn parse(grammar: &Grammar, args: &[String]) -> Vec<Parsed> {
    let orders: &[bool] = match grammar.order {
        Order::Posix => &[true],
        Order::Permute => &[false],
        Order::Either => &[true, false],
    };
    let mut out = Vec::new();
    for &posix in orders {
        let mut parser = Parser {
            grammar,
            args,
            posix,
            readings: Vec::new(),
            budget: MAX_READINGS,
            gave_up: false,
        };
        parser.run(0, 0, Parsed::default());
        out.extend(parser.readings);
    }
    out
}

struct Parser<'a> {
    grammar: &'a Grammar,
    args: &'a [String],
    posix: bool,
    readings: Vec<Parsed>,
    budget: usize,
    gave_up: bool,
}

impl Parser<'_> {
    /// Parse from word `i`, character `at` within it (0: the word's start).
    fn run(&mut self, mut i: usize, mut at: usize, mut parsed: Parsed) {
        let args = self.args;
        while i < args.len() {
            let word = args[i].as_str();
            if at > 0 {
                match self.cluster(i, at, &mut parsed) {
                    Some(next) => {
                        i = next;
                        at = 0;
                        continue;
                    }
                    None => return,
                }
            }
            if word == "--" {
                parsed.operands.extend(args[i + 1..].iter().cloned());
                break;
            }
            if word.len() < 2 || !word.starts_with('-') {
                if self.posix {
                    parsed.operands.extend(args[i..].iter().cloned());
                    break;
                }
                parsed.operands.push(word.to_owned());
                i += 1;
                continue;
            }
            if self.grammar.numeric && is_numeric_option(word) {
                parsed.options.push(Opt {
                    key: "#",
                    value: Some(word.to_owned()),
                    words: (i, i + 1),
                });
                i += 1;
                continue;
            }
            if let Some(body) = word.strip_prefix("--") {
                match self.long(i, body, &mut parsed) {
                    Some(next) => i = next,
                    None => return,
                }
                continue;
            }
            if self.grammar.single_dash_long {
                // glibc's getopt_long_only: `-x` for a short option `x` stays short; anything
                // longer is tried as a long option first.
                let body = &word[1..];
                let name = body.split_once('=').map_or(body, |(n, _)| n);
                let first = body.chars().next();
                let single_short = body.chars().count() == 1
                    && first.and_then(|c| self.grammar.short_arg(c)).is_some();
                let short_known = first.and_then(|c| self.grammar.short_arg(c)).is_some();
                if !single_short && (self.grammar.long_option(name).is_some() || !short_known) {
                    match self.long(i, body, &mut parsed) {
                        Some(next) => i = next,
                        None => return,
                    }
                    continue;
                }
            }
            at = 1;
        }
        self.readings.push(parsed);
    }

    /// A long option (`body` is the word without its dashes); returns the next word's index,
    /// or `None` when this reading ended (branched or incomplete).
    fn long(&mut self, i: usize, body: &str, parsed: &mut Parsed) -> Option<usize> {
        let args = self.args;
        let (name, attached) = match body.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (body, None),
        };
        let Some(long) = self.grammar.long_option(name) else {
            return self.unknown(i, attached.map(str::to_owned), parsed);
        };
        let (value, next) = match (long.arg, attached) {
            (Arg::No | Arg::Optional, _) => (attached.map(str::to_owned), i + 1),
            (Arg::Required, Some(v)) => (Some(v.to_owned()), i + 1),
            (Arg::Required, None) => match args.get(i + 1) {
                Some(v) => (Some(v.clone()), i + 2),
                None => return self.incomplete(parsed),
            },
            (Arg::Words(n), _) => {
                let n = n - usize::from(attached.is_some());
                if i + n >= args.len() {
                    return self.incomplete(parsed);
                }
                let mut values: Vec<String> = attached.map(str::to_owned).into_iter().collect();
                values.extend(args[i + 1..=i + n].iter().cloned());
                (Some(values.join("\n")), i + 1 + n)
            }
        };
        parsed.options.push(Opt {
            key: long.key,
            value,
            words: (i, next),
        });
        Some(next)
    }

    /// The short options of word `i` from character `at`; returns the next word's index, or
    /// `None` when this reading ended.
    fn cluster(&mut self, i: usize, at: usize, parsed: &mut Parsed) -> Option<usize> {
        let args = self.args;
        let word = args[i].as_str();
        let mut pos = at;
        while let Some(c) = word[pos..].chars().next() {
            let rest_at = pos + c.len_utf8();
            let rest = &word[rest_at..];
            let Some((key, arg)) = self.grammar.short_arg(c) else {
                if self.grammar.unknown == Unknown::Either && self.budget > 0 {
                    // The reading where it takes a value (the rest of the word or the next).
                    self.budget -= 1;
                    let mut taking = parsed.clone();
                    let next = if rest.is_empty() { i + 2 } else { i + 1 };
                    if next <= args.len() {
                        taking.options.push(Opt {
                            key: "?",
                            value: Some(if rest.is_empty() {
                                args[i + 1].clone()
                            } else {
                                rest.to_owned()
                            }),
                            words: (i, next),
                        });
                        self.run(next, 0, taking);
                    }
                } else if self.grammar.unknown == Unknown::Either {
                    self.give_up(i + 1, parsed);
                }
                parsed.options.push(Opt {
                    key: "?",
                    value: None,
                    words: (i, i + 1),
                });
                pos = rest_at;
                continue;
            };
            match arg {
                Arg::No => {
                    parsed.options.push(Opt {
                        key,
                        value: None,
                        words: (i, i + 1),
                    });
                    pos = rest_at;
                }
                Arg::Optional => {
                    parsed.options.push(Opt {
                        key,
                        value: (!rest.is_empty()).then(|| rest.to_owned()),
                        words: (i, i + 1),
                    });
                    return Some(i + 1);
                }
                Arg::Required | Arg::Words(_) => {
                    if !rest.is_empty() {
                        parsed.options.push(Opt {
                            key,
                            value: Some(rest.to_owned()),
                            words: (i, i + 1),
                        });
                        return Some(i + 1);
                    }
                    let Some(value) = args.get(i + 1) else {
                        return self.incomplete(parsed);
                    };
                    parsed.options.push(Opt {
                        key,
                        value: Some(value.clone()),
                        words: (i, i + 2),
                    });
                    return Some(i + 2);
                }
            }
        }
        Some(i + 1)
    }

    /// A long option the grammar does not know (word `i`).
    fn unknown(
        &mut self,
        i: usize,
        attached: Option<String>,
        parsed: &mut Parsed,
    ) -> Option<usize> {
        if attached.is_none() && self.grammar.unknown == Unknown::Either {
            if self.budget > 0 {
                self.budget -= 1;
                if let Some(value) = self.args.get(i + 1) {
                    let mut taking = parsed.clone();
                    taking.options.push(Opt {
                        key: "?",
                        value: Some(value.clone()),
                        words: (i, i + 2),
                    });
                    self.run(i + 2, 0, taking);
                }
            } else {
                self.give_up(i + 1, parsed);
            }
        }
        parsed.options.push(Opt {
            key: "?",
            value: attached,
            words: (i, i + 1),
        });
        Some(i + 1)
    }

    fn incomplete(&mut self, parsed: &mut Parsed) -> Option<usize> {
        let mut done = std::mem::take(parsed);
        done.incomplete = true;
        self.readings.push(done);
        None
    }

    /// Too many readings: one more says that every word from `from` on may be the first
    /// operand (the consumer looks at them without a reading each).
    fn give_up(&mut self, from: usize, parsed: &Parsed) {
        if self.gave_up {
            return;
        }
        self.gave_up = true;
        self.readings.push(Parsed {
            options: parsed.options.clone(),
            operands: Vec::new(),
            incomplete: false,
            operands_from_any: Some(from),
        });
    }
}

/// `-10`, `--5`, `-+3`: nice's legacy adjustment.
fn is_numeric_option(word: &str) -> bool {
    let digits = word
        .strip_prefix("--")
        .or_else(|| word.strip_prefix("-+"))
        .or_else(|| word.strip_prefix('-'))
        .unwrap_or("");
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SUDO_LIKE: Grammar = Grammar::new(
        "+Eu:h::n",
        &[
            value("user", "u"),
            flag("preserve-env", "E"),
            value("chdir", "D"),
            value("close-from", "C"),
            flag("non-interactive", "n"),
        ],
    );

    fn split(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_owned).collect()
    }

    fn operands(g: &Grammar, s: &str) -> Vec<Vec<String>> {
        parse(g, &split(s))
            .into_iter()
            .map(|p| p.operands)
            .collect()
    }

    #[test]
    fn clusters_attached_values_and_prefixes() {
        assert_eq!(
            operands(&SUDO_LIKE, "-Eu root git status"),
            [split("git status")]
        );
        assert_eq!(operands(&SUDO_LIKE, "-uroot git"), [split("git")]);
        assert_eq!(operands(&SUDO_LIKE, "--us root git"), [split("git")]);
        assert_eq!(operands(&SUDO_LIKE, "--user=root git"), [split("git")]);
        assert_eq!(operands(&SUDO_LIKE, "-h git"), [split("git")]);
        assert_eq!(operands(&SUDO_LIKE, "-hhost git"), [split("git")]);
        assert_eq!(operands(&SUDO_LIKE, "-- -E git"), [split("-E git")]);
        assert_eq!(operands(&SUDO_LIKE, "ls -E git"), [split("ls -E git")]);
        let p = &parse(&SUDO_LIKE, &split("-u"))[0];
        assert!(p.incomplete);
    }

    #[test]
    fn ambiguous_and_unknown_options_are_read_both_ways() {
        // `--c` could be --chdir or --close-from: the program refuses it; both readings count.
        let got = operands(&SUDO_LIKE, "--c x git");
        assert!(got.contains(&split("git")), "{got:?}");
        assert!(got.contains(&split("x git")), "{got:?}");
        let got = operands(&SUDO_LIKE, "-Z git status");
        assert!(got.contains(&split("git status")), "{got:?}");
        assert!(got.contains(&split("status")), "{got:?}");
        let got = operands(&SUDO_LIKE, "-nZq git");
        assert!(got.contains(&split("git")), "{got:?}");
    }

    #[test]
    fn many_unknown_options_still_consider_every_word() {
        let line = format!("{} git status", "-Z ".repeat(40));
        let readings = parse(&SUDO_LIKE, &split(&line));
        assert!(
            readings.len() <= MAX_READINGS + 2,
            "{} readings",
            readings.len()
        );
        let from = readings.iter().find_map(|p| p.operands_from_any);
        assert!(from.is_some_and(|f| f < 40), "{from:?}");
    }

    #[test]
    fn permuting_order_collects_operands_around_options() {
        const G: Grammar = Grammar::new("c:l", &[value("command", "c")]);
        let p = &parse(&G, &split("bob -l -c cmd extra"))[0];
        assert_eq!(p.operands, split("bob extra"));
        assert_eq!(p.value(&["c"]), Some("cmd"));
    }

    #[test]
    fn numeric_options() {
        const G: Grammar = Grammar::new("+n:", &[value("adjustment", "n")]).numeric();
        for line in [
            "-10 git",
            "--5 git",
            "-+3 git",
            "-n 5 git",
            "-n5 git",
            "--adj=5 git",
        ] {
            assert_eq!(operands(&G, line), [split("git")], "{line}");
        }
    }

    #[test]
    fn long_options_with_several_words() {
        const G: Grammar = Grammar::new("+", &[words("bind", 2, "bind"), value("chdir", "chdir")]);
        assert_eq!(operands(&G, "--bind / / --chdir /tmp git"), [split("git")]);
    }

    #[test]
    fn single_dash_long_options() {
        const G: Grammar =
            Grammar::new("+x:q", &[value("ex", "ex"), flag("batch", "batch")]).single_dash_long();
        let p = &parse(&G, &split("-batch -ex run -q prog"))[0];
        assert_eq!(p.operands, split("prog"));
        assert_eq!(p.value(&["ex"]), Some("run"));
    }
}
