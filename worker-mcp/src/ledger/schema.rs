//! The ledger's tables and their migrations, versioned with `PRAGMA user_version`.
//!
//! Each migration runs with the version check inside one `BEGIN IMMEDIATE` transaction, so two
//! processes opening a new file at once apply it exactly once. Migrations are only ever appended.

use rusqlite::{Connection, Transaction, TransactionBehavior};

use super::LedgerError;

/// The schema this build writes. A file with a higher version is refused.
pub(crate) const VERSION: i64 = MIGRATIONS.len() as i64;

const MIGRATIONS: &[&str] = &[V1, V2, V3, V4];

/// Version 1: work records, per-place state, the operation journal, the ImplementMaid's tables,
/// the approval gate and the embedded issue store.
const V1: &str = r#"
CREATE TABLE records (
    id           TEXT PRIMARY KEY,
    day          TEXT NOT NULL,              -- YYYYMMDD, local date of creation
    seq          INTEGER NOT NULL,           -- daily sequence, from 1
    state        TEXT NOT NULL CHECK (state IN ('pending', 'complete', 'abandoned')),
    sha          TEXT UNIQUE,                -- set once complete
    message      TEXT NOT NULL,
    line         TEXT,                       -- line of work (branch) it was made on
    origin       TEXT NOT NULL CHECK (origin IN ('butler', 'outside')),
    created_at   TEXT NOT NULL,              -- RFC 3339 with offset
    completed_at INTEGER,                    -- unix seconds (RFC 3339 text since V2)
    UNIQUE (day, seq)
);
CREATE TABLE record_days (
    day      TEXT PRIMARY KEY,
    last_seq INTEGER NOT NULL
);
CREATE TABLE record_issues (
    record_id TEXT NOT NULL REFERENCES records(id) ON DELETE CASCADE,
    position  INTEGER NOT NULL,
    issue     INTEGER NOT NULL,
    PRIMARY KEY (record_id, issue)
);
CREATE INDEX record_issues_by_issue ON record_issues(issue);

CREATE TABLE active_issues (
    project    TEXT NOT NULL,
    line       TEXT NOT NULL,
    issue      INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (project, line)
);
CREATE TABLE observations (
    project     TEXT NOT NULL,
    line        TEXT NOT NULL,
    head        TEXT,
    observed_at INTEGER NOT NULL,
    PRIMARY KEY (project, line)
);

CREATE TABLE operations (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    kind       TEXT NOT NULL,
    pid        INTEGER NOT NULL,
    detail     TEXT NOT NULL,
    started_at INTEGER NOT NULL,
    ended_at   INTEGER
);
CREATE INDEX operations_open ON operations(ended_at) WHERE ended_at IS NULL;

CREATE TABLE tasks (
    task_id       TEXT PRIMARY KEY,
    contract_json TEXT NOT NULL,
    status        TEXT NOT NULL,
    branch        TEXT,
    worktree      TEXT,
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL,
    result_json   TEXT
);
CREATE TABLE attempts (
    task_id       TEXT NOT NULL REFERENCES tasks(task_id) ON DELETE CASCADE,
    attempt       INTEGER NOT NULL,
    started_at    TEXT NOT NULL,
    ended_at      TEXT,
    evidence_json TEXT,
    PRIMARY KEY (task_id, attempt)
);
CREATE TABLE task_notes (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    task_id    TEXT NOT NULL REFERENCES tasks(task_id) ON DELETE CASCADE,
    kind       TEXT NOT NULL,
    body       TEXT NOT NULL,
    created_at TEXT NOT NULL,
    relayed    INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE approvals (
    reference   TEXT PRIMARY KEY,
    kind        TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    description TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    used_at     INTEGER
);

CREATE TABLE issues (
    number     INTEGER PRIMARY KEY,
    title      TEXT NOT NULL,
    body       TEXT NOT NULL,
    state      TEXT NOT NULL CHECK (state IN ('open', 'closed')),
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    closed_at  TEXT
);
CREATE TABLE labels (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    name        TEXT NOT NULL UNIQUE COLLATE NOCASE,
    color       TEXT,
    description TEXT
);
CREATE TABLE issue_labels (
    issue INTEGER NOT NULL REFERENCES issues(number) ON DELETE CASCADE,
    label INTEGER NOT NULL REFERENCES labels(id) ON DELETE CASCADE,
    PRIMARY KEY (issue, label)
);
CREATE TABLE comments (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    issue      INTEGER NOT NULL REFERENCES issues(number) ON DELETE CASCADE,
    body       TEXT NOT NULL,
    author     TEXT,
    created_at TEXT NOT NULL
);
CREATE INDEX comments_by_issue ON comments(issue, id);
CREATE TABLE comment_deletions (
    comment_id INTEGER PRIMARY KEY,
    issue      INTEGER NOT NULL,
    body       TEXT NOT NULL,
    author     TEXT,
    created_at TEXT NOT NULL,
    deleted_at TEXT NOT NULL,
    reason     TEXT
);
INSERT INTO labels (name, color, description) VALUES
    ('bug', 'd73a4a', 'Something is not working'),
    ('enhancement', 'a2eeef', 'New feature or request'),
    ('documentation', '0075ca', 'Improvements or additions to documentation'),
    ('question', 'd876e3', 'Further information is requested'),
    ('chore', 'cfd3d7', 'Maintenance without user-visible change');
"#;

/// Version 2: one timestamp form everywhere (RFC 3339 with offset; unix seconds of version 1
/// become UTC), the task's status and a note's kind held to their sets by CHECK, a task's error
/// apart from its Result Contract, and the contracts' JSON in their typed form
/// (`success_criteria.commands`, a result's `status` and `intent`).
const V2: &str = r#"
ALTER TABLE records ADD COLUMN completed_text TEXT;
UPDATE records SET completed_text = strftime('%Y-%m-%dT%H:%M:%S+00:00', completed_at, 'unixepoch');
ALTER TABLE records DROP COLUMN completed_at;
ALTER TABLE records RENAME COLUMN completed_text TO completed_at;

ALTER TABLE active_issues RENAME TO active_issues_v1;
CREATE TABLE active_issues (
    project    TEXT NOT NULL,
    line       TEXT NOT NULL,
    issue      INTEGER NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (project, line)
);
INSERT INTO active_issues (project, line, issue, updated_at)
    SELECT project, line, issue, strftime('%Y-%m-%dT%H:%M:%S+00:00', updated_at, 'unixepoch')
    FROM active_issues_v1;
DROP TABLE active_issues_v1;

ALTER TABLE observations RENAME TO observations_v1;
CREATE TABLE observations (
    project     TEXT NOT NULL,
    line        TEXT NOT NULL,
    head        TEXT,
    observed_at TEXT NOT NULL,
    PRIMARY KEY (project, line)
);
INSERT INTO observations (project, line, head, observed_at)
    SELECT project, line, head, strftime('%Y-%m-%dT%H:%M:%S+00:00', observed_at, 'unixepoch')
    FROM observations_v1;
DROP TABLE observations_v1;

DROP INDEX operations_open;
ALTER TABLE operations RENAME TO operations_v1;
CREATE TABLE operations (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    kind       TEXT NOT NULL,
    pid        INTEGER NOT NULL,
    detail     TEXT NOT NULL,
    started_at TEXT NOT NULL,
    ended_at   TEXT
);
INSERT INTO operations (id, kind, pid, detail, started_at, ended_at)
    SELECT id, kind, pid, detail,
           strftime('%Y-%m-%dT%H:%M:%S+00:00', started_at, 'unixepoch'),
           strftime('%Y-%m-%dT%H:%M:%S+00:00', ended_at, 'unixepoch')
    FROM operations_v1;
UPDATE sqlite_sequence
    SET seq = (SELECT seq FROM sqlite_sequence WHERE name = 'operations_v1')
    WHERE name = 'operations';
DROP TABLE operations_v1;
CREATE INDEX operations_open ON operations(ended_at) WHERE ended_at IS NULL;

ALTER TABLE approvals RENAME TO approvals_v1;
CREATE TABLE approvals (
    reference   TEXT PRIMARY KEY,
    kind        TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    description TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    used_at     TEXT
);
INSERT INTO approvals (reference, kind, fingerprint, description, created_at, used_at)
    SELECT reference, kind, fingerprint, description,
           strftime('%Y-%m-%dT%H:%M:%S+00:00', created_at, 'unixepoch'),
           strftime('%Y-%m-%dT%H:%M:%S+00:00', used_at, 'unixepoch')
    FROM approvals_v1;
DROP TABLE approvals_v1;

ALTER TABLE task_notes RENAME TO task_notes_v1;
ALTER TABLE attempts RENAME TO attempts_v1;
ALTER TABLE tasks RENAME TO tasks_v1;
CREATE TABLE tasks (
    task_id       TEXT PRIMARY KEY,
    contract_json TEXT NOT NULL,             -- the Task Contract
    status        TEXT NOT NULL CHECK (status IN ('running', 'succeeded', 'failed', 'cancelled',
                      'error', 'interrupted', 'need_input', 'need_approval', 'accepted',
                      'discarded')),
    branch        TEXT,
    worktree      TEXT,
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL,
    result_json   TEXT,                      -- the Result Contract, once it ended with one
    error         TEXT                       -- what stopped it, when it ended with an error
);
INSERT INTO tasks (task_id, contract_json, status, branch, worktree, created_at, updated_at,
                   result_json, error)
    SELECT task_id,
           CASE WHEN json_valid(contract_json) THEN
               CASE WHEN json_type(contract_json, '$.success_criteria.test_commands') = 'array' THEN
                   json_set(
                       json_remove(contract_json, '$.success_criteria.test_commands'),
                       '$.success_criteria.commands',
                       json((SELECT json_group_array(json_object('command', value, 'exit_code', 0))
                             FROM json_each(contract_json, '$.success_criteria.test_commands'))))
               ELSE contract_json END
           ELSE contract_json END,
           status, branch, worktree, created_at, updated_at,
           CASE WHEN json_valid(result_json) THEN
               CASE WHEN json_type(result_json, '$.outcome') = 'text' THEN
                   json_set(result_json,
                       '$.status', CASE json_extract(result_json, '$.outcome')
                                       WHEN 'succeeded' THEN 'ok'
                                       WHEN 'failed' THEN 'failed'
                                       ELSE 'cancelled' END,
                       '$.intent', 'implement')
               END
           END,
           CASE WHEN json_valid(result_json) THEN
               CASE WHEN json_type(result_json, '$.error') = 'text' THEN
                   json_extract(result_json, '$.error')
               END
           END
    FROM tasks_v1;
CREATE TABLE attempts (
    task_id       TEXT NOT NULL REFERENCES tasks(task_id) ON DELETE CASCADE,
    attempt       INTEGER NOT NULL,
    started_at    TEXT NOT NULL,
    ended_at      TEXT,
    evidence_json TEXT,                      -- the attempt's evidence
    PRIMARY KEY (task_id, attempt)
);
INSERT INTO attempts (task_id, attempt, started_at, ended_at, evidence_json)
    SELECT task_id, attempt, started_at, ended_at, evidence_json FROM attempts_v1;
CREATE TABLE task_notes (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    task_id    TEXT NOT NULL REFERENCES tasks(task_id) ON DELETE CASCADE,
    kind       TEXT NOT NULL CHECK (kind IN ('note', 'progress', 'blocked', 'connected')),
    body       TEXT NOT NULL,
    created_at TEXT NOT NULL,
    relayed    INTEGER NOT NULL DEFAULT 0
);
INSERT INTO task_notes (id, task_id, kind, body, created_at, relayed)
    SELECT id, task_id, kind, body, created_at, relayed FROM task_notes_v1;
UPDATE sqlite_sequence
    SET seq = (SELECT seq FROM sqlite_sequence WHERE name = 'task_notes_v1')
    WHERE name = 'task_notes';
DROP TABLE task_notes_v1;
DROP TABLE attempts_v1;
DROP TABLE tasks_v1;
"#;

/// Version 3: delegated operations — the procedures the Brain teaches (identified by intent and
/// target signature, with their lifecycle and verified runs), a running operation's evidence so
/// far, a cross-process cancellation request, and approvals bound to a task and denied
/// explicitly.
const V3: &str = r#"
CREATE TABLE procedures (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    intent      TEXT NOT NULL,
    signature   TEXT NOT NULL,               -- target signature: `key=value,…`, `*` any value
    steps_json  TEXT NOT NULL,               -- the typed steps
    status      TEXT NOT NULL CHECK (status IN ('candidate', 'active', 'deprecated')),
    successes   INTEGER NOT NULL DEFAULT 0,  -- verified runs
    failures    INTEGER NOT NULL DEFAULT 0,
    taught_for  TEXT,                        -- the task it was taught for, if any
    replaced_by INTEGER REFERENCES procedures(id),
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);
CREATE UNIQUE INDEX procedures_live ON procedures(intent, signature)
    WHERE status != 'deprecated';
ALTER TABLE tasks ADD COLUMN progress_json TEXT;        -- a running operation's evidence so far
ALTER TABLE tasks ADD COLUMN cancel_requested_at TEXT;  -- cancel_task from another process
ALTER TABLE approvals ADD COLUMN task_id TEXT;          -- the task it is bound to, if any
ALTER TABLE approvals ADD COLUMN denied_at TEXT;        -- the user said no
CREATE INDEX approvals_by_task ON approvals(task_id) WHERE task_id IS NOT NULL;
"#;

/// Version 4: a record's id is its commit's trailer in every clone. Ids carry the mark of the
/// clone that handed them out (`mark`, empty for ids written before), so the day's sequence is
/// unique per mark, not per day; the ledger's own mark is kept in `clone_mark`. Commits made
/// outside Butler are no longer given records, only remembered as seen (`outside_commits`).
const V4: &str = r#"
CREATE TABLE clone_mark (
    only INTEGER PRIMARY KEY CHECK (only = 1),
    mark TEXT NOT NULL
);
CREATE TABLE outside_commits (
    sha     TEXT PRIMARY KEY,
    seen_at TEXT NOT NULL
);
INSERT INTO outside_commits (sha, seen_at)
    SELECT sha, coalesce(completed_at, created_at) FROM records
    WHERE origin = 'outside' AND sha IS NOT NULL;
CREATE TABLE records_v4 (
    id           TEXT PRIMARY KEY,
    day          TEXT NOT NULL,              -- YYYYMMDD
    seq          INTEGER NOT NULL,           -- daily sequence of its clone mark, from 1
    mark         TEXT NOT NULL,              -- the clone mark of the id ('' when it has none)
    state        TEXT NOT NULL CHECK (state IN ('pending', 'complete', 'abandoned')),
    sha          TEXT UNIQUE,                -- set once complete
    message      TEXT NOT NULL,
    line         TEXT,                       -- line of work (branch) it was made on
    created_at   TEXT NOT NULL,              -- RFC 3339 with offset
    completed_at TEXT,
    UNIQUE (day, seq, mark)
);
INSERT INTO records_v4 (id, day, seq, mark, state, sha, message, line, created_at, completed_at)
    SELECT id, day, seq, '', state, sha, message, line, created_at, completed_at FROM records
    WHERE origin = 'butler';
CREATE TABLE record_issues_v4 (
    record_id TEXT NOT NULL REFERENCES records_v4(id) ON DELETE CASCADE,
    position  INTEGER NOT NULL,
    issue     INTEGER NOT NULL,
    PRIMARY KEY (record_id, issue)
);
INSERT INTO record_issues_v4 (record_id, position, issue)
    SELECT record_id, position, issue FROM record_issues
    WHERE record_id IN (SELECT id FROM records_v4);
DROP TABLE record_issues;
DROP TABLE records;
ALTER TABLE records_v4 RENAME TO records;
ALTER TABLE record_issues_v4 RENAME TO record_issues;
CREATE INDEX record_issues_by_issue ON record_issues(issue);
"#;

/// Brings the file up to [`VERSION`], one transaction per migration.
pub(crate) fn migrate(conn: &Connection) -> Result<(), LedgerError> {
    loop {
        let tx = Transaction::new_unchecked(conn, TransactionBehavior::Immediate)?;
        let found: i64 = tx.pragma_query_value(None, "user_version", |r| r.get(0))?;
        if found > VERSION {
            return Err(LedgerError::TooNew {
                found,
                known: VERSION,
            });
        }
        let Some(sql) = MIGRATIONS.get(found as usize) else {
            return Ok(()); // up to date; the empty transaction rolls back on drop
        };
        tx.execute_batch(sql)?;
        tx.pragma_update(None, "user_version", found + 1)?;
        tx.commit()?;
        tracing::debug!(version = found + 1, "ledger schema migrated");
    }
}

/// The letters of a clone mark: consonants only (no words), no `l` (read as `1`).
const MARK_LETTERS: &[u8] = b"bcdfghjkmnpqrstvwxz";
/// How long a clone mark is: 19⁴ ≈ 130 000 marks.
const MARK_LEN: usize = 4;

/// The ledger's clone mark, chosen now at random when the file has none (opening is
/// serialised, so two processes never choose two).
pub(crate) fn clone_mark(conn: &Connection) -> Result<String, LedgerError> {
    conn.execute(
        "INSERT OR IGNORE INTO clone_mark (only, mark) VALUES (1, ?1)",
        [random_mark()],
    )?;
    Ok(conn.query_row("SELECT mark FROM clone_mark", [], |r| r.get(0))?)
}

/// A mark from the process's random hash keys (seeded by the operating system).
fn random_mark() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u32(std::process::id());
    let mut bits = hasher.finish();
    let base = MARK_LETTERS.len() as u64;
    (0..MARK_LEN)
        .map(|_| {
            let letter = MARK_LETTERS[(bits % base) as usize];
            bits /= base;
            letter as char
        })
        .collect()
}

#[cfg(test)]
mod tests;
