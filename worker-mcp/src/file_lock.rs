//! Exclusive locks between Butler processes (and threads): `flock(2)` on a file that is never
//! deleted. The kernel drops a lock when its holder dies, so a killed Butler never leaves one
//! behind. Two handles opened separately exclude each other even inside one process.

use std::fs::File;
use std::path::Path;
use std::time::Instant;

use nix::errno::Errno;
use nix::fcntl::{Flock, FlockArg};

/// A held lock; dropping it releases it.
#[derive(Debug)]
pub(crate) struct FileLock {
    _flock: Flock<File>,
}

/// Takes the lock on `path` (creating the file), waiting until `deadline` for its holder.
/// `Ok(None)`: still held by someone else at the deadline.
///
/// The wait is the kernel's (a blocking `flock` in a thread of its own), not polling: the lock
/// is taken the moment its holder lets it go. A wait that outlives the deadline is abandoned;
/// if its thread gets the lock later, it lets it go at once.
pub(crate) fn lock_until(path: &Path, deadline: Instant) -> std::io::Result<Option<FileLock>> {
    if let Some(lock) = try_lock(path)? {
        return Ok(Some(lock));
    }
    let file = open(path)?;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut file = file;
        loop {
            match Flock::lock(file, FlockArg::LockExclusive) {
                Err((again, Errno::EINTR)) => file = again,
                done => {
                    // Nobody waits any more: the lock (if taken) is dropped here, released.
                    let _ = tx.send(done.map_err(|(_, errno)| errno));
                    return;
                }
            }
        }
    });
    let left = deadline.saturating_duration_since(Instant::now());
    match rx.recv_timeout(left) {
        Ok(Ok(flock)) => Ok(Some(FileLock { _flock: flock })),
        Ok(Err(errno)) => Err(std::io::Error::from(errno)),
        Err(_) => Ok(None),
    }
}

fn open(path: &Path) -> std::io::Result<File> {
    File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
}

/// Takes the lock on `path` (creating the file) if nobody holds it; `Ok(None)` if someone does.
pub(crate) fn try_lock(path: &Path) -> std::io::Result<Option<FileLock>> {
    let file = open(path)?;
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
    use std::time::Duration;

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
