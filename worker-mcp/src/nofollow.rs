//! Changing files in a tree an agent can write (a task worktree; with the sandbox off, the
//! Brain's tree and the git directory as well) without being steered by what it planted there.
//!
//! Every path is walked from a directory handle one component at a time, each component opened
//! with `O_DIRECTORY | O_NOFOLLOW`; the last component is removed, created, renamed or changed
//! relative to its parent's handle (`unlinkat`, `openat` with `O_EXCL | O_NOFOLLOW`, `renameat`,
//! `fchmodat` on an `O_PATH` handle). A symbolic link anywhere in a path is never followed: a
//! path whose parent is a link names nothing to work on. A directory swapped for a link (or
//! renamed) after it was opened changes nothing, since the handle keeps naming the directory
//! that was opened. Removing a directory removes what is inside it the same way, entry by entry
//! relative to handles, and never descends into a link.

use std::ffi::{OsStr, OsString};
use std::io::{self, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path};

use nix::errno::Errno;
use nix::fcntl::{AtFlags, OFlag, openat, renameat};
use nix::sys::stat::{FileStat, Mode, SFlag, fstatat};
use nix::unistd::{UnlinkatFlags, unlinkat};

/// An open directory: the handle every path below it is resolved from.
#[derive(Debug)]
pub struct Dir(OwnedFd);

/// What a path named when it was looked at without following links.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    File,
    Dir,
    Link,
    /// A device, socket or FIFO.
    Other,
}

/// What [`remove`] found and removed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Removed {
    /// Nothing there, or a parent of the path is not a directory (a link, a file).
    Nothing,
    /// A file, link or special file (a link itself, never what it points at).
    Entry,
    /// A directory with everything in it.
    Tree,
}

fn io_err(e: Errno) -> io::Error {
    io::Error::from_raw_os_error(e as i32)
}

fn dir_flags() -> OFlag {
    OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC
}

/// What a `stat` result is.
pub fn kind_of(stat: &FileStat) -> Kind {
    match SFlag::from_bits_truncate(stat.st_mode) & SFlag::S_IFMT {
        SFlag::S_IFREG => Kind::File,
        SFlag::S_IFDIR => Kind::Dir,
        SFlag::S_IFLNK => Kind::Link,
        _ => Kind::Other,
    }
}

/// The components of a relative path, each a plain name; `None` for `..`, `/` or `.` inside.
fn names(rel: &Path) -> Option<Vec<&OsStr>> {
    rel.components()
        .map(|c| match c {
            Component::Normal(name) => Some(name),
            _ => None,
        })
        .collect()
}

impl Dir {
    /// Opens the directory at `path` (an absolute path Butler chose: the worktree's top, the
    /// git directory); its last component is not followed when it is a link.
    pub fn open(path: &Path) -> io::Result<Dir> {
        let fd = nix::fcntl::open(path, dir_flags(), Mode::empty()).map_err(io_err)?;
        Ok(Dir(fd))
    }

    /// The directory `name` inside this one (never through a link).
    pub fn child(&self, name: &OsStr) -> io::Result<Dir> {
        let fd = openat(self.0.as_fd(), name, dir_flags(), Mode::empty()).map_err(io_err)?;
        Ok(Dir(fd))
    }

    /// The directory holding `rel`'s last component and that component's name; `None` when
    /// `rel` is empty or not a plain relative path, or when one of its parents is missing or
    /// not a directory (a link to one included).
    pub fn parent_of(&self, rel: &Path) -> io::Result<Option<(Dir, OsString)>> {
        let Some(names) = names(rel) else {
            return Ok(None);
        };
        let Some((last, parents)) = names.split_last() else {
            return Ok(None);
        };
        let mut dir = self.child(OsStr::new("."))?;
        for name in parents {
            dir = match dir.child(name) {
                Ok(d) => d,
                Err(e) if is_not_a_dir(&e) => return Ok(None),
                Err(e) => return Err(e),
            };
        }
        Ok(Some((dir, last.to_os_string())))
    }

    /// What `name` is, without following it; `None` when there is nothing.
    pub fn kind(&self, name: &OsStr) -> io::Result<Option<Kind>> {
        self.stat(name).map(|s| s.as_ref().map(kind_of))
    }

    /// `lstat` of `name`; `None` when there is nothing.
    pub fn stat(&self, name: &OsStr) -> io::Result<Option<FileStat>> {
        match fstatat(self.0.as_fd(), name, AtFlags::AT_SYMLINK_NOFOLLOW) {
            Ok(stat) => Ok(Some(stat)),
            Err(Errno::ENOENT) => Ok(None),
            Err(e) => Err(io_err(e)),
        }
    }

    /// Removes `name` (a link itself, never its target; a directory with all it holds).
    pub fn remove(&self, name: &OsStr) -> io::Result<Removed> {
        match self.kind(name)? {
            None => Ok(Removed::Nothing),
            Some(Kind::Dir) => {
                let inner = self.child(name)?;
                inner.empty()?;
                unlinkat(self.0.as_fd(), name, UnlinkatFlags::RemoveDir).map_err(io_err)?;
                Ok(Removed::Tree)
            }
            Some(_) => {
                unlinkat(self.0.as_fd(), name, UnlinkatFlags::NoRemoveDir).map_err(io_err)?;
                Ok(Removed::Entry)
            }
        }
    }

    /// Removes everything inside this directory.
    fn empty(&self) -> io::Result<()> {
        let mut listing =
            nix::dir::Dir::openat(self.0.as_fd(), OsStr::new("."), dir_flags(), Mode::empty())
                .map_err(io_err)?;
        let names: Vec<OsString> = listing
            .iter()
            .filter_map(Result::ok)
            .map(|e| OsStr::from_bytes(e.file_name().to_bytes()).to_os_string())
            .filter(|n| n != "." && n != "..")
            .collect();
        for name in names {
            self.remove(&name)?;
        }
        Ok(())
    }

    /// The names in this directory (`.` and `..` left out), unsorted.
    pub fn list(&self) -> io::Result<Vec<OsString>> {
        let mut listing =
            nix::dir::Dir::openat(self.0.as_fd(), OsStr::new("."), dir_flags(), Mode::empty())
                .map_err(io_err)?;
        Ok(listing
            .iter()
            .filter_map(Result::ok)
            .map(|e| OsStr::from_bytes(e.file_name().to_bytes()).to_os_string())
            .filter(|n| n != "." && n != "..")
            .collect())
    }

    /// Writes `bytes` as the file `name` with `mode`, replacing whatever was there (a link is
    /// replaced, never written through): a new file is created beside it with `O_EXCL` and
    /// renamed over it.
    pub fn replace_file(&self, name: &OsStr, bytes: &[u8], mode: u32) -> io::Result<()> {
        let mut temp = OsString::from(".butler-new-");
        temp.push(name);
        let _ = unlinkat(self.0.as_fd(), temp.as_os_str(), UnlinkatFlags::NoRemoveDir);
        let fd = openat(
            self.0.as_fd(),
            temp.as_os_str(),
            OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
            Mode::from_bits_truncate(mode),
        )
        .map_err(io_err)?;
        let mut file = std::fs::File::from(fd);
        let written = file.write_all(bytes).and_then(|()| file.sync_all());
        drop(file);
        let placed = written.and_then(|()| {
            if self.kind(name)? == Some(Kind::Dir) {
                self.remove(name)?;
            }
            renameat(self.0.as_fd(), temp.as_os_str(), self.0.as_fd(), name).map_err(io_err)
        });
        if placed.is_err() {
            let _ = unlinkat(self.0.as_fd(), temp.as_os_str(), UnlinkatFlags::NoRemoveDir);
        }
        placed
    }

    /// The bytes of the regular file `name` (a link is not followed: an error).
    pub fn read(&self, name: &OsStr) -> io::Result<Vec<u8>> {
        let fd = openat(
            self.0.as_fd(),
            name,
            OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC,
            Mode::empty(),
        )
        .map_err(io_err)?;
        let mut file = std::fs::File::from(fd);
        if !file.metadata()?.is_file() {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "not a file"));
        }
        let mut bytes = Vec::new();
        io::Read::read_to_end(&mut file, &mut bytes)?;
        Ok(bytes)
    }

    /// Moves `name` to `to`'s `to_name` (links moved as links).
    pub fn move_to(&self, name: &OsStr, to: &Dir, to_name: &OsStr) -> io::Result<()> {
        renameat(self.0.as_fd(), name, to.0.as_fd(), to_name).map_err(io_err)
    }

    /// Sets the permission bits of `name` (never of what a link points at: a link is left
    /// alone and `Ok(false)` returned). Returns whether it was changed.
    pub fn set_mode(&self, name: &OsStr, mode: u32) -> io::Result<bool> {
        let Some(stat) = self.stat(name)? else {
            return Ok(false);
        };
        if kind_of(&stat) == Kind::Link {
            return Ok(false);
        }
        if stat.st_mode & 0o7777 == mode & 0o7777 {
            return Ok(false);
        }
        // Through an `O_PATH` handle of the entry itself: a link swapped in meanwhile is not
        // followed (the handle is of the link, which `fchmodat` then refuses).
        let fd = openat(
            self.0.as_fd(),
            name,
            OFlag::O_PATH | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
            Mode::empty(),
        )
        .map_err(io_err)?;
        let held = fstatat(fd.as_fd(), "", AtFlags::AT_EMPTY_PATH).map_err(io_err)?;
        if kind_of(&held) == Kind::Link {
            return Ok(false);
        }
        let proc_path = format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(&fd));
        std::fs::set_permissions(
            proc_path,
            std::os::unix::fs::PermissionsExt::from_mode(mode & 0o7777),
        )?;
        Ok(true)
    }
}

fn is_not_a_dir(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error().map(Errno::from_raw),
        Some(Errno::ENOENT | Errno::ENOTDIR | Errno::ELOOP)
    )
}

/// Removes `rel` under the directory `root`, never following a link (see the module).
pub fn remove(root: &Path, rel: &Path) -> io::Result<Removed> {
    let top = Dir::open(root)?;
    match top.parent_of(rel)? {
        Some((dir, name)) => dir.remove(&name),
        None => Ok(Removed::Nothing),
    }
}

/// Writes `bytes` as the file at `path` (its parent directories are Butler's own and are
/// opened as they are; the file itself is replaced, a link there never written through).
pub fn replace_file(path: &Path, bytes: &[u8], mode: u32) -> io::Result<()> {
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "no file name"));
    };
    Dir::open(parent)?.replace_file(name, bytes, mode)
}

/// `lstat` of `rel` under `root` walked without following links; `None` when there is nothing
/// there (or a parent is not a directory).
pub fn stat(root: &Path, rel: &Path) -> io::Result<Option<FileStat>> {
    let top = Dir::open(root)?;
    match top.parent_of(rel)? {
        Some((dir, name)) => dir.stat(&name),
        None => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::{PermissionsExt, symlink};

    use super::*;

    fn tree() -> (tempfile::TempDir, tempfile::TempDir) {
        let inside = tempfile::tempdir().expect("tempdir");
        let outside = tempfile::tempdir().expect("tempdir");
        std::fs::write(outside.path().join("precious"), "mine").expect("write");
        std::fs::create_dir(outside.path().join("dir")).expect("mkdir");
        std::fs::write(outside.path().join("dir/also"), "mine").expect("write");
        (inside, outside)
    }

    #[test]
    fn a_link_in_the_middle_of_a_path_is_never_followed() {
        let (inside, outside) = tree();
        symlink(outside.path(), inside.path().join("src")).expect("symlink");
        for rel in ["src/precious", "src/dir", "src/dir/also"] {
            assert_eq!(
                remove(inside.path(), Path::new(rel)).expect("remove"),
                Removed::Nothing,
                "{rel}"
            );
        }
        assert!(outside.path().join("precious").is_file());
        assert!(outside.path().join("dir/also").is_file());
        assert_eq!(
            stat(inside.path(), Path::new("src/precious")).expect("stat"),
            None
        );
        // The link itself is what is removed.
        assert_eq!(
            remove(inside.path(), Path::new("src")).expect("remove"),
            Removed::Entry
        );
        assert!(outside.path().join("precious").is_file());
        assert!(!inside.path().join("src").exists());
    }

    #[test]
    fn removing_a_directory_never_descends_into_a_link_inside_it() {
        let (inside, outside) = tree();
        std::fs::create_dir_all(inside.path().join("build/deep")).expect("mkdir");
        std::fs::write(inside.path().join("build/deep/x.o"), "o").expect("write");
        symlink(outside.path(), inside.path().join("build/deep/home")).expect("symlink");
        symlink(
            outside.path().join("precious"),
            inside.path().join("build/p"),
        )
        .expect("symlink");
        assert_eq!(
            remove(inside.path(), Path::new("build")).expect("remove"),
            Removed::Tree
        );
        assert!(!inside.path().join("build").exists());
        assert_eq!(
            std::fs::read_to_string(outside.path().join("precious")).expect("read"),
            "mine"
        );
        assert!(outside.path().join("dir/also").is_file());
        assert_eq!(
            remove(inside.path(), Path::new("../x")).expect("remove"),
            Removed::Nothing
        );
    }

    #[test]
    fn a_directory_swapped_for_a_link_after_it_was_opened_changes_nothing() {
        let (inside, outside) = tree();
        std::fs::create_dir(inside.path().join("src")).expect("mkdir");
        std::fs::write(inside.path().join("src/precious"), "agent's").expect("write");
        let top = Dir::open(inside.path()).expect("open");
        let (dir, name) = top
            .parent_of(Path::new("src/precious"))
            .expect("walk")
            .expect("there");
        // The agent renames the directory away and puts a link to the user's files there.
        std::fs::rename(inside.path().join("src"), inside.path().join("moved")).expect("mv");
        symlink(outside.path(), inside.path().join("src")).expect("symlink");
        assert_eq!(dir.remove(&name).expect("remove"), Removed::Entry);
        assert!(!inside.path().join("moved/precious").exists());
        assert_eq!(
            std::fs::read_to_string(outside.path().join("precious")).expect("read"),
            "mine"
        );
    }

    #[test]
    fn replacing_a_file_replaces_a_link_instead_of_writing_through_it() {
        let (inside, outside) = tree();
        symlink(outside.path().join("precious"), inside.path().join(".git")).expect("symlink");
        replace_file(&inside.path().join(".git"), b"gitdir: x\n", 0o644).expect("replace");
        assert_eq!(
            std::fs::read_to_string(inside.path().join(".git")).expect("read"),
            "gitdir: x\n"
        );
        assert!(!inside.path().join(".git").is_symlink());
        assert_eq!(
            std::fs::read_to_string(outside.path().join("precious")).expect("read"),
            "mine"
        );
        // A directory there is replaced too.
        std::fs::remove_file(inside.path().join(".git")).expect("rm");
        std::fs::create_dir(inside.path().join(".git")).expect("mkdir");
        replace_file(&inside.path().join(".git"), b"gitdir: y\n", 0o644).expect("replace");
        assert!(inside.path().join(".git").is_file());
    }

    #[test]
    fn modes_are_set_on_entries_never_through_links() {
        let (inside, outside) = tree();
        let file = inside.path().join("f");
        std::fs::write(&file, "f").expect("write");
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o000)).expect("chmod");
        symlink(outside.path().join("precious"), inside.path().join("l")).expect("symlink");
        let before = std::fs::metadata(outside.path().join("precious"))
            .expect("meta")
            .permissions()
            .mode();
        let top = Dir::open(inside.path()).expect("open");
        assert!(top.set_mode(OsStr::new("f"), 0o644).expect("chmod"));
        assert!(!top.set_mode(OsStr::new("f"), 0o644).expect("unchanged"));
        assert!(!top.set_mode(OsStr::new("l"), 0o777).expect("a link"));
        assert_eq!(
            std::fs::metadata(&file).expect("meta").permissions().mode() & 0o7777,
            0o644
        );
        assert_eq!(
            std::fs::metadata(outside.path().join("precious"))
                .expect("meta")
                .permissions()
                .mode(),
            before
        );
    }
}
