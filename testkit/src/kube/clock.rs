//! Times as the API server writes them: RFC 3339 in UTC, whole seconds on objects
//! (`metav1.Time`), nanoseconds on log lines (`timestamps=true`).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// `t` as `2026-12-02T10:33:27Z` (seconds truncated, as `metav1.Time` serialises).
pub fn rfc3339(t: SystemTime) -> String {
    let (secs, _) = split(t);
    let (date, time) = civil(secs);
    format!("{date}T{time}Z")
}

/// `t` as `2026-12-02T10:33:27.123456789Z` (the kubelet's log timestamps).
pub fn rfc3339_nanos(t: SystemTime) -> String {
    let (secs, nanos) = split(t);
    let (date, time) = civil(secs);
    format!("{date}T{time}.{nanos:09}Z")
}

/// Now, as an object time.
pub fn now() -> String {
    rfc3339(SystemTime::now())
}

/// Parses an RFC 3339 time in UTC (`Z`), with or without a fraction; `None` for anything else.
pub fn parse(text: &str) -> Option<SystemTime> {
    let text = text.strip_suffix('Z').or_else(|| text.strip_suffix('z'))?;
    let (date, time) = text.split_once(['T', 't'])?;
    let mut date_parts = date.splitn(3, '-');
    let year: i64 = date_parts.next()?.parse().ok()?;
    let month: i64 = date_parts.next()?.parse().ok()?;
    let day: i64 = date_parts.next()?.parse().ok()?;
    let (clock, fraction) = match time.split_once('.') {
        Some((clock, fraction)) => (clock, fraction),
        None => (time, ""),
    };
    let mut clock_parts = clock.splitn(3, ':');
    let hour: i64 = clock_parts.next()?.parse().ok()?;
    let minute: i64 = clock_parts.next()?.parse().ok()?;
    let second: i64 = clock_parts.next()?.parse().ok()?;
    let nanos: u32 = if fraction.is_empty() {
        0
    } else {
        let digits: String = fraction
            .chars()
            .chain("000000000".chars())
            .take(9)
            .collect();
        digits.parse().ok()?
    };
    let days = days_from_civil(year, month, day);
    let secs = days * 86_400 + hour * 3600 + minute * 60 + second;
    let secs = u64::try_from(secs).ok()?;
    Some(UNIX_EPOCH + Duration::new(secs, nanos))
}

fn split(t: SystemTime) -> (i64, u32) {
    let since = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    (
        i64::try_from(since.as_secs()).unwrap_or(i64::MAX),
        since.subsec_nanos(),
    )
}

fn civil(secs: i64) -> (String, String) {
    let days = secs.div_euclid(86_400);
    let rest = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    (
        format!("{y:04}-{m:02}-{d:02}"),
        format!(
            "{:02}:{:02}:{:02}",
            rest / 3600,
            rest % 3600 / 60,
            rest % 60
        ),
    )
}

/// Howard Hinnant's days-to-civil algorithm (proleptic Gregorian).
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        let t = UNIX_EPOCH + Duration::new(1_796_207_607, 123_456_789);
        assert_eq!(rfc3339(t), "2026-12-02T10:33:27Z");
        assert_eq!(rfc3339_nanos(t), "2026-12-02T10:33:27.123456789Z");
        assert_eq!(parse(&rfc3339_nanos(t)), Some(t));
        assert_eq!(
            parse("2026-12-02T10:33:27Z"),
            Some(UNIX_EPOCH + Duration::from_secs(1_796_207_607))
        );
        assert_eq!(parse("1970-01-01T00:00:00Z"), Some(UNIX_EPOCH));
        assert_eq!(parse("not a time"), None);
    }
}
