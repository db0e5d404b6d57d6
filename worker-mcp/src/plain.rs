//! Plain text for a reader: which characters can change how text looks without being seen, how
//! they are shown when text Butler did not write is printed, and how names are compared so
//! that one cannot pass for another.
//!
//! - [`is_hidden`]: control characters (C0 but newline and tab, DEL, C1), the bidirectional
//!   controls (embeddings, overrides, isolates, marks) and invisible spaces (zero-width space,
//!   word joiner, byte-order mark).
//! - [`is_invisible_format`]: every invisible or direction-changing formatting character, the
//!   joiners and variation selectors too — what a name may not hold.
//! - [`escaped`]: such characters written visibly as `\u{1b}`.
//! - [`skeleton`]: a name folded so that names equal up to case and the common Latin, Cyrillic
//!   and Greek lookalikes (`mаin` with a Cyrillic `а`, `MAIN`, `ma1n`) fold to the same text.

use std::borrow::Cow;

/// Whether `c` changes how text reads without being seen: a control character other than
/// newline and tab, a bidirectional control, or an invisible space or joiner that no script
/// needs. (The zero-width joiners and variation selectors that emoji and Indic or Persian
/// writing need are shown as they are; line names refuse them all, [`is_invisible_format`].)
pub(crate) fn is_hidden(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(
            c,
            '\u{061C}'
                | '\u{200B}'
                | '\u{200E}'
                | '\u{200F}'
                | '\u{2028}'..='\u{202E}'
                | '\u{2060}'..='\u{2069}'
                | '\u{FEFF}'
        )
}

/// Invisible and direction-changing formatting characters (Unicode's default-ignorable and
/// bidirectional controls).
pub(crate) fn is_invisible_format(c: char) -> bool {
    matches!(
        c,
        '\u{00AD}'              // soft hyphen
        | '\u{034F}'            // combining grapheme joiner
        | '\u{061C}'            // Arabic letter mark
        | '\u{115F}' | '\u{1160}' | '\u{3164}' | '\u{FFA0}' // Hangul fillers
        | '\u{17B4}' | '\u{17B5}'
        | '\u{180B}'..='\u{180F}'
        | '\u{200B}'..='\u{200F}' // zero-width space, joiners, LRM, RLM
        | '\u{2028}'..='\u{202E}' // separators, embeddings and overrides
        | '\u{2060}'..='\u{206F}' // word joiner, invisible operators, isolates
        | '\u{FE00}'..='\u{FE0F}' // variation selectors
        | '\u{FEFF}'            // byte-order mark, zero-width no-break space
        | '\u{FFF0}'..='\u{FFFB}'
        | '\u{1D173}'..='\u{1D17A}'
        | '\u{E0000}'..='\u{E0FFF}' // tags, variation selectors supplement
    )
}

/// `text` with every [`is_hidden`] character written as `\u{…}` (lowercase hex); borrowed when
/// there is none.
pub fn escaped(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_hidden) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if is_hidden(c) {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// The first control character of `text` other than newline and tab, if any.
pub(crate) fn first_control(text: &str) -> Option<char> {
    text.chars()
        .find(|c| c.is_control() && *c != '\n' && *c != '\t')
}

/// `name` folded for comparison: fullwidth forms to ASCII, Cyrillic and Greek lookalikes to
/// the Latin letters they look like, lowercase, and the letters and digits that pass for each
/// other (`1`, `i`, `l`, `|`; `0`, `o`) to one. Two names with the same skeleton can be taken
/// for each other.
pub(crate) fn skeleton(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        let c = match c {
            '\u{FF01}'..='\u{FF5E}' => char::from_u32(c as u32 - 0xFEE0).unwrap_or(c),
            _ => c,
        };
        let latin = lookalike(c).unwrap_or(c);
        for lower in latin.to_lowercase() {
            out.push(match lower {
                '1' | 'i' | 'l' | '|' | 'ı' => 'l',
                '0' => 'o',
                other => other,
            });
        }
    }
    out
}

/// The Latin letter a Cyrillic or Greek letter looks like.
fn lookalike(c: char) -> Option<char> {
    const PAIRS: &[(char, char)] = &[
        // Cyrillic
        ('а', 'a'),
        ('А', 'A'),
        ('в', 'B'),
        ('В', 'B'),
        ('е', 'e'),
        ('Е', 'E'),
        ('ё', 'e'),
        ('Ё', 'E'),
        ('к', 'k'),
        ('К', 'K'),
        ('м', 'M'),
        ('М', 'M'),
        ('н', 'H'),
        ('Н', 'H'),
        ('о', 'o'),
        ('О', 'O'),
        ('р', 'p'),
        ('Р', 'P'),
        ('с', 'c'),
        ('С', 'C'),
        ('т', 'T'),
        ('Т', 'T'),
        ('у', 'y'),
        ('У', 'Y'),
        ('х', 'x'),
        ('Х', 'X'),
        ('ѕ', 's'),
        ('Ѕ', 'S'),
        ('і', 'i'),
        ('І', 'I'),
        ('ї', 'i'),
        ('ј', 'j'),
        ('Ј', 'J'),
        ('ԁ', 'd'),
        ('ԛ', 'q'),
        ('Ԛ', 'Q'),
        ('ԝ', 'w'),
        ('Ԝ', 'W'),
        ('ү', 'y'),
        ('Ү', 'Y'),
        ('һ', 'h'),
        ('Һ', 'H'),
        ('ӏ', 'l'),
        ('Ӏ', 'l'),
        ('ɡ', 'g'),
        ('ь', 'b'),
        ('Ь', 'b'),
        ('п', 'n'),
        ('г', 'r'),
        ('ԍ', 'G'),
        ('Ꙇ', 'l'),
        // Greek
        ('α', 'a'),
        ('Α', 'A'),
        ('Β', 'B'),
        ('β', 'B'),
        ('ε', 'e'),
        ('Ε', 'E'),
        ('Ζ', 'Z'),
        ('η', 'n'),
        ('Η', 'H'),
        ('ι', 'i'),
        ('Ι', 'I'),
        ('κ', 'k'),
        ('Κ', 'K'),
        ('Μ', 'M'),
        ('ν', 'v'),
        ('Ν', 'N'),
        ('ο', 'o'),
        ('Ο', 'O'),
        ('ρ', 'p'),
        ('Ρ', 'P'),
        ('τ', 't'),
        ('Τ', 'T'),
        ('υ', 'u'),
        ('Υ', 'Y'),
        ('χ', 'x'),
        ('Χ', 'X'),
        ('γ', 'y'),
        ('ϲ', 'c'),
        ('Ϲ', 'C'),
        ('ϳ', 'j'),
        ('ω', 'w'),
        ('ς', 's'),
    ];
    PAIRS.iter().find(|(from, _)| *from == c).map(|(_, to)| *to)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_c0_control_but_newline_and_tab_is_hidden_and_escaped() {
        let all: String = (0u8..0x20).map(char::from).chain(['\u{7f}']).collect();
        let shown = escaped(&all);
        assert!(!shown.chars().any(is_hidden), "{shown:?}");
        assert!(shown.starts_with("\\u{0}\\u{1}"), "{shown:?}");
        assert!(shown.contains("\t\n\\u{b}"), "{shown:?}");
        assert!(
            shown.contains("\\u{1b}") && shown.ends_with("\\u{7f}"),
            "{shown:?}"
        );
        assert_eq!(first_control("a\tb\nc"), None);
        assert_eq!(first_control("a\u{7}b"), Some('\u{7}'));
        assert_eq!(first_control("a\u{85}b"), Some('\u{85}'));
    }

    #[test]
    fn invisible_and_direction_changing_characters_are_shown() {
        assert_eq!(escaped("\u{200b}main"), "\\u{200b}main");
        assert_eq!(escaped("x\u{202e}"), "x\\u{202e}");
        assert_eq!(escaped("\u{2066}a\u{2069}"), "\\u{2066}a\\u{2069}");
        assert!(matches!(escaped("日本語 ok\n"), Cow::Borrowed(_)));
        // What writing and emoji need stays as it is.
        assert!(matches!(
            escaped("می\u{200c}خواهم ❤\u{fe0f} 👨\u{200d}👩"),
            Cow::Borrowed(_)
        ));
        assert!(is_invisible_format('\u{200d}') && is_invisible_format('\u{fe0f}'));
    }

    #[test]
    fn lookalikes_and_case_fold_to_one_skeleton() {
        let main = skeleton("main");
        for twin in [
            "mаin",
            "MAIN",
            "Main",
            "ma1n",
            "maln",
            "ｍａｉｎ",
            "mаіn",
            "ΜΑΙΝ",
        ] {
            assert_eq!(skeleton(twin), main, "{twin}");
        }
        assert_eq!(skeleton("оrigin/feature"), skeleton("origin/feature"));
        assert_ne!(skeleton("main"), skeleton("mainline"));
        assert_ne!(skeleton("fix-2"), skeleton("fix-3"));
        assert_eq!(skeleton("日本"), "日本");
    }
}
