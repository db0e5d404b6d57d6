//! The notes file: how the worker MCP, running inside the agent's sandbox, hands the agent's
//! notes to the Maid without touching the ledger (which is read-only to everything the agent
//! starts). One JSON object per line, `{"kind": "note", "text": "…"}`; the worker MCP appends
//! ([`append_note`]), the Maid takes them after each attempt ([`take_notes`]) and stores them in
//! the ledger.
//!
//! The file lies in a directory the agent may write, so the agent could write it directly:
//! what is taken is bounded and validated like a tool call, and never followed through a
//! symbolic link.

use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::contract::NoteKind;

/// Longest note, summary or reason accepted (characters): the agent MCP refuses a longer one,
/// and a longer line in the file is dropped.
pub(crate) const MAX_NOTE_CHARS: usize = 4000;

/// Bytes of the file read at most.
pub(crate) const MAX_NOTES_BYTES: u64 = 1 << 20;
/// Notes taken at most per attempt.
pub(crate) const MAX_NOTES: usize = 200;

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Line {
    kind: NoteKind,
    text: String,
}

fn no_follow() -> i32 {
    nix::fcntl::OFlag::O_NOFOLLOW.bits()
}

/// Appends one note (the worker MCP's side).
pub(crate) fn append_note(path: &Path, kind: NoteKind, text: &str) -> std::io::Result<()> {
    let mut line = serde_json::to_string(&Line {
        kind,
        text: text.to_owned(),
    })
    .expect("a note always serialises");
    line.push('\n');
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .custom_flags(no_follow())
        .open(path)?;
    file.write_all(line.as_bytes())
}

/// Reads the notes written so far and removes the file (the Maid's side). Lines that are not
/// a note of a known kind with 1 to [`MAX_NOTE_CHARS`] characters are dropped; a missing file
/// is no notes; a symbolic link or anything but a regular file is removed unread.
pub fn take_notes(path: &Path) -> std::io::Result<Vec<(NoteKind, String)>> {
    let file = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(no_follow() | nix::fcntl::OFlag::O_NONBLOCK.bits())
        .open(path)
    {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(_) => {
            remove(path);
            return Ok(Vec::new());
        }
    };
    if !file.metadata()?.is_file() {
        remove(path);
        return Ok(Vec::new());
    }
    let mut bytes = Vec::new();
    file.take(MAX_NOTES_BYTES).read_to_end(&mut bytes)?;
    remove(path);
    let text = String::from_utf8_lossy(&bytes);
    Ok(text
        .lines()
        .filter_map(|l| serde_json::from_str::<Line>(l).ok())
        .filter_map(|l| {
            let text = l.text.trim();
            let len = text.chars().count();
            (len > 0 && len <= MAX_NOTE_CHARS).then(|| (l.kind, text.to_owned()))
        })
        .take(MAX_NOTES)
        .collect())
}

fn remove(path: &Path) {
    let _ = std::fs::remove_file(path).or_else(|_| std::fs::remove_dir_all(path));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_round_trip_and_junk_is_dropped() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("notes.jsonl");
        append_note(&path, NoteKind::Connected, "worker MCP started").expect("append");
        append_note(&path, NoteKind::Note, "  hello  ").expect("append");
        let mut junk = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .expect("open");
        junk.write_all(
            b"not json\n{\"kind\":\"shell\",\"text\":\"x\"}\n{\"kind\":\"note\",\"text\":\"\"}\n",
        )
        .expect("junk");
        append_note(&path, NoteKind::Blocked, &"x".repeat(MAX_NOTE_CHARS + 1)).expect("append");
        append_note(&path, NoteKind::Progress, "half").expect("append");
        assert_eq!(
            take_notes(&path).expect("taken"),
            vec![
                (NoteKind::Connected, "worker MCP started".to_owned()),
                (NoteKind::Note, "hello".to_owned()),
                (NoteKind::Progress, "half".to_owned()),
            ]
        );
        assert!(!path.exists(), "taken notes are gone");
        assert!(take_notes(&path).expect("none").is_empty());
    }

    #[test]
    fn a_link_is_never_followed() {
        let dir = tempfile::tempdir().expect("tempdir");
        let secret = dir.path().join("secret");
        std::fs::write(&secret, "{\"kind\":\"note\",\"text\":\"the secret\"}\n").expect("write");
        let path = dir.path().join("notes.jsonl");
        std::os::unix::fs::symlink(&secret, &path).expect("link");
        assert!(take_notes(&path).expect("taken").is_empty());
        assert!(!path.exists());
        assert!(secret.exists());
        assert!(
            append_note(&path, NoteKind::Note, "x").is_ok(),
            "a new file"
        );
        std::fs::remove_file(&path).expect("rm");
        std::os::unix::fs::symlink(&secret, &path).expect("link");
        assert!(append_note(&path, NoteKind::Note, "x").is_err());
    }
}
