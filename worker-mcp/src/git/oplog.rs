//! The operation log: the project as it was before each operation Butler ran on it, kept as
//! git objects, so any of them can be undone.
//!
//! An entry is a commit under `refs/butler/oplog/<id>` (kept from garbage collection by that
//! reference). Its tree holds `before/` and, once the operation ended, `after/`: each a
//! [`Snapshot`] of the working tree (tracked and untracked files, not ignored, written through a
//! private index as `work_vcs`'s effect check does), the index (its entries, and the index file
//! itself), the references an operation may move (branches, tags, notes, the stash and its
//! entries, `HEAD`) and git's state files of a merge, cherry-pick or revert in progress. Its
//! parents are every commit those references name, so nothing they reached is collected while
//! the entry lives. What ran, for whom, when, and what it changed are trailers of the message.
//!
//! Undo restores `before/` of an entry — references in one transaction, files through git's
//! own two-tree checkout from the private index, then the index and state files — after taking
//! its own entry, so an undo can be undone. It refuses, changing nothing, when the project is
//! not as the newest entry left it (edits, commits or references since no entry recorded).
//! Everything here runs under the working tree's [`TreeLock`].

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::command::GitCommand;
use super::objects::{Kind, ObjectStore};
use super::{GitError, GitRepo, TreeLock};

/// Where the entries live.
pub const OPLOG_REFS: &str = "refs/butler/oplog/";
/// References a snapshot keeps and an undo puts back.
const KEPT_PREFIXES: [&str; 3] = ["refs/heads/", "refs/tags/", "refs/notes/"];
const STASH: &str = "refs/stash";
/// git's files of an operation in progress (in the working tree's git directory).
const STATE_FILES: [&str; 7] = [
    "MERGE_HEAD",
    "MERGE_MSG",
    "MERGE_MODE",
    "CHERRY_PICK_HEAD",
    "REVERT_HEAD",
    "SQUASH_MSG",
    "AUTO_MERGE",
];
const BIG: usize = 1 << 30;
/// How many entries below the newest undo compares the project with.
const RECENT_FINISHES: usize = 8;

/// How many entries are kept, and for how long.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    /// At most this many entries (the newest is always kept).
    pub keep: usize,
    /// Entries older than this many seconds go.
    pub max_age_secs: i64,
}

impl Default for Retention {
    fn default() -> Self {
        Retention {
            keep: 200,
            max_age_secs: 30 * 24 * 3600,
        }
    }
}

/// What an operation is, as its entry says it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpInfo {
    /// The tool or command that ran (`work_record`, `work_vcs`, `butler undo`, …).
    pub tool: String,
    /// One line: what it was asked to do.
    pub what: String,
    /// For whom: `session`, `task 3`, `person`.
    pub by: String,
    /// When it started (Unix seconds, from the caller's clock).
    pub at: i64,
    /// The entry this operation undoes.
    pub undoes: Option<u64>,
}

/// One entry of the log.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct OpEntry {
    pub id: u64,
    pub tool: String,
    pub what: String,
    pub by: String,
    pub at: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub undoes: Option<u64>,
    /// Files the operation changed (working tree or index).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<String>,
    /// References it moved, created or deleted (`HEAD` included).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub refs: Vec<String>,
    /// `false` while the operation runs (or when it never finished).
    pub finished: bool,
    #[serde(skip)]
    commit: String,
}

/// An operation begun: its entry holds the state before it.
#[derive(Debug)]
pub struct Begun {
    id: u64,
    info: OpInfo,
    before: Snapshot,
}

impl Begun {
    pub fn id(&self) -> u64 {
        self.id
    }
}

/// Why an undo changed nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UndoRefusal {
    /// The log is empty (or the id is not in it).
    NoSuchOperation(Option<u64>),
    /// An operation is still running, or ended without finishing its entry.
    Unfinished(u64),
    /// Work since the newest entry would be lost: these files and references changed.
    ChangedSince {
        newest: u64,
        files: Vec<String>,
        refs: Vec<String>,
    },
}

/// What an undo did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Undone {
    /// The operation undone, and its tool.
    pub undone: u64,
    pub undone_tool: String,
    /// Later operations whose effects went with it.
    pub also: Vec<u64>,
    /// The undo's own entry (undo it to get back); `None` when nothing had to change.
    pub entry: Option<OpEntry>,
}

/// The project's state as git objects.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Snapshot {
    /// Everything but the raw index file: equal ids mean an equal state.
    tree: String,
    /// The index file itself, kept when it has conflict stages (else the index is a tree).
    index_file: Option<String>,
    work: String,
    refs: BTreeMap<String, String>,
    head: String,
    /// Commits to keep reachable.
    keep: BTreeSet<String>,
}

/// An index as a snapshot holds it.
#[derive(Debug, PartialEq, Eq)]
enum Index {
    /// Without conflict stages: a tree.
    Tree(String),
    /// With them: `git ls-files -s -z`.
    Entries(Vec<u8>),
}

/// A task's line, which the ImplementMaid moves as the task works.
fn is_task_line(name: &str) -> bool {
    name.starts_with("refs/heads/butler/task-")
}

impl GitRepo {
    /// The references a snapshot keeps, with the commits they reach.
    fn kept_refs(
        store: &ObjectStore,
    ) -> Result<(BTreeMap<String, String>, BTreeSet<String>), GitError> {
        let mut refs = BTreeMap::new();
        let mut keep = BTreeSet::new();
        for prefix in KEPT_PREFIXES.iter().chain([&STASH]) {
            for reference in store.references(prefix)? {
                if !(KEPT_PREFIXES.iter().any(|p| reference.name.starts_with(p))
                    || reference.name == STASH)
                {
                    continue;
                }
                match (reference.kind, reference.tagged) {
                    (git2::ObjectType::Commit, _) => {
                        keep.insert(reference.oid.clone());
                    }
                    (git2::ObjectType::Tag, Some(tagged)) => {
                        keep.insert(tagged);
                    }
                    _ => {}
                }
                refs.insert(reference.name, reference.oid);
            }
        }
        Ok((refs, keep))
    }

    fn stash_log_path(&self) -> PathBuf {
        self.common_dir().join("logs").join(STASH)
    }

    /// Takes a snapshot of the project as it is now.
    fn snapshot(&self, private_index: &Path) -> Result<Snapshot, GitError> {
        // One private copy of the index serves both trees: first the index as it is (a
        // `write-tree` that fails says it has conflict stages), and the working tree (`git add
        // -A` into another copy), side by side: the second walks every file, the first waits
        // for nothing it does.
        let (index_tree, work) = std::thread::scope(|scope| {
            let index_side = scope.spawn(|| {
                let copy = self.private_index();
                self.copy_index_to(&copy.0)?;
                self.index_tree(&copy.0, &[])
            });
            let work = self.work_tree_through(private_index);
            let index_side = index_side
                .join()
                .unwrap_or_else(|e| std::panic::resume_unwind(e));
            (index_side, work)
        });
        let index_tree = index_tree?;
        let store = ObjectStore::open(self)?;
        let (refs, mut keep) = Self::kept_refs(&store)?;
        let head = store.head_line()?;
        let work = match work? {
            Some(tree) => tree,
            None => store.write_tree::<&str>(&[])?,
        };
        if !head.is_empty() && !head.starts_with("ref: ") {
            keep.insert(head.clone());
        }
        let mut refs_text = format!("HEAD {head}\n");
        for (name, oid) in &refs {
            refs_text.push_str(&format!("{oid} {name}\n"));
        }
        let mut entries = vec![
            (Kind::Tree, "work".to_owned(), work.clone()),
            (
                Kind::Blob,
                "refs".to_owned(),
                store.write_blob(refs_text.as_bytes())?,
            ),
        ];
        // The index: as a tree (written through a copy, so the real index is not touched),
        // which shares its objects with the working tree's. An index with conflict stages has
        // no tree: its entries (`git ls-files -s`), the blobs only it holds and the file itself
        // are kept instead.
        let mut index_file = None;
        if let Some(index_tree) = index_tree {
            entries.push((Kind::Tree, "index".to_owned(), index_tree));
        } else {
            let listing = GitCommand::new(self, "oplog ls-files")
                .args(["ls-files", "-s", "-z"])
                .max_stdout(BIG)
                .run_ok()?
                .stdout;
            entries.push((
                Kind::Blob,
                "index-entries".to_owned(),
                store.write_blob(&listing)?,
            ));
            let staged = self.index_only_blobs(&work)?;
            if !staged.is_empty() {
                let blobs: Vec<(Kind, &str, &str)> = staged
                    .iter()
                    .map(|oid| (Kind::Blob, oid.as_str(), oid.as_str()))
                    .collect();
                entries.push((Kind::Tree, "staged".to_owned(), store.write_tree(&blobs)?));
            }
            if let Ok(bytes) = std::fs::read(self.git_dir().join("index")) {
                index_file = Some(store.write_blob(&bytes)?);
            }
        }
        if let Ok(log) = std::fs::read(self.stash_log_path()) {
            for line in String::from_utf8_lossy(&log).lines() {
                if let Some(new) = line.split(' ').nth(1) {
                    keep.insert(new.to_owned());
                }
            }
            entries.push((Kind::Blob, "stash-log".to_owned(), store.write_blob(&log)?));
        }
        for name in STATE_FILES {
            if let Ok(bytes) = std::fs::read(self.git_dir().join(name)) {
                if name.ends_with("_HEAD") && name != "AUTO_MERGE" {
                    for line in String::from_utf8_lossy(&bytes).lines() {
                        if let Ok(Some(oid)) = self.resolve_commit(line.trim()) {
                            keep.insert(oid);
                        }
                    }
                }
                entries.push((
                    Kind::Blob,
                    format!("state-{name}"),
                    store.write_blob(&bytes)?,
                ));
            }
        }
        let tree = store.write_tree(&entries)?;
        Ok(Snapshot {
            tree,
            index_file,
            work,
            refs,
            head,
            keep,
        })
    }

    /// Blobs the index holds that the working tree does not (staged versions, conflict
    /// stages), so they stay reachable.
    fn index_only_blobs(&self, work: &str) -> Result<BTreeSet<String>, GitError> {
        let mut out = BTreeSet::new();
        let diff = GitCommand::new(self, "oplog diff-index")
            .args(["diff-index", "--cached", "--no-renames", "-z", work])
            .max_stdout(BIG)
            .run()?;
        for field in diff.stdout.split(|b| *b == 0) {
            let field = String::from_utf8_lossy(field);
            if let Some(meta) = field.strip_prefix(':') {
                // :old_mode new_mode old_oid new_oid status — the index is the new side.
                if let Some(oid) = meta.split(' ').nth(3)
                    && oid.bytes().any(|b| b != b'0')
                {
                    out.insert(oid.to_owned());
                }
            }
        }
        let unmerged = GitCommand::new(self, "oplog ls-files")
            .args(["ls-files", "-u", "-z"])
            .max_stdout(BIG)
            .run()?;
        for entry in unmerged.stdout.split(|b| *b == 0) {
            if let Some(oid) = String::from_utf8_lossy(entry).split(' ').nth(1) {
                out.insert(oid.to_owned());
            }
        }
        Ok(out)
    }

    fn oplog_ids(&self) -> Result<Vec<(u64, String)>, GitError> {
        let mut ids: Vec<(u64, String)> = ObjectStore::open(self)?
            .targets(OPLOG_REFS)?
            .into_iter()
            .filter_map(|(name, oid)| {
                let id = name.strip_prefix(OPLOG_REFS)?.parse().ok()?;
                Some((id, oid.to_string()))
            })
            .collect();
        ids.sort();
        Ok(ids)
    }

    fn write_entry(
        &self,
        id: u64,
        info: &OpInfo,
        before: &Snapshot,
        after: Option<&Snapshot>,
        changes: (&[String], &[String]),
    ) -> Result<String, GitError> {
        let mut entries = vec![(Kind::Tree, "before", before.tree.as_str())];
        if let Some(index) = &before.index_file {
            entries.push((Kind::Blob, "before-index", index));
        }
        let mut keep = before.keep.clone();
        if let Some(after) = after {
            entries.push((Kind::Tree, "after", &after.tree));
            if let Some(index) = &after.index_file {
                entries.push((Kind::Blob, "after-index", index));
            }
            keep.extend(after.keep.iter().cloned());
        }
        let store = ObjectStore::open(self)?;
        let tree = store.write_tree(&entries)?;
        // One line each, and no `user:password@` of a URL an argument carried.
        let one_line = |s: &str| super::error::redact_credentials(&s.replace(['\n', '\r'], " "));
        let mut message = format!(
            "{}: {}\n\nButler-Operation: {id}\nButler-Tool: {}\nButler-For: {}\nButler-At: {}\n",
            one_line(&info.tool),
            one_line(&info.what),
            one_line(&info.tool),
            one_line(&info.by),
            info.at
        );
        if let Some(undoes) = info.undoes {
            message.push_str(&format!("Butler-Undoes: {undoes}\n"));
        }
        message.push_str(&format!(
            "Butler-Finished: {}\n",
            if after.is_some() { "yes" } else { "no" }
        ));
        for file in changes.0 {
            message.push_str(&format!("Butler-File: {}\n", one_line(file)));
        }
        for name in changes.1 {
            message.push_str(&format!("Butler-Ref: {name}\n"));
        }
        let commit = store.write_commit(&tree, &keep, &message, info.at)?;
        store.set_ref(&format!("{OPLOG_REFS}{id}"), &commit)?;
        Ok(commit)
    }

    /// Takes the snapshot before an operation and logs it as begun.
    pub fn oplog_begin(&self, held: &TreeLock, info: OpInfo) -> Result<Begun, GitError> {
        self.holds(held)?;
        let index = self.private_index();
        let before = self.snapshot(&index.0)?;
        let id = self.oplog_ids()?.last().map(|(id, _)| id + 1).unwrap_or(1);
        self.write_entry(id, &info, &before, None, (&[], &[]))?;
        Ok(Begun { id, info, before })
    }

    /// Completes the entry of an operation that ended; an operation that changed nothing
    /// leaves no entry (`None`).
    pub fn oplog_finish(&self, held: &TreeLock, begun: Begun) -> Result<Option<OpEntry>, GitError> {
        self.holds(held)?;
        let index = self.private_index();
        let after = self.snapshot(&index.0)?;
        let name = format!("{OPLOG_REFS}{}", begun.id);
        if after.tree == begun.before.tree {
            ObjectStore::open(self)?.delete_ref(&name)?;
            return Ok(None);
        }
        let (files, refs) = self.differences(&begun.before, &after)?;
        let commit = self.write_entry(
            begun.id,
            &begun.info,
            &begun.before,
            Some(&after),
            (&files, &refs),
        )?;
        Ok(Some(OpEntry {
            id: begun.id,
            tool: begun.info.tool,
            what: begun.info.what,
            by: begun.info.by,
            at: begun.info.at,
            undoes: begun.info.undoes,
            files,
            refs,
            finished: true,
            commit,
        }))
    }

    /// Files (working tree or index) and references that differ between two snapshots.
    fn differences(
        &self,
        a: &Snapshot,
        b: &Snapshot,
    ) -> Result<(Vec<String>, Vec<String>), GitError> {
        let out = GitCommand::new(self, "oplog diff-tree")
            .args(["diff-tree", "-r", "--name-only", "--no-renames", "-z"])
            .args([&a.work, &b.work])
            .max_stdout(BIG)
            .run_ok()?;
        let mut files: BTreeSet<String> = out
            .stdout
            .split(|x| *x == 0)
            .filter(|p| !p.is_empty())
            .map(|p| String::from_utf8_lossy(p).into_owned())
            .collect();
        let index_a = self.index_entries_of(&a.tree)?;
        let index_b = self.index_entries_of(&b.tree)?;
        if let (Index::Tree(ta), Index::Tree(tb)) = (&index_a, &index_b) {
            if ta != tb {
                let out = GitCommand::new(self, "oplog diff-tree")
                    .args([
                        "diff-tree",
                        "-r",
                        "--name-only",
                        "--no-renames",
                        "-z",
                        ta,
                        tb,
                    ])
                    .max_stdout(BIG)
                    .run_ok()?;
                files.extend(
                    out.stdout
                        .split(|x| *x == 0)
                        .filter(|p| !p.is_empty())
                        .map(|p| String::from_utf8_lossy(p).into_owned()),
                );
            }
        } else if index_a != index_b {
            let index_a = self.index_listing(index_a)?;
            let index_b = self.index_listing(index_b)?;
            let paths = |listing: &[u8]| -> BTreeMap<String, String> {
                listing
                    .split(|x| *x == 0)
                    .filter_map(|e| {
                        let e = String::from_utf8_lossy(e);
                        let (meta, path) = e.split_once('\t')?;
                        Some((path.to_owned(), meta.to_owned()))
                    })
                    .fold(BTreeMap::new(), |mut m, (p, meta)| {
                        m.entry(p)
                            .and_modify(|v: &mut String| v.push_str(&meta))
                            .or_insert(meta);
                        m
                    })
            };
            let (pa, pb) = (paths(&index_a), paths(&index_b));
            for key in pa.keys().chain(pb.keys()) {
                if pa.get(key) != pb.get(key) {
                    files.insert(key.clone());
                }
            }
        }
        let mut refs: BTreeSet<String> = a
            .refs
            .keys()
            .chain(b.refs.keys())
            .filter(|k| a.refs.get(*k) != b.refs.get(*k))
            .cloned()
            .collect();
        if a.head != b.head {
            refs.insert("HEAD".into());
        }
        Ok((files.into_iter().collect(), refs.into_iter().collect()))
    }

    fn index_entries_of(&self, snapshot_tree: &str) -> Result<Index, GitError> {
        let store = ObjectStore::open(self)?;
        if let Some(tree) = store.entry(snapshot_tree, "index")? {
            return Ok(Index::Tree(tree));
        }
        let listing = store
            .entry(snapshot_tree, "index-entries")?
            .ok_or_else(|| missing(snapshot_tree, "index-entries"))?;
        Ok(Index::Entries(store.read_blob(&listing)?))
    }

    /// An index as `git ls-files -s -z` lists it (`mode oid stage\tpath`).
    fn index_listing(&self, index: Index) -> Result<Vec<u8>, GitError> {
        match index {
            Index::Entries(listing) => Ok(listing),
            Index::Tree(tree) => {
                let out = GitCommand::new(self, "oplog ls-tree")
                    .args(["ls-tree", "-r", "-z", "--full-tree", &tree])
                    .max_stdout(BIG)
                    .run_ok()?;
                let mut listing = Vec::new();
                for entry in out.stdout.split(|x| *x == 0).filter(|e| !e.is_empty()) {
                    let entry = String::from_utf8_lossy(entry);
                    let Some((meta, path)) = entry.split_once('\t') else {
                        continue;
                    };
                    let mut parts = meta.split(' ');
                    let (Some(mode), Some(_), Some(oid)) =
                        (parts.next(), parts.next(), parts.next())
                    else {
                        continue;
                    };
                    listing.extend_from_slice(format!("{mode} {oid} 0\t{path}").as_bytes());
                    listing.push(0);
                }
                Ok(listing)
            }
        }
    }

    /// The log's entries, newest first (at most `n`).
    pub fn oplog_entries(&self, n: usize) -> Result<Vec<OpEntry>, GitError> {
        let ids: Vec<_> = self.oplog_ids()?.into_iter().rev().take(n).collect();
        self.read_entries(&ids)
    }

    fn read_entry(&self, id: u64, commit: &str) -> Result<OpEntry, GitError> {
        let mut entries = self.read_entries(&[(id, commit.to_owned())])?;
        entries
            .pop()
            .ok_or_else(|| GitError::failed("oplog cat-file", format!("commit {commit} not read")))
    }

    /// The entries of these commits, in their order (the log is read whole when it is pruned,
    /// after every operation).
    fn read_entries(&self, ids: &[(u64, String)]) -> Result<Vec<OpEntry>, GitError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let store = ObjectStore::open(self)?;
        ids.iter()
            .map(|(id, commit)| Ok(parse_entry(*id, commit, &store.read_commit(commit)?)))
            .collect()
    }
}

/// The error of a snapshot or entry that lacks what it should hold (`treeish:name`).
fn missing(treeish: &str, name: &str) -> GitError {
    GitError::failed("oplog read", format!("{treeish}:{name} not found"))
}

/// An entry from its commit's text (headers, a blank line, the message with Butler's trailers).
fn parse_entry(id: u64, commit: &str, body: &str) -> OpEntry {
    let mut entry = OpEntry {
        id,
        tool: String::new(),
        what: String::new(),
        by: String::new(),
        at: 0,
        undoes: None,
        files: Vec::new(),
        refs: Vec::new(),
        finished: false,
        commit: commit.to_owned(),
    };
    let message = body.split_once("\n\n").map(|(_, m)| m).unwrap_or("");
    if let Some(first) = message.lines().next() {
        entry.what = first
            .split_once(": ")
            .map(|(_, w)| w.to_owned())
            .unwrap_or_default();
    }
    for line in message.lines() {
        let Some((key, value)) = line.split_once(": ") else {
            continue;
        };
        match key {
            "Butler-Tool" => entry.tool = value.to_owned(),
            "Butler-For" => entry.by = value.to_owned(),
            "Butler-At" => entry.at = value.parse().unwrap_or(0),
            "Butler-Undoes" => entry.undoes = value.parse().ok(),
            "Butler-Finished" => entry.finished = value == "yes",
            "Butler-File" => entry.files.push(value.to_owned()),
            "Butler-Ref" => entry.refs.push(value.to_owned()),
            _ => {}
        }
    }
    entry
}

impl GitRepo {
    /// Restores the project to the state before operation `id` (the newest when `None`),
    /// itself logged as `info`. Refuses, changing nothing, when work since the newest entry
    /// would be lost.
    pub fn oplog_undo(
        &self,
        held: &TreeLock,
        id: Option<u64>,
        info: OpInfo,
    ) -> Result<Result<Undone, UndoRefusal>, GitError> {
        self.holds(held)?;
        let ids = self.oplog_ids()?;
        let Some((newest, newest_commit)) = ids.last().cloned() else {
            return Ok(Err(UndoRefusal::NoSuchOperation(id)));
        };
        let target = id.unwrap_or(newest);
        let Some((_, target_commit)) = ids.iter().find(|(i, _)| *i == target).cloned() else {
            return Ok(Err(UndoRefusal::NoSuchOperation(Some(target))));
        };
        let latest = self.read_entry(newest, &newest_commit)?;
        if !latest.finished {
            return Ok(Err(UndoRefusal::Unfinished(newest)));
        }
        let index = self.private_index();
        let now = self.snapshot(&index.0)?;
        // The project must be as a logged operation left it: then everything in it is in a
        // snapshot. Not always the newest by id: ids are given when operations begin, and two
        // sessions' operations may finish in the other order (a few are looked at).
        // Task lines (`refs/heads/butler/task-*`) are the ImplementMaid's: it moves them as a
        // task works, outside logged operations, so they are left out of the comparison.
        let left = self.stored_snapshot(&newest_commit, "after")?;
        let now_key = self.comparable(&now)?;
        let mut logged = now.tree == left.tree || self.comparable(&left)? == now_key;
        for (id, commit) in ids.iter().rev().skip(1).take(RECENT_FINISHES) {
            if logged {
                break;
            }
            if self.read_entry(*id, commit)?.finished {
                logged = self.comparable(&self.stored_snapshot(commit, "after")?)? == now_key;
            }
        }
        if !logged {
            let (files, refs) = self.differences(&left, &now)?;
            return Ok(Err(UndoRefusal::ChangedSince {
                newest,
                files,
                refs,
            }));
        }
        let mut goal = self.stored_snapshot(&target_commit, "before")?;
        // A task line goes back only when an undone operation moved it (a `task_accept` that
        // deleted it); one the Maid moved meanwhile stays where it is.
        let undone: Vec<&(u64, String)> = ids.iter().filter(|(i, _)| *i >= target).collect();
        let mut moved = BTreeSet::new();
        for (_, commit) in undone {
            let (before, after) = (
                self.stored_snapshot(commit, "before")?,
                self.stored_snapshot(commit, "after"),
            );
            let Ok(after) = after else { continue };
            for name in before.refs.keys().chain(after.refs.keys()) {
                if is_task_line(name) && before.refs.get(name) != after.refs.get(name) {
                    moved.insert(name.clone());
                }
            }
        }
        let lines: BTreeSet<String> = goal
            .refs
            .keys()
            .chain(now.refs.keys())
            .filter(|n| is_task_line(n) && !moved.contains(*n))
            .cloned()
            .collect();
        for name in lines {
            match now.refs.get(&name) {
                Some(oid) => goal.refs.insert(name, oid.clone()),
                None => goal.refs.remove(&name),
            };
        }
        let undone_tool = self.read_entry(target, &target_commit)?.tool;
        let undo_id = newest + 1;
        let info = OpInfo {
            undoes: Some(target),
            ..info
        };
        self.write_entry(undo_id, &info, &now, None, (&[], &[]))?;
        if let Err(err) = self.restore(&now, &goal, &index.0) {
            tracing::warn!(error = %err, "undo failed; putting the project back");
            let back = self.private_index();
            self.restore(&self.snapshot(&back.0)?, &now, &back.0)?;
            if let Err(e) = ObjectStore::open(self)
                .and_then(|store| store.delete_ref(&format!("{OPLOG_REFS}{undo_id}")))
            {
                tracing::warn!(error = %e, "the undo's entry stays");
            }
            return Err(err);
        }
        let begun = Begun {
            id: undo_id,
            info,
            before: now,
        };
        // `None`: the project already was as before the operation (later ones put it back).
        let entry = self.oplog_finish(held, begun)?;
        Ok(Ok(Undone {
            undone: target,
            undone_tool,
            also: ids
                .iter()
                .map(|(i, _)| *i)
                .filter(|i| *i > target)
                .collect(),
            entry,
        }))
    }

    /// What of a snapshot an undo compares: its entries but the references, and the
    /// references but the task lines.
    fn comparable(
        &self,
        snapshot: &Snapshot,
    ) -> Result<(String, BTreeMap<String, String>, String), GitError> {
        let entries: String = ObjectStore::open(self)?
            .entries(&snapshot.tree)?
            .into_iter()
            .filter(|(_, name, _)| name != "refs")
            .map(|(mode, name, oid)| format!("{mode:o} {oid}\t{name}\n"))
            .collect();
        let refs = snapshot
            .refs
            .iter()
            .filter(|(name, _)| !is_task_line(name))
            .map(|(n, o)| (n.clone(), o.clone()))
            .collect();
        Ok((entries, refs, snapshot.head.clone()))
    }

    /// A snapshot stored in an entry (`before` or `after`).
    fn stored_snapshot(&self, commit: &str, side: &str) -> Result<Snapshot, GitError> {
        let store = ObjectStore::open(self)?;
        let tree = store
            .entry(commit, side)?
            .ok_or_else(|| missing(commit, side))?;
        let index_file = store.entry(commit, &format!("{side}-index"))?;
        let work = store
            .entry(&tree, "work")?
            .ok_or_else(|| missing(&tree, "work"))?;
        let refs = store
            .entry(&tree, "refs")?
            .ok_or_else(|| missing(&tree, "refs"))?;
        let refs_text = String::from_utf8_lossy(&store.read_blob(&refs)?).into_owned();
        let mut refs = BTreeMap::new();
        let mut head = String::new();
        for line in refs_text.lines() {
            if let Some(h) = line.strip_prefix("HEAD ") {
                head = h.to_owned();
            } else if let Some((oid, name)) = line.split_once(' ') {
                refs.insert(name.to_owned(), oid.to_owned());
            }
        }
        Ok(Snapshot {
            tree,
            index_file,
            work,
            refs,
            head,
            keep: BTreeSet::new(),
        })
    }

    /// Moves the project from `now` (just taken through `private_index`) to `goal`.
    fn restore(
        &self,
        now: &Snapshot,
        goal: &Snapshot,
        private_index: &Path,
    ) -> Result<(), GitError> {
        // Files first: git's checkout refuses, writing nothing, if it cannot do it all.
        if now.work != goal.work {
            GitCommand::new(self, "oplog read-tree")
                .env("GIT_INDEX_FILE", private_index)
                .args(["read-tree", "-m", "-u", &now.work, &goal.work])
                .run_ok()?;
        }
        // References in one transaction.
        let mut tx = String::new();
        for (name, oid) in &goal.refs {
            if now.refs.get(name) != Some(oid) {
                tx.push_str(&format!("update {name} {oid}\n"));
            }
        }
        for name in now.refs.keys() {
            if !goal.refs.contains_key(name) {
                tx.push_str(&format!("delete {name}\n"));
            }
        }
        if !tx.is_empty() {
            GitCommand::new(self, "oplog update-ref")
                .args(["update-ref", "--stdin"])
                .stdin(tx.into_bytes())
                .run_ok()?;
        }
        if now.head != goal.head {
            if let Some(name) = goal.head.strip_prefix("ref: ") {
                GitCommand::new(self, "oplog symbolic-ref")
                    .args(["symbolic-ref", "HEAD", name])
                    .run_ok()?;
            } else if !goal.head.is_empty() {
                GitCommand::new(self, "oplog update-ref")
                    .args(["update-ref", "--no-deref", "HEAD", &goal.head])
                    .run_ok()?;
            }
        }
        // The index file, git's state files and the stash's entries, as they were.
        let put = |path: PathBuf, bytes: Option<Vec<u8>>| -> Result<(), GitError> {
            match bytes {
                Some(bytes) => {
                    let tmp = path.with_extension("butler-oplog");
                    if let Some(dir) = path.parent() {
                        std::fs::create_dir_all(dir).map_err(|e| GitError::io("undo", e))?;
                    }
                    std::fs::write(&tmp, bytes).map_err(|e| GitError::io("undo", e))?;
                    std::fs::rename(&tmp, &path).map_err(|e| GitError::io("undo", e))
                }
                None => match std::fs::remove_file(&path) {
                    Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                        Err(GitError::io("undo", e))
                    }
                    _ => Ok(()),
                },
            }
        };
        let store = ObjectStore::open(self)?;
        let blob_at = |name: String| -> Result<Option<Vec<u8>>, GitError> {
            store
                .entry(&goal.tree, &name)?
                .map(|oid| store.read_blob(&oid))
                .transpose()
        };
        match (&goal.index_file, self.index_entries_of(&goal.tree)?) {
            (Some(oid), _) => put(self.git_dir().join("index"), Some(store.read_blob(oid)?))?,
            (None, Index::Tree(tree)) => {
                GitCommand::new(self, "oplog read-tree")
                    .args(["read-tree", &tree])
                    .run_ok()?;
                // Stat data for the files as they are now (a refresh; its exit says whether
                // files differ from the index, which is expected).
                GitCommand::new(self, "oplog refresh")
                    .args(["update-index", "-q", "--refresh"])
                    .run()?;
            }
            (None, Index::Entries(_)) => put(self.git_dir().join("index"), None)?,
        }
        for name in STATE_FILES {
            put(self.git_dir().join(name), blob_at(format!("state-{name}"))?)?;
        }
        put(self.stash_log_path(), blob_at("stash-log".to_owned())?)?;
        Ok(())
    }

    /// Drops entries beyond `retention` (the newest always stays); returns how many went.
    pub fn oplog_prune(
        &self,
        held: &TreeLock,
        retention: Retention,
        now: i64,
    ) -> Result<usize, GitError> {
        self.holds(held)?;
        let ids = self.oplog_ids()?;
        let count = ids.len();
        let mut tx = String::new();
        let mut dropped = 0;
        // The newest is always kept.
        let older = &ids[..count.saturating_sub(1)];
        for (pos, entry) in self.read_entries(older)?.into_iter().enumerate() {
            let too_many = count - pos > retention.keep.max(1);
            let too_old = now - entry.at > retention.max_age_secs;
            if too_many || too_old {
                tx.push_str(&format!(
                    "delete {OPLOG_REFS}{} {}\n",
                    entry.id, entry.commit
                ));
                dropped += 1;
            }
        }
        if !tx.is_empty() {
            GitCommand::new(self, "oplog prune")
                .args(["update-ref", "--stdin"])
                .stdin(tx.into_bytes())
                .run_ok()?;
        }
        Ok(dropped)
    }
}

#[cfg(test)]
mod tests {
    use butler_testkit::World;

    use super::*;

    fn repo() -> (World, GitRepo) {
        crate::git::test_repo::committed()
    }

    fn info(tool: &str) -> OpInfo {
        OpInfo {
            tool: tool.into(),
            what: "test".into(),
            by: "test".into(),
            at: 1_000,
            undoes: None,
        }
    }

    /// Everything git shows of the state an undo restores, state files included.
    fn seen(w: &World, repo: &GitRepo) -> Vec<String> {
        let dir = repo.workdir();
        let mut out = vec![
            w.git(dir, &["status", "--porcelain", "--untracked-files=all"]),
            w.git(dir, &["ls-files", "-s"]),
            w.git(
                dir,
                &[
                    "for-each-ref",
                    "--exclude=refs/butler/",
                    "--format=%(objectname) %(refname)",
                ],
            ),
            w.git(dir, &["stash", "list"]),
            std::fs::read_to_string(dir.join("a.txt")).unwrap_or_default(),
        ];
        for name in STATE_FILES {
            out.push(std::fs::read_to_string(repo.git_dir().join(name)).unwrap_or_default());
        }
        out
    }

    fn logged(repo: &GitRepo, tool: &str, op: impl FnOnce()) -> Option<OpEntry> {
        let lock = repo.lock_tree().expect("lock");
        let begun = repo.oplog_begin(&lock, info(tool)).expect("begin");
        drop(lock);
        op();
        let lock = repo.lock_tree().expect("lock");
        repo.oplog_finish(&lock, begun).expect("finish")
    }

    fn undo(repo: &GitRepo) -> Undone {
        let lock = repo.lock_tree().expect("lock");
        repo.oplog_undo(&lock, None, info("undo"))
            .expect("undo runs")
            .expect("undo is not refused")
    }

    #[test]
    fn a_conflicted_merge_given_up_comes_back_with_its_stages_and_state_files() {
        let (w, repo) = repo();
        let dir = repo.workdir().to_path_buf();
        w.git(&dir, &["switch", "-q", "-c", "side"]);
        std::fs::write(dir.join("a.txt"), "side\n").expect("write");
        w.commit(&dir, "side");
        w.git(&dir, &["switch", "-q", "main"]);
        std::fs::write(dir.join("a.txt"), "main\n").expect("write");
        w.commit(&dir, "main");
        let merge = w.git_output(&dir, &["merge", "side"]);
        assert!(!merge.status.success());
        assert!(repo.git_dir().join("MERGE_HEAD").exists());
        let before = seen(&w, &repo);
        let entry = logged(&repo, "abort", || {
            w.git(&dir, &["merge", "--abort"]);
        })
        .expect("the abort changed the project");
        assert!(entry.files.contains(&"a.txt".to_owned()), "{entry:?}");
        undo(&repo);
        assert_eq!(seen(&w, &repo), before);
        // The log's objects, written in-process (an index with stages: its entries, its blobs
        // and its file; state files), are as git's own checks want them.
        w.git(
            &dir,
            &["fsck", "--strict", "--no-dangling", "--no-progress"],
        );
    }

    #[test]
    fn a_dropped_stash_entry_and_a_cleaned_file_come_back() {
        let (w, repo) = repo();
        let dir = repo.workdir().to_path_buf();
        std::fs::write(dir.join("a.txt"), "stashed one\n").expect("write");
        w.git(&dir, &["stash", "-q"]);
        std::fs::write(dir.join("a.txt"), "stashed two\n").expect("write");
        w.git(&dir, &["stash", "-q"]);
        std::fs::write(dir.join("new.txt"), "untracked\n").expect("write");
        let before = seen(&w, &repo);
        logged(&repo, "drop", || {
            w.git(&dir, &["stash", "clear"]);
            w.git(&dir, &["clean", "-q", "-f"]);
        })
        .expect("logged");
        assert!(!dir.join("new.txt").exists());
        w.git(&dir, &["reflog", "expire", "--expire=now", "--all"]);
        w.git(&dir, &["gc", "-q", "--prune=now"]);
        undo(&repo);
        assert_eq!(seen(&w, &repo), before);
        assert_eq!(
            std::fs::read_to_string(dir.join("new.txt")).expect("new.txt"),
            "untracked\n"
        );
        w.git(&dir, &["stash", "pop", "-q"]);
        assert_eq!(
            std::fs::read_to_string(dir.join("a.txt")).expect("a.txt"),
            "stashed two\n"
        );
        w.git(
            &dir,
            &["fsck", "--strict", "--no-dangling", "--no-progress"],
        );
    }

    #[test]
    fn undoing_what_later_operations_already_put_back_changes_nothing_and_logs_nothing() {
        let (w, repo) = repo();
        let dir = repo.workdir().to_path_buf();
        logged(&repo, "create", || {
            w.git(&dir, &["branch", "x"]);
        })
        .expect("logged");
        logged(&repo, "delete", || {
            w.git(&dir, &["branch", "-D", "x"]);
        })
        .expect("logged");
        let before = seen(&w, &repo);
        let lock = repo.lock_tree().expect("lock");
        let done = repo
            .oplog_undo(&lock, Some(1), info("undo"))
            .expect("runs")
            .expect("not refused");
        assert_eq!(
            (done.undone, done.also.clone(), done.entry),
            (1, vec![2], None)
        );
        assert_eq!(seen(&w, &repo), before);
        assert_eq!(repo.oplog_entries(10).expect("entries").len(), 2);
    }

    #[test]
    fn pruning_keeps_the_newest_by_count_and_age() {
        let (w, repo) = repo();
        let dir = repo.workdir().to_path_buf();
        for n in 0..4 {
            logged(&repo, "branch", || {
                w.git(&dir, &["branch", &format!("b{n}")]);
            })
            .expect("logged");
        }
        let lock = repo.lock_tree().expect("lock");
        let keep = Retention {
            keep: 3,
            max_age_secs: 1_000_000,
        };
        assert_eq!(repo.oplog_prune(&lock, keep, 2_000).expect("prune"), 1);
        let old = Retention {
            keep: 10,
            max_age_secs: 10,
        };
        // Every entry is older than 10 s at t=2000, but the newest stays.
        assert_eq!(repo.oplog_prune(&lock, old, 2_000).expect("prune"), 2);
        let ids: Vec<u64> = repo
            .oplog_entries(10)
            .expect("entries")
            .iter()
            .map(|e| e.id)
            .collect();
        assert_eq!(ids, vec![4]);
    }

    #[test]
    fn the_log_is_read_in_one_batch_newest_first_and_a_foreign_object_is_refused() {
        let (w, repo) = repo();
        let dir = repo.workdir().to_path_buf();
        for n in 0..3 {
            logged(&repo, &format!("tool{n}"), || {
                w.git(&dir, &["branch", &format!("b{n}")]);
            })
            .expect("logged");
        }
        let entries = repo.oplog_entries(10).expect("entries");
        let seen: Vec<(u64, &str, bool)> = entries
            .iter()
            .map(|e| (e.id, e.tool.as_str(), e.finished))
            .collect();
        assert_eq!(
            seen,
            vec![(3, "tool2", true), (2, "tool1", true), (1, "tool0", true)]
        );
        for (entry, n) in entries.iter().zip([2, 1, 0]) {
            assert!(
                entry.refs.iter().any(|r| r.contains(&format!("b{n}"))),
                "{entry:?}"
            );
        }
        assert_eq!(repo.oplog_entries(1).expect("entries")[0].id, 3);

        // Something else than a commit where an entry should be: an error, not an entry.
        let blob = w.git(&dir, &["hash-object", "-w", "a.txt"]);
        w.git(&dir, &["update-ref", "refs/butler/oplog/9", blob.trim()]);
        assert!(repo.oplog_entries(10).is_err());
    }
}
