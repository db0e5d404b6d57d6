//! Exclusive locks between Butler processes (and threads): `flock(2)` on a file that is never
//! deleted. The kernel drops a lock when its holder dies, so a killed Butler never leaves one
//! behind. Two handles opened separately exclude each other even inside one process.

use std::fs::File;
use std::path::Path;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::fcntl::{Flock, FlockArg};

/// First pause between attempts; it doubles up to [`MAX_PAUSE`].
const FIRST_PAUSE: Duration = Duration::from_millis(2);
const MAX_PAUSE: Duration = Duration::from_millis(50);

/// A held lock; dropping it releases it.
#[derive(Debug)]
pub(crate) struct FileLock {
    _flock: Flock<File>,
}

/// Takes the lock on `path` (creating the file), waiting until `deadline` for its holder.
/// `Ok(None)`: still held by someone else at the deadline.
pub(crate) fn lock_until(path: &Path, deadline: Instant) -> std::io::Result<Option<FileLock>> {
    let mut pause = FIRST_PAUSE;
    loop {
        if let Some(lock) = try_lock(path)? {
            return Ok(Some(lock));
        }
        let now = Instant::now();
        if now >= deadline {
            return Ok(None);
        }
        std::thread::sleep(pause.min(deadline - now));
        pause = (pause * 2).min(MAX_PAUSE);
    }
}

/// Takes the lock on `path` (creating the file) if nobody holds it; `Ok(None)` if someone does.
pub(crate) fn try_lock(path: &Path) -> std::io::Result<Option<FileLock>> {
    let file = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)?;
    match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
        Ok(flock) => Ok(Some(FileLock { _flock: flock })),
        Err((_, Errno::EWOULDBLOCK)) => Ok(None),
        Err((_, Errno::EINTR)) => Ok(None),
        Err((_, errno)) => Err(std::io::Error::from(errno)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_handle_waits_until_the_first_is_dropped() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("x.lock");
        let first = try_lock(&path).expect("lock").expect("free");
        assert!(try_lock(&path).expect("lock").is_none(), "held");
        let soon = Instant::now() + Duration::from_millis(30);
        assert!(
            lock_until(&path, soon).expect("lock").is_none(),
            "still held"
        );
        let waiter = {
            let path = path.clone();
            std::thread::spawn(move || {
                lock_until(&path, Instant::now() + Duration::from_secs(20))
                    .expect("lock")
                    .is_some()
            })
        };
        std::thread::sleep(Duration::from_millis(50));
        drop(first);
        assert!(waiter.join().expect("thread"), "taken once released");
    }
}
