//! Gitea / Forgejo JSON shapes (API v1), read leniently: only the fields Butler uses, every one
//! optional where Gitea 1.27 and Forgejo 11 differ or may send `null`.

use serde::{Deserialize, Serialize};

use crate::issues::bounded::{MAX_BODY_BYTES, MAX_COMMENT_BYTES, bound_text, bound_title};
use crate::issues::{Comment, Issue, Label, ReportedState};

#[derive(Debug, Deserialize)]
pub(crate) struct WireIssue {
    pub number: u64,
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub body: Option<String>,
    #[serde(default)]
    pub state: Option<String>,
    #[serde(default)]
    pub labels: Option<Vec<WireLabel>>,
    #[serde(default)]
    pub comments: Option<u64>,
    #[serde(default)]
    pub created_at: Option<String>,
    #[serde(default)]
    pub updated_at: Option<String>,
    #[serde(default)]
    pub html_url: Option<String>,
    #[serde(default)]
    pub pull_request: Option<serde_json::Value>,
}

impl WireIssue {
    pub(crate) fn is_pull_request(&self) -> bool {
        self.pull_request.as_ref().is_some_and(|v| !v.is_null())
    }

    pub(crate) fn into_issue(self) -> Issue {
        let state = match self.state.as_deref() {
            Some("open") => ReportedState::Open,
            Some("closed") => ReportedState::Closed,
            _ => ReportedState::Unknown,
        };
        Issue {
            number: self.number,
            title: bound_title(self.title.unwrap_or_default()),
            body: bound_text(self.body.unwrap_or_default(), MAX_BODY_BYTES),
            state,
            labels: self
                .labels
                .unwrap_or_default()
                .into_iter()
                .map(|l| l.name)
                .collect(),
            comments: self.comments.unwrap_or(0),
            created_at: self.created_at.unwrap_or_default(),
            updated_at: self.updated_at.unwrap_or_default(),
            url: self.html_url.filter(|u| !u.is_empty()),
        }
    }
}

#[derive(Debug, Deserialize)]
pub(crate) struct WireLabel {
    pub id: u64,
    pub name: String,
    #[serde(default)]
    pub color: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
}

impl WireLabel {
    pub(crate) fn into_label(self) -> Label {
        Label {
            id: self.id,
            name: self.name,
            color: self.color.filter(|c| !c.is_empty()),
            description: self.description.filter(|d| !d.is_empty()),
        }
    }
}

#[derive(Debug, Deserialize)]
pub(crate) struct WireUser {
    #[serde(default)]
    pub login: Option<String>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct WireComment {
    pub id: u64,
    #[serde(default)]
    pub body: Option<String>,
    #[serde(default)]
    pub user: Option<WireUser>,
    #[serde(default)]
    pub original_author: Option<String>,
    #[serde(default)]
    pub created_at: Option<String>,
    #[serde(default)]
    pub issue_url: Option<String>,
}

impl WireComment {
    /// The issue number this comment belongs to, read from `issue_url` (`…/issues/{n}`).
    pub(crate) fn issue_number(&self) -> Option<u64> {
        let url = self.issue_url.as_deref()?.trim_end_matches('/');
        let (rest, number) = url.rsplit_once('/')?;
        if !rest.ends_with("/issues") {
            return None;
        }
        number.parse().ok()
    }

    pub(crate) fn into_comment(self) -> Comment {
        // Migrated comments carry the original author's name; the poster is then a ghost.
        let author = self
            .original_author
            .filter(|a| !a.is_empty())
            .or_else(|| self.user.and_then(|u| u.login))
            .filter(|a| !a.is_empty());
        Comment {
            id: self.id,
            body: bound_text(self.body.unwrap_or_default(), MAX_COMMENT_BYTES),
            author,
            created_at: self.created_at.unwrap_or_default(),
        }
    }
}

#[derive(Debug, Deserialize)]
pub(crate) struct WireVersion {
    pub version: String,
}

/// `CreateIssueOption` (fields common to Gitea 1.27 and Forgejo 11).
#[derive(Debug, Serialize)]
pub(crate) struct CreateIssue<'a> {
    pub title: &'a str,
    pub body: &'a str,
    #[serde(skip_serializing_if = "<[u64]>::is_empty")]
    pub labels: &'a [u64],
}

/// `EditIssueOption`: only the field being changed is sent.
#[derive(Debug, Default, Serialize)]
pub(crate) struct EditIssue<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub body: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<&'a str>,
}

/// `CreateIssueCommentOption`.
#[derive(Debug, Serialize)]
pub(crate) struct CreateComment<'a> {
    pub body: &'a str,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issue_tolerates_nulls_and_missing_fields() {
        let json = r#"{"number": 7, "title": "T", "body": null, "labels": null,
                       "state": "closed", "pull_request": null}"#;
        let wire: WireIssue = serde_json::from_str(json).unwrap();
        assert!(!wire.is_pull_request());
        let issue = wire.into_issue();
        assert_eq!(issue.number, 7);
        assert_eq!(issue.body, "");
        assert!(issue.labels.is_empty());
        assert_eq!(issue.state, ReportedState::Closed);
        assert_eq!(issue.url, None);
    }

    #[test]
    fn an_unknown_or_missing_state_is_not_open() {
        for state in [r#""state": "in_review","#, r#""state": null,"#, ""] {
            let json = format!(r#"{{"number": 3, {state} "title": "T"}}"#);
            let wire: WireIssue = serde_json::from_str(&json).unwrap();
            assert_eq!(wire.into_issue().state, ReportedState::Unknown, "{json}");
        }
    }

    #[test]
    fn huge_titles_and_bodies_are_cut_with_a_note() {
        let json = serde_json::json!({
            "number": 4, "state": "open",
            "title": "t".repeat(10_000), "body": "b\n".repeat(1 << 20)
        });
        let issue = serde_json::from_value::<WireIssue>(json)
            .unwrap()
            .into_issue();
        assert!(issue.title.chars().count() <= crate::issues::MAX_TITLE_CHARS);
        assert!(issue.title.ends_with("(title cut by Butler)"));
        assert!(
            issue.body.len() < MAX_BODY_BYTES + 200,
            "{}",
            issue.body.len()
        );
        assert!(issue.body.ends_with("are shown.]"));
        let comment: WireComment =
            serde_json::from_value(serde_json::json!({"id": 1, "body": "c".repeat(100_000)}))
                .unwrap();
        assert!(comment.into_comment().body.len() < MAX_COMMENT_BYTES + 200);
    }

    #[test]
    fn comment_issue_number_comes_from_issue_url() {
        let json =
            r#"{"id": 5, "issue_url": "https://h/git/o/r/issues/12", "user": {"login": "me"}}"#;
        let wire: WireComment = serde_json::from_str(json).unwrap();
        assert_eq!(wire.issue_number(), Some(12));
        assert_eq!(wire.into_comment().author.as_deref(), Some("me"));
        let pr: WireComment =
            serde_json::from_str(r#"{"id": 5, "issue_url": "", "pull_request_url": "x/pulls/3"}"#)
                .unwrap();
        assert_eq!(pr.issue_number(), None);
    }

    #[test]
    fn edit_sends_only_the_changed_field() {
        let edit = EditIssue {
            state: Some("closed"),
            ..EditIssue::default()
        };
        assert_eq!(
            serde_json::to_string(&edit).unwrap(),
            r#"{"state":"closed"}"#
        );
    }
}
