//! What a run may change, and which configuration changes it was allowed: the policy side of
//! the check that runs after every `work_vcs` run ([`butler_worker::git::Watch`]).

use butler_worker::git::{ConfigChange, Watch};

use super::allow::{self, Kind};
use super::decide::{url_ok, writable_key};

/// The command path of a canonical argument list (globals skipped).
fn path_of(args: &[String]) -> Vec<&str> {
    let mut words = args
        .iter()
        .map(String::as_str)
        .skip_while(|a| a.starts_with('-'));
    let Some(sub) = words.next() else {
        return Vec::new();
    };
    if allow::NESTED.iter().any(|(s, _)| *s == sub)
        && let Some(next) = words.find(|w| !w.starts_with('-'))
        && let Some(nested) = allow::canonical_nested(sub, next)
    {
        return vec![sub, nested];
    }
    vec![sub]
}

/// What a run of `args` (canonical) may change.
pub fn watch(args: &[String]) -> Watch {
    let path = path_of(args);
    let writes = allow::entry(&path).is_some_and(|e| e.kind == Kind::Writes)
        || allow::entry(&path).is_none();
    if !writes {
        return Watch::default();
    }
    let files = matches!(
        path.as_slice(),
        ["checkout"]
            | ["switch"]
            | ["restore"]
            | ["reset"]
            | ["mv"]
            | ["rm"]
            | ["clean"]
            | ["merge"]
            | ["rebase"]
            | ["pull"]
            | ["cherry-pick"]
            | ["revert"]
            | ["am"]
            | ["stash", _]
            | ["bisect", _]
    );
    Watch {
        config: true,
        refs: true,
        // pop and branch drop an entry once its content is back in the tree.
        stashes: !matches!(path.as_slice(), ["stash", "pop" | "branch"]),
        files,
    }
}

/// The keys of `changes` a `work_vcs` run may not have made: everything but the keys
/// `config` may write, a remote's address and fetch rules as `remote` writes them (addresses
/// that run no program, fetch rules that write only remote-tracking refs), and settings of a
/// remote or branch that are removed or renamed with it.
pub fn disallowed_config(changes: &[ConfigChange]) -> Vec<String> {
    changes
        .iter()
        .filter(|c| !allowed(c, changes))
        .map(|c| c.key.clone())
        .collect()
}

/// `section.subsection.name` → (section, subsection, name), section and name lower-case.
fn split(key: &str) -> (String, Option<&str>, String) {
    let (section, rest) = key.split_once('.').unwrap_or((key, ""));
    match rest.rsplit_once('.') {
        Some((sub, name)) => (
            section.to_ascii_lowercase(),
            Some(sub),
            name.to_ascii_lowercase(),
        ),
        None => (
            section.to_ascii_lowercase(),
            None,
            rest.to_ascii_lowercase(),
        ),
    }
}

fn allowed(change: &ConfigChange, all: &[ConfigChange]) -> bool {
    let values_ok =
        |check: &dyn Fn(&str) -> bool| change.after.iter().all(|v| v.as_deref().is_some_and(check));
    if values_ok(&|v| writable_key(&change.key, Some(v)).is_ok()) && !change.after.is_empty() {
        return true;
    }
    if change.after.is_empty() && writable_key(&change.key, None).is_ok() {
        return true;
    }
    let (section, sub, name) = split(&change.key);
    let Some(sub) = sub else { return false };
    if !matches!(section.as_str(), "remote" | "branch") {
        return false;
    }
    // Removed with its remote or branch.
    if change.after.is_empty() {
        return true;
    }
    // Renamed with its remote or branch: the same values left another subsection.
    let moved = all.iter().any(|other| {
        let (s, o_sub, n) = split(&other.key);
        s == section
            && n == name
            && o_sub.is_some_and(|o| o != sub)
            && other.after.is_empty()
            && other.before == change.after
    });
    if moved {
        return true;
    }
    if section != "remote" {
        return false;
    }
    match name.as_str() {
        "url" | "pushurl" => values_ok(&|v| url_ok(v).is_ok()),
        "fetch" => values_ok(&|v| {
            let spec = v.trim_start_matches('+');
            spec.split_once(':')
                .is_some_and(|(_, dst)| dst.starts_with(&format!("refs/remotes/{sub}/")))
        }),
        "tagopt" => values_ok(&|v| matches!(v, "--tags" | "--no-tags")),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(key: &str, before: &[&str], after: &[&str]) -> ConfigChange {
        ConfigChange {
            key: key.to_owned(),
            before: before.iter().map(|v| Some((*v).to_owned())).collect(),
            after: after.iter().map(|v| Some((*v).to_owned())).collect(),
        }
    }

    #[test]
    fn programs_hooks_and_repository_format_are_put_back() {
        for c in [
            change("core.fsmonitor", &[], &["touch marker"]),
            change("core.sshcommand", &[], &["x"]),
            change("core.hookspath", &[], &["hooks"]),
            change("core.bare", &["false"], &["true"]),
            change("core.repositoryformatversion", &["0"], &["1"]),
            change("alias.x", &[], &["!sh"]),
            change("protocol.ext.allow", &[], &["always"]),
            change("remote.origin.url", &["https://h/r"], &["ext::sh -c x"]),
            change("remote.origin.uploadpack", &[], &["x"]),
            change("remote.origin.fetch", &[], &["+refs/heads/*:refs/heads/*"]),
            change("branch.main.pushremote", &[], &["x"]),
            change("pull.rebase", &[], &["interactive"]),
        ] {
            assert_eq!(
                disallowed_config(std::slice::from_ref(&c)),
                vec![c.key.clone()]
            );
        }
    }

    #[test]
    fn what_work_vcs_may_write_stays() {
        let changes = [
            change("user.name", &["a"], &["b"]),
            change("branch.topic.remote", &[], &["origin"]),
            change("remote.up.url", &[], &["https://h/r.git"]),
            change("remote.up.fetch", &[], &["+refs/heads/*:refs/remotes/up/*"]),
            // `remote rename origin o2` moves every key, whatever it is.
            change("remote.origin.proxy", &["http://p"], &[]),
            change("remote.o2.proxy", &[], &["http://p"]),
            change("branch.old.description", &["d"], &[]),
        ];
        assert!(disallowed_config(&changes).is_empty());
    }
}
