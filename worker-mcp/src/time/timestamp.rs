//! The one timestamp type, written `2026-04-15T10:20:00+09:00` everywhere: in the ledger's
//! columns, in contracts and in every answer.

use std::fmt;
use std::str::FromStr;

use chrono::{DateTime, FixedOffset, SecondsFormat, Timelike};
use rusqlite::types::{FromSql, FromSqlError, FromSqlResult, ToSql, ToSqlOutput, ValueRef};
use serde::{Deserialize, Serialize};

/// An instant to the second, with the UTC offset it was taken in (its local day names record
/// ids). Two timestamps are equal when they name the same instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Timestamp(DateTime<FixedOffset>);

/// Text that is not an RFC 3339 timestamp.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a timestamp (expected RFC 3339, e.g. `2026-04-15T10:20:00+09:00`)")]
pub struct TimestampError(String);

impl Timestamp {
    /// The instant, cut to the second.
    pub fn new(at: DateTime<FixedOffset>) -> Timestamp {
        Timestamp(at.with_nanosecond(0).unwrap_or(at))
    }

    /// Reads RFC 3339 (`Z` or an offset).
    pub fn parse(text: &str) -> Result<Timestamp, TimestampError> {
        DateTime::parse_from_rfc3339(text.trim())
            .map(Timestamp::new)
            .map_err(|_| TimestampError(text.chars().take(60).collect()))
    }

    /// Seconds since the Unix epoch, shown in `offset`.
    #[cfg(test)]
    pub(crate) fn from_unix(secs: i64, offset: FixedOffset) -> Option<Timestamp> {
        use chrono::TimeZone;
        offset.timestamp_opt(secs, 0).single().map(Timestamp)
    }

    /// Seconds since the Unix epoch.
    pub fn unix(&self) -> i64 {
        self.0.timestamp()
    }

    /// The local date it was taken on, `YYYYMMDD` (the day part of a record id).
    pub fn day(&self) -> String {
        self.0.format("%Y%m%d").to_string()
    }

    #[cfg(test)]
    pub(crate) fn datetime(&self) -> DateTime<FixedOffset> {
        self.0
    }

    /// Whole seconds from `earlier` to this one (negative when `earlier` is later).
    pub(crate) fn seconds_since(&self, earlier: &Timestamp) -> i64 {
        self.unix() - earlier.unix()
    }

    /// This instant moved by `secs` seconds, in the same offset.
    pub(crate) fn plus_seconds(&self, secs: i64) -> Timestamp {
        Timestamp(self.0 + chrono::Duration::seconds(secs))
    }
}

impl From<DateTime<FixedOffset>> for Timestamp {
    fn from(at: DateTime<FixedOffset>) -> Self {
        Timestamp::new(at)
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.to_rfc3339_opts(SecondsFormat::Secs, false))
    }
}

impl FromStr for Timestamp {
    type Err = TimestampError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Timestamp::parse(s)
    }
}

impl TryFrom<String> for Timestamp {
    type Error = TimestampError;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        Timestamp::parse(&s)
    }
}

impl From<Timestamp> for String {
    fn from(t: Timestamp) -> String {
        t.to_string()
    }
}

impl ToSql for Timestamp {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::from(self.to_string()))
    }
}

impl FromSql for Timestamp {
    fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
        let text = value.as_str()?;
        Timestamp::parse(text).map_err(|e| FromSqlError::Other(Box::new(e)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_with_its_offset_to_the_second_and_read_back() {
        let t = Timestamp::parse("2026-04-15T10:20:00.750+09:00").expect("parses");
        assert_eq!(t.to_string(), "2026-04-15T10:20:00+09:00");
        assert_eq!(t.day(), "20260415");
        let z = Timestamp::parse("2026-04-15T01:20:00Z").expect("parses");
        assert_eq!(z, t, "the same instant");
        assert_eq!(z.to_string(), "2026-04-15T01:20:00+00:00");
        assert_eq!(z.day(), "20260415");
        let json = serde_json::to_string(&t).expect("json");
        assert_eq!(json, "\"2026-04-15T10:20:00+09:00\"");
        assert_eq!(serde_json::from_str::<Timestamp>(&json).expect("back"), t);
        assert!(Timestamp::parse("yesterday").is_err());
        assert!(serde_json::from_str::<Timestamp>("\"1713140400\"").is_err());
    }

    #[test]
    fn the_local_day_follows_the_offset() {
        let late = Timestamp::parse("2026-04-15T23:30:00-05:00").expect("parses");
        assert_eq!(late.day(), "20260415");
        let utc = Timestamp::from_unix(late.unix(), FixedOffset::east_opt(0).expect("utc"))
            .expect("in range");
        assert_eq!(utc.day(), "20260416");
        assert_eq!(utc.seconds_since(&late), 0);
        assert_eq!(late.plus_seconds(3600).seconds_since(&late), 3600);
    }
}
