//! Brace expansion, the first expansion bash applies to a word: `{git,status}` becomes the two
//! words `git status`, `g{i,}t` becomes `git gt`, `{a..c}` becomes `a b c`. Quoted and escaped
//! braces stay as they are (brush-parser's brace parser knows the quoting). Expansion happens
//! on the raw word, before quotes are removed, as in bash.

use brush_parser::ParserOptions;
use brush_parser::word::{self, BraceExpressionMember, BraceExpressionOrText};

use super::wrappers::DYNAMIC;

/// Words one raw word may expand to at most; past this, one more word stands for the rest (as
/// known only at run time).
const MAX_WORDS: usize = 256;
/// A sequence expression longer than this is not spelled out.
const MAX_SEQUENCE: i64 = 256;

/// The raw words `raw` expands to (just `raw` when it holds no brace expression).
pub fn expand(raw: &str, options: &ParserOptions) -> Vec<String> {
    if !(raw.contains('{') && raw.contains('}') && (raw.contains(',') || raw.contains(".."))) {
        return vec![raw.to_owned()];
    }
    match word::parse_brace_expansions(raw, options) {
        Ok(Some(pieces))
            if pieces
                .iter()
                .any(|p| matches!(p, BraceExpressionOrText::Expr(_))) =>
        {
            let mut out = alternatives(&pieces);
            // Unquoted words that expand to nothing disappear (`{,git} status`).
            out.retain(|w| !w.is_empty());
            out
        }
        _ => vec![raw.to_owned()],
    }
}

/// Every word a sequence of pieces spells, in bash's order, at most [`MAX_WORDS`] (+1 marker).
fn alternatives(pieces: &[BraceExpressionOrText]) -> Vec<String> {
    let mut words = vec![String::new()];
    for piece in pieces {
        let options: Vec<String> = match piece {
            BraceExpressionOrText::Text(text) => vec![text.clone()],
            BraceExpressionOrText::Expr(members) => members.iter().flat_map(member).collect(),
        };
        let mut next = Vec::with_capacity(words.len() * options.len());
        'outer: for prefix in &words {
            for option in &options {
                if next.len() >= MAX_WORDS {
                    next.push(DYNAMIC.to_string());
                    break 'outer;
                }
                next.push(format!("{prefix}{option}"));
            }
        }
        words = next;
    }
    words
}

fn member(member: &BraceExpressionMember) -> Vec<String> {
    match member {
        BraceExpressionMember::Child(pieces) => alternatives(pieces),
        BraceExpressionMember::NumberSequence {
            start,
            end,
            increment,
        } => sequence(*start, *end, *increment)
            .map(|n| n.to_string())
            .collect(),
        BraceExpressionMember::CharSequence {
            start,
            end,
            increment,
        } => sequence(
            i64::from(u32::from(*start)),
            i64::from(u32::from(*end)),
            *increment,
        )
        .filter_map(|n| u32::try_from(n).ok().and_then(char::from_u32))
        .map(String::from)
        .collect(),
    }
}

fn sequence(start: i64, end: i64, increment: i64) -> impl Iterator<Item = i64> {
    let step = increment.unsigned_abs().max(1);
    let (lo, hi) = (start.min(end), start.max(end));
    let count = (hi.saturating_sub(lo) as u64 / step).min(MAX_SEQUENCE as u64);
    (0..=count).map(move |k| {
        let offset = (k * step) as i64;
        if start <= end {
            start.saturating_add(offset)
        } else {
            start.saturating_sub(offset)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn x(raw: &str) -> Vec<String> {
        expand(raw, &ParserOptions::default())
    }

    #[test]
    fn expands_like_bash() {
        assert_eq!(x("{git,status}"), ["git", "status"]);
        assert_eq!(x("g{i,}t"), ["git", "gt"]);
        assert_eq!(x("{,git}"), ["git"]);
        assert_eq!(x("a{b,c{d,e}}f"), ["abf", "acdf", "acef"]);
        assert_eq!(x("{1..3}"), ["1", "2", "3"]);
        assert_eq!(x("{c..a}"), ["c", "b", "a"]);
        assert_eq!(x("{1..9..4}"), ["1", "5", "9"]);
    }

    #[test]
    fn quoted_or_plain_braces_stay() {
        assert_eq!(x("'{git,status}'"), ["'{git,status}'"]);
        assert_eq!(x("{}"), ["{}"]);
        assert_eq!(x("{git}"), ["{git}"]);
        assert_eq!(x("${a,b}"), ["${a,b}"]);
        assert_eq!(x("plain"), ["plain"]);
    }

    #[test]
    fn huge_expansions_are_bounded() {
        let words = x("{a..z}{a..z}{a..z}");
        assert!(words.len() <= MAX_WORDS + 1);
        assert_eq!(x("{1..100000000}").len(), MAX_SEQUENCE as usize + 1);
    }
}
