//! Where "now" comes from. Production uses [`SystemClock`]; tests (and `BUTLER_NOW`) use a
//! [`FixedClock`], which stands still until it is set or stepped.

use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

use chrono::Local;

use super::Timestamp;

/// A source of the current time.
pub trait Clock: Send + Sync + fmt::Debug {
    /// Now, to the second, in the clock's local offset.
    fn now(&self) -> Timestamp;
}

/// A clock shared by everything a process does.
pub type SharedClock = Arc<dyn Clock>;

/// The system's clock in the machine's local time zone.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl SystemClock {
    pub fn shared() -> SharedClock {
        Arc::new(SystemClock)
    }
}

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        Timestamp::new(Local::now().fixed_offset())
    }
}

/// A clock that shows one instant until it is set or stepped.
pub struct FixedClock {
    now: Mutex<Timestamp>,
}

impl FixedClock {
    pub fn new(at: Timestamp) -> FixedClock {
        FixedClock {
            now: Mutex::new(at),
        }
    }

    /// A frozen clock behind the shared handle.
    pub fn shared(at: Timestamp) -> SharedClock {
        Arc::new(FixedClock::new(at))
    }

    pub fn set(&self, at: Timestamp) {
        *self.now.lock().unwrap_or_else(PoisonError::into_inner) = at;
    }

    /// Moves the clock on by `by` (whole seconds).
    #[cfg(test)]
    pub(crate) fn advance(&self, by: std::time::Duration) {
        let mut now = self.now.lock().unwrap_or_else(PoisonError::into_inner);
        *now = now.plus_seconds(i64::try_from(by.as_secs()).unwrap_or(i64::MAX / 2));
    }
}

impl fmt::Debug for FixedClock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("FixedClock").field(&self.now()).finish()
    }
}

impl Clock for FixedClock {
    fn now(&self) -> Timestamp {
        *self.now.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn a_fixed_clock_stands_still_until_stepped() {
        let at = Timestamp::parse("2026-04-15T10:00:00+09:00").expect("time");
        let clock = Arc::new(FixedClock::new(at));
        let shared: SharedClock = clock.clone();
        assert_eq!(shared.now(), at);
        assert_eq!(shared.now(), at);
        clock.advance(Duration::from_secs(90));
        assert_eq!(shared.now().to_string(), "2026-04-15T10:01:30+09:00");
        clock.set(at);
        assert_eq!(shared.now(), at);
    }

    #[test]
    fn the_system_clock_is_whole_seconds_of_today() {
        let now = SystemClock.now();
        assert_eq!(now.datetime().timestamp_subsec_nanos(), 0);
        assert!(now.unix() > 1_700_000_000);
    }
}
