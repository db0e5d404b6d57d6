//! Repository-relative paths as git gives them (bytes), and the check that keeps user paths
//! inside the working tree.

use std::ffi::OsStr;
use std::fmt::Write as _;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use super::error::GitError;

/// A path relative to the top of the working tree, as raw bytes (file names need not be UTF-8).
///
/// The empty path stands for the whole working tree. Untracked directories from `status`
/// end in `/`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RepoPath(Vec<u8>);

impl RepoPath {
    /// Wraps raw, repository-relative path bytes (`/`-separated, as git prints them).
    pub fn from_bytes(bytes: impl Into<Vec<u8>>) -> Self {
        RepoPath(bytes.into())
    }

    /// The raw bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// Whether this is the whole working tree (the empty path).
    pub fn is_root(&self) -> bool {
        self.0.is_empty()
    }

    /// As a relative filesystem path.
    pub fn as_path(&self) -> &Path {
        Path::new(OsStr::from_bytes(&self.0))
    }

    /// A lossless text form: valid UTF-8 as is, every other byte as `\xNN`; a backslash that
    /// would otherwise read as the start of an escape (one followed by `x` or by another
    /// backslash) is doubled. [`RepoPath::parse`] reverses it.
    pub fn display(&self) -> String {
        let mut pieces: Vec<Piece> = Vec::new();
        for chunk in self.0.utf8_chunks() {
            pieces.extend(chunk.valid().chars().map(Piece::Char));
            pieces.extend(chunk.invalid().iter().map(|&b| Piece::Byte(b)));
        }
        let mut out = String::with_capacity(self.0.len());
        for (i, piece) in pieces.iter().enumerate() {
            match piece {
                Piece::Byte(b) => write!(out, "\\x{b:02x}").expect("writing to a String"),
                Piece::Char('\\') => {
                    let next_escapes = matches!(
                        pieces.get(i + 1),
                        Some(Piece::Char('x' | '\\') | Piece::Byte(_))
                    );
                    out.push_str(if next_escapes { "\\\\" } else { "\\" });
                }
                Piece::Char(c) => out.push(*c),
            }
        }
        out
    }

    /// Reads the form written by [`RepoPath::display`]: `\xNN` (hex) is one byte, `\\` one
    /// backslash, any other backslash is literal.
    pub fn parse(text: &str) -> RepoPath {
        let bytes = text.as_bytes();
        let mut out = Vec::with_capacity(bytes.len());
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i] == b'\\' {
                if bytes.get(i + 1) == Some(&b'\\') {
                    out.push(b'\\');
                    i += 2;
                    continue;
                }
                if bytes.get(i + 1) == Some(&b'x')
                    && let Some(byte) = bytes.get(i + 2..i + 4).and_then(hex_byte)
                {
                    out.push(byte);
                    i += 4;
                    continue;
                }
            }
            out.push(bytes[i]);
            i += 1;
        }
        RepoPath(out)
    }
}

enum Piece {
    Char(char),
    Byte(u8),
}

fn hex_byte(two: &[u8]) -> Option<u8> {
    let text = std::str::from_utf8(two).ok()?;
    u8::from_str_radix(text, 16).ok()
}

impl serde::Serialize for RepoPath {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.display())
    }
}

impl std::fmt::Display for RepoPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.display())
    }
}

/// Turns a user-supplied path (repository-relative or absolute, in the `display` form) into a
/// `RepoPath`, refusing anything that leaves `workdir` (which must be canonical): `..` above
/// the top, parents that are symlinks to elsewhere, other absolute locations, and git's own
/// `.git`. The last component is not resolved, so a symlink tracked in the repository can be
/// named itself.
pub(crate) fn resolve(workdir: &Path, user_path: &str) -> Result<RepoPath, GitError> {
    let joined = joined(workdir, user_path);
    let (parent, name) = split_last(&joined);
    let parent = physical(&parent)?;
    let full = match name {
        Some(name) => parent.join(name),
        None => parent,
    };
    inside(workdir, &full)
}

/// `user_path` (in the `display` form) joined to `workdir` unless it is absolute.
fn joined(workdir: &Path, user_path: &str) -> PathBuf {
    let parsed = RepoPath::parse(user_path.trim());
    let given = Path::new(OsStr::from_bytes(parsed.as_bytes()));
    if given.is_absolute() {
        given.to_path_buf()
    } else {
        workdir.join(given)
    }
}

/// `full` (physical) as a path inside `workdir`, never in git's own `.git`.
fn inside(workdir: &Path, full: &Path) -> Result<RepoPath, GitError> {
    let relative = full
        .strip_prefix(workdir)
        .map_err(|_| GitError::OutsideProject)?;
    if relative.components().any(|c| c.as_os_str() == ".git") {
        return Err(GitError::OutsideProject);
    }
    Ok(RepoPath(relative.as_os_str().as_bytes().to_vec()))
}

/// Like [`resolve`], but the last component is followed too, as a program that opens the path
/// (or creates a directory there) follows it: a symbolic link inside the project that points
/// elsewhere is outside.
pub(crate) fn resolve_followed(workdir: &Path, user_path: &str) -> Result<RepoPath, GitError> {
    // A link whose target does not exist yet would be created through: resolve it by hand.
    let mut full = physical(&joined(workdir, user_path))?;
    for _ in 0..40 {
        match std::fs::read_link(&full) {
            Ok(target) => {
                let next = full.parent().map_or(target.clone(), |p| p.join(&target));
                full = physical(&next)?;
            }
            Err(_) => break,
        }
    }
    inside(workdir, &full)
}

/// Splits off the last normal component (after dropping trailing `.`); `..` or the root as
/// the last component stay in the parent.
fn split_last(path: &Path) -> (PathBuf, Option<&OsStr>) {
    let mut comps: Vec<Component<'_>> = path.components().collect();
    while comps.len() > 1 && matches!(comps.last(), Some(Component::CurDir)) {
        comps.pop();
    }
    match comps.last() {
        Some(Component::Normal(name)) => {
            let name = *name;
            comps.pop();
            (comps.iter().collect(), Some(name))
        }
        _ => (comps.iter().collect(), None),
    }
}

/// The physical location of `path`: its longest existing prefix canonicalized (symlinks and
/// `..` resolved by the filesystem), the rest normalized lexically.
fn physical(path: &Path) -> Result<PathBuf, GitError> {
    let comps: Vec<Component<'_>> = path.components().collect();
    for split in (1..=comps.len()).rev() {
        let prefix: PathBuf = comps[..split].iter().collect();
        if let Ok(mut base) = prefix.canonicalize() {
            for comp in &comps[split..] {
                match comp {
                    Component::Normal(name) => base.push(name),
                    Component::ParentDir => {
                        base.pop();
                    }
                    _ => {}
                }
            }
            return Ok(base);
        }
    }
    Err(GitError::OutsideProject)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(bytes: &[u8]) {
        let path = RepoPath::from_bytes(bytes.to_vec());
        let shown = path.display();
        assert_eq!(RepoPath::parse(&shown), path, "through {shown:?}");
    }

    #[test]
    fn a_followed_path_through_a_link_elsewhere_is_outside() {
        let top = tempfile::tempdir().expect("tempdir");
        let other = tempfile::tempdir().expect("tempdir");
        let workdir = top.path().canonicalize().expect("canonical");
        std::os::unix::fs::symlink(other.path(), workdir.join("out")).expect("link");
        std::os::unix::fs::symlink(other.path().join("new"), workdir.join("dangling"))
            .expect("link");
        std::fs::create_dir(workdir.join("inside")).expect("dir");
        std::os::unix::fs::symlink("inside", workdir.join("in")).expect("link");
        assert!(resolve(&workdir, "out").is_ok(), "the link itself is named");
        assert!(resolve_followed(&workdir, "out").is_err());
        assert!(resolve_followed(&workdir, "out/x").is_err());
        assert!(resolve_followed(&workdir, "dangling").is_err());
        assert_eq!(
            resolve_followed(&workdir, "in").expect("inside"),
            RepoPath::from_bytes("inside")
        );
        assert!(resolve_followed(&workdir, "new/dir").is_ok());
    }

    #[test]
    fn utf8_is_shown_as_is() {
        assert_eq!(RepoPath::from_bytes("dir/ä b.rs").display(), "dir/ä b.rs");
    }

    #[test]
    fn invalid_bytes_are_escaped() {
        assert_eq!(
            RepoPath::from_bytes(b"a\xffb".to_vec()).display(),
            "a\\xffb"
        );
    }

    #[test]
    fn backslashes_that_could_read_as_escapes_are_doubled() {
        assert_eq!(RepoPath::from_bytes("a\\x41").display(), "a\\\\x41");
        assert_eq!(RepoPath::from_bytes("a\\b").display(), "a\\b");
        assert_eq!(RepoPath::from_bytes("end\\").display(), "end\\");
    }

    #[test]
    fn every_tricky_name_round_trips() {
        for bytes in [
            &b"plain"[..],
            b"a\\x41",
            b"a\\\\x41",
            b"\\\\",
            b"\\",
            b"x\\",
            b"\\\xff",
            b"\xff\xfe",
            b"\xc3",
            b"\xc3\xa4",
            b"\\xzz",
            b"\\\\\\x",
        ] {
            round_trip(bytes);
        }
    }

    #[test]
    fn user_typed_escapes_are_accepted() {
        assert_eq!(RepoPath::parse("\\xC3\\xA4").as_bytes(), "ä".as_bytes());
        assert_eq!(RepoPath::parse("\\xzz").as_bytes(), b"\\xzz");
    }
}
