//! A tree granted except some paths inside it. Landlock rules only add rights, and a rule on a
//! directory covers everything beneath it, so a deny list has to be built from what may be
//! reached: a tree holding no denied path is one rule; a tree holding one gets a rule for each
//! of its other entries, the directory on the way down to the denied path is split the same
//! way, and the denied entry gets nothing.
//!
//! The directories on the way down ([`Grant::Along`]) get listing rights only (the caller's
//! choice, see `landlock_rules`): a rule on a directory holds for everything beneath it, so any
//! other right given to them would reach into the denied entry too.

use std::path::{Path, PathBuf};

/// What one carved path gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Grant {
    /// The whole tree (or file): nothing denied inside.
    Tree,
    /// A directory on the way down to a denied path.
    Along,
}

/// One rule of a carved tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Carved {
    pub path: PathBuf,
    pub grant: Grant,
    /// A directory (files get file rights only).
    pub dir: bool,
}

/// The denied paths as the kernel sees them: each one that exists, at its real location (links
/// on the way and at its end resolved), and — when the path itself is a link — the link in its
/// real parent too. Paths that do not exist are dropped (nothing to deny).
pub(crate) fn resolve(denied: &[PathBuf]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    let mut push = |p: PathBuf| {
        if !out.contains(&p) {
            out.push(p);
        }
    };
    for path in denied {
        if std::fs::symlink_metadata(path).is_err() {
            continue;
        }
        if let (Some(parent), Some(name)) = (path.parent(), path.file_name())
            && let Ok(parent) = std::fs::canonicalize(parent)
        {
            push(parent.join(name));
        }
        if let Ok(target) = std::fs::canonicalize(path) {
            push(target);
        }
    }
    out
}

/// The rules of `root` (a real path, links resolved) without the `denied` paths (real paths,
/// from [`resolve`]). A denied `root` gets nothing; a root beneath a denied path is granted
/// whole (it was named on its own, as a task's worktree inside Butler's data directory is).
/// Links among the entries get no rule: what they point to is reached by its own path. A
/// directory that cannot be listed on the way gets its listing rule only.
pub(crate) fn carve(root: &Path, denied: &[PathBuf]) -> Vec<Carved> {
    let mut out = Vec::new();
    let Ok(meta) = std::fs::metadata(root) else {
        return out;
    };
    let inside: Vec<&Path> = denied
        .iter()
        .map(PathBuf::as_path)
        .filter(|d| d.starts_with(root))
        .collect();
    walk(root, meta.is_dir(), &inside, &mut out);
    out
}

fn walk(path: &Path, dir: bool, denied: &[&Path], out: &mut Vec<Carved>) {
    if denied.is_empty() {
        out.push(Carved {
            path: path.to_path_buf(),
            grant: Grant::Tree,
            dir,
        });
        return;
    }
    if denied.contains(&path) || !dir {
        return;
    }
    out.push(Carved {
        path: path.to_path_buf(),
        grant: Grant::Along,
        dir,
    });
    let Ok(entries) = std::fs::read_dir(path) else {
        return;
    };
    for entry in entries.flatten() {
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_symlink() {
            continue;
        }
        let child = entry.path();
        let below: Vec<&Path> = denied
            .iter()
            .copied()
            .filter(|d| d.starts_with(&child))
            .collect();
        walk(&child, kind.is_dir(), &below, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(root: &Path, dirs: &[&str], files: &[&str]) {
        for d in dirs {
            std::fs::create_dir_all(root.join(d)).expect("mkdir");
        }
        for f in files {
            std::fs::write(root.join(f), "x").expect("write");
        }
    }

    /// The rules, relative to `root`, sorted: `path` for a whole tree, `path/` (along) for a
    /// directory on the way down.
    fn shown(root: &Path, carved: &[Carved]) -> Vec<String> {
        let mut v: Vec<String> = carved
            .iter()
            .map(|c| {
                let rel = c
                    .path
                    .strip_prefix(root)
                    .expect("inside")
                    .display()
                    .to_string();
                match c.grant {
                    Grant::Tree => rel,
                    Grant::Along => format!("{rel}/ (along)"),
                }
            })
            .collect();
        v.sort();
        v
    }

    #[test]
    fn siblings_along_the_way_are_granted_and_the_denied_entries_are_not() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = std::fs::canonicalize(tmp.path()).expect("real");
        tree(
            &root,
            &[
                "home/.ssh",
                "home/.config/gh",
                "home/.config/nvim",
                "home/src/p",
                "usr/bin",
            ],
            &[
                "home/.ssh/id_ed25519",
                "home/.netrc",
                "home/.bashrc",
                "home/.config/gh/hosts.yml",
                "home/.config/nvim/init.lua",
                "usr/bin/env",
            ],
        );
        let denied = resolve(&[
            root.join("home/.ssh"),
            root.join("home/.netrc"),
            root.join("home/.config/gh"),
            root.join("home/.aws"),
        ]);
        assert_eq!(denied.len(), 3, "a path that does not exist is dropped");
        assert_eq!(
            shown(&root, &carve(&root, &denied)),
            [
                "/ (along)",
                "home/ (along)",
                "home/.bashrc",
                "home/.config/ (along)",
                "home/.config/nvim",
                "home/src",
                "usr",
            ]
        );
        let files: Vec<bool> = carve(&root.join("home"), &denied)
            .iter()
            .filter(|c| c.path.ends_with(".bashrc"))
            .map(|c| c.dir)
            .collect();
        assert_eq!(files, [false]);
    }

    #[test]
    fn a_tree_without_denied_paths_is_one_rule_and_a_denied_root_gets_none() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = std::fs::canonicalize(tmp.path()).expect("real");
        tree(&root, &["data/butler/wt/task-t1", "other"], &[]);
        let denied = resolve(&[root.join("data/butler")]);
        let wt = root.join("data/butler/wt/task-t1");
        assert_eq!(
            carve(&wt, &denied),
            [Carved {
                path: wt.clone(),
                grant: Grant::Tree,
                dir: true
            }],
            "a tree named on its own beneath a denied path"
        );
        assert_eq!(carve(&root.join("other"), &denied).len(), 1);
        assert!(carve(&root.join("data/butler"), &denied).is_empty());
        assert!(carve(&root.join("missing"), &denied).is_empty());
    }

    #[test]
    fn links_are_denied_at_their_target_and_never_followed_into_a_grant() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = std::fs::canonicalize(tmp.path()).expect("real");
        tree(
            &root,
            &["home", "vault/ssh", "vault/public"],
            &["vault/ssh/id_rsa", "home/notes"],
        );
        std::os::unix::fs::symlink(root.join("vault/ssh"), root.join("home/.ssh")).expect("link");
        // A link elsewhere in the home that leads into the denied tree gets no rule either.
        std::os::unix::fs::symlink(root.join("vault/ssh"), root.join("home/keys")).expect("link");
        let denied = resolve(&[root.join("home/.ssh")]);
        assert_eq!(denied, [root.join("home/.ssh"), root.join("vault/ssh")]);
        assert_eq!(
            shown(&root, &carve(&root, &denied)),
            [
                "/ (along)",
                "home/ (along)",
                "home/notes",
                "vault/ (along)",
                "vault/public",
            ]
        );
        // A home reached through a link is walked at its real place.
        std::os::unix::fs::symlink(root.join("home"), root.join("h")).expect("link");
        let denied = resolve(&[root.join("h/.ssh")]);
        assert!(denied.contains(&root.join("home/.ssh")), "{denied:?}");
    }
}
