//! Pathname expansion: a word with an unquoted `*`, `?` or `[…]` is a pattern, and bash runs
//! whichever file names it matches (`/usr/bin/gi? status` runs git; `gi? status` does too in a
//! directory holding a `git`, found on `PATH`).
//!
//! De-quoted words carry the pattern characters bash would expand as stand-ins ([`STAR`],
//! [`ONE`], [`OPEN`], [`CLOSE`]), so a quoted `'*'` stays a literal star; [`literal`] turns a
//! word back into its text. [`matches`] says whether a pattern could expand to a given name,
//! in any letter case (case-insensitive file systems run `GIT` for `git`).

use std::borrow::Cow;

/// An unquoted `*`: any run of characters.
pub const STAR: char = '\u{2}';
/// An unquoted `?`: any one character.
pub const ONE: char = '\u{3}';
/// An unquoted `[`: opens a bracket expression when an unquoted `]` closes it.
pub const OPEN: char = '\u{4}';
/// An unquoted `]`.
pub const CLOSE: char = '\u{5}';

/// Unquoted text with its pattern characters as stand-ins. An extended pattern (`@(git|hg)`,
/// `!(x)`, `?(g)it`, read by bash with `extglob` on, a syntax error without) is read as any run
/// of characters, as is a `)` whose group began in an earlier part of the word.
pub fn pattern(text: &str) -> Cow<'_, str> {
    if !text.contains(['*', '?', '[', ']', ')'])
        && !text.contains("@(")
        && !text.contains("!(")
        && !text.contains("+(")
    {
        return Cow::Borrowed(text);
    }
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        if matches!(c, '?' | '*' | '+' | '@' | '!') && chars.get(i + 1) == Some(&'(') {
            out.push(STAR);
            i = group_end(&chars, i + 1);
            continue;
        }
        out.push(match c {
            '*' | ')' => STAR,
            '?' => ONE,
            '[' => OPEN,
            ']' => CLOSE,
            other => other,
        });
        i += 1;
    }
    Cow::Owned(out)
}

/// The index after the `)` that closes the group opened at `open`, or the end.
fn group_end(chars: &[char], open: usize) -> usize {
    let mut depth = 0usize;
    for (i, &c) in chars.iter().enumerate().skip(open) {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
    }
    chars.len()
}

/// The word as text: stand-ins back to the characters they stand for.
pub fn literal(word: &str) -> Cow<'_, str> {
    if !word.contains([STAR, ONE, OPEN, CLOSE]) {
        return Cow::Borrowed(word);
    }
    Cow::Owned(
        word.chars()
            .map(|c| match c {
                STAR => '*',
                ONE => '?',
                OPEN => '[',
                CLOSE => ']',
                other => other,
            })
            .collect(),
    )
}

/// Whether the word holds a pattern character bash would expand.
pub fn is_pattern(word: &str) -> bool {
    word.contains([STAR, ONE, OPEN])
}

/// The characters of a pattern that stand for themselves (outside bracket expressions).
pub fn literal_part(pattern: &str) -> impl Iterator<Item = char> + '_ {
    let mut in_bracket = false;
    pattern.chars().filter(move |&c| match c {
        STAR | ONE => false,
        OPEN => {
            in_bracket = true;
            false
        }
        CLOSE => {
            in_bracket = false;
            false
        }
        _ => !in_bracket,
    })
}

/// The text before the first pattern character.
pub fn head(pattern: &str) -> &str {
    pattern
        .find([STAR, ONE, OPEN])
        .map_or(pattern, |end| &pattern[..end])
}

/// Whether `pattern` (a word with stand-ins) matches `name`, ignoring ASCII letter case.
pub fn matches(pattern: &str, name: &str) -> bool {
    let pattern: Vec<char> = pattern.chars().collect();
    let name: Vec<char> = name.chars().map(|c| c.to_ascii_lowercase()).collect();
    match_from(&pattern, &name, true)
}

/// Whether `pattern` matches `text` exactly as bash matches it (letter case counts).
pub fn matches_text(pattern: &[char], text: &[char]) -> bool {
    match_from(pattern, text, false)
}

/// `fold`: `name` is lower-case and letter case is ignored. Linear in `name` for each
/// position a `*` is retried from (no exponential backtracking over several stars).
fn match_from(pattern: &[char], name: &[char], fold: bool) -> bool {
    let same = |p: char, c: char| {
        if fold {
            p.to_ascii_lowercase() == c
        } else {
            p == c
        }
    };
    let (mut p, mut n) = (0, 0);
    // After the last `*` seen: where its pattern goes on, and where in `name` it stopped.
    let mut retry: Option<(usize, usize)> = None;
    while n < name.len() {
        let step = match pattern.get(p) {
            Some(&STAR) => {
                retry = Some((p + 1, n));
                p += 1;
                continue;
            }
            Some(&ONE) => Some(p + 1),
            Some(&OPEN) => match bracket(&pattern[p + 1..]) {
                Some((set, after)) => set
                    .admits(name[n], fold)
                    .then(|| pattern.len() - after.len()),
                // No closing `]`: the `[` is itself.
                None => (name[n] == '[').then_some(p + 1),
            },
            Some(&c) => {
                let c = if c == CLOSE { ']' } else { c };
                same(c, name[n]).then_some(p + 1)
            }
            None => None,
        };
        match (step, retry) {
            (Some(next), _) => {
                p = next;
                n += 1;
            }
            (None, Some((after_star, from))) => {
                p = after_star;
                n = from + 1;
                retry = Some((after_star, from + 1));
            }
            (None, None) => return false,
        }
    }
    pattern[p..].iter().all(|&c| c == STAR)
}

/// The fewest characters a pattern matches (each `?`, bracket expression and plain character
/// takes one).
pub fn min_len(pattern: &str) -> usize {
    let chars: Vec<char> = pattern.chars().collect();
    let (mut i, mut count) = (0, 0);
    while let Some(&c) = chars.get(i) {
        i = match c {
            STAR => i + 1,
            OPEN => match bracket(&chars[i + 1..]) {
                Some((_, after)) => chars.len() - after.len(),
                None => i + 1,
            },
            _ => i + 1,
        };
        if c != STAR {
            count += 1;
        }
    }
    count
}

/// A bracket expression's members, as bash reads them after an unquoted `[`.
struct Set {
    negated: bool,
    members: Vec<Member>,
}

enum Member {
    Char(char),
    Range(char, char),
    Class(String),
}

impl Set {
    /// Whether the set admits `c`; with `fold`, in either letter case (`c` is lower-case).
    fn admits(&self, c: char, fold: bool) -> bool {
        let hit = |c: char| {
            self.members.iter().any(|m| match m {
                Member::Char(m) => *m == c,
                Member::Range(lo, hi) => (*lo..=*hi).contains(&c),
                Member::Class(class) => in_class(class, c),
            })
        };
        let found = hit(c) || (fold && hit(c.to_ascii_uppercase()));
        found != self.negated
    }
}

/// The set after an unquoted `[` and what follows its closing `]`, or `None` when no unquoted
/// `]` closes it. A `]` first (after `!` or `^`) is a member; `[:class:]` is a class.
fn bracket(after_open: &[char]) -> Option<(Set, &[char])> {
    let mut i = 0;
    let negated = matches!(after_open.first(), Some('!' | '^'));
    if negated {
        i += 1;
    }
    let mut members = Vec::new();
    let first = i;
    loop {
        let c = *after_open.get(i)?;
        if c == CLOSE && i > first {
            return Some((Set { negated, members }, &after_open[i + 1..]));
        }
        let c = plain(c);
        // `[:class:]`, and `[.x.]` (a collating symbol) or `[=x=]` (an equivalence class),
        // which stand for the character `x` here.
        if c == '['
            && let Some(kind @ (':' | '.' | '=')) = after_open.get(i + 1).map(|&n| plain(n))
            && let Some(len) = after_open[i + 2..]
                .windows(2)
                .position(|w| plain(w[0]) == kind && plain(w[1]) == ']')
        {
            let inner: String = after_open[i + 2..i + 2 + len]
                .iter()
                .copied()
                .map(plain)
                .collect();
            members.push(match kind {
                ':' => Member::Class(inner),
                _ => match inner.chars().collect::<Vec<_>>().as_slice() {
                    [one] => Member::Char(*one),
                    _ => Member::Class(String::new()),
                },
            });
            i += len + 4;
            continue;
        }
        match (
            after_open.get(i + 1).map(|&n| plain(n)),
            after_open.get(i + 2),
        ) {
            (Some('-'), Some(&hi)) if hi != CLOSE => {
                members.push(Member::Range(c, plain(hi)));
                i += 3;
            }
            _ => {
                members.push(Member::Char(c));
                i += 1;
            }
        }
    }
}

/// A stand-in inside a bracket expression is its character.
fn plain(c: char) -> char {
    match c {
        STAR => '*',
        ONE => '?',
        OPEN => '[',
        CLOSE => ']',
        other => other,
    }
}

fn in_class(class: &str, c: char) -> bool {
    match class {
        "alpha" | "upper" | "lower" => c.is_ascii_alphabetic(),
        "alnum" => c.is_ascii_alphanumeric(),
        "word" => c.is_ascii_alphanumeric() || c == '_',
        "digit" => c.is_ascii_digit(),
        "xdigit" => c.is_ascii_hexdigit(),
        "punct" => c.is_ascii_punctuation(),
        "space" => c.is_ascii_whitespace(),
        "blank" => c == ' ' || c == '\t',
        "print" => c.is_ascii_graphic() || c == ' ',
        "graph" => c.is_ascii_graphic(),
        "cntrl" => c.is_ascii_control(),
        // A class bash does not know matches nothing.
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(text: &str) -> String {
        pattern(text).into_owned()
    }

    #[test]
    fn patterns_match_as_bash_expands_them() {
        for (text, name) in [
            ("gi?", "git"),
            ("g*", "git"),
            ("*", "git"),
            ("g[i]t", "git"),
            ("[g]it", "git"),
            ("g[!x]t", "git"),
            ("g[^x]t", "git"),
            ("g[a-z]t", "git"),
            ("g[A-Z]t", "git"),
            ("g[[:alpha:]]t", "git"),
            ("G?T", "git"),
            ("gi*.exe", "git.exe"),
            ("git-up*", "git-upload-pack"),
            ("g[]i]t", "git"),
            ("@(git|hg)", "git"),
            ("?(g)it", "git"),
            ("gi+(t)", "git"),
            ("!(x)", "git"),
            ("g*(i)t", "git"),
            ("g[[.i.]]t", "git"),
            ("g[[=i=]]t", "git"),
        ] {
            assert!(matches(&p(text), name), "{text} should match {name}");
        }
        for (text, name) in [
            ("*.sh", "git"),
            ("gi", "git"),
            ("g?", "git"),
            ("g[!i]t", "git"),
            ("g[xy]t", "git"),
            ("g[[:digit:]]t", "git"),
            // No closing `]`: a literal `[`.
            ("g[it", "git"),
            ("[", "git"),
        ] {
            assert!(!matches(&p(text), name), "{text} should not match {name}");
        }
        assert!(matches(&p("g[it"), "g[it"));
        // Many stars cost no more than one.
        let stars = format!("g{}t", "*".repeat(5_000));
        assert!(matches(&p(&stars), "git"));
        assert!(!matches(&p(&format!("{stars}x")), "git"));
        assert_eq!(min_len(&p("g*[ab]?t")), 4);
    }

    #[test]
    fn quoted_characters_are_not_patterns() {
        // A quoted `?` is kept as itself by the walk, so it matches only itself.
        assert!(!matches("gi?", "git"));
        assert!(!is_pattern("gi?"));
        assert!(is_pattern(&p("gi?")));
        assert_eq!(literal(&p("a*b?[c]")), "a*b?[c]");
        // A lone `]` is no pattern: nothing opens it.
        assert!(!is_pattern(&p("]")));
    }
}
