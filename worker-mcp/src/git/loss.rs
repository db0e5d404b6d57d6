//! What a `work_vcs` operation would take away, computed from the repository before it runs.
//!
//! The orchestrator's policy names the effect ([`LossQuery`]); this module asks git what it
//! would concretely cost right now ([`Lost`]): which files with uncommitted edits would be
//! overwritten, which untracked or ignored files deleted, which commits no branch, tag or
//! other reference would reach any more, which tags or stashes would go. An empty answer means
//! nothing is lost and the operation runs without asking; otherwise the user decides, seeing
//! exactly this list. Untracked files an operation leaves alone (a hard reset keeps them) are
//! not listed. Reflogs do not count as keeping work (they expire).

use std::collections::BTreeSet;
use std::path::Path;

use serde::Serialize;

use super::GitRepo;
use super::command::GitCommand;
use super::error::GitError;
use super::path::RepoPath;
use super::status::split_nul;

/// Bound on file lists read from git for a loss computation.
const MAX_LIST: usize = 32 << 20;
/// How many commits are named per lost line of work.
const COMMIT_SAMPLE: usize = 10;

/// Where replaced content comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum Source {
    /// The index (`checkout -- <path>`, `restore <path>`).
    Index,
    /// A commit or tree (`reset --hard <rev>`, `checkout <rev> -- <path>`).
    Tree(String),
}

/// Which untracked files count when a tree is written over the working tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Untracked {
    /// None are touched.
    None,
    /// Only ignored files at paths the tree has are overwritten (git's default when switching).
    IgnoredOnly,
    /// Any untracked file at a path the tree has is overwritten.
    All,
}

/// Files whose content an operation replaces.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FilesQuery {
    pub source: Source,
    /// Pathspecs (git's syntax); `None` for the whole tree.
    pub pathspecs: Option<Vec<String>>,
    /// The working files are replaced.
    pub worktree: bool,
    /// The index is replaced.
    pub index: bool,
    /// Tracked files' uncommitted edits count (false: only overwritten untracked files).
    pub edits: bool,
    pub untracked: Untracked,
    /// Only paths the source has are touched (git's overlay mode).
    pub overlay: bool,
}

/// An effect whose cost is computed before running.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum LossQuery {
    Files(FilesQuery),
    /// Staged content that differs from both HEAD and the working file, in `pathspecs` (all
    /// when `None`): lost when the index is reset or an autostash is re-applied without it.
    StagedVersions {
        pathspecs: Option<Vec<String>>,
    },
    /// References deleted (`to: None`) or moved to `to`: tags they named, commits only they
    /// reached.
    Refs {
        names: Vec<String>,
        to: Option<String>,
    },
    /// `tip` is rewritten onto `kept`: commits reachable from it that neither `kept` nor any
    /// reference other than `gone` reach, except those in `replayed_from..tip` (carried over).
    Commits {
        tip: String,
        gone: Vec<String>,
        kept: Vec<String>,
        replayed_from: Option<String>,
    },
    /// Stash entries dropped (`None`: all).
    Stashes {
        which: Option<Vec<String>>,
    },
    /// A stash entry applied without its index and dropped (`stash pop`): staged versions it
    /// holds that differ from both its base and its working files.
    StashIndex {
        which: String,
    },
    /// Remote-tracking refs a prune would delete because the remote no longer has them
    /// (asks the remote); `None`: every remote, empty: the current branch's remote.
    StaleRemoteRefs {
        remotes: Option<Vec<String>>,
    },
    /// Every remote-tracking ref of a remote that is removed.
    RemoteRefs {
        remote: String,
    },
    /// `git clean` with these arguments (computed by its own dry run).
    Clean {
        args: Vec<String>,
    },
    /// `git reflog expire|delete` with these arguments (computed by its own dry run).
    Reflog {
        args: Vec<String>,
    },
    /// Unreachable objects deleted by pruning (`expire`: the date given, for the note).
    Unreachable {
        expire: String,
    },
    /// A linked worktree deleted with everything in it.
    Worktree {
        path: String,
    },
    /// Tracked files removed with their edits (`rm -f`).
    EditedPaths {
        pathspecs: Vec<String>,
    },
    /// `mv -f`: what sits at the destination.
    MoveOnto {
        sources: Vec<String>,
        dest: String,
    },
    /// Aborting or skipping a conflicted merge, cherry-pick, revert or `am`: the conflict
    /// resolutions made so far.
    Resolution,
    /// `rebase --abort` (back to where the rebase started) or `--skip` (`skip: true`, back to
    /// HEAD): the working tree is reset.
    RebaseAbort {
        skip: bool,
    },
}

/// One thing an operation would lose.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Lost {
    /// Uncommitted edits of a tracked file (or a conflict resolution).
    Edits { path: String },
    /// A staged version that exists only in the index.
    StagedVersion { path: String },
    /// An untracked file deleted or overwritten.
    Untracked { path: String },
    /// An ignored file deleted or overwritten.
    Ignored { path: String },
    /// A tag (name → commit).
    Tag { name: String, target: String },
    /// Commits no reference would reach any more.
    Commits { count: usize, commits: Vec<String> },
    /// A stash entry and the files it holds.
    Stash {
        name: String,
        message: String,
        files: Vec<String>,
    },
    /// Reflog entries (the last way back to commits no reference reaches).
    ReflogEntries { count: usize, entries: Vec<String> },
    /// Unreachable objects deleted for good.
    UnreachableObjects {
        commits: usize,
        others: usize,
        sample: Vec<String>,
        note: Option<String>,
    },
}

impl Lost {
    /// One line for a person.
    pub fn describe(&self) -> String {
        match self {
            Lost::Edits { path } => format!("uncommitted edits in {path}"),
            Lost::StagedVersion { path } => format!("the staged version of {path}"),
            Lost::Untracked { path } => format!("untracked file {path}"),
            Lost::Ignored { path } => format!("ignored file {path}"),
            Lost::Tag { name, target } => format!("tag {name} (at {target})"),
            Lost::Commits { count, commits } => {
                let more = count.saturating_sub(commits.len());
                let tail = if more > 0 {
                    format!(" and {more} more")
                } else {
                    String::new()
                };
                format!(
                    "{count} commit(s) no branch or tag keeps: {}{tail}",
                    commits.join("; ")
                )
            }
            Lost::Stash {
                name,
                message,
                files,
            } => format!(
                "stash {name} ({message}) with {} file(s): {}",
                files.len(),
                files
                    .iter()
                    .take(10)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Lost::ReflogEntries { count, entries } => format!(
                "{count} reflog entr(y/ies): {}",
                entries
                    .iter()
                    .take(10)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
            Lost::UnreachableObjects {
                commits,
                others,
                sample,
                note,
            } => format!(
                "{commits} unreachable commit(s) and {others} other object(s) deleted for good{}{}",
                if sample.is_empty() {
                    String::new()
                } else {
                    format!(": {}", sample.join("; "))
                },
                note.as_deref()
                    .map(|n| format!(" ({n})"))
                    .unwrap_or_default()
            ),
        }
    }
}

impl Lost {
    /// The file this item is about, if it is one in the working tree or the index.
    fn path(&self) -> Option<&str> {
        match self {
            Lost::Edits { path }
            | Lost::StagedVersion { path }
            | Lost::Untracked { path }
            | Lost::Ignored { path } => Some(path),
            _ => None,
        }
    }
}

impl GitRepo {
    /// What the files named in `lost` hold right now, as git blob ids (the working file's,
    /// and the staged version's for a staged item; `absent` when there is none): an approval
    /// bound to these is void once any of them changes, not only when the list of names does.
    pub fn contents_of(&self, lost: &[Lost]) -> Result<Vec<(String, String)>, GitError> {
        let repo = self.open()?;
        let index = repo.index()?;
        let mut out = Vec::new();
        for item in lost {
            let Some(path) = item.path() else { continue };
            let id = if matches!(item, Lost::StagedVersion { .. }) {
                index
                    .get_path(Path::new(path), 0)
                    .map_or("absent".to_owned(), |e| e.id.to_string())
            } else {
                let file = self.workdir().join(RepoPath::parse(path).as_path());
                match std::fs::symlink_metadata(&file) {
                    Ok(meta) if meta.is_file() => {
                        let bytes = std::fs::read(&file).map_err(|e| GitError::io("read", e))?;
                        git2::Oid::hash_object(git2::ObjectType::Blob, &bytes)?.to_string()
                    }
                    Ok(meta) if meta.file_type().is_symlink() => {
                        let target =
                            std::fs::read_link(&file).map_err(|e| GitError::io("read", e))?;
                        format!("link:{}", target.display())
                    }
                    Ok(_) => "directory".to_owned(),
                    Err(_) => "absent".to_owned(),
                }
            };
            out.push((path.to_owned(), id));
        }
        Ok(out)
    }

    /// What running the operation described by `queries` would lose now. `globals` are the
    /// pathspec options the operation runs with (`--literal-pathspecs`, …), applied to every
    /// query so paths match as they will.
    pub fn would_lose(
        &self,
        queries: &[LossQuery],
        globals: &[String],
    ) -> Result<Vec<Lost>, GitError> {
        let q = Queries {
            repo: self,
            globals,
        };
        let mut lost = BTreeSet::new();
        for query in queries {
            lost.extend(q.run(query)?);
        }
        Ok(lost.into_iter().collect())
    }

    /// The full id of the commit `rev` names (any revision syntax), if it names one.
    pub fn commit_of(&self, rev: &str) -> Result<Option<String>, GitError> {
        self.peel(rev, "commit")
    }

    fn peel(&self, rev: &str, kind: &str) -> Result<Option<String>, GitError> {
        if rev.is_empty() || rev.starts_with('-') {
            return Ok(None);
        }
        let out = GitCommand::new(self, "rev-parse")
            .args(["rev-parse", "--verify", "--quiet", "--end-of-options"])
            .arg(format!("{rev}^{{{kind}}}"))
            .run()?;
        let sha = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        Ok((out.status.success() && !sha.is_empty()).then_some(sha))
    }

    /// The remote-tracking refs of branches called `name` on any remote
    /// (`refs/remotes/origin/<name>`); git's checkout/switch guess uses one when it is alone.
    pub fn remote_branches_named(&self, name: &str) -> Result<Vec<String>, GitError> {
        if name.is_empty() || name.starts_with('-') {
            return Ok(Vec::new());
        }
        let out = GitCommand::new(self, "for-each-ref")
            .args(["for-each-ref", "--format=%(refname)", "refs/remotes/"])
            .max_stdout(MAX_LIST)
            .run_ok()?;
        Ok(String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter(|r| {
                r.strip_prefix("refs/remotes/")
                    .and_then(|rest| rest.split_once('/'))
                    .is_some_and(|(_, branch)| branch == name)
            })
            .map(str::to_owned)
            .collect())
    }

    /// Whether git ignores `path` (relative to the top of the working tree).
    pub fn is_ignored(&self, path: &str) -> Result<bool, GitError> {
        let out = GitCommand::new(self, "check-ignore")
            .args(["check-ignore", "-q", "--no-index", "--"])
            .arg(path)
            .run()?;
        Ok(out.status.success())
    }

    /// A boolean configuration value as git reads it, `None` when unset or not a boolean.
    pub fn config_bool(&self, key: &str) -> Result<Option<bool>, GitError> {
        let out = GitCommand::new(self, "config")
            .args(["config", "--type=bool", "--get", key])
            .run()?;
        Ok(match String::from_utf8_lossy(&out.stdout).trim() {
            "true" => Some(true),
            "false" => Some(false),
            _ => None,
        })
    }
}

struct Queries<'a> {
    repo: &'a GitRepo,
    globals: &'a [String],
}

impl Queries<'_> {
    fn git(&self, op: &'static str) -> GitCommand {
        GitCommand::new(self.repo, op)
            .args(self.globals)
            .max_stdout(MAX_LIST)
    }

    /// NUL-separated names printed by `args` (which must ask for `-z` output).
    fn names(
        &self,
        op: &'static str,
        args: &[&str],
        pathspecs: Option<&[String]>,
    ) -> Result<BTreeSet<Vec<u8>>, GitError> {
        let mut cmd = self.git(op).args(args);
        if let Some(ps) = pathspecs {
            cmd = cmd.arg("--").args(ps);
        }
        let out = cmd.run_ok()?;
        if out.truncated() {
            return Err(GitError::failed(op, "output over the bound"));
        }
        Ok(split_nul(&out.stdout).map(<[u8]>::to_vec).collect())
    }

    fn lines(&self, op: &'static str, args: &[&str]) -> Result<Vec<String>, GitError> {
        let out = self.git(op).args(args).run_ok()?;
        Ok(String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::to_owned)
            .collect())
    }

    /// HEAD's commit, or the empty tree on an unborn branch.
    fn head_or_empty(&self) -> Result<String, GitError> {
        if let Some(head) = self.repo.commit_of("HEAD")? {
            return Ok(head);
        }
        let out = self
            .git("hash-object")
            .args(["hash-object", "-t", "tree", "--stdin"])
            .stdin(Vec::new())
            .run_ok()?;
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
    }

    fn run(&self, query: &LossQuery) -> Result<Vec<Lost>, GitError> {
        match query {
            LossQuery::Files(f) => self.files(f),
            LossQuery::StagedVersions { pathspecs } => self.staged_versions(pathspecs.as_deref()),
            LossQuery::Refs { names, to } => self.refs(names, to.as_deref()),
            LossQuery::Commits {
                tip,
                gone,
                kept,
                replayed_from,
            } => self.commits(tip, gone, kept, replayed_from.as_deref()),
            LossQuery::Stashes { which } => self.stashes(which.as_deref()),
            LossQuery::StashIndex { which } => self.stash_index(which),
            LossQuery::StaleRemoteRefs { remotes } => self.stale_remote_refs(remotes.as_deref()),
            LossQuery::RemoteRefs { remote } => {
                let names = self.lines(
                    "for-each-ref",
                    &[
                        "for-each-ref",
                        "--format=%(refname)",
                        &format!("refs/remotes/{remote}/"),
                    ],
                )?;
                self.refs(&names, None)
            }
            LossQuery::Clean { args } => self.clean(args),
            LossQuery::Reflog { args } => self.reflog(args),
            LossQuery::Unreachable { expire } => self.unreachable(expire),
            LossQuery::Worktree { path } => self.worktree(path),
            LossQuery::EditedPaths { pathspecs } => self.edited_paths(pathspecs),
            LossQuery::MoveOnto { sources, dest } => self.move_onto(sources, dest),
            LossQuery::Resolution => self.resolution(),
            LossQuery::RebaseAbort { skip } => self.rebase_abort(*skip),
        }
    }

    fn diff_names(
        &self,
        args: &[&str],
        ps: Option<&[String]>,
    ) -> Result<BTreeSet<Vec<u8>>, GitError> {
        let mut full = vec!["diff", "--name-only", "-z", "--no-renames", "--no-ext-diff"];
        full.extend_from_slice(args);
        self.names("diff", &full, ps)
    }

    /// Unmerged paths whose working file still holds git's conflict markers: nothing of the
    /// user's is in them yet.
    fn untouched_conflicts(&self) -> Result<BTreeSet<Vec<u8>>, GitError> {
        let unmerged = self.names(
            "ls-files",
            &["ls-files", "-z", "--unmerged", "--format=%(path)"],
            None,
        )?;
        Ok(unmerged
            .into_iter()
            .filter(|p| {
                has_conflict_markers(
                    &self
                        .repo
                        .workdir()
                        .join(RepoPath::from_bytes(p.clone()).as_path()),
                )
            })
            .collect())
    }

    fn files(&self, f: &FilesQuery) -> Result<Vec<Lost>, GitError> {
        let ps = f.pathspecs.as_deref();
        let head = self.head_or_empty()?;
        let source = match &f.source {
            Source::Index => None,
            Source::Tree(rev) => match self.repo.peel(rev, "tree")? {
                Some(t) => Some(t),
                // An unknown source: git will refuse; nothing is lost.
                None => return Ok(Vec::new()),
            },
        };
        let mut lost = Vec::new();
        if f.edits {
            let mut changed = if f.worktree {
                // Working file ≠ HEAD and ≠ what replaces it.
                let vs_head = self.diff_names(&[&head], ps)?;
                let vs_source = match &source {
                    None => self.diff_names(&[], ps)?,
                    Some(t) => self.diff_names(&[t], ps)?,
                };
                vs_head
                    .intersection(&vs_source)
                    .cloned()
                    .collect::<BTreeSet<_>>()
            } else {
                BTreeSet::new()
            };
            let mut staged_lost = BTreeSet::new();
            if f.index {
                // A staged version that differs from HEAD, from the source and from the working
                // file exists nowhere else (when it equals the file, the file's line covers it).
                let staged = self.diff_names(&["--cached", &head], ps)?;
                let vs_source = match &source {
                    None => BTreeSet::new(),
                    Some(t) => self.diff_names(&["--cached", t], ps)?,
                };
                let unstaged = self.diff_names(&[], ps)?;
                for p in staged.intersection(&vs_source) {
                    if unstaged.contains(p) {
                        staged_lost.insert(p.clone());
                    }
                }
            }
            if f.overlay
                && let Some(t) = &source
            {
                let present =
                    self.names("ls-tree", &["ls-tree", "-r", "-z", "--name-only", t], ps)?;
                changed.retain(|p| present.contains(p));
            }
            if f.overlay
                && let Some(t) = &source
            {
                let present =
                    self.names("ls-tree", &["ls-tree", "-r", "-z", "--name-only", t], ps)?;
                staged_lost.retain(|p| present.contains(p));
            }
            let conflicts = self.untouched_conflicts()?;
            lost.extend(
                changed
                    .into_iter()
                    .filter(|p| !conflicts.contains(p))
                    .map(|p| Lost::Edits { path: display(p) }),
            );
            lost.extend(
                staged_lost
                    .into_iter()
                    .filter(|p| !conflicts.contains(p))
                    .map(|p| Lost::StagedVersion { path: display(p) }),
            );
        }
        if f.worktree
            && f.untracked != Untracked::None
            && let Some(t) = &source
        {
            let in_tree = self.names("ls-tree", &["ls-tree", "-r", "-z", "--name-only", t], ps)?;
            let ignored = self.names(
                "ls-files",
                &[
                    "ls-files",
                    "-z",
                    "--others",
                    "--ignored",
                    "--exclude-standard",
                ],
                ps,
            )?;
            lost.extend(ignored.intersection(&in_tree).map(|p| Lost::Ignored {
                path: display(p.clone()),
            }));
            if f.untracked == Untracked::All {
                let untracked = self.names(
                    "ls-files",
                    &["ls-files", "-z", "--others", "--exclude-standard"],
                    ps,
                )?;
                lost.extend(untracked.intersection(&in_tree).map(|p| Lost::Untracked {
                    path: display(p.clone()),
                }));
            }
        }
        Ok(lost)
    }

    fn staged_versions(&self, ps: Option<&[String]>) -> Result<Vec<Lost>, GitError> {
        let head = self.head_or_empty()?;
        let staged = self.diff_names(&["--cached", &head], ps)?;
        let unstaged = self.diff_names(&[], ps)?;
        Ok(staged
            .intersection(&unstaged)
            .map(|p| Lost::StagedVersion {
                path: display(p.clone()),
            })
            .collect())
    }

    /// The symbolic target of HEAD (`refs/heads/main`), if HEAD is on a branch.
    fn head_ref(&self) -> Result<Option<String>, GitError> {
        let out = self
            .git("symbolic-ref")
            .args(["symbolic-ref", "--quiet", "HEAD"])
            .run()?;
        let name = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        Ok((out.status.success() && !name.is_empty()).then_some(name))
    }

    fn full_ref(&self, name: &str) -> Result<Option<String>, GitError> {
        if name == "HEAD" {
            return Ok(Some("HEAD".to_owned()));
        }
        let out = self
            .git("rev-parse")
            .args([
                "rev-parse",
                "--symbolic-full-name",
                "--verify",
                "--quiet",
                "--end-of-options",
                name,
            ])
            .run()?;
        let full = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        Ok((out.status.success() && full.starts_with("refs/")).then_some(full))
    }

    /// Commits reachable from `tips` that no reference except `gone` (and HEAD when it follows
    /// one of them) reaches, nor `kept`.
    fn only_reachable(
        &self,
        tips: &[String],
        gone: &[String],
        kept: &[String],
    ) -> Result<Vec<String>, GitError> {
        let head_ref = self.head_ref()?;
        let mut args: Vec<String> = vec!["rev-list".into()];
        args.extend(tips.iter().cloned());
        args.push("--not".into());
        for g in gone {
            args.push(format!("--exclude={g}"));
            if g == "HEAD" || head_ref.as_deref() == Some(g.as_str()) {
                args.push("--exclude=HEAD".into());
            }
        }
        // The operation log keeps everything for a while only: what it alone reaches is lost
        // to the project as far as an approval is concerned.
        args.push(format!("--exclude={}*", super::OPLOG_REFS));
        args.push("--all".into());
        args.extend(kept.iter().cloned());
        // Stash entries below the newest live in the stash's reflog: they keep work too.
        args.extend(self.stash_entries()?);
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        self.lines("rev-list", &refs)
    }

    /// The commits of every stash entry.
    fn stash_entries(&self) -> Result<Vec<String>, GitError> {
        if self.repo.commit_of("refs/stash")?.is_none() {
            return Ok(Vec::new());
        }
        self.lines(
            "stash list",
            &["log", "--walk-reflogs", "--format=%H", "refs/stash", "--"],
        )
    }

    fn sample(&self, shas: &[String]) -> Result<Lost, GitError> {
        let mut args = vec![
            "log",
            "--no-walk=unsorted",
            "--no-decorate",
            "--format=%h %s",
        ];
        args.extend(shas.iter().take(COMMIT_SAMPLE).map(String::as_str));
        let commits = self.lines("log", &args)?;
        Ok(Lost::Commits {
            count: shas.len(),
            commits,
        })
    }

    fn refs(&self, names: &[String], to: Option<&str>) -> Result<Vec<Lost>, GitError> {
        let new = match to {
            Some(rev) => self.repo.commit_of(rev)?,
            None => None,
        };
        let mut lost = Vec::new();
        let mut tips = Vec::new();
        let mut gone = Vec::new();
        for name in names {
            let Some(full) = self.full_ref(name)? else {
                continue;
            };
            let Some(old) = self.repo.commit_of(&full)? else {
                continue;
            };
            if new.as_deref() == Some(old.as_str()) {
                continue;
            }
            if let Some(tag) = full.strip_prefix("refs/tags/") {
                let target = self.lines(
                    "log",
                    &["log", "-1", "--no-decorate", "--format=%h %s", &old],
                )?;
                lost.push(Lost::Tag {
                    name: tag.to_owned(),
                    target: target.join(""),
                });
            }
            tips.push(old);
            gone.push(full);
        }
        if !tips.is_empty() {
            let kept: Vec<String> = new.into_iter().collect();
            let shas = self.only_reachable(&tips, &gone, &kept)?;
            if !shas.is_empty() {
                lost.push(self.sample(&shas)?);
            }
        }
        Ok(lost)
    }

    fn commits(
        &self,
        tip: &str,
        gone: &[String],
        kept: &[String],
        replayed_from: Option<&str>,
    ) -> Result<Vec<Lost>, GitError> {
        let Some(tip) = self.repo.commit_of(tip)? else {
            return Ok(Vec::new());
        };
        let mut kept_commits = Vec::new();
        for k in kept {
            if let Some(c) = self.repo.commit_of(k)? {
                kept_commits.push(c);
            }
        }
        let mut shas = self.only_reachable(std::slice::from_ref(&tip), gone, &kept_commits)?;
        if let Some(from) = replayed_from {
            match self.repo.commit_of(from)? {
                Some(from) => {
                    let replayed: BTreeSet<String> = self
                        .lines("rev-list", &["rev-list", &tip, "--not", &from])?
                        .into_iter()
                        .collect();
                    shas.retain(|s| !replayed.contains(s));
                }
                None => return Ok(Vec::new()),
            }
        }
        Ok(if shas.is_empty() {
            Vec::new()
        } else {
            vec![self.sample(&shas)?]
        })
    }

    fn stashes(&self, which: Option<&[String]>) -> Result<Vec<Lost>, GitError> {
        let entries = self.lines(
            "stash list",
            &[
                "log",
                "--walk-reflogs",
                "--format=%gd%x09%gs",
                "refs/stash",
                "--",
            ],
        );
        // No stash at all: nothing to lose.
        let entries = entries.unwrap_or_default();
        let mut lost = Vec::new();
        for line in entries {
            let Some((name, message)) = line.split_once('\t') else {
                continue;
            };
            let index = name
                .strip_prefix("refs/stash@{")
                .or_else(|| name.strip_prefix("stash@{"))
                .and_then(|r| r.strip_suffix('}'))
                .unwrap_or_default();
            let short = format!("stash@{{{index}}}");
            let selected = match which {
                None => true,
                Some(list) => list.iter().any(|w| {
                    w == &short || w == index || w.strip_prefix("refs/") == Some(short.as_str())
                }),
            };
            if !selected {
                continue;
            }
            let files = self
                .names(
                    "stash show",
                    &[
                        "stash",
                        "show",
                        "--name-only",
                        "-z",
                        "--include-untracked",
                        &short,
                    ],
                    None,
                )
                .unwrap_or_default();
            lost.push(Lost::Stash {
                name: short,
                message: message.to_owned(),
                files: files.into_iter().map(display).collect(),
            });
        }
        Ok(lost)
    }

    fn stash_index(&self, which: &str) -> Result<Vec<Lost>, GitError> {
        let which = match which.parse::<u32>() {
            Ok(n) => format!("stash@{{{n}}}"),
            Err(_) => which.to_owned(),
        };
        let (Some(work), Some(base), Some(index)) = (
            self.repo.commit_of(&which)?,
            self.repo.commit_of(&format!("{which}^1"))?,
            self.repo.commit_of(&format!("{which}^2"))?,
        ) else {
            return Ok(Vec::new());
        };
        let staged = self.diff_names(&[&base, &index], None)?;
        let differs = self.diff_names(&[&index, &work], None)?;
        Ok(staged
            .intersection(&differs)
            .map(|p| Lost::StagedVersion {
                path: format!("{} (in {which})", display(p.clone())),
            })
            .collect())
    }

    fn stale_remote_refs(&self, remotes: Option<&[String]>) -> Result<Vec<Lost>, GitError> {
        let remotes: Vec<String> = match remotes {
            None => self.lines("remote", &["remote"])?,
            Some([]) => {
                let branch = self.head_ref()?;
                let configured = branch
                    .as_deref()
                    .and_then(|b| b.strip_prefix("refs/heads/"))
                    .map(|b| {
                        self.lines(
                            "config",
                            &["config", "--get", &format!("branch.{b}.remote")],
                        )
                        .unwrap_or_default()
                    })
                    .and_then(|l| l.into_iter().next());
                vec![configured.unwrap_or_else(|| "origin".to_owned())]
            }
            Some(list) => list.to_vec(),
        };
        let mut names = Vec::new();
        for remote in remotes {
            if remote.starts_with('-') {
                continue;
            }
            // Unreachable or not a remote: nothing will be pruned either.
            let out = self
                .git("remote prune")
                .args(["remote", "prune", "--dry-run", &remote])
                .run()?;
            names.extend(
                String::from_utf8_lossy(&out.stdout)
                    .lines()
                    .filter_map(|l| l.split_once("[would prune] "))
                    .map(|(_, name)| format!("refs/remotes/{}", name.trim())),
            );
        }
        self.refs(&names, None)
    }

    fn clean(&self, args: &[String]) -> Result<Vec<Lost>, GitError> {
        let mut full: Vec<&str> = vec!["clean", "--dry-run"];
        full.extend(args.iter().map(String::as_str));
        Ok(self
            .lines("clean", &full)?
            .into_iter()
            .filter_map(|l| l.strip_prefix("Would remove ").map(str::to_owned))
            .map(|path| Lost::Untracked { path })
            .collect())
    }

    fn reflog(&self, args: &[String]) -> Result<Vec<Lost>, GitError> {
        let Some((verb, rest)) = args.split_first() else {
            return Ok(Vec::new());
        };
        let mut full: Vec<&str> = vec!["reflog", verb, "--dry-run", "--verbose"];
        full.extend(rest.iter().map(String::as_str));
        let out = self.git("reflog").args(&full).run()?;
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            out.stderr_tail
        );
        let entries: Vec<String> = text
            .lines()
            .filter_map(|l| l.strip_prefix("would prune ").map(str::to_owned))
            .collect();
        Ok(if entries.is_empty() {
            Vec::new()
        } else {
            vec![Lost::ReflogEntries {
                count: entries.len(),
                entries: entries.into_iter().take(COMMIT_SAMPLE).collect(),
            }]
        })
    }

    fn unreachable(&self, expire: &str) -> Result<Vec<Lost>, GitError> {
        let lines = self.lines("fsck", &["fsck", "--unreachable", "--no-progress"])?;
        let mut commits = Vec::new();
        let mut others = 0;
        for line in lines {
            match line.strip_prefix("unreachable commit ") {
                Some(sha) => commits.push(sha.trim().to_owned()),
                None if line.starts_with("unreachable ") => others += 1,
                None => {}
            }
        }
        if commits.is_empty() && others == 0 {
            return Ok(Vec::new());
        }
        let sample = if commits.is_empty() {
            Vec::new()
        } else {
            let mut args = vec![
                "log",
                "--no-walk=unsorted",
                "--no-decorate",
                "--format=%h %s",
            ];
            args.extend(commits.iter().take(COMMIT_SAMPLE).map(String::as_str));
            self.lines("log", &args)?
        };
        let now = matches!(expire, "now" | "all");
        Ok(vec![Lost::UnreachableObjects {
            commits: commits.len(),
            others,
            sample,
            note: (!now).then(|| format!("objects newer than {expire} are kept")),
        }])
    }

    fn worktree(&self, path: &str) -> Result<Vec<Lost>, GitError> {
        let out = self
            .git("worktree status")
            .arg("-C")
            .arg(path)
            .args([
                "status",
                "--porcelain=v1",
                "-z",
                "--untracked-files=all",
                "--ignored=traditional",
                "--no-renames",
            ])
            .run()?;
        if !out.status.success() {
            // Not a worktree (git will refuse) or already gone: nothing there to lose.
            return Ok(Vec::new());
        }
        let prefix = path.trim_end_matches('/');
        Ok(split_nul(&out.stdout)
            .filter_map(|rec| {
                let (xy, name) = (rec.get(..2)?, rec.get(3..)?);
                let path = format!("{prefix}/{}", display(name.to_vec()));
                Some(match xy {
                    b"??" => Lost::Untracked { path },
                    b"!!" => Lost::Ignored { path },
                    _ => Lost::Edits { path },
                })
            })
            .collect())
    }

    fn edited_paths(&self, pathspecs: &[String]) -> Result<Vec<Lost>, GitError> {
        let head = self.head_or_empty()?;
        let mut edited = self.diff_names(&[&head], Some(pathspecs))?;
        edited.extend(self.diff_names(&["--cached", &head], Some(pathspecs))?);
        let conflicts = self.untouched_conflicts()?;
        Ok(edited
            .into_iter()
            .filter(|p| !conflicts.contains(p))
            .map(|p| Lost::Edits { path: display(p) })
            .collect())
    }

    fn move_onto(&self, sources: &[String], dest: &str) -> Result<Vec<Lost>, GitError> {
        let top = self.repo.workdir();
        let targets: Vec<String> = if top.join(dest).is_dir() {
            sources
                .iter()
                .filter_map(|s| {
                    Path::new(s)
                        .file_name()
                        .map(|n| format!("{}/{}", dest.trim_end_matches('/'), n.to_string_lossy()))
                })
                .collect()
        } else {
            vec![dest.to_owned()]
        };
        let head = self.head_or_empty()?;
        let mut lost = Vec::new();
        for t in targets {
            if std::fs::symlink_metadata(top.join(&t)).is_err() {
                continue;
            }
            let literal = [format!(":(literal){t}")];
            let tracked = !self
                .names("ls-files", &["ls-files", "-z"], Some(&literal))?
                .is_empty();
            if !tracked {
                lost.push(Lost::Untracked { path: t });
            } else if !self.diff_names(&[&head], Some(&literal))?.is_empty() {
                lost.push(Lost::Edits { path: t });
            }
        }
        Ok(lost)
    }

    fn resolution(&self) -> Result<Vec<Lost>, GitError> {
        let conflicts = self.untouched_conflicts()?;
        let mut paths = self.names(
            "ls-files",
            &["ls-files", "-z", "--unmerged", "--format=%(path)"],
            None,
        )?;
        paths.retain(|p| !conflicts.contains(p));
        // `--resolve-undo` records are `<mode> <sha> <stage>\t<path>` (no `--format`).
        let undo = self.names("ls-files", &["ls-files", "-z", "--resolve-undo"], None)?;
        paths.extend(undo.into_iter().filter_map(|rec| {
            let tab = rec.iter().position(|&b| b == b'\t')?;
            Some(rec[tab + 1..].to_vec())
        }));
        Ok(paths
            .into_iter()
            .map(|p| Lost::Edits { path: display(p) })
            .collect())
    }

    fn rebase_abort(&self, skip: bool) -> Result<Vec<Lost>, GitError> {
        let target = if skip {
            "HEAD".to_owned()
        } else {
            let git_dir = self.repo.git_dir();
            let orig = ["rebase-merge/orig-head", "rebase-apply/orig-head"]
                .iter()
                .find_map(|f| std::fs::read_to_string(git_dir.join(f)).ok());
            match orig {
                Some(sha) => sha.trim().to_owned(),
                None => return Ok(Vec::new()),
            }
        };
        self.files(&FilesQuery {
            source: Source::Tree(target),
            pathspecs: None,
            worktree: true,
            index: true,
            edits: true,
            untracked: Untracked::None,
            overlay: false,
        })
    }
}

fn display(bytes: Vec<u8>) -> String {
    RepoPath::from_bytes(bytes).display()
}

/// Whether the file still holds a conflict block as git writes it.
fn has_conflict_markers(path: &Path) -> bool {
    let Ok(bytes) = std::fs::read(path) else {
        return false;
    };
    let text = String::from_utf8_lossy(&bytes);
    let mut open = false;
    for line in text.lines() {
        if line.starts_with("<<<<<<< ") || line == "<<<<<<<" {
            open = true;
        } else if open && (line.starts_with(">>>>>>> ") || line == ">>>>>>>") {
            return true;
        }
    }
    false
}
