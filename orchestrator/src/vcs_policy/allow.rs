//! The allow-list: the git command paths `work_vcs` runs, what each of their options does, and
//! command lines that show each rule at work.
//!
//! Every option git knows for an allowed command path has exactly one [`Class`] here (a test
//! checks it against the tables derived from git). Anything not listed — a subcommand, a
//! sub-subcommand, an option — is refused. Command paths git parses with parse-options take
//! their option list from [`super::git_options`] (derived from the installed git); the
//! revision/diff options some of them pass on, and the few commands with their own parsers
//! (`rev-parse`, `rev-list`, `bisect`), have the short hand-written lists below, matched
//! exactly as git matches them.
//!
//! A rule is data: per command path, one row per class with the ids of its options (`Plain`
//! options listed too, so that an option a newer git adds is refused until someone classifies
//! it), the tables it shares with commands git builds from the same option lists (`cherry-pick`
//! and `revert`, `fetch` and `pull`, …), and its [`Example`]s: command lines with what the
//! policy does with them, each decided by a unit test (`vcs_policy::tests`).

use super::git_options;
use super::table::{Arg, RawOption as O};
use crate::catalogue::Key;

/// What an option means for Butler's promises.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// No bearing on the promises: output shape, filters, messages, counts.
    Plain,
    /// Changes what the command does; the decision for the command reads it.
    Effect,
    /// Its value names a file git reads: it must be inside the project.
    ReadsFile,
    /// Makes git run or open another program (editor, pager, gpg, a hook of the Brain's
    /// choosing, a shell command): refused, with why (a `VcsWhy…` text).
    RunsProgram(Key),
    /// Refused for another reason, with why (a `VcsWhy…` text).
    Refused(Key),
}

/// Whether a command path only reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    ReadOnly,
    Writes,
}

/// Options by class: each row a class and the ids of the options that have it, separated by
/// spaces (an id is the long name, or `-x` for an option with only a short name).
pub type Classes = &'static [(Class, &'static str)];

/// What the policy does with an example command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// Runs ([`super::Verdict::Run`]).
    Run,
    /// Runs unless it would lose work, weighed first ([`super::Verdict::RunUnlessLoss`]).
    Weigh,
    /// Refused ([`super::Verdict::Refused`]).
    Refuse,
    /// Not read: malformed, ambiguous, a name that starts with `-` ([`super::Verdict::Invalid`]).
    Invalid,
    /// A Butler tool does it ([`super::Verdict::UseProperTool`]).
    Tool(&'static str),
}

/// A command line that shows a rule: the words after `git`, split at spaces, against the
/// project the unit tests describe (commits `HEAD`, `HEAD~1`, `main`, `feature`, `v1`,
/// `origin/main`; files `a`, `a.txt`, `b.txt`, `c.txt`, `src/a.rs`; `build/` ignored).
#[derive(Debug, Clone, Copy)]
pub struct Example {
    pub line: &'static str,
    pub expect: Expect,
    /// The canonical command line that runs, where the example shows it.
    pub runs_as: Option<&'static str>,
}

const fn example(line: &'static str, expect: Expect) -> Example {
    Example {
        line,
        expect,
        runs_as: None,
    }
}
const fn run(line: &'static str) -> Example {
    example(line, Expect::Run)
}
const fn weigh(line: &'static str) -> Example {
    example(line, Expect::Weigh)
}
const fn refuse(line: &'static str) -> Example {
    example(line, Expect::Refuse)
}
const fn invalid(line: &'static str) -> Example {
    example(line, Expect::Invalid)
}
const fn tool(line: &'static str, tool: &'static str) -> Example {
    example(line, Expect::Tool(tool))
}

impl Example {
    /// The example runs as `canonical` (the words after `git`).
    const fn runs_as(self, canonical: &'static str) -> Self {
        Example {
            runs_as: Some(canonical),
            ..self
        }
    }
}

/// One allowed command path.
#[derive(Debug, Clone, Copy)]
pub struct Entry {
    /// The words after `git` (`["stash", "push"]`).
    pub path: &'static [&'static str],
    /// How git prints this path's parse-options usage (`["config", "--list"]` for the legacy
    /// `config` modes); `None` when git has no parse-options table for it.
    pub probe: Option<&'static [&'static str]>,
    /// Options git's table does not show: revision/diff options passed on, or the whole list
    /// for commands with their own parsers. Matched exactly (no prefixes), as git does.
    pub extra: &'static [O],
    /// Class tables shared with other command paths.
    pub shared: &'static [Classes],
    /// The classes of the rest of its options.
    pub classes: Classes,
    pub kind: Kind,
    /// Command lines that show the rule, decided by a unit test.
    pub examples: &'static [Example],
}

/// A command path git parses with parse-options (its options come from git's own table).
const fn git(path: &'static [&'static str], kind: Kind) -> Entry {
    Entry {
        path,
        probe: Some(path),
        extra: &[],
        shared: &[],
        classes: &[],
        kind,
        examples: &[],
    }
}

/// A command path with its own parser: every option is hand-written.
const fn own(path: &'static [&'static str], kind: Kind, options: &'static [O]) -> Entry {
    Entry {
        probe: None,
        extra: options,
        ..git(path, kind)
    }
}

impl Entry {
    /// git prints the usage of this path for `probe`.
    const fn probe_as(self, probe: &'static [&'static str]) -> Self {
        Entry {
            probe: Some(probe),
            ..self
        }
    }
    /// Hand-written options the command passes on besides git's table.
    const fn passes_on(self, extra: &'static [O]) -> Self {
        Entry { extra, ..self }
    }
    const fn shares(self, shared: &'static [Classes]) -> Self {
        Entry { shared, ..self }
    }
    const fn classes(self, classes: Classes) -> Self {
        Entry { classes, ..self }
    }
    const fn examples(self, examples: &'static [Example]) -> Self {
        Entry { examples, ..self }
    }

    /// Every option of this path: git's table, then the hand-written ones.
    pub fn options(&self) -> impl Iterator<Item = &'static O> {
        let derived: &'static [O] = if self.probe.is_some() {
            git_options::COMMANDS
                .iter()
                .find(|c| c.path == self.path)
                .map_or(&[], |c| c.options)
        } else {
            &[]
        };
        derived.iter().chain(self.extra.iter())
    }

    /// Every (class, option id) row: the shared tables' first, then its own.
    pub fn rows(&self) -> impl Iterator<Item = (Class, &'static str)> {
        self.shared
            .iter()
            .copied()
            .chain([self.classes])
            .flatten()
            .flat_map(|(class, ids)| ids.split_whitespace().map(move |id| (*class, id)))
    }

    /// The class of option `id` (every option has one: a test checks it).
    pub fn class(&self, id: &str) -> Class {
        self.rows()
            .find(|(_, k)| *k == id)
            .map_or(Class::Refused(Key::VcsWhyNotClassified), |(c, _)| c)
    }
}

use Class::*;
use Kind::*;

const EDITOR: Class = RunsProgram(Key::VcsWhyOpensEditor);
const GPG: Class = RunsProgram(Key::VcsWhyGpg);
const TEXTCONV: Class = RunsProgram(Key::VcsWhyTextconv);
const EXT_DIFF: Class = RunsProgram(Key::VcsWhyExtDiff);
const UPLOAD_PACK: Class = RunsProgram(Key::VcsWhyUploadPack);
const SHOW_PATCH: Class = RunsProgram(Key::VcsWhyShowPatch);
const INTERACTIVE: Class = Refused(Key::VcsWhyInteractive);
const SUBMODULES: Class = Refused(Key::VcsWhySubmodules);
const SHALLOW: Class = Refused(Key::VcsWhyShallow);
const FROM_FILE: Class = Refused(Key::VcsWhyFromFile);
const WRITES_FILE: Class = Refused(Key::VcsWhyWritesFile);
const CUSTOM_FORMAT: Class = Refused(Key::VcsWhyCustomFormat);
const FETCH_FORCE: Class = Refused(Key::VcsWhyFetchForce);
const PRUNE_TAGS: Class = Refused(Key::VcsWhyPruneTags);
const REFMAP: Class = Refused(Key::VcsWhyRefmap);
const CONFIG_SECTIONS: Class = Refused(Key::VcsWhyConfigSections);
const CONFIG_OUTSIDE: Class = Refused(Key::VcsWhyConfigOutside);
const BISECT_TERMS: Class = Refused(Key::VcsWhyBisectTerms);

// ---- Hand-written option lists (matched exactly, as git matches them) ------------------------

/// Log options accepted by `reflog [show]` and `stash list`.
const LOG_OPTIONS: &[O] = &[
    O::exact("max-count", Some('n'), Some("max-count"), Arg::Required),
    O::number(),
    O::long("date", Arg::Required),
    O::long("since", Arg::Required),
    O::long("until", Arg::Required),
    O::long("author", Arg::Required),
    O::long("grep", Arg::Required),
    O::long("oneline", Arg::None),
    O::long("reverse", Arg::None),
    O::long("stat", Arg::Optional),
    O::long("name-only", Arg::None),
    O::long("name-status", Arg::None),
    O::exact("patch", Some('p'), Some("patch"), Arg::None),
    O::long("format", Arg::Required),
    O::long("pretty", Arg::Optional),
    O::long("show-signature", Arg::None),
    O::long("ext-diff", Arg::None),
    O::long("textconv", Arg::None),
    O::long("no-ext-diff", Arg::None),
    O::long("no-textconv", Arg::None),
    O::long("output", Arg::Required),
];

/// Diff options `stash show` passes on.
const STASH_SHOW_DIFF: &[O] = &[
    O::long("stat", Arg::Optional),
    O::long("numstat", Arg::None),
    O::long("shortstat", Arg::None),
    O::long("name-only", Arg::None),
    O::long("name-status", Arg::None),
    O::long("summary", Arg::None),
    O::exact("patch", Some('p'), Some("patch"), Arg::None),
    O::long("ext-diff", Arg::None),
    O::long("textconv", Arg::None),
    O::long("no-ext-diff", Arg::None),
    O::long("no-textconv", Arg::None),
    O::long("output", Arg::Required),
];

/// `blame` passes these on to the revision walk.
const BLAME_REVS: &[O] = &[
    O::long("reverse", Arg::None),
    O::long("first-parent", Arg::None),
    O::long("textconv", Arg::None),
    O::long("no-textconv", Arg::None),
];

const REV_LIST: &[O] = &[
    O::long("count", Arg::None),
    O::long("all", Arg::None),
    O::long("branches", Arg::Optional),
    O::long("tags", Arg::Optional),
    O::long("remotes", Arg::Optional),
    O::exact("max-count", Some('n'), Some("max-count"), Arg::Required),
    O::number(),
    O::long("first-parent", Arg::None),
    O::long("merges", Arg::None),
    O::long("no-merges", Arg::None),
    O::long("left-right", Arg::None),
    O::long("left-only", Arg::None),
    O::long("right-only", Arg::None),
    O::long("cherry-pick", Arg::None),
    O::long("cherry-mark", Arg::None),
    O::long("reverse", Arg::None),
    O::long("since", Arg::Required),
    O::long("until", Arg::Required),
    O::long("author", Arg::Required),
    O::long("grep", Arg::Required),
    O::long("ancestry-path", Arg::None),
    O::long("topo-order", Arg::None),
    O::long("date-order", Arg::None),
    O::long("abbrev-commit", Arg::None),
    O::long("oneline", Arg::None),
    O::long("not", Arg::None),
    O::long("boundary", Arg::None),
];

const REV_PARSE: &[O] = &[
    O::long("abbrev-ref", Arg::Optional),
    O::long("short", Arg::Optional),
    O::long("verify", Arg::None),
    O::exact("quiet", Some('q'), Some("quiet"), Arg::None),
    O::long("symbolic", Arg::None),
    O::long("symbolic-full-name", Arg::None),
    O::long("show-toplevel", Arg::None),
    O::long("show-prefix", Arg::None),
    O::long("show-cdup", Arg::None),
    O::long("git-dir", Arg::None),
    O::long("git-common-dir", Arg::None),
    O::long("absolute-git-dir", Arg::None),
    O::long("is-inside-work-tree", Arg::None),
    O::long("is-inside-git-dir", Arg::None),
    O::long("is-bare-repository", Arg::None),
    O::long("is-shallow-repository", Arg::None),
    O::long("show-object-format", Arg::Optional),
    O::long("all", Arg::None),
    O::long("branches", Arg::Optional),
    O::long("tags", Arg::Optional),
    O::long("remotes", Arg::Optional),
    O::long("revs-only", Arg::None),
    O::long("no-revs", Arg::None),
];

const BISECT_START: &[O] = &[
    O::long("term-new", Arg::Required),
    O::long("term-bad", Arg::Required),
    O::long("term-old", Arg::Required),
    O::long("term-good", Arg::Required),
    O::long("no-checkout", Arg::None),
    O::long("first-parent", Arg::None),
];

const BISECT_TERMS_OPTIONS: &[O] = &[
    O::long("term-good", Arg::None),
    O::long("term-bad", Arg::None),
];

// ---- Class tables shared by command paths built from the same option lists -------------------

/// How diffs are shown (`reflog show`, `stash list`, `stash show`).
const DIFF_OUTPUT: Classes = &[
    (
        Plain,
        "stat name-only name-status patch no-ext-diff no-textconv",
    ),
    (EXT_DIFF, "ext-diff"),
    (TEXTCONV, "textconv"),
    (WRITES_FILE, "output"),
];

/// The rest of the log options of `reflog show` and `stash list`.
const LOG: Classes = &[
    (
        Plain,
        "max-count -NUM date since until author grep oneline reverse",
    ),
    (CUSTOM_FORMAT, "format pretty"),
    (GPG, "show-signature"),
];

/// git's ref-filter options (`branch`, `tag`, `for-each-ref`).
const REF_FILTER: Classes = &[(
    Plain,
    "contains no-contains merged no-merged points-at sort format color ignore-case omit-empty",
)];

/// Options of every mode of git's `checkout.c` (`checkout`, `switch`, `restore`).
const CHECKOUT_COMMON: Classes = &[
    (Plain, "quiet progress conflict"),
    (Effect, "merge"),
    (SUBMODULES, "recurse-submodules"),
];

/// Switching branches (`checkout`, `switch`).
const CHECKOUT_SWITCHING: Classes = &[
    (Effect, "guess detach force orphan overwrite-ignore"),
    (Plain, "track ignore-other-worktrees"),
];

/// Checking out paths (`checkout`, `restore`).
const CHECKOUT_PATHS: Classes = &[
    (Effect, "overlay ours theirs"),
    (Plain, "ignore-skip-worktree-bits pathspec-file-nul"),
    (INTERACTIVE, "patch"),
    (FROM_FILE, "pathspec-from-file"),
];

/// The sequencer (`cherry-pick`, `revert`).
const SEQUENCER: Classes = &[
    (
        Plain,
        "quit cleanup no-commit -r signoff mainline rerere-autoupdate strategy-option",
    ),
    (Effect, "continue abort skip strategy"),
    (EDITOR, "edit"),
    (GPG, "gpg-sign"),
];

/// Fetching (`fetch`, and `pull`, which passes them on).
const FETCHING: Classes = &[
    (
        Plain,
        "verbose quiet progress all set-upstream append tags prune jobs dry-run keep deepen \
         unshallow update-shallow server-option ipv4 ipv6 negotiation-tip show-forced-updates",
    ),
    (UPLOAD_PACK, "upload-pack"),
    (FETCH_FORCE, "force"),
    (SHALLOW, "depth shallow-since shallow-exclude"),
    (REFMAP, "refmap"),
];

/// Merging (`merge`, and `pull`, which passes them on).
const MERGING: Classes = &[
    (
        Plain,
        "-n stat summary log squash commit cleanup ff ff-only strategy-option \
         allow-unrelated-histories autostash signoff",
    ),
    (Effect, "strategy"),
    (EDITOR, "edit"),
    (GPG, "verify-signatures gpg-sign"),
];

/// The types `config` reads values as (`config`, `get`, `list`, `set`).
const CONFIG_TYPES: Classes = &[(
    Plain,
    "type bool int bool-or-int bool-or-str path expiry-date",
)];

/// How `config` shows what it reads (`config`, `get`, `list`).
const CONFIG_SHOWN: Classes = &[(
    Plain,
    "null name-only show-origin show-scope show-names includes",
)];

/// Where `config get` and `config list` read.
const CONFIG_READS: Classes = &[
    (Plain, "global system local worktree blob"),
    (ReadsFile, "file"),
];

/// Where `config set` and `config unset` write: only the project's own configuration.
const CONFIG_WRITES: Classes = &[
    (CONFIG_OUTSIDE, "global system file blob"),
    (Plain, "local worktree"),
];

// ---- The allow-list -----------------------------------------------------------------------

/// The allow-list.
pub const ENTRIES: &[Entry] = &[
    // ---- Reading --------------------------------------------------------------------------
    git(&["blame"], ReadOnly)
        .passes_on(BLAME_REVS)
        .classes(&[
            (
                Plain,
                "incremental -b root show-stats progress score-debug show-name show-number \
                 porcelain line-porcelain -c -t -l -s show-email -w ignore-rev color-lines \
                 color-by-age minimal -C -M -L abbrev reverse first-parent no-textconv",
            ),
            (ReadsFile, "ignore-revs-file -S contents"),
            (TEXTCONV, "textconv"),
        ])
        .examples(&[
            run("blame src/lib.rs"),
            run("blame -L 1,5 HEAD -- src/lib.rs"),
            refuse("blame --textconv x"),
            refuse("blame --contents=/etc/passwd x"),
            refuse("blame --contents ../x x"),
        ]),
    git(&["cat-file"], ReadOnly)
        .classes(&[
            (
                Plain,
                "-e -p -t -s allow-unknown-type use-mailmap batch batch-check -z -Z \
                 batch-command batch-all-objects buffer follow-symlinks unordered path",
            ),
            (TEXTCONV, "textconv"),
            (RunsProgram(Key::VcsWhyFilters), "filters"),
        ])
        .examples(&[
            run("cat-file -p HEAD"),
            refuse("cat-file --textconv HEAD:x"),
            refuse("cat-file --filt HEAD:x"),
        ]),
    git(&["check-ignore"], ReadOnly)
        .classes(&[(Plain, "quiet verbose stdin -z non-matching no-index")])
        .examples(&[run("check-ignore -v build")]),
    git(&["cherry"], ReadOnly)
        .classes(&[(Plain, "abbrev verbose")])
        .examples(&[run("cherry main")]),
    git(&["count-objects"], ReadOnly)
        .classes(&[(Plain, "verbose human-readable")])
        .examples(&[run("count-objects -v")]),
    git(&["describe"], ReadOnly)
        .classes(&[(
            Plain,
            "contains debug all tags long first-parent abbrev exact-match candidates match \
             exclude always dirty broken",
        )])
        .examples(&[run("describe --tags")]),
    git(&["for-each-ref"], ReadOnly)
        .shares(&[REF_FILTER])
        .classes(&[(
            Plain,
            "shell perl python tcl count exclude stdin include-root-refs",
        )])
        .examples(&[run("for-each-ref --format=%(refname)")]),
    git(&["grep"], ReadOnly)
        .classes(&[
            (
                Plain,
                "cached no-index untracked exclude-standard recurse-submodules invert-match \
                 ignore-case word-regexp text -I recursive max-depth extended-regexp \
                 basic-regexp fixed-strings perl-regexp line-number column -h -H full-name \
                 files-with-matches name-only files-without-match null only-matching count \
                 color break heading context before-context after-context threads -NUM \
                 show-function function-context and or not ( ) quiet all-match ext-grep \
                 max-count",
            ),
            (Effect, "-e"),
            (ReadsFile, "-f"),
            (TEXTCONV, "textconv"),
            (RunsProgram(Key::VcsWhyPager), "open-files-in-pager"),
        ])
        .examples(&[
            run("grep -n foo"),
            run("grep -e foo -- src"),
            refuse("grep -Oless x"),
            refuse("grep --open-files-in-pager=less x"),
            refuse("grep --open x"),
            refuse("grep --textconv x"),
            refuse("grep foo -- /etc"),
            refuse("grep foo ../.."),
            // Options end at the pattern: the rest are paths.
            invalid("grep foo --open-files-in-pager=x"),
        ]),
    git(&["ls-files"], ReadOnly)
        .classes(&[
            (
                Plain,
                "-z -t -v -f cached deleted modified others ignored stage killed directory eol \
                 empty-directory unmerged resolve-undo exclude exclude-per-directory \
                 exclude-standard full-name recurse-submodules error-unmatch with-tree abbrev \
                 debug deduplicate sparse format",
            ),
            (ReadsFile, "exclude-from"),
        ])
        .examples(&[
            run("ls-files -m"),
            refuse("ls-files -X ../x"),
            refuse("ls-files --exclude-from=/x"),
        ]),
    git(&["ls-remote"], ReadOnly)
        .classes(&[
            (
                Plain,
                "quiet tags branches heads refs get-url sort exit-code symref server-option",
            ),
            (UPLOAD_PACK, "upload-pack exec"),
        ])
        .examples(&[
            run("ls-remote origin"),
            refuse("ls-remote --exec=x origin"),
            refuse("ls-remote --exe x origin"),
            refuse("ls-remote ext::sh"),
            refuse("ls-remote -- ext::sh"),
            // Options end at the first positional: a value, not an option.
            invalid("ls-remote origin --upload-pack=x"),
        ]),
    git(&["ls-tree"], ReadOnly)
        .classes(&[(
            Plain,
            "-d -r -t -z long name-only name-status object-only full-name full-tree format \
             abbrev",
        )])
        .examples(&[run("ls-tree -r HEAD")]),
    git(&["merge-base"], ReadOnly)
        .classes(&[(Plain, "all octopus independent is-ancestor fork-point")])
        .examples(&[run("merge-base HEAD main")]),
    git(&["name-rev"], ReadOnly)
        .classes(&[(
            Plain,
            "name-only tags refs exclude all stdin annotate-stdin undefined always peel-tag",
        )])
        .examples(&[run("name-rev HEAD")]),
    own(&["reflog", "show"], ReadOnly, LOG_OPTIONS)
        .shares(&[DIFF_OUTPUT, LOG])
        .examples(&[
            run("reflog"),
            run("reflog -5").runs_as("reflog show --no-ext-diff --no-textconv -5"),
            refuse("reflog show --format=%G?"),
        ]),
    git(&["reflog", "list"], ReadOnly).examples(&[run("reflog list")]),
    git(&["reflog", "exists"], ReadOnly).examples(&[run("reflog exists refs/heads/main")]),
    git(&["remote"], ReadOnly)
        .classes(&[(Plain, "verbose")])
        .examples(&[run("remote -v").runs_as("remote --verbose")]),
    git(&["remote", "get-url"], ReadOnly)
        .classes(&[(Plain, "push all")])
        .examples(&[run("remote get-url origin")]),
    git(&["remote", "show"], ReadOnly)
        .classes(&[(Plain, "-n")])
        .examples(&[
            run("remote show origin"),
            run("remote -v show origin").runs_as("remote --verbose show origin"),
        ]),
    own(&["rev-list"], ReadOnly, REV_LIST)
        .classes(&[(
            Plain,
            "count all branches tags remotes max-count -NUM first-parent merges no-merges \
             left-right left-only right-only cherry-pick cherry-mark reverse since until author \
             grep ancestry-path topo-order date-order abbrev-commit oneline not boundary",
        )])
        .examples(&[run("rev-list --count HEAD")]),
    own(&["rev-parse"], ReadOnly, REV_PARSE)
        .classes(&[(
            Plain,
            "abbrev-ref short verify quiet symbolic symbolic-full-name show-toplevel \
             show-prefix show-cdup git-dir git-common-dir absolute-git-dir is-inside-work-tree \
             is-inside-git-dir is-bare-repository is-shallow-repository show-object-format all \
             branches tags remotes revs-only no-revs",
        )])
        .examples(&[
            run("rev-parse HEAD"),
            run("rev-parse --abbrev-ref HEAD"),
            run("rev-parse --show-toplevel"),
        ]),
    git(&["show-ref"], ReadOnly)
        .classes(&[(
            Plain,
            "tags branches heads exists verify -h head dereference hash abbrev quiet \
             exclude-existing",
        )])
        .examples(&[run("show-ref")]),
    own(&["stash", "list"], ReadOnly, LOG_OPTIONS)
        .shares(&[DIFF_OUTPUT, LOG])
        .examples(&[run("stash list"), refuse("stash list --show-signature")]),
    git(&["stash", "show"], ReadOnly)
        .passes_on(STASH_SHOW_DIFF)
        .shares(&[DIFF_OUTPUT])
        .classes(&[(
            Plain,
            "include-untracked only-untracked numstat shortstat summary",
        )])
        .examples(&[
            run("stash show -p"),
            run("stash show --stat stash@{1}"),
            refuse("stash show --ext-diff"),
        ]),
    git(&["version"], ReadOnly)
        .classes(&[(Plain, "build-options")])
        .examples(&[run("version")]),
    git(&["worktree", "list"], ReadOnly)
        .classes(&[(Plain, "porcelain verbose expire -z")])
        .examples(&[run("worktree list")]),
    // ---- Changing the repository ------------------------------------------------------------
    git(&["am"], Writes)
        .classes(&[
            (
                Plain,
                "no-verify binary 3way quiet signoff utf8 keep keep-non-patch message-id keep-cr \
                 scissors quoted-cr whitespace ignore-space-change ignore-whitespace directory \
                 exclude include -C -p patch-format reject resolvemsg \
                 committer-date-is-author-date ignore-date rerere-autoupdate empty",
            ),
            (
                Effect,
                "continue resolved skip abort quit retry allow-empty",
            ),
            (INTERACTIVE, "interactive"),
            (SHOW_PATCH, "show-current-patch"),
            (GPG, "gpg-sign"),
            (Refused(Key::VcsWhyInternal), "rebasing"),
        ])
        .examples(&[
            run("am --continue"),
            weigh("am --abort"),
            refuse("am -i"),
            refuse("am patch.mbox"),
        ]),
    own(&["bisect", "start"], Writes, BISECT_START)
        .classes(&[
            (BISECT_TERMS, "term-new term-bad term-old term-good"),
            (Plain, "no-checkout first-parent"),
        ])
        .examples(&[run("bisect start")]),
    own(&["bisect", "bad"], Writes, &[]).examples(&[run("bisect bad HEAD")]),
    own(&["bisect", "good"], Writes, &[]).examples(&[run("bisect good HEAD~1")]),
    own(&["bisect", "new"], Writes, &[]).examples(&[run("bisect new HEAD")]),
    own(&["bisect", "old"], Writes, &[]).examples(&[run("bisect old HEAD~1")]),
    own(&["bisect", "skip"], Writes, &[])
        .examples(&[run("bisect skip"), invalid("bisect skip --")]),
    own(&["bisect", "reset"], Writes, &[]).examples(&[run("bisect reset")]),
    own(&["bisect", "log"], ReadOnly, &[]).examples(&[run("bisect log")]),
    own(&["bisect", "terms"], ReadOnly, BISECT_TERMS_OPTIONS)
        .classes(&[(Plain, "term-good term-bad")])
        .examples(&[run("bisect terms --term-good")]),
    git(&["branch"], Writes)
        .shares(&[REF_FILTER])
        .classes(&[
            (
                Plain,
                "verbose quiet track set-upstream with without abbrev all show-current \
                 create-reflog column recurse-submodules",
            ),
            (
                Effect,
                "set-upstream-to unset-upstream remotes delete -D move -M copy -C list force",
            ),
            (EDITOR, "edit-description"),
        ])
        .examples(&[
            run("branch"),
            run("branch -a"),
            run("branch -vv"),
            run("branch --list 'f*'"),
            run("branch --contains"),
            run("branch topic"),
            run("branch -d topic"),
            // git permutes: options after positionals are options.
            run("branch x --quiet").runs_as("branch x --quiet"),
            weigh("branch -D topic"),
            weigh("branch --delete --force topic"),
            weigh("branch --del --forc topic"),
            weigh("branch -df topic"),
            weigh("branch -fd topic"),
            weigh("branch -f main HEAD~1"),
            weigh("branch -M topic main"),
            weigh("branch -C topic main"),
            weigh("branch -m -f topic main"),
            weigh("branch -d -r origin/x"),
            refuse("branch --edit-d"),
            invalid("branch -- -x"),
        ]),
    git(&["checkout"], Writes)
        .shares(&[CHECKOUT_COMMON, CHECKOUT_SWITCHING, CHECKOUT_PATHS])
        .classes(&[(Effect, "-b -B"), (Plain, "-l")])
        .examples(&[
            tool("checkout main", "work_switch_line"),
            tool("checkout only-remote", "work_switch_line"),
            tool("checkout -b topic", "work_new_line"),
            run("checkout").runs_as("checkout"),
            weigh("checkout -- src/a.rs"),
            weigh("checkout ."),
            weigh("checkout a.txt").runs_as("checkout -- a.txt"),
            weigh("checkout main a.txt").runs_as("checkout main -- a.txt"),
            weigh("checkout -").runs_as("checkout - --"),
            weigh("checkout -f main"),
            weigh("checkout --force main"),
            weigh("checkout --ours a.txt"),
            weigh("checkout -B main HEAD~1"),
            // After checkout's `--`: a path.
            weigh("checkout -- -x"),
            refuse("checkout -p x"),
            refuse("checkout -- ../x"),
            refuse("checkout main -- /etc/passwd"),
            refuse("checkout -q -x"),
        ]),
    git(&["cherry-pick"], Writes)
        .shares(&[SEQUENCER])
        .classes(&[(
            Plain,
            "-x ff allow-empty allow-empty-message keep-redundant-commits empty",
        )])
        .examples(&[
            run("cherry-pick feature"),
            run("cherry-pick --continue"),
            weigh("cherry-pick --abort"),
            refuse("cherry-pick -xe main"),
            refuse("cherry-pick --edi main"),
        ]),
    git(&["clean"], Writes)
        .classes(&[
            (Plain, "quiet"),
            (Effect, "dry-run force -d exclude -x -X"),
            (INTERACTIVE, "interactive"),
        ])
        .examples(&[
            run("clean -n"),
            run("clean -nd"),
            run("clean --dry-run -f"),
            run("clean -d"),
            weigh("clean -f"),
            weigh("clean -fdx"),
            weigh("clean --force -d"),
            refuse("clean -i"),
        ]),
    git(&["config"], Writes)
        .probe_as(&["config", "--list"])
        .shares(&[CONFIG_TYPES, CONFIG_SHOWN])
        .classes(&[
            (
                Effect,
                "global system file get get-all get-regexp get-urlmatch replace-all add unset \
                 unset-all list get-color get-colorbool",
            ),
            (Plain, "local worktree blob default comment fixed-value"),
            (CONFIG_SECTIONS, "rename-section remove-section"),
            (EDITOR, "edit"),
        ])
        .examples(&[
            run("config user.name Someone"),
            run("config User.Email a@b"),
            run("config branch.topic.remote origin"),
            run("config branch.my.dotted.name.merge refs/heads/x"),
            run("config pull.rebase true"),
            run("config --unset branch.topic.remote"),
            run("config advice.detachedHead false"),
            run("config core.pager"),
            run("config --get core.pager"),
            run("config --get user.name").runs_as("config --get user.name"),
            run("config --list"),
            run("config --global --get user.name"),
            refuse("config pull.rebase interactive"),
            refuse("config branch.x.rebase i"),
            refuse("config -e"),
            refuse("config --ed"),
            refuse("config --file=../x --list"),
            refuse("config --file ../x user.name"),
            refuse("config --global user.name x"),
            // git drops `--`: the words after it are checked like any other.
            refuse("config -- core.fsmonitor touch-marker"),
            refuse("config -- core.sshCommand x"),
            refuse("config -- protocol.ext.allow always"),
            refuse("config -- core.hooksPath hooks"),
            refuse("config -- core.bare true"),
            refuse("config -- alias.x !sh"),
            refuse("config --add -- core.pager x"),
            invalid("config core.fsmonitor -- x"),
            // Options end at the key: the rest is a value.
            invalid("config user.name --default=x"),
            invalid("config user.name --comment=x"),
            invalid("config core.pager --default=x"),
        ]),
    git(&["config", "get"], ReadOnly)
        .shares(&[CONFIG_READS, CONFIG_SHOWN, CONFIG_TYPES])
        .classes(&[(Plain, "all regexp value fixed-value url default")])
        .examples(&[
            run("config get --global user.name"),
            run("config get alias.st"),
        ]),
    git(&["config", "list"], ReadOnly)
        .shares(&[CONFIG_READS, CONFIG_SHOWN, CONFIG_TYPES])
        .examples(&[
            run("config list --show-origin"),
            refuse("config list --file=../x"),
        ]),
    git(&["config", "set"], Writes)
        .shares(&[CONFIG_WRITES, CONFIG_TYPES])
        .classes(&[(Plain, "all value fixed-value comment append")])
        .examples(&[
            run("config set user.email a@b"),
            refuse("config set --system user.name x"),
            refuse("config set -- core.fsmonitor x"),
            invalid("config set user.name --comment=x"),
        ]),
    git(&["config", "unset"], Writes)
        .shares(&[CONFIG_WRITES])
        .classes(&[(Plain, "all value fixed-value")])
        .examples(&[
            run("config unset branch.topic.remote"),
            refuse("config unset --global user.name"),
            refuse("config unset core.repositoryformatversion"),
        ]),
    git(&["fetch"], Writes)
        .shares(&[FETCHING])
        .classes(&[
            (
                Plain,
                "atomic -n prefetch recurse-submodules porcelain write-fetch-head refetch \
                 submodule-prefix recurse-submodules-default negotiate-only auto-maintenance \
                 auto-gc write-commit-graph stdin",
            ),
            (Effect, "multiple"),
            (PRUNE_TAGS, "prune-tags"),
            (Refused(Key::VcsWhyMovesHead), "update-head-ok"),
            (Refused(Key::VcsWhyPartialClone), "filter"),
        ])
        .examples(&[
            run("fetch origin"),
            weigh("fetch --prune origin"),
            weigh("fetch --prune origin main"),
            weigh("fetch -p --all"),
            refuse("fetch --upload-pack=/bin/x origin"),
            refuse("fetch --upload-p /bin/x origin"),
            refuse("fetch --upl=/bin/x origin"),
            refuse("fetch foo::bar"),
            refuse("fetch weird://x"),
            refuse("fetch origin main:main"),
            refuse("fetch origin +refs/heads/*:refs/heads/*"),
            refuse("fetch --force origin"),
            refuse("fetch -P origin"),
            refuse("fetch --depth=1 origin"),
            refuse("fetch --refmap=x origin"),
            refuse("fetch -- ext::sh"),
            refuse("fetch -- origin +refs/heads/*:refs/heads/*"),
            refuse("fetch origin -- refs/heads/main:refs/heads/main"),
        ]),
    git(&["gc"], Writes)
        .classes(&[
            (
                Plain,
                "quiet cruft max-cruft-size aggressive auto detach force keep-largest-pack",
            ),
            (Effect, "prune"),
        ])
        .examples(&[
            run("gc"),
            run("gc --prune"),
            run("gc --aggressive"),
            weigh("gc --prune=now"),
            weigh("gc --prune=1.hour.ago"),
        ]),
    git(&["merge"], Writes)
        .shares(&[MERGING])
        .classes(&[
            (
                Plain,
                "rerere-autoupdate message into-name verbose quiet quit progress no-verify",
            ),
            (Effect, "abort continue overwrite-ignore"),
            (ReadsFile, "file"),
        ])
        .examples(&[
            tool("merge feature", "work_merge_line"),
            run("merge --continue"),
            run("merge --no-overwrite-ignore feature"),
            weigh("merge --squash feature"),
            // A negation turns the program off.
            weigh("merge --no-edit --no-gpg-sign main")
                .runs_as("merge --no-edit --no-gpg-sign main"),
            weigh("merge --abort"),
            weigh("merge --autostash feature"),
            refuse("merge -e main"),
            refuse("merge --ed main"),
            refuse("merge --verify-sig main"),
            refuse("merge -S main"),
            refuse("merge -Skey main"),
            refuse("merge --gpg-s main"),
            refuse("merge -s custom main"),
            refuse("merge --strategy=custom main"),
            refuse("merge -F ~/msg main"),
            refuse("merge --file=/tmp/m main"),
            refuse("merge -x"),
        ]),
    git(&["mv"], Writes)
        .classes(&[(Plain, "verbose -k sparse"), (Effect, "dry-run force")])
        .examples(&[run("mv a b"), weigh("mv -f a b")]),
    git(&["pull"], Writes)
        .shares(&[FETCHING, MERGING])
        .classes(&[
            (Plain, "verify"),
            (Effect, "rebase"),
            (SUBMODULES, "recurse-submodules"),
        ])
        .examples(&[
            run("pull --rebase"),
            run("pull --rebase origin main"),
            weigh("pull -p"),
            weigh("pull --autostash"),
            refuse("pull --upload-pack x"),
            refuse("pull --rebase=interactive"),
            refuse("pull -ri"),
            refuse("pull -rinteractive"),
            refuse("pull -scustom"),
            refuse("pull ext::sh main"),
            refuse("pull origin +main"),
            refuse("pull -- ext::sh"),
        ]),
    git(&["rebase"], Writes)
        .classes(&[
            (
                Plain,
                "no-verify quiet verbose no-stat signoff committer-date-is-author-date \
                 reset-author-date ignore-date -C ignore-whitespace whitespace force-rebase \
                 no-ff quit apply merge preserve-merges rerere-autoupdate empty keep-empty \
                 autosquash update-refs autostash allow-empty-message rebase-merges fork-point \
                 strategy-option reschedule-failed-exec reapply-cherry-picks",
            ),
            (Effect, "onto keep-base continue skip abort strategy root"),
            (EDITOR, "edit-todo"),
            (SHOW_PATCH, "show-current-patch"),
            (INTERACTIVE, "interactive"),
            (GPG, "gpg-sign"),
            (RunsProgram(Key::VcsWhyShellAfterCommit), "exec"),
        ])
        .examples(&[
            run("rebase main"),
            run("rebase --continue"),
            weigh("rebase --abort"),
            weigh("rebase --skip"),
            weigh("rebase --onto main feature"),
            weigh("rebase --autostash main"),
            refuse("rebase --exec make main"),
            refuse("rebase --exe=make main"),
            refuse("rebase -x make main"),
            refuse("rebase -xmake main"),
            refuse("rebase --interactive main"),
            refuse("rebase -i main"),
            refuse("rebase --edit-todo"),
        ]),
    git(&["reflog", "expire"], Writes)
        .classes(&[
            (Effect, "dry-run expire expire-unreachable stale-fix all"),
            (Plain, "rewrite updateref verbose single-worktree"),
        ])
        .examples(&[
            run("reflog expire -n --expire=now --all"),
            weigh("reflog expire --expire=now --all"),
        ]),
    git(&["reflog", "delete"], Writes)
        .classes(&[(Effect, "dry-run"), (Plain, "rewrite updateref verbose")])
        .examples(&[weigh("reflog delete HEAD@{1}")]),
    git(&["remote", "add"], Writes)
        .classes(&[
            (Plain, "fetch tags track master"),
            (Refused(Key::VcsWhyMirror), "mirror"),
        ])
        .examples(&[
            run("remote add x https://example.invalid/x.git"),
            run("remote add x git@example.invalid:o/x.git"),
            refuse("remote add x ext::sh"),
            refuse("remote add x ext::sh%20-c%20touch%20x"),
            refuse("remote add --mirror=fetch x https://example.invalid/x"),
            refuse("remote add -- x ext::sh"),
        ]),
    git(&["remote", "prune"], Writes)
        .classes(&[(Plain, "dry-run")])
        .examples(&[run("remote prune -n origin"), weigh("remote prune origin")]),
    git(&["remote", "remove"], Writes).examples(&[
        weigh("remote remove origin"),
        weigh("remote rm origin").runs_as("remote remove origin"),
    ]),
    git(&["remote", "rename"], Writes)
        .classes(&[(Plain, "progress")])
        .examples(&[run("remote rename origin o2")]),
    git(&["remote", "set-branches"], Writes)
        .classes(&[(Plain, "add")])
        .examples(&[run("remote set-branches origin main")]),
    git(&["remote", "set-head"], Writes)
        .classes(&[(Plain, "auto delete")])
        .examples(&[run("remote set-head origin main")]),
    git(&["remote", "set-url"], Writes)
        .classes(&[(Plain, "push add delete")])
        .examples(&[
            refuse("remote set-url origin fd::3"),
            refuse("remote set-url -- origin ext::sh"),
        ]),
    git(&["remote", "update"], Writes)
        .classes(&[(Plain, "prune")])
        .examples(&[run("remote update"), weigh("remote update --prune")]),
    git(&["reset"], Writes)
        .classes(&[
            (Plain, "quiet no-refresh intent-to-add pathspec-file-nul"),
            (Effect, "mixed soft hard merge keep"),
            (ReadsFile, "pathspec-from-file"),
            (SUBMODULES, "recurse-submodules"),
            (INTERACTIVE, "patch"),
        ])
        .examples(&[
            weigh("reset --hard"),
            weigh("reset --har").runs_as("reset --hard --"),
            weigh("reset --hard HEAD~1"),
            weigh("reset HEAD~1").runs_as("reset HEAD~1 --"),
            weigh("reset --merge"),
            weigh("reset --keep HEAD~1"),
            weigh("reset -- a"),
            weigh("reset HEAD~1 -- a"),
            weigh("reset a.txt").runs_as("reset -- a.txt"),
            refuse("reset --pathspec-from-file=/etc/x"),
        ]),
    git(&["restore"], Writes)
        .shares(&[CHECKOUT_COMMON, CHECKOUT_PATHS])
        .classes(&[
            (Effect, "source staged worktree"),
            (Plain, "ignore-unmerged"),
        ])
        .examples(&[
            weigh("restore src/a.rs"),
            weigh("restore --staged --worktree src/a.rs"),
            weigh("restore -s HEAD~1 a"),
            weigh("restore --source=main a"),
            refuse("restore --patch x"),
            refuse("restore /etc/passwd"),
            refuse("restore :(top)../x"),
        ]),
    git(&["revert"], Writes)
        .shares(&[SEQUENCER])
        .classes(&[(Plain, "reference")])
        .examples(&[weigh("revert --skip"), refuse("revert -e main")]),
    git(&["rm"], Writes)
        .classes(&[
            (Plain, "quiet -r ignore-unmatch sparse pathspec-file-nul"),
            (Effect, "dry-run cached force"),
            (FROM_FILE, "pathspec-from-file"),
        ])
        .examples(&[
            run("rm --cached a"),
            run("rm a"),
            weigh("rm -f a"),
            weigh("rm -rf dir"),
            refuse("rm -- ../x"),
        ]),
    git(&["stash", "apply"], Writes)
        .classes(&[(Plain, "quiet index")])
        .examples(&[run("stash apply --index")]),
    git(&["stash", "branch"], Writes).examples(&[run("stash branch topic")]),
    git(&["stash", "clear"], Writes).examples(&[
        weigh("stash clear"),
        // It has no options.
        refuse("stash clear --quiet"),
    ]),
    git(&["stash", "drop"], Writes)
        .classes(&[(Plain, "quiet")])
        .examples(&[weigh("stash drop"), weigh("stash drop stash@{1}")]),
    git(&["stash", "pop"], Writes)
        .classes(&[(Plain, "quiet index")])
        .examples(&[run("stash pop --index"), weigh("stash pop")]),
    git(&["stash", "push"], Writes)
        .classes(&[
            (
                Plain,
                "keep-index staged quiet include-untracked all message pathspec-file-nul",
            ),
            (ReadsFile, "pathspec-from-file"),
            (INTERACTIVE, "patch"),
        ])
        .examples(&[
            run("stash").runs_as("stash push"),
            run("stash -m wip").runs_as("stash push --message=wip"),
            run("stash push -m wip"),
            refuse("stash push -p"),
            refuse("stash push -- ../x"),
        ]),
    git(&["switch"], Writes)
        .shares(&[CHECKOUT_COMMON, CHECKOUT_SWITCHING])
        .classes(&[(Effect, "create force-create discard-changes")])
        .examples(&[
            tool("switch main", "work_switch_line"),
            tool("switch -c topic", "work_new_line"),
            weigh("switch --detach HEAD~1"),
            weigh("switch --discard-changes main"),
            weigh("switch --disc main"),
            weigh("switch -f main"),
            weigh("switch -C main HEAD~1"),
        ]),
    git(&["tag"], Writes)
        .shares(&[REF_FILTER])
        .classes(&[
            (Effect, "list delete annotate message force"),
            (
                Plain,
                "-n trailer cleanup create-reflog column with without",
            ),
            (ReadsFile, "file"),
            (GPG, "verify sign local-user"),
            (EDITOR, "edit"),
        ])
        .examples(&[
            run("tag v2"),
            run("tag -a -m msg v2"),
            run("tag -l"),
            run("tag -n"),
            weigh("tag -d v1"),
            weigh("tag --del v1"),
            weigh("tag -f v1 HEAD~1"),
            refuse("tag -s v2"),
            refuse("tag -ukey v2"),
            refuse("tag --local-u=key v2"),
            refuse("tag -v v1"),
            refuse("tag -e v2"),
            refuse("tag -a -F /etc/hostname v2"),
            refuse("tag -zz"),
        ]),
    git(&["update-ref"], Writes)
        .classes(&[
            (Plain, "-m no-deref -z create-reflog"),
            (Effect, "-d"),
            (Refused(Key::VcsWhyStdin), "stdin"),
        ])
        .examples(&[
            weigh("update-ref refs/heads/new HEAD"),
            weigh("update-ref -d refs/heads/x"),
            weigh("update-ref refs/heads/main HEAD~1"),
            weigh("update-ref -d refs/stash"),
            refuse("update-ref FOO HEAD"),
            refuse("update-ref -d HEAD"),
            refuse("update-ref --stdin"),
            refuse("update-ref -- main HEAD"),
        ]),
    git(&["worktree", "add"], Writes)
        .classes(&[
            (
                Plain,
                "force orphan detach checkout lock reason quiet track guess-remote",
            ),
            (Effect, "-b -B"),
        ])
        .examples(&[
            run("worktree add build/wt"),
            weigh("worktree add -B main build/wt HEAD~1"),
            refuse("worktree add /tmp/x"),
            refuse("worktree add ../x"),
            refuse("worktree add wt"),
            refuse("worktree add -- ../out"),
            refuse("worktree add -- src"),
        ]),
    git(&["worktree", "lock"], Writes)
        .classes(&[(Plain, "reason")])
        .examples(&[
            run("worktree lock build/wt"),
            refuse("worktree lock ../other"),
        ]),
    git(&["worktree", "move"], Writes)
        .classes(&[(Plain, "force")])
        .examples(&[refuse("worktree move build/wt ../y")]),
    git(&["worktree", "prune"], Writes)
        .classes(&[(Plain, "dry-run verbose expire")])
        .examples(&[run("worktree prune")]),
    git(&["worktree", "remove"], Writes)
        .classes(&[(Effect, "force")])
        .examples(&[
            run("worktree remove build/wt"),
            weigh("worktree remove --force build/wt"),
            refuse("worktree remove ../other"),
        ]),
    git(&["worktree", "repair"], Writes)
        .examples(&[run("worktree repair"), refuse("worktree repair ../other")]),
    git(&["worktree", "unlock"], Writes).examples(&[
        run("worktree unlock build/wt"),
        refuse("worktree unlock ../other"),
    ]),
];

/// The entry for `path`, if it is allowed.
pub fn entry(path: &[&str]) -> Option<&'static Entry> {
    ENTRIES.iter().find(|e| e.path == path)
}

/// Subcommands that have sub-subcommands, with the one used when none is named (`None`:
/// one must be named).
pub const NESTED: &[(&str, Option<&str>)] = &[
    ("bisect", None),
    ("config", Some("")),
    ("reflog", Some("show")),
    ("remote", Some("")),
    ("stash", Some("push")),
    ("worktree", None),
];

/// The sub-subcommand names git knows (also the ones not allowed), so that a refused one is
/// named as such rather than read as an argument.
const KNOWN_NESTED: &[(&str, &str)] = &[
    (
        "bisect",
        "start bad good new old skip reset log terms next replay run visualize view help",
    ),
    (
        "config",
        "list get set unset rename-section remove-section edit",
    ),
    ("reflog", "show list exists expire delete"),
    (
        "remote",
        "add rename remove rm set-head set-branches get-url set-url show prune update",
    ),
    (
        "stash",
        "list show drop pop apply branch push save clear create store",
    ),
    ("worktree", "add list lock move prune remove repair unlock"),
];

/// The sub-subcommand `word` of `sub` as git knows it (`remote rm` is `remote remove`).
pub fn canonical_nested(sub: &str, word: &str) -> Option<&'static str> {
    if (sub, word) == ("remote", "rm") {
        return Some("remove");
    }
    KNOWN_NESTED
        .iter()
        .filter(|(s, _)| *s == sub)
        .flat_map(|(_, names)| names.split_whitespace())
        .find(|n| *n == word)
}

/// Every (path, probe) derived from git's parse-options usage.
pub fn derived_paths() -> impl Iterator<Item = (&'static [&'static str], &'static [&'static str])> {
    ENTRIES
        .iter()
        .filter_map(|e| e.probe.map(|probe| (e.path, probe)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_option_of_every_allowed_path_has_exactly_one_class() {
        let mut problems = Vec::new();
        for e in ENTRIES {
            if e.probe.is_some() && !git_options::COMMANDS.iter().any(|c| c.path == e.path) {
                problems.push(format!("{:?}: no derived table", e.path));
            }
            let ids: Vec<&str> = e.options().map(|o| o.id).collect();
            for id in &ids {
                let n = e.rows().filter(|(_, k)| k == id).count();
                if n != 1 {
                    problems.push(format!("{:?}: option `{id}` has {n} classes", e.path));
                }
            }
            for (_, k) in e.rows() {
                if !ids.contains(&k) {
                    problems.push(format!("{:?}: class for unknown option `{k}`", e.path));
                }
            }
        }
        assert!(problems.is_empty(), "{}", problems.join("\n"));
    }

    #[test]
    fn paths_are_unique() {
        for (i, e) in ENTRIES.iter().enumerate() {
            assert!(
                !ENTRIES[i + 1..].iter().any(|o| o.path == e.path),
                "{:?} twice",
                e.path
            );
        }
    }
}
