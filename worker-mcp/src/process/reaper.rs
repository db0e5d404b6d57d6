//! The reaper: runs one command as its parent and child subreaper, so nothing the command
//! starts can outlive it — not a double fork, not `setsid`, not a cleared environment.
//!
//! The kernel does the finding: a process that is a child subreaper (`PR_SET_CHILD_SUBREAPER`)
//! becomes the parent of every orphan among its descendants, so whatever the command leaves
//! behind stays in the reaper's tree, whatever session or process group it moved to. When the
//! command ends (or the reaper is told to stop: SIGTERM, SIGINT, SIGHUP, or its own parent is
//! gone), every descendant is sent SIGTERM, given a grace period, then SIGKILL, and reaped; the
//! reaper exits only when it has no child left — and a subreaper with no child has no
//! descendant. It then exits as the command did (its code, or the same signal), and appends
//! what it had to end (pid, command name, the signal that ended it) to a file for the evidence.
//!
//! It runs in Butler's helper mode (`butler sandbox-exec`, see `crate::sandbox`), single-threaded,
//! before any runtime: signals are taken through a `signalfd`, children reaped with `waitpid`.

use std::fs::File;
use std::io::Write;
use std::os::fd::AsFd;
use std::process::Command;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::prctl;
use nix::sys::signal::{SigSet, SigmaskHow, Signal, kill, sigprocmask};
use nix::sys::signalfd::{SfdFlags, SignalFd};
use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
use nix::unistd::{Pid, getpid, getppid};
use serde::{Deserialize, Serialize};

/// One process the reaper had to end.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EndedProcess {
    pub pid: i32,
    /// Its command name as the kernel knows it (`/proc/<pid>/comm`, at most 15 bytes; the
    /// process may have chosen it).
    pub command: String,
    /// The last signal it was sent: `SIGTERM`, or `SIGKILL` when it outlived the grace period.
    pub signal: String,
}

/// What one reaper run appends to its report file (one JSON line).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Leftovers {
    /// The first [`MAX_LISTED`] of the processes it ended whose parent it did not end too
    /// (a daemon is listed, not each child it forked meanwhile).
    pub ended: Vec<EndedProcess>,
    /// How many it ended in all, children of those listed included.
    pub total: u32,
}

/// Processes listed per run (the count says how many there were).
pub(crate) const MAX_LISTED: usize = 20;

/// How often the reaper looks at its parent while the command runs, and at its descendants
/// while it ends them.
const WATCH_TICK: Duration = Duration::from_millis(200);
const STOP_TICK: Duration = Duration::from_millis(20);

/// Something started beside the command, once it runs (the system-call filter's supervisor,
/// whose thread answers what the filter hands over).
pub trait Watch {
    /// The command was started.
    fn started(&mut self);
}

/// Runs `command` as the reaper's child and returns the exit code the reaper should exit with,
/// once no descendant is left; when the command was ended by a signal, the reaper ends itself
/// with the same signal instead of returning. `Err` when it could not start the command (or
/// not become a subreaper: then nothing is run).
pub(crate) fn run(
    mut command: Command,
    grace: Duration,
    report: Option<File>,
    watch: Option<&mut dyn Watch>,
) -> Result<i32, String> {
    prctl::set_child_subreaper(true).map_err(|e| format!("cannot become a subreaper: {e}"))?;
    // A relayed crash signal must not leave a core file in the command's directory.
    let _ = prctl::set_dumpable(false);
    let mut signals = SigSet::empty();
    for s in [
        Signal::SIGTERM,
        Signal::SIGINT,
        Signal::SIGHUP,
        Signal::SIGCHLD,
    ] {
        signals.add(s);
    }
    sigprocmask(SigmaskHow::SIG_BLOCK, Some(&signals), None)
        .map_err(|e| format!("cannot block signals: {e}"))?;
    let signal_fd = SignalFd::with_flags(&signals, SfdFlags::SFD_NONBLOCK | SfdFlags::SFD_CLOEXEC)
        .map_err(|e| format!("cannot watch signals: {e}"))?;
    let parent = getppid();
    // The child inherits the blocked signals (std's spawn keeps the mask): it is Butler's
    // second stage, which unblocks them before it becomes the program.
    let main = match command.spawn() {
        Ok(child) => Pid::from_raw(i32::try_from(child.id()).expect("pids fit in i32")),
        Err(e) => {
            unblock(&signals);
            return Err(format!(
                "cannot run `{}`: {e}",
                command.get_program().to_string_lossy()
            ));
        }
    };
    if let Some(watch) = watch {
        watch.started();
    }
    let mut reaper = Reaper {
        main,
        main_status: None,
        signalled: Vec::new(),
        ended: Vec::new(),
        stopping: None,
    };
    loop {
        let no_children = reaper.reap();
        if no_children {
            break;
        }
        if reaper.stopping.is_none() && (reaper.main_status.is_some() || getppid() != parent) {
            reaper.stop(grace);
        }
        let tick = match reaper.stopping {
            Some(deadline) => {
                reaper.signal_all(if Instant::now() >= deadline {
                    Signal::SIGKILL
                } else {
                    Signal::SIGTERM
                });
                STOP_TICK
            }
            None => WATCH_TICK,
        };
        let mut fds = [PollFd::new(signal_fd.as_fd(), PollFlags::POLLIN)];
        let timeout = PollTimeout::try_from(tick).unwrap_or(PollTimeout::NONE);
        if let Err(e) = poll(&mut fds, timeout)
            && e != Errno::EINTR
        {
            // Without the signal file the ticks still bring the loop round.
            std::thread::sleep(tick);
        }
        while let Ok(Some(info)) = signal_fd.read_signal() {
            let number = i32::try_from(info.ssi_signo).unwrap_or(0);
            if number != Signal::SIGCHLD as i32 && reaper.stopping.is_none() {
                reaper.stop(grace);
            }
        }
    }
    if let Some(mut file) = report
        && let Some(leftovers) = reaper.leftovers()
    {
        let line = serde_json::to_string(&leftovers).expect("leftovers always serialise");
        let _ = writeln!(file, "{line}");
    }
    unblock(&signals);
    Ok(match reaper.main_status {
        Some(WaitStatus::Exited(_, code)) => code,
        Some(WaitStatus::Signaled(_, signal, _)) => {
            // Ends the reaper the way the command ended, so its supervisor sees the same.
            let _ = kill(getpid(), signal);
            128 + signal as i32
        }
        _ => 128 + Signal::SIGKILL as i32,
    })
}

fn unblock(signals: &SigSet) {
    let _ = sigprocmask(SigmaskHow::SIG_UNBLOCK, Some(signals), None);
}

struct Reaper {
    main: Pid,
    main_status: Option<WaitStatus>,
    /// Every process signalled, with the last signal it was sent.
    signalled: Vec<(Pid, Signal)>,
    /// The same but the command itself, as the evidence lists them, with their parents.
    ended: Vec<(EndedProcess, Pid)>,
    /// While ending everything: when SIGTERM turns into SIGKILL.
    stopping: Option<Instant>,
}

impl Reaper {
    /// Reaps every child that ended; true when none is left.
    fn reap(&mut self) -> bool {
        loop {
            match waitpid(None, Some(WaitPidFlag::WNOHANG)) {
                Ok(WaitStatus::StillAlive) => return false,
                Ok(status) => {
                    if status.pid() == Some(self.main) {
                        self.main_status = Some(status);
                    }
                }
                Err(Errno::EINTR) => {}
                Err(_) => return true,
            }
        }
    }

    /// Begins ending every descendant: SIGTERM now, SIGKILL after `grace`.
    fn stop(&mut self, grace: Duration) {
        self.stopping = Some(Instant::now() + grace);
        self.signal_all(Signal::SIGTERM);
    }

    /// Sends `signal` to every live descendant not sent it yet (each time found again, so
    /// new ones too); the command itself is not listed among what had to be ended.
    fn signal_all(&mut self, signal: Signal) {
        for (pid, parent, command) in descendants(getpid()) {
            let known = self.signalled.iter().position(|(p, _)| *p == pid);
            if known.is_some_and(|i| self.signalled[i].1 == signal) || kill(pid, signal).is_err() {
                continue;
            }
            if signal == Signal::SIGTERM {
                // A stopped process acts on SIGTERM only once continued.
                let _ = kill(pid, Signal::SIGCONT);
            }
            match known {
                Some(i) => self.signalled[i].1 = signal,
                None => self.signalled.push((pid, signal)),
            }
            if pid == self.main {
                continue;
            }
            match self.ended.iter_mut().find(|(e, _)| e.pid == pid.as_raw()) {
                Some((listed, _)) => signal.as_str().clone_into(&mut listed.signal),
                None => self.ended.push((
                    EndedProcess {
                        pid: pid.as_raw(),
                        command,
                        signal: signal.as_str().to_owned(),
                    },
                    parent,
                )),
            }
        }
    }

    /// What it ended, for the report: the processes whose parent it did not end as well.
    fn leftovers(&self) -> Option<Leftovers> {
        if self.ended.is_empty() {
            return None;
        }
        let ended_too = |parent: &Pid| self.signalled.iter().any(|(p, _)| p == parent);
        Some(Leftovers {
            ended: self
                .ended
                .iter()
                .filter(|(_, parent)| !ended_too(parent))
                .take(MAX_LISTED)
                .map(|(e, _)| e.clone())
                .collect(),
            total: u32::try_from(self.ended.len()).unwrap_or(u32::MAX),
        })
    }
}

/// The live (not yet zombie) descendants of `root` with their parents and command names, from
/// `/proc`.
pub(crate) fn descendants(root: Pid) -> Vec<(Pid, Pid, String)> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut all: Vec<(i32, i32, String)> = Vec::new();
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<i32>().ok())
        else {
            continue;
        };
        if let Ok(stat) = std::fs::read_to_string(entry.path().join("stat"))
            && let Some((ppid, state, command)) = parse_stat(&stat)
            && state != 'Z'
            && state != 'X'
        {
            all.push((pid, ppid, command));
        }
    }
    let mut found: Vec<(Pid, Pid, String)> = Vec::new();
    let mut frontier = vec![root.as_raw()];
    while let Some(parent) = frontier.pop() {
        for (pid, ppid, command) in &all {
            if *ppid == parent && !found.iter().any(|(p, ..)| p.as_raw() == *pid) {
                found.push((Pid::from_raw(*pid), Pid::from_raw(parent), command.clone()));
                frontier.push(*pid);
            }
        }
    }
    found
}

/// The parent pid, state and command name in a `/proc/<pid>/stat` line. The command name is
/// between the first `(` and the last `)` (it may hold either).
fn parse_stat(stat: &str) -> Option<(i32, char, String)> {
    let open = stat.find('(')?;
    let close = stat.rfind(')')?;
    let command = stat.get(open + 1..close)?.to_owned();
    let mut rest = stat.get(close + 1..)?.split_whitespace();
    let state = rest.next()?.chars().next()?;
    let ppid = rest.next()?.parse().ok()?;
    Some((ppid, state, command))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_are_read_with_hostile_command_names() {
        assert_eq!(
            parse_stat("42 (sleep) S 7 42 42 0 -1"),
            Some((7, 'S', "sleep".to_owned()))
        );
        assert_eq!(
            parse_stat("43 (a) Z 1 (b) R 9 43) S 8 43 43 0"),
            Some((8, 'S', "a) Z 1 (b) R 9 43".to_owned()))
        );
        assert_eq!(parse_stat("garbage"), None);
    }

    #[test]
    fn this_process_is_a_descendant_of_its_parent() {
        let me = getpid();
        let found = descendants(getppid());
        assert!(found.iter().any(|(pid, ..)| *pid == me), "{found:?}");
    }

    #[test]
    fn the_json_line_of_what_was_ended_is_stable() {
        let leftovers = Leftovers {
            ended: vec![EndedProcess {
                pid: 4242,
                command: "sleep".into(),
                signal: "SIGKILL".into(),
            }],
            total: 1,
        };
        insta::assert_json_snapshot!(leftovers);
    }
}
