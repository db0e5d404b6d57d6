//! Time in Butler: one [`Timestamp`] type (RFC 3339 with the offset it was taken in, to the
//! second) and a [`Clock`] that hands them out.
//!
//! Nothing below the edge reads the system's time itself: the binary builds one clock at start
//! (the system clock, or a frozen one from `BUTLER_NOW`) and passes it down, so tests fix time
//! and record ids instead of normalising them afterwards.

mod clock;
mod timestamp;

pub use clock::{Clock, FixedClock, SharedClock, SystemClock};
pub use timestamp::{Timestamp, TimestampError};
