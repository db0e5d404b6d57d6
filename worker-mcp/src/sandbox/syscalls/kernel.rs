//! The kernel calls of seccomp's user notification that neither `std` nor `nix` wraps: the one
//! place of unsafe code in the sandbox. Each call passes a pointer to a value owned by the
//! caller for the call's duration, of the layout the kernel expects (the `libc` definitions of
//! the same structures), and turns a returned descriptor into an owned one at once.
#![allow(unsafe_code)]

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};

/// Installs `program` as a seccomp filter on the calling thread (single-threaded: the helper's
/// second stage) and returns the listener that receives the calls it hands over. `no_new_privs`
/// must already be set.
pub(super) fn install_with_listener(program: &[libc::sock_filter]) -> io::Result<OwnedFd> {
    let len = u16::try_from(program.len())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "filter too long"))?;
    let fprog = libc::sock_fprog {
        len,
        filter: program.as_ptr().cast_mut(),
    };
    let mut last = io::Error::from_raw_os_error(libc::EINVAL);
    // With WAIT_KILLABLE_RECV (Linux 5.19) a call the supervisor took is interrupted only by a
    // fatal signal, not restarted at every signal; older kernels refuse the flag.
    for flags in [
        libc::SECCOMP_FILTER_FLAG_NEW_LISTENER | libc::SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV,
        libc::SECCOMP_FILTER_FLAG_NEW_LISTENER,
    ] {
        // SAFETY: `fprog` points at `program`, both alive for the call; the kernel copies the
        // program before returning.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_seccomp,
                libc::SECCOMP_SET_MODE_FILTER,
                flags,
                &fprog as *const libc::sock_fprog,
            )
        };
        if fd >= 0 {
            let fd =
                RawFd::try_from(fd).map_err(|_| io::Error::other("descriptor out of range"))?;
            // SAFETY: the kernel just returned this new descriptor; nothing else owns it.
            return Ok(unsafe { OwnedFd::from_raw_fd(fd) });
        }
        last = io::Error::last_os_error();
    }
    Err(last)
}

/// Waits for the next call handed over (blocking; poll the listener first).
pub(super) fn receive(listener: BorrowedFd<'_>) -> io::Result<libc::seccomp_notif> {
    // SAFETY: an all-zero `seccomp_notif` is a valid value (plain integers), and the kernel
    // requires it zeroed.
    let mut notif: libc::seccomp_notif = unsafe { std::mem::zeroed() };
    // SAFETY: `notif` is a live, writable `seccomp_notif`, the structure this request fills.
    let rc = unsafe {
        libc::ioctl(
            listener.as_raw_fd(),
            libc::SECCOMP_IOCTL_NOTIF_RECV,
            &mut notif as *mut libc::seccomp_notif,
        )
    };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(notif)
}

/// Answers call `id`: it returns `val`, or fails with `errno` when not 0.
pub(super) fn respond(listener: BorrowedFd<'_>, id: u64, val: i64, errno: i32) -> io::Result<()> {
    let mut resp = libc::seccomp_notif_resp {
        id,
        val,
        error: -errno,
        flags: 0,
    };
    // SAFETY: `resp` is a live `seccomp_notif_resp`, the structure this request reads.
    let rc = unsafe {
        libc::ioctl(
            listener.as_raw_fd(),
            libc::SECCOMP_IOCTL_NOTIF_SEND,
            &mut resp as *mut libc::seccomp_notif_resp,
        )
    };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Whether call `id` is still waiting (its process did not die and its id was not reused):
/// asked after reading the process's memory, before trusting what was read.
pub(super) fn still_waiting(listener: BorrowedFd<'_>, id: u64) -> bool {
    let mut id = id;
    // SAFETY: `id` is a live `u64`, what this request reads.
    let rc = unsafe {
        libc::ioctl(
            listener.as_raw_fd(),
            libc::SECCOMP_IOCTL_NOTIF_ID_VALID,
            &mut id as *mut u64,
        )
    };
    rc == 0
}

/// Puts a copy of `source` into the waiting process as its descriptor `target` (replacing what
/// was there, as `dup2` would), close-on-exec when `cloexec`.
pub(super) fn install_descriptor(
    listener: BorrowedFd<'_>,
    id: u64,
    source: BorrowedFd<'_>,
    target: u32,
    cloexec: bool,
) -> io::Result<()> {
    let mut addfd = libc::seccomp_notif_addfd {
        id,
        flags: libc::SECCOMP_ADDFD_FLAG_SETFD as u32,
        srcfd: u32::try_from(source.as_raw_fd()).unwrap_or(u32::MAX),
        newfd: target,
        newfd_flags: if cloexec { libc::O_CLOEXEC as u32 } else { 0 },
    };
    // SAFETY: `addfd` is a live `seccomp_notif_addfd`, the structure this request reads;
    // `source` stays open for the call.
    let rc = unsafe {
        libc::ioctl(
            listener.as_raw_fd(),
            libc::SECCOMP_IOCTL_NOTIF_ADDFD,
            &mut addfd as *mut libc::seccomp_notif_addfd,
        )
    };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Takes ownership of a descriptor this process received (from `SCM_RIGHTS`) or inherited by
/// number from its parent stage.
pub(super) fn adopt(fd: RawFd) -> io::Result<OwnedFd> {
    // F_GETFD only reads the descriptor's flags: it fails when the number is not open.
    // SAFETY: no pointer is passed.
    if unsafe { libc::fcntl(fd, libc::F_GETFD) } < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the descriptor is open (checked above) and was handed to this process for it
    // alone: the kernel's SCM_RIGHTS, or the parent stage's inheritance, named on the command
    // line; nothing else in the process owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// A duplicate of descriptor `fd` of process `tgid` (`pidfd_getfd`: the caller may trace it —
/// the supervisor is its ancestor, outside its sandbox). The socket is the same one: what the
/// supervisor does with the duplicate (`bind`, `connect`) the process's descriptor sees.
pub(super) fn take_descriptor(tgid: u32, fd: u32) -> io::Result<OwnedFd> {
    let pidfd = crate::process::pidfd::open(tgid)?;
    // SAFETY: no pointer is passed; the result is checked before use.
    let dup = unsafe { libc::syscall(libc::SYS_pidfd_getfd, pidfd.as_raw_fd(), fd, 0) };
    if dup < 0 {
        return Err(io::Error::last_os_error());
    }
    adopt(RawFd::try_from(dup).map_err(|_| io::Error::other("descriptor out of range"))?)
}
