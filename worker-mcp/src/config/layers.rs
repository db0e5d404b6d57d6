//! Which file decides each setting: the user's own configuration (`$XDG_CONFIG_HOME/butler/
//! config.toml`) and the project's `.butler/config.toml`, trusted by the user (`butler trust`)
//! or not. A pure function over the two parsed files, so the whole table is tested (and
//! snapshotted) without a disk.
//!
//! | setting | untrusted project file | trusted project file |
//! |---|---|---|
//! | `[agent] default`, `provider`, `model`, `stagnation_secs`, `loop_repeats`, `loop_quiet_secs`, `[delegation] promote_after` | the project's, else the user's | the same |
//! | `[delegation] destructive_commands`, `[agent] deny_read` | the user's and the project's together | the same |
//! | `[agent] sandbox` | the stricter of the two (`required` > `auto` > `off`) | the project's, else the user's |
//! | `[agent] network` | the narrower: the proxy (the default) over a port list over `open`; the ports both allow | the project's, else the user's |
//! | `[agent] network_allow` | the narrower: the project's entries the user's admit | the user's and the project's together |
//! | `[delegation] network` | the narrower, as `[agent] network` (default `open`) | the project's, else the user's |
//! | `[agent] programs`, `[mcp_servers.*]` | the user's only | the user's, the project's entries winning by name |
//! | `[agent] env_allow`, `sandbox_writable`, `[delegation] env_allow` | the user's only | the user's and the project's together |
//! | `[agent] worktrees_dir` | the user's only | the project's, else the user's |
//!
//! Butler's environment variables (`BUTLER_SANDBOX`, `BUTLER_<AGENT>_PROGRAM`, …) are the
//! user's too and win over both files (applied by the orchestrator).

use std::collections::BTreeMap;

use super::McpServerConfig;
use super::{AgentFileConfig, DelegationConfig, DelegationFileConfig, FileDelegation};
use crate::egress::HostPattern;
use crate::sandbox::{NetworkChoice, NetworkSetting, SandboxMode};

/// The sections of one file that the two layers share.
#[derive(Debug, Clone, Default)]
pub(super) struct Sections {
    pub agent: AgentFileConfig,
    pub delegation: FileDelegation,
    pub mcp_servers: BTreeMap<String, McpServerConfig>,
}

/// The settings in force, and the project's settings that were not taken (named as written:
/// `[agent] sandbox`, `[mcp_servers.kb]`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Merged {
    pub agent: AgentFileConfig,
    pub delegation: DelegationFileConfig,
    pub ignored: Vec<String>,
}

/// Merges the user's sections with the project's (see the module's table).
pub(super) fn merge(user: Sections, project: Sections, trusted: bool) -> Merged {
    let mut ignored = Vec::new();
    let (u, p) = (user.agent, project.agent);
    let mut agent = AgentFileConfig {
        default: p.default.or(u.default),
        provider: p.provider.or(u.provider),
        model: p.model.or(u.model),
        stagnation_secs: p.stagnation_secs.or(u.stagnation_secs),
        loop_repeats: p.loop_repeats.or(u.loop_repeats),
        loop_quiet_secs: p.loop_quiet_secs.or(u.loop_quiet_secs),
        programs: u.programs,
        env_allow: u.env_allow,
        sandbox: u.sandbox,
        network: u.network,
        network_allow: u.network_allow,
        sandbox_writable: u.sandbox_writable,
        worktrees_dir: u.worktrees_dir,
        deny_read: u.deny_read,
    };
    // More denials only narrow what agents reach: taken from any file, trusted or not.
    union(&mut agent.deny_read, p.deny_read);
    let mut delegation = DelegationConfig {
        promote_after: (project.delegation.promote_after)
            .or(user.delegation.promote_after)
            .unwrap_or(DelegationConfig::DEFAULT_PROMOTE_AFTER),
        destructive_commands: user.delegation.destructive_commands,
        env_allow: user.delegation.env_allow,
        network: user.delegation.network,
    };
    union(
        &mut delegation.destructive_commands,
        project.delegation.destructive_commands,
    );
    let mut mcp_servers = user.mcp_servers;
    if trusted {
        agent.programs.extend(p.programs);
        union(&mut agent.env_allow, p.env_allow);
        union(&mut agent.sandbox_writable, p.sandbox_writable);
        agent.sandbox = p.sandbox.or(agent.sandbox);
        agent.network = p.network.or(agent.network);
        union(&mut agent.network_allow, p.network_allow);
        agent.worktrees_dir = p.worktrees_dir.or(agent.worktrees_dir);
        union(&mut delegation.env_allow, project.delegation.env_allow);
        delegation.network = project.delegation.network.or(delegation.network);
        mcp_servers.extend(project.mcp_servers);
    } else {
        let mut skip = |name: &str, set: bool| {
            if set {
                ignored.push(name.to_owned());
            }
        };
        skip("[agent] programs", !p.programs.is_empty());
        skip("[agent] env_allow", !p.env_allow.is_empty());
        skip("[agent] sandbox_writable", !p.sandbox_writable.is_empty());
        skip("[agent] worktrees_dir", p.worktrees_dir.is_some());
        skip(
            "[delegation] env_allow",
            !project.delegation.env_allow.is_empty(),
        );
        agent.sandbox = stricter_sandbox(agent.sandbox, p.sandbox, &mut ignored);
        agent.network = narrower_network(
            agent.network,
            p.network,
            NetworkChoice::default(),
            "[agent] network",
            &mut ignored,
        );
        agent.network_allow = narrower_hosts(agent.network_allow, p.network_allow, &mut ignored);
        delegation.network = narrower_network(
            delegation.network,
            project.delegation.network,
            NetworkChoice::Open,
            "[delegation] network",
            &mut ignored,
        );
        for name in project.mcp_servers.keys() {
            ignored.push(format!("[mcp_servers.{name}]"));
        }
    }
    Merged {
        agent,
        delegation: DelegationFileConfig {
            delegation,
            mcp_servers,
        },
        ignored,
    }
}

/// Adds the entries of `more` that `list` lacks, in order.
fn union(list: &mut Vec<String>, more: Vec<String>) {
    for item in more {
        if !list.contains(&item) {
            list.push(item);
        }
    }
}

fn strictness(mode: SandboxMode) -> u8 {
    match mode {
        SandboxMode::Off => 0,
        SandboxMode::Auto => 1,
        SandboxMode::Required => 2,
    }
}

/// An untrusted project's `[agent] sandbox` applies when it is at least as strict as the
/// user's (default `auto`). A value that does not parse is kept, so that it is reported as the
/// configuration error it is.
fn stricter_sandbox(
    user: Option<String>,
    project: Option<String>,
    ignored: &mut Vec<String>,
) -> Option<String> {
    let Some(wanted) = project else {
        return user;
    };
    let Some(wanted_mode) = SandboxMode::parse(&wanted) else {
        return Some(wanted);
    };
    let current = match user.as_deref() {
        None => SandboxMode::default(),
        Some(value) => match SandboxMode::parse(value) {
            Some(mode) => mode,
            None => return user,
        },
    };
    if strictness(wanted_mode) >= strictness(current) {
        Some(wanted)
    } else {
        ignored.push("[agent] sandbox".to_owned());
        user
    }
}

/// An untrusted project's `[agent] network` can only narrow the user's (default: the egress
/// proxy). The proxy admits hosts by name, a port list any host on those ports: neither is
/// narrower than the other, so a project may choose the proxy over `open` or a port list, a
/// port list over `open`, and fewer ports; never `open` or ports over the proxy. A value that
/// does not parse is kept (reported as an error later).
fn narrower_network(
    user: Option<NetworkSetting>,
    project: Option<NetworkSetting>,
    default: NetworkChoice,
    name: &str,
    ignored: &mut Vec<String>,
) -> Option<NetworkSetting> {
    let Some(wanted) = project else {
        return user;
    };
    let Ok(wanted_rule) = NetworkChoice::from_setting(&wanted) else {
        return Some(wanted);
    };
    let current = match &user {
        None => default,
        Some(setting) => match NetworkChoice::from_setting(setting) {
            Ok(rule) => rule,
            Err(_) => return user,
        },
    };
    match (current, wanted_rule) {
        (NetworkChoice::Proxy, NetworkChoice::Proxy)
        | (NetworkChoice::Open, NetworkChoice::Open) => user,
        (NetworkChoice::Open, _) | (NetworkChoice::Ports(_), NetworkChoice::Proxy) => Some(wanted),
        (NetworkChoice::Proxy, _) | (NetworkChoice::Ports(_), NetworkChoice::Open) => {
            ignored.push(name.to_owned());
            user
        }
        (NetworkChoice::Ports(mine), NetworkChoice::Ports(theirs)) => {
            let both: Vec<u16> = theirs
                .iter()
                .copied()
                .filter(|p| mine.contains(p))
                .collect();
            if both.len() < theirs.len() {
                ignored.push(name.to_owned());
            }
            Some(NetworkSetting::Endpoints(
                both.iter().map(u16::to_string).collect(),
            ))
        }
    }
}

/// An untrusted project's `[agent] network_allow` can only narrow the user's: of its entries,
/// those the user's list admits (`registry.npmjs.org` or `*.a.npmjs.org` under the user's
/// `*.npmjs.org`). An entry that does not parse is kept (reported as an error later).
fn narrower_hosts(
    user: Vec<String>,
    project: Vec<String>,
    ignored: &mut Vec<String>,
) -> Vec<String> {
    if project.is_empty() {
        return user;
    }
    let mine: Vec<HostPattern> = user
        .iter()
        .filter_map(|entry| HostPattern::parse(entry).ok())
        .collect();
    let admitted = |wanted: &HostPattern| {
        mine.iter().any(|p| match wanted {
            HostPattern::Exact(name) => p.matches(name),
            HostPattern::Below(domain) => {
                p == wanted || matches!(p, HostPattern::Below(_)) && p.matches(domain)
            }
        })
    };
    let mut kept = Vec::new();
    for entry in project {
        match HostPattern::parse(&entry) {
            Ok(wanted) if !admitted(&wanted) => {
                if !ignored.iter().any(|i| i == "[agent] network_allow") {
                    ignored.push("[agent] network_allow".to_owned());
                }
            }
            _ => kept.push(entry),
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sections(toml_text: &str) -> Sections {
        super::super::parse_sections(toml_text, std::path::Path::new("t.toml"))
            .expect("valid")
            .0
    }

    const USER: &str = r#"
[agent]
provider = "openai"
programs = { goose = "/opt/goose" }
env_allow = ["OPENAI_HOST"]
sandbox = "auto"
network = ["443", "11434"]
network_allow = ["pypi.org", "*.npmjs.org"]
sandbox_writable = ["/srv/cache"]
worktrees_dir = "/srv/wt"
deny_read = ["~/.vault"]
[delegation]
destructive_commands = ["helm uninstall"]
env_allow = ["KUBECONFIG"]
network = ["443", "6443"]
[mcp_servers.kb]
command = "/usr/local/bin/kb-mcp"
"#;

    const PROJECT: &str = r#"
[agent]
default = "claude"
model = "big"
stagnation_secs = 60
programs = { goose = "./script", claude = "./claude" }
env_allow = ["AWS_SECRET_ACCESS_KEY"]
sandbox = "off"
network = "open"
network_allow = ["evil.example", "*.evil.example"]
sandbox_writable = ["/home/me"]
worktrees_dir = "/home/me/project/wt"
deny_read = ["/srv/keys", "~/.vault"]
[delegation]
promote_after = 1
destructive_commands = ["docker rm"]
env_allow = ["GITHUB_TOKEN"]
network = "open"
[mcp_servers.kb]
command = "./evil"
[mcp_servers.shell]
command = "/bin/sh"
"#;

    /// A stricter project file: what it asks for applies even untrusted.
    const STRICTER: &str = r#"
[agent]
sandbox = "required"
network = ["11434", "8080"]
network_allow = ["registry.npmjs.org", "*.a.npmjs.org", "pypi.org", "files.pypi.org"]
[delegation]
network = ["443"]
"#;

    fn case(user: &str, project: &str, trusted: bool) -> serde_json::Value {
        let m = merge(sections(user), sections(project), trusted);
        serde_json::json!({
            "agent": m.agent,
            "delegation": m.delegation.delegation,
            "mcp_servers": m.delegation.mcp_servers,
            "ignored": m.ignored,
        })
    }

    #[test]
    fn the_precedence_of_every_setting() {
        // Sorted whatever order serde_json keeps (the workspace build keeps insertion order).
        insta::with_settings!({sort_maps => true}, {
            insta::assert_json_snapshot!(serde_json::json!({
                "no user file, untrusted project": case("", PROJECT, false),
                "user file, untrusted project": case(USER, PROJECT, false),
                "user file, trusted project": case(USER, PROJECT, true),
                "user file, stricter untrusted project": case(USER, STRICTER, false),
                "no user file, stricter untrusted project": case("", STRICTER, false),
            }));
        });
    }

    #[test]
    fn an_untrusted_project_lowers_nothing() {
        let m = merge(sections(USER), sections(PROJECT), false);
        assert_eq!(m.agent.sandbox.as_deref(), Some("auto"));
        assert_eq!(
            m.agent.programs.get("goose").map(String::as_str),
            Some("/opt/goose")
        );
        assert!(!m.agent.programs.contains_key("claude"));
        assert_eq!(m.agent.env_allow, ["OPENAI_HOST"]);
        assert_eq!(m.agent.sandbox_writable, ["/srv/cache"]);
        assert_eq!(m.agent.worktrees_dir.as_deref(), Some("/srv/wt"));
        assert_eq!(m.delegation.delegation.env_allow, ["KUBECONFIG"]);
        assert_eq!(
            m.delegation
                .mcp_servers
                .get("kb")
                .map(|s| s.command.as_str()),
            Some("/usr/local/bin/kb-mcp")
        );
        assert!(!m.delegation.mcp_servers.contains_key("shell"));
        // Settings that decide nothing of the sort, and stricter ones, apply.
        assert_eq!(m.agent.default.as_deref(), Some("claude"));
        assert_eq!(m.delegation.delegation.promote_after, 1);
        assert_eq!(
            m.agent.deny_read,
            ["~/.vault", "/srv/keys"],
            "denials only add"
        );
        assert_eq!(
            m.delegation.delegation.destructive_commands,
            ["helm uninstall", "docker rm"]
        );
    }

    #[test]
    fn an_untrusted_project_may_only_narrow_the_network_and_raise_the_sandbox() {
        let m = merge(sections(USER), sections(STRICTER), false);
        assert_eq!(m.agent.sandbox.as_deref(), Some("required"));
        assert_eq!(
            m.agent.network,
            Some(NetworkSetting::Endpoints(vec!["11434".into()])),
            "only the port both allow"
        );
        assert_eq!(
            m.agent.network_allow,
            ["registry.npmjs.org", "*.a.npmjs.org", "pypi.org"],
            "only what the user's list admits"
        );
        assert_eq!(m.ignored, ["[agent] network", "[agent] network_allow"]);
        // The default is the proxy: a port list or `open` is not narrower.
        for wider in ["network = \"open\"", "network = [\"443\"]"] {
            let m = merge(
                Sections::default(),
                sections(&format!("[agent]\n{wider}\n")),
                false,
            );
            assert_eq!(m.agent.network, None, "{wider}");
            assert_eq!(m.ignored, ["[agent] network"]);
        }
        let proxy = merge(
            sections(USER),
            sections("[agent]\nnetwork = \"proxy\"\n"),
            false,
        );
        assert_eq!(
            proxy.agent.network,
            Some(NetworkSetting::Word("proxy".into())),
            "the proxy over a port list"
        );
        let off = merge(
            sections("[agent]\nsandbox = \"off\"\n"),
            sections(STRICTER),
            false,
        );
        assert_eq!(off.agent.sandbox.as_deref(), Some("required"));
        let auto = merge(
            sections("[agent]\nsandbox = \"off\"\n"),
            sections("[agent]\nsandbox = \"auto\"\n"),
            false,
        );
        assert_eq!(
            auto.agent.sandbox.as_deref(),
            Some("auto"),
            "auto is stricter than off"
        );
        assert!(auto.ignored.is_empty());
    }

    #[test]
    fn values_that_do_not_parse_are_kept_to_be_reported() {
        let m = merge(
            Sections::default(),
            sections("[agent]\nsandbox = \"maybe\"\nnetwork = \"closed\"\n"),
            false,
        );
        assert_eq!(m.agent.sandbox.as_deref(), Some("maybe"));
        assert_eq!(m.agent.network, Some(NetworkSetting::Word("closed".into())));
    }
}
