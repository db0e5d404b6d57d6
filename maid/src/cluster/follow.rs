//! The task's pod log, followed to its end: each line passed on once, a stream that is cut
//! resumed from the last line's time (`sinceTime`, lines already passed on skipped), a
//! container not started yet waited for.

use std::time::Duration;

use futures::{AsyncBufReadExt, StreamExt};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::jiff::Timestamp;
use kube::Api;
use kube::api::LogParams;
use tokio::sync::mpsc::UnboundedSender;

use super::job::CONTAINER;

/// Reads of an ended container's log before the follower gives up on a log that keeps
/// failing or keeps growing (it cannot grow: the container ended).
const MAX_READS_AFTER_END: u32 = 20;

/// What the follower passes on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum LogItem {
    Line(String),
    /// The stream was cut and is being resumed (how many times so far).
    Resumed(u32),
    /// The log ended with the container.
    Ended,
    /// The pod waits to start: the reason and message the scheduler or the kubelet gave.
    Waiting(String, String),
}

/// Where a resumed stream picks up: the last line's time and how many lines of that time were
/// passed on already.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
struct Mark {
    at: Option<Timestamp>,
    seen_at: usize,
}

impl Mark {
    /// Splits a `timestamps=true` line; `Some(text)` when it is new.
    fn take<'a>(&mut self, line: &'a str, skip: &mut Skip) -> Option<&'a str> {
        let (at, text) = match line.split_once(' ') {
            Some((stamp, text)) => match stamp.parse::<Timestamp>() {
                Ok(at) => (at, text),
                Err(_) => return Some(line),
            },
            None => match line.parse::<Timestamp>() {
                Ok(at) => (at, ""),
                Err(_) => return Some(line),
            },
        };
        if let Some(before) = skip.before {
            if at < before {
                return None;
            }
            if at == before && skip.left > 0 {
                skip.left -= 1;
                return None;
            }
        }
        if self.at == Some(at) {
            self.seen_at += 1;
        } else {
            self.at = Some(at);
            self.seen_at = 1;
        }
        Some(text)
    }
}

/// Lines a resumed stream repeats: everything before the mark, and the mark's own lines
/// already passed on.
#[derive(Debug, Default)]
struct Skip {
    before: Option<Timestamp>,
    left: usize,
}

/// Follows `pod`'s log until the container's log ends, sending each line once. `ended` says
/// whether the container has ended (a stream that closes before that was cut).
pub(crate) async fn follow(
    pods: Api<Pod>,
    pod: String,
    out: UnboundedSender<LogItem>,
    ended: impl Fn() -> bool + Send,
) {
    let mut mark = Mark::default();
    let mut resumed = 0u32;
    let mut ended_reads = 0u32;
    loop {
        // A stream opened after the container ended holds the rest of its log.
        let was_ended = ended();
        let params = LogParams {
            container: Some(CONTAINER.to_owned()),
            follow: true,
            timestamps: true,
            // `sinceTime` has a second's precision: from the last line's second on.
            since_time: mark
                .at
                .and_then(|at| Timestamp::from_second(at.as_second()).ok()),
            ..LogParams::default()
        };
        let mut skip = Skip {
            before: mark.at,
            left: mark.seen_at,
        };
        let mut new_lines = 0usize;
        let read = match pods.log_stream(&pod, &params).await {
            Ok(stream) => {
                let mut lines = stream.lines();
                loop {
                    match lines.next().await {
                        Some(Ok(line)) => {
                            if let Some(text) = mark.take(&line, &mut skip) {
                                new_lines += 1;
                                if out.send(LogItem::Line(text.to_owned())).is_err() {
                                    return;
                                }
                            }
                        }
                        // Cut: whatever it held is read again from the mark.
                        Some(Err(_)) => break false,
                        None => break true,
                    }
                }
            }
            // Not started yet (400), or the API server is briefly away: try again.
            Err(e) => {
                tracing::debug!(%e, pod, "the task's log is not readable yet");
                false
            }
        };
        // A stream of an ended container that closed cleanly may still have been cut by a
        // proxy: the log is whole once a clean read after the end brings nothing new.
        if was_ended && read && new_lines == 0 {
            let _ = out.send(LogItem::Ended);
            return;
        }
        let running = !ended();
        // Cut (or closed while the container ran): said in the task's log, then read again.
        if !read || running {
            resumed += 1;
            if out.send(LogItem::Resumed(resumed)).is_err() {
                return;
            }
        }
        if was_ended {
            ended_reads += 1;
            if ended_reads > MAX_READS_AFTER_END {
                let _ = out.send(LogItem::Ended);
                return;
            }
        }
        if running {
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_resumed_stream_passes_on_only_what_is_new() {
        let mut mark = Mark::default();
        let mut none = Skip::default();
        let first = [
            "2026-12-02T10:00:00.100000000Z a",
            "2026-12-02T10:00:00.100000000Z b",
            "2026-12-02T10:00:01.000000000Z c",
        ];
        let got: Vec<_> = first
            .iter()
            .filter_map(|l| mark.take(l, &mut none))
            .collect();
        assert_eq!(got, ["a", "b", "c"]);
        // Cut after `c`; the server repeats from the second of the last line.
        let mut skip = Skip {
            before: mark.at,
            left: mark.seen_at,
        };
        let again = [
            "2026-12-02T10:00:01.000000000Z c",
            "2026-12-02T10:00:01.000000000Z d",
            "2026-12-02T10:00:02.000000000Z e",
        ];
        let got: Vec<_> = again
            .iter()
            .filter_map(|l| mark.take(l, &mut skip))
            .collect();
        assert_eq!(got, ["d", "e"]);
        assert_eq!(
            mark.take("no stamp here", &mut Skip::default()),
            Some("no stamp here")
        );
    }
}
