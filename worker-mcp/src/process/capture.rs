//! Bounded capture of a child's output: the first `head` bytes and the last `tail` bytes are
//! kept, everything in between is only counted. Also the one way a long text is cut to its end
//! ([`tail_of`]).

use std::collections::VecDeque;

#[derive(Debug, Default, Clone)]
pub struct CapturedOutput {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    head_cap: usize,
    tail_cap: usize,
    total: u64,
}

impl CapturedOutput {
    pub fn new(head_cap: usize, tail_cap: usize) -> Self {
        Self {
            head_cap,
            tail_cap,
            ..Self::default()
        }
    }

    pub(crate) fn push(&mut self, mut data: &[u8]) {
        self.total += data.len() as u64;
        if self.head.len() < self.head_cap {
            let take = (self.head_cap - self.head.len()).min(data.len());
            self.head.extend_from_slice(&data[..take]);
            data = &data[take..];
        }
        if self.tail_cap == 0 || data.is_empty() {
            return;
        }
        if data.len() >= self.tail_cap {
            self.tail.clear();
            self.tail.extend(&data[data.len() - self.tail_cap..]);
        } else {
            let overflow = (self.tail.len() + data.len()).saturating_sub(self.tail_cap);
            self.tail.drain(..overflow);
            self.tail.extend(data);
        }
    }

    /// All bytes the child wrote, kept or not.
    pub fn total_bytes(&self) -> u64 {
        self.total
    }

    /// Bytes dropped between the head and the tail.
    pub(crate) fn omitted_bytes(&self) -> u64 {
        self.total - (self.head.len() + self.tail.len()) as u64
    }

    /// Bytes held in memory.
    pub fn kept_bytes(&self) -> usize {
        self.head.len() + self.tail.len()
    }

    /// The kept bytes, head then tail, with nothing marking a gap (for a capture that keeps
    /// only a head, such as a bounded read of machine output).
    pub(crate) fn into_bytes(self) -> Vec<u8> {
        let mut bytes = self.head;
        bytes.extend(self.tail);
        bytes
    }

    /// Head and tail as text, with a marker where bytes were dropped.
    pub fn text(&self) -> String {
        let mut out = String::from_utf8_lossy(&self.head).into_owned();
        let omitted = self.omitted_bytes();
        if omitted > 0 {
            out.push_str(&format!("\n[… {omitted} bytes omitted …]\n"));
        }
        let (a, b) = self.tail.as_slices();
        out.push_str(&String::from_utf8_lossy(&[a, b].concat()));
        out
    }

    /// The last `max` bytes (or fewer) as text, cut as [`tail_of`] cuts; never joins the head
    /// and the tail across a gap.
    pub fn tail_text(&self, max: usize) -> String {
        let (a, b) = self.tail.as_slices();
        let mut bytes: Vec<u8> = [a, b].concat();
        if bytes.len() < max && self.omitted_bytes() == 0 {
            let from_head = (max - bytes.len()).min(self.head.len());
            let mut joined = self.head[self.head.len() - from_head..].to_vec();
            joined.extend_from_slice(&bytes);
            bytes = joined;
        }
        let start = bytes.len().saturating_sub(max.saturating_mul(2));
        let text = String::from_utf8_lossy(&bytes[start..]);
        // A cut through a multi-byte character shows as U+FFFD at the start: drop it.
        tail_of(text.trim_start_matches('\u{FFFD}'), max).to_owned()
    }
}

/// The last `max` bytes of `text` (or fewer), starting at a character boundary, and at a line
/// start when one is near (within the first quarter), so a reader does not get half a line.
pub fn tail_of(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut start = text.len() - max;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    if let Some(nl) = text[start..].find('\n')
        && nl < max / 4
    {
        start += nl + 1;
    }
    &text[start..]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_everything_when_it_fits() {
        let mut c = CapturedOutput::new(4, 4);
        c.push(b"abc");
        c.push(b"def");
        assert_eq!(c.text(), "abcdef");
        assert_eq!(c.total_bytes(), 6);
        assert_eq!(c.tail_text(5), "bcdef");
    }

    #[test]
    fn keeps_head_and_tail_of_a_flood() {
        let mut c = CapturedOutput::new(3, 3);
        for chunk in [b"0123".as_slice(), b"45678", b"9"] {
            c.push(chunk);
        }
        assert_eq!(c.total_bytes(), 10);
        assert_eq!(c.kept_bytes(), 6);
        assert_eq!(c.omitted_bytes(), 4);
        assert_eq!(c.text(), "012\n[… 4 bytes omitted …]\n789");
        assert_eq!(c.tail_text(10), "789", "never joins across a gap");
    }

    #[test]
    fn a_big_chunk_replaces_the_tail() {
        let mut c = CapturedOutput::new(0, 4);
        c.push(b"ab");
        c.push(b"cdefgh");
        assert_eq!(c.text(), "\n[… 4 bytes omitted …]\nefgh");
    }

    #[test]
    fn a_head_only_capture_is_bounded_but_counted() {
        let mut c = CapturedOutput::new(4, 0);
        c.push(b"abcdefgh");
        assert_eq!(c.total_bytes(), 8);
        assert_eq!(c.into_bytes(), b"abcd");
    }

    #[test]
    fn tail_text_does_not_split_characters() {
        let mut c = CapturedOutput::new(0, 16);
        c.push("ééé".as_bytes());
        assert_eq!(c.tail_text(3), "é");
        let mut c = CapturedOutput::new(0, 3);
        c.push("ééé".as_bytes());
        assert_eq!(c.tail_text(16), "é", "a tail cut inside a character");
    }

    #[test]
    fn tails_start_at_a_line_when_one_is_near() {
        assert_eq!(tail_of("short", 10), "short");
        assert_eq!(
            tail_of("aaaa\nbbbbbbbbbbbbbb\ncc", 20),
            "bbbbbbbbbbbbbb\ncc"
        );
        assert_eq!(tail_of("aaaaaaaaaaaaaaaaaaaaaaaa", 5), "aaaaa");
        let mut c = CapturedOutput::new(0, 64);
        c.push(b"aaaa\nbbbbbbbbbbbbbb\ncc");
        assert_eq!(c.tail_text(20), "bbbbbbbbbbbbbb\ncc");
    }
}
