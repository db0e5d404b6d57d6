//! How the settings `butler init` writes name Butler's programs, and how `doctor` finds them
//! again.
//!
//! By name (`butler`, `butler-git-hook`) when the shell finds this very binary under that name
//! on `PATH` — the same file once links are followed, as after `cargo install --locked --path .` — so
//! `.mcp.json` and `.claude/settings.json` can be committed and shared by a team whose members
//! each have Butler installed. Otherwise by absolute path, as a build directory's binary must be.
//! Only absolute `PATH` directories count: a relative one would find a different program
//! depending on where the client starts.

use std::ffi::OsStr;
use std::fmt;
use std::path::{Path, PathBuf};

use super::fast_hook_beside;

/// The name the hook-only binary is installed under.
const FAST_HOOK: &str = "butler-git-hook";

/// What the settings run, and why that was chosen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launch {
    /// The MCP server command in `.mcp.json`.
    pub server: String,
    /// The program the hook command runs (followed by ` git-hook`).
    pub hook: String,
    /// Whether the settings name the programs (found on `PATH`) rather than their paths.
    pub by_name: bool,
    /// Why, for the person who ran `init`.
    pub reason: String,
}

impl Launch {
    /// The programs by their absolute paths (the hook-only binary beside `exe` when there is
    /// one), whatever `PATH` says.
    pub fn absolute(exe: &Path) -> Launch {
        let exe = std::path::absolute(exe).unwrap_or_else(|_| exe.to_owned());
        let hook = fast_hook_beside(&exe).unwrap_or_else(|| exe.clone());
        Launch {
            server: exe.to_string_lossy().into_owned(),
            hook: hook.to_string_lossy().into_owned(),
            by_name: false,
            reason: "the settings name this binary by its absolute path".to_owned(),
        }
    }

    /// By name when `PATH` (`path_var`) leads to `exe` itself under its own name, else by
    /// absolute path; `reason` says which and why.
    pub fn resolve(exe: &Path, path_var: Option<&OsStr>) -> Launch {
        let mut absolute = Launch::absolute(exe);
        let exe = PathBuf::from(&absolute.server);
        let Some(name) = exe
            .file_name()
            .and_then(OsStr::to_str)
            .filter(|n| is_plain_name(n))
        else {
            return absolute;
        };
        match find_on_path(name, path_var) {
            Some(found) if same_file(&found, &exe) => {
                let fast = fast_hook_beside(&exe);
                let hook = match (fast, find_on_path(FAST_HOOK, path_var)) {
                    (Some(fast), Some(found)) if same_file(&found, &fast) => FAST_HOOK,
                    _ => name,
                };
                Launch {
                    server: name.to_owned(),
                    hook: hook.to_owned(),
                    by_name: true,
                    reason: format!(
                        "`{name}` on PATH is this binary ({}), so the settings say `{name}` and \
                         can be committed and shared",
                        found.display()
                    ),
                }
            }
            Some(found) => {
                absolute.reason = format!(
                    "`{name}` on PATH is {}, not this binary, so the settings name this one by \
                     its absolute path",
                    found.display()
                );
                absolute
            }
            None => {
                absolute.reason = format!(
                    "`{name}` is not on PATH, so the settings name this binary by its absolute \
                     path (after `cargo install --locked --path .` they can say `{name}`)"
                );
                absolute
            }
        }
    }
}

impl fmt::Display for Launch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Runs `{}`: {}.", self.server, self.reason)
    }
}

/// A program name a shell looks up on `PATH` and JSON and shell words carry as they are.
fn is_plain_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'+'))
}

/// The program a shell runs for `name`: the first executable file `DIR/name` over `PATH`'s
/// absolute directories.
pub fn find_on_path(name: &str, path_var: Option<&OsStr>) -> Option<PathBuf> {
    std::env::split_paths(path_var?)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(name))
        .find(|candidate| butler_worker::process::is_executable(candidate))
}

/// Whether two paths lead to the same file once links are followed.
pub fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    fn program(path: &Path) {
        butler_testkit::write_executable(path, "#!/bin/sh\nexit 0\n");
    }

    fn path_of(dirs: &[&Path]) -> OsString {
        std::env::join_paths(dirs).expect("joins")
    }

    #[test]
    fn this_binary_found_on_path_is_named_with_its_fast_hook() {
        let dir = tempfile::tempdir().expect("tempdir");
        let bin = dir.path().join("bin");
        program(&bin.join("butler"));
        program(&bin.join("butler-git-hook"));
        let path = path_of(&[Path::new("/nonexistent"), &bin]);
        let launch = Launch::resolve(&bin.join("butler"), Some(&path));
        assert!(launch.by_name, "{launch}");
        assert_eq!(launch.server, "butler");
        assert_eq!(launch.hook, "butler-git-hook");
        assert!(launch.to_string().contains("can be committed"), "{launch}");
    }

    #[test]
    fn a_link_on_path_to_this_binary_counts_and_a_missing_fast_hook_falls_back() {
        let dir = tempfile::tempdir().expect("tempdir");
        let build = dir.path().join("target/release");
        program(&build.join("butler"));
        let bin = dir.path().join("bin");
        std::fs::create_dir_all(&bin).expect("mkdir");
        std::os::unix::fs::symlink(build.join("butler"), bin.join("butler")).expect("link");
        let launch = Launch::resolve(&build.join("butler"), Some(&path_of(&[&bin])));
        assert_eq!(
            (launch.server.as_str(), launch.hook.as_str()),
            ("butler", "butler")
        );
    }

    #[test]
    fn another_butler_first_on_path_or_none_means_absolute_paths() {
        let dir = tempfile::tempdir().expect("tempdir");
        let build = dir.path().join("target/debug");
        program(&build.join("butler"));
        program(&build.join("butler-git-hook"));
        let other = dir.path().join("other");
        program(&other.join("butler"));
        let exe = build.join("butler");
        let launch = Launch::resolve(&exe, Some(&path_of(&[&other, &build])));
        assert!(!launch.by_name);
        assert_eq!(launch.server, exe.to_string_lossy());
        assert_eq!(launch.hook, build.join("butler-git-hook").to_string_lossy());
        assert!(launch.reason.contains("not this binary"), "{launch}");
        for path in [None, Some(path_of(&[Path::new("/nonexistent")]))] {
            let launch = Launch::resolve(&exe, path.as_deref());
            assert!(!launch.by_name);
            assert!(
                launch.reason.contains("cargo install --locked --path ."),
                "{launch}"
            );
        }
    }

    #[test]
    fn relative_path_entries_and_non_executables_are_not_found() {
        let dir = tempfile::tempdir().expect("tempdir");
        let bin = dir.path().join("bin");
        std::fs::create_dir_all(&bin).expect("mkdir");
        std::fs::write(bin.join("butler"), "not executable").expect("write");
        assert_eq!(find_on_path("butler", Some(&path_of(&[&bin]))), None);
        assert_eq!(find_on_path("butler", Some(OsStr::new("bin:."))), None);
        assert_eq!(find_on_path("butler", None), None);
    }
}
