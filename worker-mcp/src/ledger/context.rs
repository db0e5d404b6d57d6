//! What the Brain was doing where: the active issue and the last observed head, per project
//! (worktree path) and line of work (branch name). Kept on disk so a restarted server or a
//! compacted context still knows them.

use rusqlite::{OptionalExtension, params};

use super::{Ledger, LedgerError};

impl Ledger {
    /// Sets (`Some`) or clears (`None`) the active issue of a project's line of work.
    pub fn set_active_issue(
        &self,
        project: &str,
        line: &str,
        issue: Option<u64>,
    ) -> Result<(), LedgerError> {
        let conn = self.conn();
        let now = self.now();
        match issue {
            Some(issue) => conn.execute(
                "INSERT INTO active_issues (project, line, issue, updated_at)
                 VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (project, line) DO UPDATE SET issue = ?3, updated_at = ?4",
                params![project, line, issue, now],
            )?,
            None => conn.execute(
                "DELETE FROM active_issues WHERE project = ?1 AND line = ?2",
                params![project, line],
            )?,
        };
        Ok(())
    }

    /// The active issue of a project's line of work, if one is set (Butler reads them all at
    /// once, [`Ledger::active_issues`]; the tests read one).
    #[cfg(test)]
    pub(crate) fn active_issue(
        &self,
        project: &str,
        line: &str,
    ) -> Result<Option<u64>, LedgerError> {
        let issue = self
            .conn()
            .prepare_cached("SELECT issue FROM active_issues WHERE project = ?1 AND line = ?2")?
            .query_row(params![project, line], |r| r.get(0))
            .optional()?;
        Ok(issue)
    }

    /// Every line of a project that has an active issue set, with it (ordered by line).
    pub fn active_issues(&self, project: &str) -> Result<Vec<(String, u64)>, LedgerError> {
        let mut stmt = self.conn().prepare_cached(
            "SELECT line, issue FROM active_issues WHERE project = ?1 ORDER BY line",
        )?;
        let rows = stmt.query_map(params![project], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Notes that the Brain has just looked at a project's line of work at `head` (`None`: no
    /// commit yet) and returns the head seen the previous time, if any.
    pub fn mark_observed(
        &self,
        project: &str,
        line: &str,
        head: Option<&str>,
    ) -> Result<Option<String>, LedgerError> {
        let now = self.now();
        self.write(|tx| {
            let previous: Option<Option<String>> = tx
                .query_row(
                    "SELECT head FROM observations WHERE project = ?1 AND line = ?2",
                    params![project, line],
                    |r| r.get(0),
                )
                .optional()?;
            tx.execute(
                "INSERT INTO observations (project, line, head, observed_at)
                 VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (project, line) DO UPDATE SET head = ?3, observed_at = ?4",
                params![project, line, head, now],
            )?;
            Ok(previous.flatten())
        })
    }
}
