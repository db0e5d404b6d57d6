//! Is this value a secret or a stand-in for one? The guards every heuristic rule shares:
//! Shannon entropy, character classes, and the spellings of placeholders.

/// Shannon entropy of `value`'s bytes, in bits per byte.
pub(crate) fn entropy(value: &[u8]) -> f64 {
    if value.is_empty() {
        return 0.0;
    }
    let mut counts = [0u32; 256];
    for &b in value {
        counts[usize::from(b)] += 1;
    }
    let len = value.len() as f64;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = f64::from(c) / len;
            -p * p.log2()
        })
        .sum()
}

/// How many different bytes `value` has.
fn distinct(value: &[u8]) -> usize {
    let mut seen = [false; 256];
    value.iter().for_each(|&b| seen[usize::from(b)] = true);
    seen.iter().filter(|&&s| s).count()
}

/// Words that mark a value as a stand-in (documentation, templates, tests that say so).
const PLACEHOLDER_WORDS: &[&str] = &[
    "example",
    "changeme",
    "change_me",
    "change-me",
    "placeholder",
    "your_",
    "your-",
    "yourkey",
    "yourtoken",
    "xxxx",
    "****",
    "....",
    "dummy",
    "redacted",
    "sample",
    "insert",
    "replace",
    "notreal",
    "not-real",
    "not_real",
    "fake",
    // A value that says what it stands for is not the thing (`TOKEN123`, `password1`).
    "passw",
    "secret",
    "token",
];

/// Whether `value` is spelled like a placeholder rather than a real secret.
pub(crate) fn is_placeholder(value: &[u8]) -> bool {
    let lower = value.to_ascii_lowercase();
    let text = String::from_utf8_lossy(&lower);
    PLACEHOLDER_WORDS.iter().any(|w| text.contains(w))
        || matches!(value.first(), Some(b'$' | b'%' | b'{' | b'<' | b'@' | b'*'))
        || text.contains("${")
        || text.contains("{{")
}

/// Whether the body of a token with a known prefix looks generated rather than typed: enough
/// different characters, not a placeholder.
pub(crate) fn looks_generated(body: &[u8]) -> bool {
    let wanted = (body.len() / 3).clamp(4, 10);
    distinct(body) >= wanted && !is_placeholder(body)
}

/// Whether a free-form value (a setting's value, a URL's password) looks like a real secret:
/// long enough, letters and digits, no spaces, high entropy, not a placeholder, not a
/// reference to something else (a path, a variable, a call).
pub(crate) fn looks_secret(value: &[u8], min_len: usize) -> bool {
    if value.len() < min_len || value.len() > 1024 {
        return false;
    }
    let has_letter = value.iter().any(u8::is_ascii_alphabetic);
    let has_digit = value.iter().any(u8::is_ascii_digit);
    if !has_letter || !has_digit {
        return false;
    }
    if value
        .iter()
        .any(|b| b.is_ascii_whitespace() || matches!(b, b'(' | b')' | b'[' | b']' | b'"' | b'\''))
    {
        return false;
    }
    if matches!(value.first(), Some(b'/' | b'.' | b'~' | b'#')) || is_placeholder(value) {
        return false;
    }
    if is_dotted_identifier(value) || is_version_or_number(value) {
        return false;
    }
    let threshold = if value.len() < 20 { 3.0 } else { 3.3 };
    entropy(value) >= threshold
}

/// `settings.api_key_v2`, `Config::SECRET` — code that names a value, not a value.
fn is_dotted_identifier(value: &[u8]) -> bool {
    let text = String::from_utf8_lossy(value);
    let parts: Vec<&str> = text.split(['.', ':']).filter(|p| !p.is_empty()).collect();
    parts.len() > 1
        && parts.iter().all(|p| {
            p.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
                && p.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && p.chars().filter(char::is_ascii_digit).count() <= 2
        })
}

/// `1.2.3-beta4`, `2024-01-01T10:00:00Z`, `1e10`: versions, dates and numbers.
fn is_version_or_number(value: &[u8]) -> bool {
    let letters = value.iter().filter(|b| b.is_ascii_alphabetic()).count();
    letters * 4 < value.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entropy_of_uniform_and_repeated_values() {
        assert_eq!(entropy(b"aaaa"), 0.0);
        assert!((entropy(b"abcd") - 2.0).abs() < 1e-9);
    }

    #[test]
    fn placeholders_are_recognised() {
        for v in [
            "changeme",
            "your_api_key_here",
            "<token>",
            "${API_KEY}",
            "{{ secrets.TOKEN }}",
            "xxxxxxxxxxxxxxxx",
            "EXAMPLEKEY123456",
        ] {
            assert!(is_placeholder(v.as_bytes()), "{v}");
        }
        assert!(!is_placeholder(b"q8Zr2kLm9Wx4Tb7N"));
    }

    #[test]
    fn secrets_need_letters_digits_and_entropy() {
        assert!(looks_secret(b"q8Zr2kLm9Wx4Tb7Nc3Vd", 12));
        assert!(looks_secret(
            b"5f4dcc3b5aa765d61d8327deb882cf99aabbccdd",
            12
        ));
        assert!(!looks_secret(b"changeme", 12), "short and a placeholder");
        assert!(!looks_secret(b"correcthorsebatterystaple", 12), "no digit");
        assert!(!looks_secret(b"aaaaaaaaaaaa1111", 12), "low entropy");
        assert!(!looks_secret(b"settings.api_key_v2", 12), "code");
        assert!(!looks_secret(b"/run/secrets/db_password1", 12), "a path");
        assert!(!looks_secret(b"2024-01-01T10:00:00Z", 12), "a time");
        assert!(!looks_secret(b"os.getenv(TOKEN1)", 12), "a call");
    }

    #[test]
    fn generated_bodies_have_variety() {
        assert!(looks_generated(b"a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"));
        assert!(!looks_generated(b"XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX"));
        assert!(!looks_generated(b"000000000000000000000000000000000000"));
    }
}
