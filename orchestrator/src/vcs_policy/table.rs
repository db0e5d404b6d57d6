//! The shape of one option as git's parse-options knows it.
//!
//! The tables of [`super::git_options`] are generated from the installed git's own usage
//! output (see [`super::derive`]); the few parsers that are not parse-options (revision and
//! diff options, `rev-parse`, `bisect`) get hand-written tables of the same shape in
//! [`super::allow`].

/// How an option takes its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arg {
    /// A flag: no value.
    None,
    /// A value, attached (`--opt=v`, `-ov`) or in the next argument (`--opt v`, `-o v`).
    Required,
    /// A value only when attached (`--opt=v`, `-ov`); `--opt v` leaves `v` a positional.
    Optional,
    /// Like `Required`, but accepted without a value as the last argument: git's
    /// `PARSE_OPT_LASTARG_DEFAULT` (`branch --contains` means `--contains HEAD`). Derived from
    /// git's completion not marking the value; for the few low-level callbacks it also marks
    /// (`merge -F`) git itself then refuses the missing value.
    RequiredUnlessLast,
}

/// One option of one git (sub)command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawOption {
    /// How Butler names it: the long name, or `-x` when it has only a short one (`-NUM` for a
    /// number option such as `grep -3`).
    pub id: &'static str,
    pub short: Option<char>,
    pub long: Option<&'static str>,
    pub arg: Arg,
    /// `--no-<long>` is accepted (for a long name that starts with `no-`: `--<rest>`).
    pub negatable: bool,
    /// `Some(target)` for git's option aliases (`--mailmap` is `--use-mailmap`).
    pub alias_of: Option<&'static str>,
    /// A digits-only short option (`-5`).
    pub number: bool,
    /// The option is written without a dash (`grep`'s `(` and `)`).
    pub nodash: bool,
    /// git expands unambiguous prefixes of this long option. False for the hand-written
    /// revision and diff options, which git matches exactly.
    pub abbrev: bool,
}

impl RawOption {
    /// A parse-options option (prefixes expand).
    pub const fn po(
        id: &'static str,
        short: Option<char>,
        long: Option<&'static str>,
        arg: Arg,
        negatable: bool,
    ) -> Self {
        RawOption {
            id,
            short,
            long,
            arg,
            negatable,
            alias_of: None,
            number: false,
            nodash: false,
            abbrev: true,
        }
    }

    /// An alias: behaves exactly like `target` (same id, same value rules).
    pub const fn alias(long: &'static str, target: &'static str) -> Self {
        RawOption {
            id: target,
            short: None,
            long: Some(long),
            arg: Arg::None,
            negatable: true,
            alias_of: Some(target),
            number: false,
            nodash: false,
            abbrev: true,
        }
    }

    /// `-NUM`.
    pub const fn number() -> Self {
        RawOption {
            id: "-NUM",
            short: None,
            long: None,
            arg: Arg::Required,
            negatable: false,
            alias_of: None,
            number: true,
            nodash: false,
            abbrev: true,
        }
    }

    /// A dashless one-character option (`(`).
    pub const fn nodash(id: &'static str, c: char) -> Self {
        RawOption {
            id,
            short: Some(c),
            long: None,
            arg: Arg::None,
            negatable: false,
            alias_of: None,
            number: false,
            nodash: true,
            abbrev: true,
        }
    }

    /// A hand-written long option without a short name, matched exactly.
    pub const fn long(name: &'static str, arg: Arg) -> Self {
        Self::exact(name, None, Some(name), arg)
    }

    /// A hand-written option matched exactly (revision and diff options, `rev-parse`).
    pub const fn exact(
        id: &'static str,
        short: Option<char>,
        long: Option<&'static str>,
        arg: Arg,
    ) -> Self {
        RawOption {
            id,
            short,
            long,
            arg,
            negatable: false,
            alias_of: None,
            number: false,
            nodash: false,
            abbrev: false,
        }
    }
}

/// The options git knows for one command path (`["stash", "push"]`).
#[derive(Debug, Clone, Copy)]
pub struct RawCommand {
    /// The words after `git` that name it.
    pub path: &'static [&'static str],
    /// Every option of it, hidden ones included, in git's order.
    pub options: &'static [RawOption],
}
