//! The record protocol, written once for everything that saves work (the Brain's
//! `work_record`, the ImplementMaid's attempts and merges): reserve an id in the ledger →
//! commit with the record's text → settle the reservation by how the commit ended.
//!
//! The id is reserved (and visible to other processes) before the commit, so the commit can
//! carry it as a trailer and a process killed in between leaves something the next one
//! recognises. A commit that certainly did not happen gives its id back when no later id was
//! handed out meanwhile, so failures do not leave gaps in the day's sequence; when it is not
//! known whether a commit happened, the id is abandoned and never handed out again.
//!
//! ```text
//! let reservation = record::reserve(&ledger, &draft)?;   // id + full text
//! match git.commit(reservation.text()) {                 // the caller's commit
//!     Ok(sha) => reservation.complete(&ledger, &sha)?,
//!     Err(_) => reservation.fail(&ledger, head_before, head_now)?,
//! }
//! ```

pub mod message;

use crate::contract::TaskId;
use crate::ledger::{Ledger, LedgerError, RecordId};

pub use message::{RecordMessage, tidy};

/// A record about to be saved.
#[derive(Debug, Clone, Copy)]
pub struct Draft<'a> {
    pub message: &'a str,
    pub issue_ids: &'a [u64],
    /// The line of work (branch) it is saved on, when known.
    pub line: Option<&'a str>,
    /// The task saving it (the ImplementMaid's records carry a `Butler-Task:` trailer).
    pub task: Option<&'a TaskId>,
}

/// A reserved record id and the full text its commit must carry. Settle it once the commit
/// step has ended: [`Reservation::complete`], [`Reservation::release`] or
/// [`Reservation::fail`].
#[derive(Debug)]
#[must_use = "a reservation stays pending until it is completed, released or failed"]
pub struct Reservation {
    id: RecordId,
    text: String,
}

/// Reserves the next record id of the ledger clock's local day for `draft` and composes the
/// text its commit must carry.
pub fn reserve(ledger: &Ledger, draft: &Draft<'_>) -> Result<Reservation, LedgerError> {
    let message = tidy(draft.message);
    let id = ledger.reserve_record(ledger.now(), &message, draft.issue_ids, draft.line)?;
    let text = RecordMessage::compose(draft.message, draft.issue_ids, draft.task, &id);
    Ok(Reservation { id, text })
}

impl Reservation {
    pub fn id(&self) -> &RecordId {
        &self.id
    }

    /// The full commit text: the message and the trailers.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The commit carrying the text was made as `sha`: the record is complete.
    pub fn complete(self, ledger: &Ledger, sha: &str) -> Result<RecordId, LedgerError> {
        ledger.complete_record(&self.id, sha)?;
        Ok(self.id)
    }

    /// The commit was made as `sha` and history holds `saved` as its message: the record is
    /// complete with that message. When a repository hook rewrote the text, the ledger keeps
    /// what history holds and the answer says what the rewrite changed.
    pub fn complete_saved(
        self,
        ledger: &Ledger,
        sha: &str,
        saved: &str,
    ) -> Result<(RecordId, Option<Rewrite>), LedgerError> {
        let rewrite = Rewrite::between(&self.text, saved);
        let id = self.complete(ledger, sha)?;
        if let Some(rewrite) = &rewrite
            && rewrite.text_changed
        {
            ledger.set_record_message(&id, &RecordMessage::parse(saved).text)?;
        }
        Ok((id, rewrite))
    }

    /// No commit carries the text (the step needed none, e.g. a fast-forward): the id is given
    /// back when no later one was handed out meanwhile, else abandoned.
    pub(crate) fn release(self, ledger: &Ledger) -> Result<(), LedgerError> {
        ledger.release_record(&self.id)
    }

    /// It is not known whether a commit carries the text (e.g. HEAD could not be read after a
    /// failure): the id is abandoned and never handed out again.
    pub fn abandon(self, ledger: &Ledger) -> Result<(), LedgerError> {
        ledger.abandon_record(&self.id)
    }

    /// The commit step failed. When HEAD is where it was before, nothing was committed and the
    /// id is released; otherwise a commit may carry it, so it is abandoned for good.
    pub fn fail(
        self,
        ledger: &Ledger,
        head_before: Option<&str>,
        head_now: Option<&str>,
    ) -> Result<(), LedgerError> {
        if head_before == head_now {
            ledger.release_record(&self.id)
        } else {
            ledger.abandon_record(&self.id)
        }
    }
}

/// How the message history holds differs from the text Butler gave (a `commit-msg` hook
/// rewrote it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rewrite {
    /// The words of the message changed.
    pub text_changed: bool,
    /// The `Butler-Record:` trailer is gone: the record is known to Butler by its commit only.
    pub lost_record_id: bool,
    /// Issue references (`Refs:`) that are gone: trackers will not link these issues.
    pub lost_issue_ids: Vec<u64>,
}

impl Rewrite {
    /// `None` when `saved` says what `given` says (up to git's whitespace cleanup).
    fn between(given: &str, saved: &str) -> Option<Rewrite> {
        let (given, saved) = (RecordMessage::parse(given), RecordMessage::parse(saved));
        let rewrite = Rewrite {
            text_changed: tidy(&given.text) != tidy(&saved.text),
            lost_record_id: given.record_id.is_some() && saved.record_id != given.record_id,
            lost_issue_ids: given
                .issue_ids
                .iter()
                .filter(|n| !saved.issue_ids.contains(n))
                .copied()
                .collect(),
        };
        let same = !rewrite.text_changed && !rewrite.lost_record_id;
        (!same || !rewrite.lost_issue_ids.is_empty()).then_some(rewrite)
    }
}

#[cfg(test)]
mod tests;
