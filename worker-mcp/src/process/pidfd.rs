//! Process descriptors (`pidfd_open(2)`): a handle on one process that a recycled pid can never
//! be mistaken for — signalled after the process is gone, it fails with `ESRCH`. Neither `std`
//! nor `nix` wraps these calls: the unsafe code is the two system calls and the adoption of the
//! descriptor the first returns.
#![allow(unsafe_code)]

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use nix::errno::Errno;
use nix::sys::signal::Signal;

/// A descriptor for process `pid`, which must not have been reaped yet (a child of this process
/// not waited for, or a process this process traces).
pub(crate) fn open(pid: u32) -> io::Result<OwnedFd> {
    // SAFETY: no pointer is passed; the result is checked before use.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    let fd = RawFd::try_from(fd).map_err(|_| io::Error::other("descriptor out of range"))?;
    // SAFETY: the kernel just created this descriptor for this call; nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Sends `signal` (`None`: only checks that the process is there) to the process behind `fd`.
pub(crate) fn send_signal(fd: &OwnedFd, signal: Option<Signal>) -> Result<(), Errno> {
    let number = signal.map_or(0, |s| s as libc::c_int);
    // SAFETY: a null `siginfo` is allowed (the kernel fills it as `kill(2)` would); no other
    // pointer is passed.
    let done = unsafe {
        libc::syscall(
            libc::SYS_pidfd_send_signal,
            fd.as_raw_fd(),
            number,
            std::ptr::null::<libc::siginfo_t>(),
            0,
        )
    };
    if done < 0 { Err(Errno::last()) } else { Ok(()) }
}
