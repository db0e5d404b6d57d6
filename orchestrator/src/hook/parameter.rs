//! What bash's parameter operations make of a value known before the command runs:
//! `${x#pat}`, `${x##pat}`, `${x%pat}`, `${x%%pat}`, `${x:offset:length}` and
//! `${x/pat/text}` (with `//`, `/#`, `/%`). Patterns are words with [`super::glob`]'s stand-ins,
//! matched with letter case as bash matches them. Values longer than [`MAX_VALUE`] (or
//! patterns longer than [`MAX_PATTERN`]) are left to run time: the work is quadratic.

use super::glob;

/// The longest value worked on, in characters.
pub const MAX_VALUE: usize = 64;
/// The longest pattern worked with, in characters.
pub const MAX_PATTERN: usize = 32;

/// Whether `value` and `pattern` are small enough to work on.
pub fn workable(value: &str, pattern: &str) -> bool {
    value.chars().count() <= MAX_VALUE && pattern.chars().count() <= MAX_PATTERN
}

/// Which end `${x#…}`/`${x%…}` removes from, and whether the longest match.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Removal {
    ShortestPrefix,
    LongestPrefix,
    ShortestSuffix,
    LongestSuffix,
}

/// `${x#pat}` and its kin.
pub fn remove(value: &str, pattern: &str, removal: Removal) -> String {
    let text: Vec<char> = value.chars().collect();
    let pattern: Vec<char> = pattern.chars().collect();
    let n = text.len();
    let prefix = matches!(removal, Removal::ShortestPrefix | Removal::LongestPrefix);
    // Cut points in the order bash tries them: the first that matches wins.
    let points: Vec<usize> = match removal {
        Removal::ShortestPrefix | Removal::LongestSuffix => (0..=n).collect(),
        Removal::LongestPrefix | Removal::ShortestSuffix => (0..=n).rev().collect(),
    };
    points
        .into_iter()
        .find(|&at| {
            let part = if prefix { &text[..at] } else { &text[at..] };
            glob::matches_text(&pattern, part)
        })
        .map(|at| {
            let kept = if prefix { &text[at..] } else { &text[..at] };
            kept.iter().collect::<String>()
        })
        .unwrap_or_else(|| value.to_owned())
}

/// Where `${x/pat/text}` replaces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Replace {
    First,
    All,
    Prefix,
    Suffix,
}

/// `${x/pat/text}` and its kin: the longest match at each place, as bash takes it.
pub fn replace(value: &str, pattern: &str, with: &str, how: Replace) -> String {
    if pattern.is_empty() {
        // An empty pattern matches at the start (`/#`) and the end (`/%`), nowhere else.
        return match how {
            Replace::Prefix => format!("{with}{value}"),
            Replace::Suffix => format!("{value}{with}"),
            Replace::First | Replace::All => value.to_owned(),
        };
    }
    let text: Vec<char> = value.chars().collect();
    let pattern: Vec<char> = pattern.chars().collect();
    let n = text.len();
    let longest_at = |start: usize| {
        (start..=n)
            .rev()
            .find(|&end| glob::matches_text(&pattern, &text[start..end]))
    };
    match how {
        Replace::Prefix => match longest_at(0) {
            Some(end) => format!("{with}{}", text[end..].iter().collect::<String>()),
            None => value.to_owned(),
        },
        Replace::Suffix => {
            match (0..=n).find(|&start| glob::matches_text(&pattern, &text[start..])) {
                Some(start) => format!("{}{with}", text[..start].iter().collect::<String>()),
                None => value.to_owned(),
            }
        }
        Replace::First | Replace::All => {
            let mut out = String::new();
            let mut at = 0;
            let mut replaced = false;
            while at < n {
                match longest_at(at).filter(|&end| end > at && !(replaced && how == Replace::First))
                {
                    Some(end) => {
                        out.push_str(with);
                        at = end;
                        replaced = true;
                    }
                    None => {
                        out.push(text[at]);
                        at += 1;
                    }
                }
            }
            out
        }
    }
}

/// `${x:offset}` / `${x:offset:length}` with whole-number offsets, read as bash reads numbers
/// (`010` octal, `0x10` hex; a negative offset counts from the end, a negative length is an end
/// counted from the end); `None` for arithmetic that is not a plain number.
pub fn substring(value: &str, offset: &str, length: Option<&str>) -> Option<String> {
    let text: Vec<char> = value.chars().collect();
    let n = i64::try_from(text.len()).ok()?;
    let offset = number(offset)?;
    if offset < 0 && n + offset < 0 {
        return Some(String::new());
    }
    let start = if offset < 0 {
        n + offset
    } else {
        offset.min(n)
    };
    let end = match length.map(number) {
        None => n,
        Some(None) => return None,
        Some(Some(len)) if len < 0 => n + len,
        Some(Some(len)) => start.saturating_add(len).min(n),
    };
    if end < start {
        return None;
    }
    let (start, end) = (usize::try_from(start).ok()?, usize::try_from(end).ok()?);
    Some(text[start..end].iter().collect())
}

/// A number as bash's arithmetic reads a plain one: decimal, `0` octal, `0x` hex, a sign.
fn number(text: &str) -> Option<i64> {
    let text = text.trim();
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest.trim_start()),
        None => (false, text.strip_prefix('+').unwrap_or(text).trim_start()),
    };
    let value = if let Some(hex) = digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        i64::from_str_radix(hex, 16).ok()?
    } else if digits.len() > 1 && digits.starts_with('0') {
        i64::from_str_radix(&digits[1..], 8).ok()?
    } else {
        digits.parse::<i64>().ok()?
    };
    Some(if negative { -value } else { value })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(text: &str) -> String {
        glob::pattern(text).into_owned()
    }

    #[test]
    fn removals_match_bash() {
        assert_eq!(remove("xgit", &p("x"), Removal::ShortestPrefix), "git");
        assert_eq!(remove("aaxgit", &p("*x"), Removal::LongestPrefix), "git");
        assert_eq!(remove("a.b.c", &p("*."), Removal::ShortestPrefix), "b.c");
        assert_eq!(remove("a.b.c", &p("*."), Removal::LongestPrefix), "c");
        assert_eq!(remove("gitx", &p("x"), Removal::ShortestSuffix), "git");
        assert_eq!(remove("a.b.c", &p(".*"), Removal::ShortestSuffix), "a.b");
        assert_eq!(remove("a.b.c", &p(".*"), Removal::LongestSuffix), "a");
        assert_eq!(remove("git", &p("X"), Removal::ShortestSuffix), "git");
        // Letter case counts, as in bash.
        assert_eq!(remove("gitX", &p("x"), Removal::ShortestSuffix), "gitX");
    }

    #[test]
    fn replacements_and_substrings_match_bash() {
        assert_eq!(replace("gat", &p("a"), "i", Replace::First), "git");
        assert_eq!(replace("gaat", &p("a"), "i", Replace::All), "giit");
        assert_eq!(replace("gaat", &p("a"), "i", Replace::First), "giat");
        assert_eq!(replace("xat", &p("x"), "g", Replace::Prefix), "gat");
        assert_eq!(replace("gix", &p("x"), "t", Replace::Suffix), "git");
        assert_eq!(replace("gxxt", &p("x*"), "i", Replace::First), "gi");
        assert_eq!(substring("legit", "2", None).as_deref(), Some("git"));
        assert_eq!(substring("xgitx", "1", Some("3")).as_deref(), Some("git"));
        assert_eq!(substring("xxgit", " -3", None).as_deref(), Some("git"));
        assert_eq!(substring("gitxx", "0", Some("-2")).as_deref(), Some("git"));
        assert_eq!(substring("git", "n+1", None), None);
        assert_eq!(
            substring("aaaaaaaagit", "010", None).as_deref(),
            Some("git")
        );
        assert_eq!(substring("xgit", "0x1", None).as_deref(), Some("git"));
        assert_eq!(substring("abc", " -5", None).as_deref(), Some(""));
        assert_eq!(replace("it", "", "g", Replace::Prefix), "git");
        assert_eq!(replace("gi", "", "t", Replace::Suffix), "git");
    }
}
