//! Butler's own git objects and references, read and written in-process: the operation log's
//! blobs, trees and commits, the references that keep them, the reading of the project's
//! references and `HEAD` a snapshot needs, and the trees of small index files.
//!
//! These went through git's plumbing (`write-tree`, `hash-object`, `mktree`, `commit-tree`,
//! `update-ref`, `for-each-ref`, `symbolic-ref`, `rev-parse`, `cat-file`): about fifteen
//! processes for every operation Butler logs, for objects no hook, filter or setting of the
//! person's applies to. libgit2 writes them as git does (loose objects, references under their
//! `.lock`), and the repositories it cannot open (another object format, reftable) Butler
//! cannot open at all. Staging the working tree (`git add -A`, with the person's ignore rules
//! and filters) stays git's, and so does the tree of an index libgit2 would read otherwise
//! ([`ObjectStore::index_tree`]).

use std::cmp::Ordering;
use std::path::Path;

use git2::{ErrorCode, ObjectType, Oid, Repository};

use super::{GitError, GitRepo};

/// The largest index file whose tree is written in-process. libgit2 rebuilds every tree of
/// an index in which anything changed, where `git write-tree` reuses those of unchanged
/// directories: measured (dev profile, 2 cores), in-process 0.9 ms for 100 files against
/// 5.2 ms for starting git, 2.4 ms against 7.3 ms for 1,000 (a 72 KiB index), but 12.9 ms
/// against 8.7 ms for 5,000 and 44 ms against 11 ms for 20,000.
const IN_PROCESS_INDEX: u64 = 128 << 10;

/// Who Butler's own commits are by.
const SIGNATURE: &str = "Butler <butler@localhost>";

/// What a tree entry holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Tree,
    Blob,
}

impl Kind {
    /// The mode git writes in a tree object.
    fn mode(self) -> &'static [u8] {
        match self {
            Kind::Tree => b"40000",
            Kind::Blob => b"100644",
        }
    }
}

/// One reference, as `git for-each-ref` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Reference {
    pub name: String,
    /// The object it names (for a symbolic reference, the one at the end of it).
    pub oid: String,
    pub kind: ObjectType,
    /// For a tag object: what it tags.
    pub tagged: Option<String>,
}

/// A repository opened for these reads and writes.
pub(super) struct ObjectStore(Repository);

impl ObjectStore {
    pub(super) fn open(repo: &GitRepo) -> Result<ObjectStore, GitError> {
        Ok(ObjectStore(repo.open()?))
    }

    /// Writes `bytes` as a blob, unfiltered (`git hash-object -w --no-filters --stdin`).
    pub(super) fn write_blob(&self, bytes: &[u8]) -> Result<String, GitError> {
        Ok(self.0.blob(bytes)?.to_string())
    }

    /// Writes a tree of these entries (`git mktree --missing`): sorted as git sorts them, the
    /// objects not looked up. A name must be one path component.
    pub(super) fn write_tree<S: AsRef<str>>(
        &self,
        entries: &[(Kind, S, S)],
    ) -> Result<String, GitError> {
        let mut sorted: Vec<(Kind, &str, &str)> = entries
            .iter()
            .map(|(kind, name, oid)| (*kind, name.as_ref(), oid.as_ref()))
            .collect();
        sorted.sort_by(|a, b| tree_order((a.0, a.1), (b.0, b.1)));
        let mut bytes = Vec::new();
        for (pos, (kind, name, oid)) in sorted.iter().enumerate() {
            if name.is_empty() || name.contains(['/', '\0']) || *name == "." || *name == ".." {
                return Err(GitError::failed("oplog tree", format!("bad name {name:?}")));
            }
            if pos > 0 && sorted[pos - 1].1 == *name {
                return Err(GitError::failed("oplog tree", format!("{name} twice")));
            }
            bytes.extend_from_slice(kind.mode());
            bytes.push(b' ');
            bytes.extend_from_slice(name.as_bytes());
            bytes.push(0);
            bytes.extend_from_slice(Oid::from_str(oid)?.as_bytes());
        }
        Ok(self.0.odb()?.write(ObjectType::Tree, &bytes)?.to_string())
    }

    /// Writes a commit of `tree` by Butler at `at` (Unix seconds, UTC) with `message` as given
    /// (`git commit-tree -F -`). Each of `parents` is peeled to the commit it leads to (a tag,
    /// also a tag of a tag, to the commit it tags), and a commit named twice is a parent once;
    /// what leads to no commit this repository has is left out. `commit-tree` refuses the whole
    /// commit for any of these: a parent must be a commit, and `gc` could not walk past a
    /// missing one.
    pub(super) fn write_commit<'a>(
        &self,
        tree: &str,
        parents: impl IntoIterator<Item = &'a String>,
        message: &str,
        at: i64,
    ) -> Result<String, GitError> {
        let mut text = format!("tree {}\n", Oid::from_str(tree)?);
        let mut written = Vec::new();
        for parent in parents {
            let commit = Oid::from_str(parent)
                .and_then(|oid| self.0.find_object(oid, None))
                .and_then(|object| object.peel_to_commit());
            if let Ok(commit) = commit
                && !written.contains(&commit.id())
            {
                written.push(commit.id());
                text.push_str(&format!("parent {}\n", commit.id()));
            }
        }
        text.push_str(&format!(
            "author {SIGNATURE} {at} +0000\ncommitter {SIGNATURE} {at} +0000\n\n{message}"
        ));
        Ok(self
            .0
            .odb()?
            .write(ObjectType::Commit, text.as_bytes())?
            .to_string())
    }

    /// Points the reference `name` at `oid` (`git update-ref name oid`).
    pub(super) fn set_ref(&self, name: &str, oid: &str) -> Result<(), GitError> {
        self.0
            .reference(name, Oid::from_str(oid)?, true, "butler oplog")?;
        Ok(())
    }

    /// Deletes the reference `name`, if there is one (`git update-ref -d name`).
    pub(super) fn delete_ref(&self, name: &str) -> Result<(), GitError> {
        match self.0.find_reference(name) {
            Ok(mut reference) => Ok(reference.delete()?),
            Err(e) if e.code() == ErrorCode::NotFound => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    /// The references whose names start with `prefix` and the objects they name (through a
    /// symbolic reference: the object it leads to), sorted by name. Like `git for-each-ref`, it
    /// leaves out symbolic references that lead nowhere.
    pub(super) fn targets(&self, prefix: &str) -> Result<Vec<(String, Oid)>, GitError> {
        let mut out = Vec::new();
        for reference in self.0.references_glob(&format!("{prefix}*"))? {
            let reference = reference?;
            let name = String::from_utf8_lossy(reference.name_bytes()).into_owned();
            if !name.starts_with(prefix) {
                continue;
            }
            if let Some(oid) = reference.resolve().ok().and_then(|r| r.target()) {
                out.push((name, oid));
            }
        }
        out.sort();
        Ok(out)
    }

    /// [`Self::targets`] with what each object is; references to objects the repository
    /// lacks are left out, as `git for-each-ref` leaves them.
    pub(super) fn references(&self, prefix: &str) -> Result<Vec<Reference>, GitError> {
        let odb = self.0.odb()?;
        let mut out = Vec::new();
        for (name, oid) in self.targets(prefix)? {
            let Ok((_, kind)) = odb.read_header(oid) else {
                continue;
            };
            let tagged = match kind {
                ObjectType::Tag => Some(self.0.find_tag(oid)?.target_id().to_string()),
                _ => None,
            };
            out.push(Reference {
                name,
                oid: oid.to_string(),
                kind,
                tagged,
            });
        }
        Ok(out)
    }

    /// `HEAD` as a line: `ref: refs/heads/x` (also while that branch has no commit yet) or a
    /// commit id; empty when there is no `HEAD`.
    pub(super) fn head_line(&self) -> Result<String, GitError> {
        match self.0.find_reference("HEAD") {
            Ok(head) => Ok(match head.symbolic_target_bytes() {
                Some(name) => format!("ref: {}", String::from_utf8_lossy(name)),
                None => head.target().map(|o| o.to_string()).unwrap_or_default(),
            }),
            Err(e) if e.code() == ErrorCode::NotFound => Ok(String::new()),
            Err(e) => Err(e.into()),
        }
    }

    /// The commit `HEAD` leads to (`git rev-parse -q --verify HEAD^{commit}`): `None` on a
    /// branch without commits, or when it names something else.
    pub(super) fn head_commit(&self) -> Result<Option<String>, GitError> {
        match self.0.head() {
            Ok(head) => Ok(head.peel_to_commit().ok().map(|c| c.id().to_string())),
            Err(e) if matches!(e.code(), ErrorCode::UnbornBranch | ErrorCode::NotFound) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// The blob `oid`'s bytes.
    pub(super) fn read_blob(&self, oid: &str) -> Result<Vec<u8>, GitError> {
        Ok(self.0.find_blob(Oid::from_str(oid)?)?.content().to_vec())
    }

    /// The text of the commit `oid` (headers, a blank line, the message); an error when it is
    /// not a commit.
    pub(super) fn read_commit(&self, oid: &str) -> Result<String, GitError> {
        let odb = self.0.odb()?;
        let object = odb.read(Oid::from_str(oid)?)?;
        if object.kind() != ObjectType::Commit {
            return Err(GitError::failed(
                "oplog read",
                format!("{oid} is a {}, not a commit", object.kind()),
            ));
        }
        Ok(String::from_utf8_lossy(object.data()).into_owned())
    }

    /// The id of the entry `name` of the tree of `treeish` (a commit or a tree): `treeish:name`.
    pub(super) fn entry(&self, treeish: &str, name: &str) -> Result<Option<String>, GitError> {
        let tree = self
            .0
            .find_object(Oid::from_str(treeish)?, None)?
            .peel_to_tree()?;
        Ok(tree.get_name(name).map(|e| e.id().to_string()))
    }

    /// The tree `git write-tree --missing-ok` writes from the index file `path`, when libgit2
    /// writes the same one, and sooner. `None` leaves it to git: an index over
    /// [`IN_PROCESS_INDEX`] bytes, one libgit2 cannot read (a split or sparse index), one with
    /// conflict stages (of which git writes no tree), one with intent-to-add entries (git
    /// leaves them out of the tree, libgit2 would write them as empty files).
    pub(super) fn index_tree(&self, path: &Path) -> Option<String> {
        if std::fs::metadata(path).map_or(0, |m| m.len()) > IN_PROCESS_INDEX {
            return None;
        }
        let mut index = git2::Index::open(path).ok()?;
        let intent = git2::IndexEntryExtendedFlag::INTENT_TO_ADD.bits();
        if index.has_conflicts() || index.iter().any(|e| e.flags_extended & intent != 0) {
            return None;
        }
        Some(index.write_tree_to(&self.0).ok()?.to_string())
    }

    /// The entries of the tree `tree`, in its order: mode, name, id.
    pub(super) fn entries(&self, tree: &str) -> Result<Vec<(i32, String, String)>, GitError> {
        let tree = self.0.find_tree(Oid::from_str(tree)?)?;
        Ok(tree
            .iter()
            .map(|e| {
                let name = String::from_utf8_lossy(e.name_bytes()).into_owned();
                (e.filemode(), name, e.id().to_string())
            })
            .collect())
    }
}

/// git's order of tree entries: by name, a tree's name read as if it ended in `/`.
fn tree_order(a: (Kind, &str), b: (Kind, &str)) -> Ordering {
    let key = |(kind, name): (Kind, &str)| {
        let mut key = name.as_bytes().to_vec();
        if kind == Kind::Tree {
            key.push(b'/');
        }
        key
    };
    key(a).cmp(&key(b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::git::command::GitCommand;
    use crate::git::test_repo::committed;

    fn git(repo: &GitRepo, args: &[&str], stdin: &[u8]) -> String {
        let out = GitCommand::new(repo, "test")
            .args(args)
            .stdin(stdin.to_vec())
            .run_ok()
            .expect("git");
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    #[test]
    fn objects_are_the_ones_git_writes() {
        let (_w, repo) = committed();
        let store = ObjectStore::open(&repo).expect("open");
        let blob = store.write_blob(b"one\ntwo\n").expect("blob");
        assert_eq!(
            blob,
            git(
                &repo,
                &["hash-object", "-w", "--no-filters", "--stdin"],
                b"one\ntwo\n"
            )
        );
        let sub = store.write_tree(&[(Kind::Blob, "x", &blob)]).expect("tree");
        // Names git orders differently from plain byte order: `a` the tree sorts as `a/`.
        let names = [
            (Kind::Tree, "a"),
            (Kind::Blob, "a.b"),
            (Kind::Blob, "a-"),
            (Kind::Blob, "b"),
            (Kind::Tree, "ab"),
            (Kind::Blob, "a0"),
        ];
        let entries: Vec<(Kind, &str, &str)> = names
            .iter()
            .map(|(kind, name)| {
                let oid = if *kind == Kind::Tree { &sub } else { &blob };
                (*kind, *name, oid.as_str())
            })
            .collect();
        let tree = store.write_tree(&entries).expect("tree");
        let mut listing = Vec::new();
        for (kind, name, oid) in entries.iter().rev() {
            let (mode, word) = match kind {
                Kind::Tree => ("040000", "tree"),
                Kind::Blob => ("100644", "blob"),
            };
            listing.extend_from_slice(format!("{mode} {word} {oid}\t{name}").as_bytes());
            listing.push(0);
        }
        assert_eq!(tree, git(&repo, &["mktree", "-z"], &listing));
        let head = git(&repo, &["rev-parse", "HEAD"], b"");
        // A tag is peeled to its commit and the commit is a parent once; a blob, a missing
        // object and a word that is no id lead to no commit (git's `-p` refuses all of these).
        git(&repo, &["tag", "-a", "-m", "v1", "v1"], b"");
        let tag = git(&repo, &["rev-parse", "v1"], b"");
        let parents = vec![
            tag.clone(),
            tag.clone(),
            blob.clone(),
            "0".repeat(40),
            "not hex".into(),
        ];
        let message = "work_vcs: git reset\n\nButler-Operation: 1\n";
        let commit = store
            .write_commit(&tree, &parents, message, 1_781_236_800)
            .expect("commit");
        let by_git = GitCommand::new(&repo, "test")
            .env("GIT_AUTHOR_NAME", "Butler")
            .env("GIT_AUTHOR_EMAIL", "butler@localhost")
            .env("GIT_COMMITTER_NAME", "Butler")
            .env("GIT_COMMITTER_EMAIL", "butler@localhost")
            .env("GIT_AUTHOR_DATE", "@1781236800 +0000")
            .env("GIT_COMMITTER_DATE", "@1781236800 +0000")
            .args(["commit-tree", &tree, "-p", &head, "-F", "-"])
            .stdin(message.as_bytes().to_vec())
            .run_ok()
            .expect("commit-tree");
        assert_eq!(commit, String::from_utf8_lossy(&by_git.stdout).trim());
        assert_eq!(store.read_commit(&commit).expect("read"), {
            let shown = git(&repo, &["cat-file", "commit", &commit], b"");
            format!("{shown}\n")
        });
        assert!(store.read_commit(&blob).is_err(), "a blob is not a commit");
        assert_eq!(store.read_blob(&blob).expect("read"), b"one\ntwo\n");
        assert_eq!(
            store.entry(&commit, "a.b").expect("entry"),
            Some(blob.clone())
        );
        assert_eq!(store.entry(&tree, "a").expect("entry"), Some(sub.clone()));
        assert_eq!(store.entry(&tree, "c").expect("entry"), None);
        let listed: Vec<String> = store
            .entries(&tree)
            .expect("entries")
            .into_iter()
            .map(|(_, name, _)| name)
            .collect();
        assert_eq!(listed, ["a-", "a.b", "a", "a0", "ab", "b"]);
        for bad in ["", "a/b", ".", ".."] {
            assert!(
                store.write_tree(&[(Kind::Blob, bad, &blob)]).is_err(),
                "{bad:?}"
            );
        }
        assert!(
            store
                .write_tree(&[(Kind::Blob, "x", &blob), (Kind::Blob, "x", &blob)])
                .is_err()
        );
    }

    #[test]
    fn references_and_head_read_as_git_shows_them() {
        let (_w, repo) = committed();
        let store = ObjectStore::open(&repo).expect("open");
        let head = git(&repo, &["rev-parse", "HEAD"], b"");
        git(&repo, &["tag", "-a", "-m", "v1", "v1"], b"");
        git(&repo, &["tag", "light"], b"");
        git(
            &repo,
            &["symbolic-ref", "refs/heads/alias", "refs/heads/main"],
            b"",
        );
        git(
            &repo,
            &["symbolic-ref", "refs/heads/dangling", "refs/heads/none"],
            b"",
        );
        git(&repo, &["pack-refs", "--all"], b"");
        let blob = store.write_blob(b"x").expect("blob");
        store.set_ref("refs/tags/blob", &blob).expect("set");
        let shown = git(
            &repo,
            &[
                "for-each-ref",
                "--format=%(refname) %(objectname) %(objecttype) %(*objectname)",
                "refs/heads/",
                "refs/tags/",
            ],
            b"",
        );
        let ours: Vec<String> = store
            .references("refs/heads/")
            .expect("refs")
            .into_iter()
            .chain(store.references("refs/tags/").expect("refs"))
            .map(|r| {
                format!(
                    "{} {} {} {}",
                    r.name,
                    r.oid,
                    r.kind,
                    r.tagged.unwrap_or_default()
                )
            })
            .collect();
        assert_eq!(ours.join("\n"), shown);
        assert!(shown.contains(&format!("refs/heads/alias {head} commit")));

        let everything = git(
            &repo,
            &["for-each-ref", "--format=%(refname) %(objectname)", "refs/"],
            b"",
        );
        let ours: Vec<String> = store
            .targets("refs/")
            .expect("refs")
            .into_iter()
            .map(|(name, oid)| format!("{name} {oid}"))
            .collect();
        assert_eq!(ours.join("\n"), everything);

        assert_eq!(store.head_line().expect("head"), "ref: refs/heads/main");
        assert_eq!(store.head_commit().expect("head"), Some(head.clone()));
        git(&repo, &["checkout", "-q", "--detach"], b"");
        assert_eq!(store.head_line().expect("head"), head);
        assert_eq!(store.head_commit().expect("head"), Some(head.clone()));
        git(&repo, &["checkout", "-q", "--orphan", "fresh"], b"");
        assert_eq!(store.head_line().expect("head"), "ref: refs/heads/fresh");
        assert_eq!(store.head_commit().expect("head"), None);

        store.delete_ref("refs/tags/blob").expect("delete");
        store
            .delete_ref("refs/tags/blob")
            .expect("deleting nothing");
        store.delete_ref("refs/tags/light").expect("delete packed");
        let left = git(
            &repo,
            &["for-each-ref", "--format=%(refname)", "refs/tags/"],
            b"",
        );
        assert_eq!(left, "refs/tags/v1");
    }

    /// git's tree of an index file, and whether libgit2 gives the same one or leaves it to git.
    fn by_git(repo: &GitRepo, index: &Path, config: &[&str]) -> Option<String> {
        let out = GitCommand::new(repo, "test")
            .env("GIT_INDEX_FILE", index)
            .args(config)
            .args(["write-tree", "--missing-ok"])
            .run()
            .expect("write-tree");
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
    }

    #[test]
    fn index_trees_are_the_ones_git_writes_or_left_to_git() {
        let (w, repo) = committed();
        let top = repo.workdir().to_path_buf();
        let store = ObjectStore::open(&repo).expect("open");
        std::fs::create_dir_all(top.join("d/e")).expect("dirs");
        std::fs::write(top.join("d/e/c.txt"), "c\n").expect("write");
        std::fs::write(top.join("d.txt"), "d\n").expect("write");
        butler_testkit::write_executable(&top.join("run.sh"), "#!/bin/sh\n");
        std::os::unix::fs::symlink("a.txt", top.join("link")).expect("symlink");
        let sub = w.init("sub");
        w.commit(&sub, "sub");
        w.git(&top, &["add", "."]);
        let sub_head = w.git(&sub, &["rev-parse", "HEAD"]);
        w.git(
            &top,
            &[
                "update-index",
                "--add",
                "--cacheinfo",
                &format!("160000,{},vendored", sub_head.trim()),
            ],
        );
        w.git(&top, &["update-index", "--skip-worktree", "d.txt"]);
        // The index as it is, and written as the private copies are (compact and unhashed).
        let index = repo.git_dir().join("index");
        let private = ["-c", "index.skipHash=true", "-c", "index.version=4"];
        let copy = top.join(".git/butler-test-index");
        std::fs::copy(&index, &copy).expect("copy");
        GitCommand::new(&repo, "test")
            .env("GIT_INDEX_FILE", &copy)
            .args(private)
            .args(["update-index", "--index-version", "4"])
            .run_ok()
            .expect("rewrite the copy");
        for (file, config) in [(&index, &[][..]), (&copy, &private[..])] {
            let ours = store.index_tree(file);
            assert!(ours.is_some(), "{}", file.display());
            assert_eq!(ours, by_git(&repo, file, config), "{}", file.display());
        }
        // A tree nobody wrote stays nobody's: a missing index file is the empty tree.
        let missing = top.join(".git/no-such-index");
        assert_eq!(store.index_tree(&missing), by_git(&repo, &missing, &[]));

        // Left to git: intent-to-add entries, conflict stages, a split or sparse index.
        std::fs::write(top.join("new.txt"), "new\n").expect("write");
        w.git(&top, &["add", "-N", "new.txt"]);
        assert_eq!(store.index_tree(&index), None, "intent to add");
        w.git(&top, &["rm", "-q", "--cached", "new.txt"]);
        assert!(store.index_tree(&index).is_some());
        w.git(&top, &["update-index", "--split-index"]);
        assert_eq!(store.index_tree(&index), None, "split index");
        assert!(by_git(&repo, &index, &[]).is_some());
        w.git(&top, &["update-index", "--no-split-index"]);
        let blob = w.git(&top, &["hash-object", "-w", "a.txt"]);
        let stages: String = (1..=3)
            .map(|stage| format!("100644 {} {stage}\tconflicted.txt\n", blob.trim()))
            .collect();
        git(&repo, &["update-index", "--index-info"], stages.as_bytes());
        assert_eq!(store.index_tree(&index), None, "conflict stages");
        assert_eq!(by_git(&repo, &index, &[]), None);
        git(
            &repo,
            &["update-index", "--force-remove", "conflicted.txt"],
            b"",
        );
        assert!(store.index_tree(&index).is_some());
        // A sparse index: a directory outside the cone is one entry, which only git expands.
        let sparse = w.init("sparse");
        std::fs::create_dir_all(sparse.join("out/deep")).expect("dirs");
        std::fs::write(sparse.join("in.txt"), "in\n").expect("write");
        std::fs::write(sparse.join("out/deep/y.txt"), "y\n").expect("write");
        w.commit(&sparse, "sparse");
        w.git(
            &sparse,
            &["sparse-checkout", "set", "--cone", "--sparse-index"],
        );
        assert!(
            w.git(&sparse, &["ls-files", "--sparse"]).contains("out/\n"),
            "the index is sparse"
        );
        let sparse_repo = GitRepo::discover(&sparse).expect("sparse repo");
        let sparse_index = sparse_repo.git_dir().join("index");
        let sparse_store = ObjectStore::open(&sparse_repo).expect("open");
        assert_eq!(sparse_store.index_tree(&sparse_index), None, "sparse index");
        assert!(by_git(&sparse_repo, &sparse_index, &[]).is_some());
        // A big index: git's own write-tree is the cheaper.
        let bulk: String = (0..2_500)
            .map(|n| format!("100644 {}\tbulk/{}/f{n}\n", blob.trim(), n / 100))
            .collect();
        git(&repo, &["update-index", "--index-info"], bulk.as_bytes());
        assert!(std::fs::metadata(&index).expect("index").len() > IN_PROCESS_INDEX);
        assert_eq!(store.index_tree(&index), None, "big index");
        assert!(by_git(&repo, &index, &[]).is_some());
    }
}
