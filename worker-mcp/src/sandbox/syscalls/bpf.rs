//! The seccomp program, built from rules: for a system call, cases that compare its arguments
//! (the low 32 bits, which is all the calls filtered here read: `int` domains, flags, ioctl
//! requests) and the action of the first case that holds, or the call's own default.
//!
//! Classic BPF over `struct seccomp_data`: the call's number at offset 0, the architecture at 4,
//! argument `i` at `16 + 8 i` (low half first on the little-endian machines Butler targets). A
//! program for another architecture than the one it was built for kills the process, and so
//! does a call of the x32 ABI on x86-64: each would read numbers from another table.

/// What the filter does with a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Action {
    Allow,
    /// Refused at once with this `errno`, unrecorded (a probe answered "not here", such as
    /// `clone3`, which makes the C library use `clone`, whose flags the filter can read).
    Errno(i32),
    /// Handed to the supervisor, which records it and answers (refuses, or does it itself).
    Notify,
    KillProcess,
}

impl Action {
    fn ret(self) -> u32 {
        match self {
            Self::Allow => libc::SECCOMP_RET_ALLOW,
            Self::Errno(e) => libc::SECCOMP_RET_ERRNO | (u32::try_from(e).unwrap_or(1) & 0xffff),
            Self::Notify => libc::SECCOMP_RET_USER_NOTIF,
            Self::KillProcess => libc::SECCOMP_RET_KILL_PROCESS,
        }
    }
}

/// `(low 32 bits of argument arg) & mask == value`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Condition {
    pub arg: u8,
    pub mask: u32,
    pub value: u32,
}

impl Condition {
    pub(crate) fn equals(arg: u8, value: u32) -> Self {
        Self {
            arg,
            mask: u32::MAX,
            value,
        }
    }

    /// None of `bits` is set.
    pub(crate) fn clear(arg: u8, bits: u32) -> Self {
        Self {
            arg,
            mask: bits,
            value: 0,
        }
    }
}

/// The action taken when every condition holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Case {
    pub when: Vec<Condition>,
    pub then: Action,
}

/// One system call's cases, tried in order, and its action when none holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CallRule {
    pub nr: i64,
    pub cases: Vec<Case>,
    pub otherwise: Action,
}

impl CallRule {
    /// The same action whatever the arguments.
    pub(crate) fn always(nr: i64, action: Action) -> Self {
        Self {
            nr,
            cases: Vec::new(),
            otherwise: action,
        }
    }
}

const LD_W_ABS: u16 = 0x20;
const JEQ_K: u16 = 0x15;
const JGE_K: u16 = 0x35;
const AND_K: u16 = 0x54;
const RET_K: u16 = 0x06;

/// Numbers at or above this on x86-64 are the x32 ABI's.
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

/// The audit architecture of the machine Butler was built for.
#[cfg(target_arch = "x86_64")]
pub(crate) const AUDIT_ARCH: u32 = 0xC000_003E;
#[cfg(target_arch = "aarch64")]
pub(crate) const AUDIT_ARCH: u32 = 0xC000_00B7;

fn insn(code: u16, jt: u8, jf: u8, k: u32) -> libc::sock_filter {
    libc::sock_filter { code, jt, jf, k }
}

fn arg_low(arg: u8) -> u32 {
    16 + 8 * u32::from(arg)
}

fn condition_len(c: &Condition) -> usize {
    if c.mask == u32::MAX { 2 } else { 3 }
}

fn case_len(case: &Case) -> usize {
    case.when.iter().map(condition_len).sum::<usize>() + 1
}

fn offset(n: usize) -> Result<u8, String> {
    u8::try_from(n).map_err(|_| "a rule of the system-call filter is too long".to_owned())
}

/// The program: architecture check, then each call's rules, then `default`.
pub(crate) fn compile(
    rules: &[CallRule],
    default: Action,
) -> Result<Vec<libc::sock_filter>, String> {
    let mut prog = vec![
        insn(LD_W_ABS, 0, 0, 4),
        insn(JEQ_K, 1, 0, AUDIT_ARCH),
        insn(RET_K, 0, 0, Action::KillProcess.ret()),
        insn(LD_W_ABS, 0, 0, 0),
    ];
    if cfg!(target_arch = "x86_64") {
        prog.push(insn(JGE_K, 0, 1, X32_SYSCALL_BIT));
        prog.push(insn(RET_K, 0, 0, Action::KillProcess.ret()));
    }
    for rule in rules {
        let nr = u32::try_from(rule.nr).map_err(|_| format!("system call {} unknown", rule.nr))?;
        let block_len = rule.cases.iter().map(case_len).sum::<usize>() + 1;
        prog.push(insn(JEQ_K, 0, offset(block_len)?, nr));
        for case in &rule.cases {
            let mut left = case_len(case);
            for c in &case.when {
                left -= condition_len(c);
                prog.push(insn(LD_W_ABS, 0, 0, arg_low(c.arg)));
                if c.mask != u32::MAX {
                    prog.push(insn(AND_K, 0, 0, c.mask));
                }
                // Not equal: on to the next case (past this case's remaining tests and its
                // return).
                prog.push(insn(JEQ_K, 0, offset(left)?, c.value));
            }
            prog.push(insn(RET_K, 0, 0, case.then.ret()));
        }
        prog.push(insn(RET_K, 0, 0, rule.otherwise.ret()));
    }
    prog.push(insn(RET_K, 0, 0, default.ret()));
    Ok(prog)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Runs `prog` on a call the way the kernel would (the subset of BPF `compile` emits).
    pub(crate) fn run(prog: &[libc::sock_filter], arch: u32, nr: u32, args: [u64; 6]) -> u32 {
        let word = |k: u32| -> u32 {
            match k {
                0 => nr,
                4 => arch,
                k if k >= 16 => {
                    let i = ((k - 16) / 8) as usize;
                    let a = args[i];
                    if (k - 16) % 8 == 0 {
                        a as u32
                    } else {
                        (a >> 32) as u32
                    }
                }
                _ => panic!("offset {k}"),
            }
        };
        let (mut pc, mut acc) = (0usize, 0u32);
        loop {
            let i = prog[pc];
            pc += 1;
            match i.code {
                LD_W_ABS => acc = word(i.k),
                AND_K => acc &= i.k,
                JEQ_K => pc += usize::from(if acc == i.k { i.jt } else { i.jf }),
                JGE_K => pc += usize::from(if acc >= i.k { i.jt } else { i.jf }),
                RET_K => return i.k,
                other => panic!("instruction {other:#x}"),
            }
        }
    }

    #[test]
    fn cases_are_tried_in_order_and_other_calls_take_the_default() {
        let rules = vec![
            CallRule {
                nr: 41,
                cases: vec![
                    Case {
                        when: vec![Condition::equals(0, 2), Condition::equals(1, 1)],
                        then: Action::Allow,
                    },
                    Case {
                        when: vec![Condition::equals(0, 10)],
                        then: Action::Errno(13),
                    },
                ],
                otherwise: Action::Notify,
            },
            CallRule {
                nr: 272,
                cases: vec![Case {
                    when: vec![Condition::clear(0, 0x1000_0000)],
                    then: Action::Allow,
                }],
                otherwise: Action::Notify,
            },
            CallRule::always(435, Action::Errno(38)),
        ];
        let prog = compile(&rules, Action::Allow).expect("compiles");
        let call = |nr, args| run(&prog, AUDIT_ARCH, nr, args);
        assert_eq!(call(41, [2, 1, 0, 0, 0, 0]), libc::SECCOMP_RET_ALLOW);
        assert_eq!(call(41, [2, 2, 0, 0, 0, 0]), libc::SECCOMP_RET_USER_NOTIF);
        assert_eq!(call(41, [10, 1, 0, 0, 0, 0]), libc::SECCOMP_RET_ERRNO | 13);
        assert_eq!(call(41, [1, 1, 0, 0, 0, 0]), libc::SECCOMP_RET_USER_NOTIF);
        // Only the low half is read: a high half does not change the domain.
        assert_eq!(
            call(41, [(7 << 32) | 2, 1, 0, 0, 0, 0]),
            libc::SECCOMP_RET_ALLOW
        );
        assert_eq!(
            call(272, [0x0002_0000, 0, 0, 0, 0, 0]),
            libc::SECCOMP_RET_ALLOW
        );
        assert_eq!(
            call(272, [0x1002_0000, 0, 0, 0, 0, 0]),
            libc::SECCOMP_RET_USER_NOTIF
        );
        assert_eq!(call(435, [0; 6]), libc::SECCOMP_RET_ERRNO | 38);
        assert_eq!(call(0, [0; 6]), libc::SECCOMP_RET_ALLOW);
        assert_eq!(
            run(&prog, 0x4000_0003, 41, [2, 1, 0, 0, 0, 0]),
            libc::SECCOMP_RET_KILL_PROCESS
        );
        if cfg!(target_arch = "x86_64") {
            assert_eq!(call(0x4000_0029, [0; 6]), libc::SECCOMP_RET_KILL_PROCESS);
        }
    }
}
