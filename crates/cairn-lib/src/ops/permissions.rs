//! Permissions: what MCP agents may do to the user's world (`cairn agent …`).
//!
//! Agents may read and save by default; restoring (which overwrites live files) and removing
//! (which destroys snapshots and sessions) wait for the user's say-so, as do the pi profile's
//! transcript capabilities. The answer lives in the
//! store's config (`agent.save`, `agent.restore`, `agent.remove`) so it outlives any one server,
//! and a server may add capabilities for its own lifetime (`cairn mcp --allow`). The check
//! reloads the config on every call, so `cairn agent allow` takes effect on a running server.
//!
//! An invalid `agent.*` value (say `agent.restore = "yes"` written by hand) fails closed: the
//! store still opens, every capability reads as refused, and each front end shows a warning
//! naming the key, the value and the command that rewrites it.

use std::path::Path;

use serde::Serialize;

use crate::Repository;
use crate::config::{Config, InvalidSetting};
use crate::error::{Error, ErrorKind, Hint, NeutralWords, Operation, Result};
pub use crate::store::model::capability::Capability;

pub use super::pi_settings::{
    PI_SETTINGS_NAMESPACE, PI_TRUST_VARIABLE, PiSettingsFiles, PiToolDefaults, pi_tool_defaults,
};

/// The code attached to a refusal caused by an unreadable or invalid config file, so a front
/// end can also warn the user (the refusal itself is what fails closed).
pub const INVALID_CONFIG_CODE: &str = "AGENT_CONFIG_INVALID";

/// The code attached to a refusal because the user has not allowed (or has denied) the
/// capability; a profile whose original tool prefixes its errors with a code shows it so.
pub const NOT_ALLOWED_CODE: &str = "AGENT_NOT_ALLOWED";

/// Parses capability words (`save`, `restore`, `remove`, or `all`), each possibly a
/// comma-separated list as `--allow restore,remove` takes them. Duplicates are dropped.
pub fn parse_capabilities<S: AsRef<str>>(words: &[S]) -> Result<Vec<Capability>> {
    let mut out: Vec<Capability> = Vec::new();
    for word in words.iter().flat_map(|w| w.as_ref().split(',')) {
        let word = word.trim();
        let found: Vec<Capability> = match word {
            "all" => Capability::ALL.to_vec(),
            "save" => vec![Capability::Save],
            "restore" => vec![Capability::Restore],
            "remove" => vec![Capability::Remove],
            "transcript-save" => vec![Capability::TranscriptSave],
            "transcript-restore" => vec![Capability::TranscriptRestore],
            other => {
                return Err(Error::invalid(format!(
                    "unknown agent capability {other:?}: use save, restore, remove or all, or transcript-save / transcript-restore for the pi profile"
                )));
            }
        };
        for c in found {
            if !out.contains(&c) {
                out.push(c);
            }
        }
    }
    if out.is_empty() {
        return Err(Error::invalid("name at least one agent capability: save, restore, remove or all"));
    }
    Ok(out)
}

/// One capability's effective answer.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct CapabilityStatus {
    /// The capability.
    pub capability: Capability,
    /// True when agents may do it.
    pub allowed: bool,
    /// True when the user set it in the config; false when the default applies.
    pub set: bool,
    /// The config key holding it.
    pub key: String,
    /// True when the answer is the default the pi profile takes from Pi's own settings files
    /// (see [`AgentStatus::with_pi_settings`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub from_pi_settings: bool,
}

/// What Pi's settings files say about the pi profile's two tools, as `cairn agent status`
/// shows it when one of the files exists.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct PiSettingsEffect {
    /// The files read, and whether the project's may turn a tool on.
    pub files: PiSettingsFiles,
    /// Of those, the ones that exist.
    pub existing: Vec<std::path::PathBuf>,
    /// `agentSaveToolAllowed` after both files: the default of `transcript-save`.
    pub save_allowed: bool,
    /// `agentRestoreToolAllowed` after both files: the default of `transcript-restore`.
    pub restore_allowed: bool,
    /// One sentence per file or value that could not be used (each reads as false).
    pub warnings: Vec<String>,
}

/// What agents may do, as `cairn agent status` shows it.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct AgentStatus {
    /// Every capability with its effective answer.
    pub capabilities: Vec<CapabilityStatus>,
    /// One sentence per invalid `agent.*` value, each saying what fixes it; while any is
    /// present every capability is refused. Empty when the settings are valid. These are the
    /// [`AgentStatus::problems`] in neutral words until a front renders them with
    /// [`AgentStatus::in_words`].
    pub warnings: Vec<String>,
    /// The invalid values as errors, with the hint that fixes each.
    #[serde(skip)]
    pub problems: Vec<Error>,
    /// What Pi's settings files say, when one of them exists (see
    /// [`AgentStatus::with_pi_settings`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pi_settings: Option<PiSettingsEffect>,
}

impl AgentStatus {
    /// The status with its warnings said in a front's words.
    pub fn in_words(mut self, words: &dyn crate::error::Words) -> Self {
        self.warnings = self.problems.iter().map(|p| p.render(words)).collect();
        self
    }

    /// The status as the pi profile sees it: a transcript capability the store's settings
    /// leave unset takes its answer from Pi's settings `files`, as a pi-profile server does
    /// ([`check_agent_permission_with_default`]). Unchanged when neither file exists (both then
    /// read as false, the built-in default) or while an `agent.*` value is invalid (everything
    /// is refused then).
    pub fn with_pi_settings(mut self, files: &PiSettingsFiles) -> Self {
        let existing = files.existing();
        if existing.is_empty() {
            return self;
        }
        let defaults = files.read();
        if self.problems.is_empty() {
            for status in self.capabilities.iter_mut().filter(|c| !c.set) {
                if let Some(default) = defaults.default_for(status.capability) {
                    status.allowed = default;
                    status.from_pi_settings = true;
                }
            }
        }
        self.pi_settings = Some(PiSettingsEffect {
            files: files.clone(),
            existing,
            save_allowed: defaults.save,
            restore_allowed: defaults.restore,
            warnings: defaults.warnings,
        });
        self
    }
}

fn status_of(config: &Config, root: &Path) -> Result<AgentStatus> {
    let settings = config.all();
    let invalid = config.invalid_agent_settings();
    let capabilities = Capability::ALL
        .iter()
        .map(|&c| {
            let set = settings.iter().any(|s| s.key == c.key() && s.set)
                || invalid.iter().any(|bad| bad.key == c.key());
            Ok(CapabilityStatus {
                capability: c,
                allowed: invalid.is_empty() && c.allowed_in(config),
                set,
                key: c.key().to_owned(),
                from_pi_settings: false,
            })
        })
        .collect::<Result<_>>()?;
    let problems = invalid_settings(config, root);
    let warnings = problems.iter().map(Error::to_string).collect();
    Ok(AgentStatus { capabilities, warnings, problems, pi_settings: None })
}

/// The problem for each invalid `agent.*` value in `config`.
fn invalid_settings(config: &Config, root: &Path) -> Vec<Error> {
    config.invalid_agent_settings().iter().map(|bad| invalid_setting(root, bad)).collect()
}

/// One invalid value: what is wrong, what it costs, and the operation that rewrites it.
fn invalid_setting(root: &Path, bad: &InvalidSetting) -> Error {
    let word = Capability::ALL.iter().find(|c| c.key() == bad.key).map_or("all", |c| c.as_str());
    Error::invalid(format!(
        "{} = {:?} in {} is invalid (want {}), so agents are refused everything until it is fixed",
        bad.key,
        bad.value,
        root.join("config.toml").display(),
        bad.accepted,
    ))
    .hint(Hint::Run(Operation::ResetAgentSetting { word: word.to_owned(), store: root.to_path_buf() }))
}

impl Repository {
    /// What agents may do, read fresh from the config file.
    pub fn agent_status(&self) -> Result<AgentStatus> {
        status_of(&self.reload_config()?, self.root())
    }

    /// One problem per invalid `agent.*` value in the config file (empty when all are valid),
    /// for a front end to show as a warning when it starts.
    pub fn agent_warnings(&self) -> Result<Vec<Error>> {
        Ok(invalid_settings(&self.reload_config()?, self.root()))
    }

    /// Lets agents do `capabilities` from now on (every server, running or not).
    pub fn agent_allow(&mut self, capabilities: &[Capability]) -> Result<AgentStatus> {
        self.agent_update(capabilities, |config, key| config.set(key, "true"))
    }

    /// Refuses `capabilities` to agents from now on.
    pub fn agent_deny(&mut self, capabilities: &[Capability]) -> Result<AgentStatus> {
        self.agent_update(capabilities, |config, key| config.set(key, "false"))
    }

    /// Puts `capabilities` back to their defaults (save allowed; restore and remove refused).
    pub fn agent_reset(&mut self, capabilities: &[Capability]) -> Result<AgentStatus> {
        self.agent_update(capabilities, |config, key| config.unset(key))
    }

    fn agent_update(
        &mut self,
        capabilities: &[Capability],
        change: impl Fn(&mut Config, &str) -> Result<()>,
    ) -> Result<AgentStatus> {
        // Start from the file, not the copy loaded at open: another command may have changed it.
        let mut config = self.reload_config()?;
        for c in capabilities {
            change(&mut config, c.key())?;
        }
        let status = status_of(&config, self.root())?;
        self.save_config(config)?;
        Ok(status)
    }
}

/// Refuses `capability` unless the user allowed it in the store's config, or the server was
/// started with it in `server_allow`. The config is read again on each call. An unreadable
/// config, or an invalid `agent.*` value in it, refuses everything the server was not started
/// with (fails closed) with [`INVALID_CONFIG_CODE`] attached.
pub fn check_agent_permission(
    store: &Repository,
    capability: Capability,
    server_allow: &[Capability],
) -> Result<()> {
    check_agent_permission_with_default(store, capability, server_allow, &[], None)
}

/// [`check_agent_permission`] where `default`, when given, replaces the built-in default of a
/// capability the store's config leaves unset: the pi profile takes it from Pi's own settings
/// ([`pi_tool_defaults`]), and a compatibility profile whose original tool lets agents do
/// something without asking allows it. An answer set in the store's config still wins, and
/// `server_deny` (`cairn mcp --deny`) wins over everything: a deny only narrows what agents
/// may do, so the narrowest answer is the safe one.
pub fn check_agent_permission_with_default(
    store: &Repository,
    capability: Capability,
    server_allow: &[Capability],
    server_deny: &[Capability],
    default: Option<bool>,
) -> Result<()> {
    if server_deny.contains(&capability) {
        return Err(Error::new(
            ErrorKind::PermissionDenied,
            format!(
                "{} is denied to agents on this server (the user started it denying {capability}); ask the user to restart it without denying that",
                capability.doing()
            ),
        )
        .with_code(NOT_ALLOWED_CODE));
    }
    if server_allow.contains(&capability) {
        return Ok(());
    }
    let config = store.reload_config().map_err(|e| {
        Error::new(
            ErrorKind::PermissionDenied,
            format!(
                "{} is refused because the store's settings cannot be read ({e}); ask the user to fix them, then retry",
                capability.doing(),
            ),
        )
        .with_code(INVALID_CONFIG_CODE)
    })?;
    if let Some(bad) = config.invalid_agent_settings().first() {
        let problem = invalid_setting(store.root(), bad);
        return Err(Error::new(
            ErrorKind::PermissionDenied,
            format!("{} is refused because {}", capability.doing(), problem.render_message(&NeutralWords)),
        )
        .with_hints(problem.hints())
        .purpose(", then retry")
        .with_code(INVALID_CONFIG_CODE));
    }
    let set = config.all().iter().any(|s| s.key == capability.key() && s.set);
    let allowed = match (set, default) {
        (false, Some(default)) => default,
        _ => capability.allowed_in(&config),
    };
    if allowed {
        return Ok(());
    }
    Err(Error::new(ErrorKind::PermissionDenied, format!("{} is not allowed for agents", capability.doing()))
        .hint(Hint::Allow { capability, store: store.root().to_path_buf() })
        .purpose(", then retry")
        .with_code(NOT_ALLOWED_CODE))
}

/// Quotes `text` for a POSIX shell when it holds anything but plain path characters, so a
/// front can print a command the user pastes as it is.
pub fn shell_word(text: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "/._-+:@%=,".contains(c);
    if !text.is_empty() && text.chars().all(plain) {
        text.to_owned()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_words_lists_and_all() {
        assert_eq!(
            parse_capabilities(&["restore,remove"]).unwrap(),
            vec![Capability::Restore, Capability::Remove]
        );
        assert_eq!(parse_capabilities(&["all"]).unwrap(), Capability::ALL.to_vec());
        let err = parse_capabilities(&["delete"]).unwrap_err();
        assert!(err.to_string().contains("use save, restore, remove or all"), "{err}");
    }

    #[test]
    fn defaults_refuse_restore_and_name_the_command_then_allow_after_allow() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Repository::open(&dir.path().join("my store")).unwrap();
        check_agent_permission(&store, Capability::Save, &[]).unwrap();
        let err = check_agent_permission(&store, Capability::Restore, &[]).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::PermissionDenied);
        assert_eq!(
            err.hints(),
            [Hint::Allow { capability: Capability::Restore, store: store.root().to_path_buf() }]
        );
        check_agent_permission(&store, Capability::Restore, &[Capability::Restore]).unwrap();
        store.agent_allow(&[Capability::Restore]).unwrap();
        check_agent_permission(&store, Capability::Restore, &[]).unwrap();
        store.agent_reset(&Capability::ALL).unwrap();
        assert!(check_agent_permission(&store, Capability::Restore, &[]).is_err());
    }

    #[test]
    fn a_profile_default_yields_to_the_users_answer_and_a_server_deny_wins() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Repository::open(dir.path()).unwrap();
        let restore = Capability::Restore;
        check_agent_permission_with_default(&store, restore, &[], &[], Some(true)).unwrap();
        let denied = check_agent_permission_with_default(&store, restore, &[restore], &[restore], Some(true));
        assert!(denied.unwrap_err().message().contains("denying restore"));
        store.agent_deny(&[restore]).unwrap();
        let err = check_agent_permission_with_default(&store, restore, &[], &[], Some(true)).unwrap_err();
        assert_eq!(err.code(), Some(NOT_ALLOWED_CODE));
    }

    #[test]
    fn an_invalid_config_refuses_even_saving() {
        let dir = tempfile::tempdir().unwrap();
        let store = Repository::open(dir.path()).unwrap();
        std::fs::write(store.root().join("config.toml"), "[agent]\nsave = \"maybe\"\n").unwrap();
        let err = check_agent_permission(&store, Capability::Save, &[]).unwrap_err();
        assert_eq!(err.code(), Some(INVALID_CONFIG_CODE));
        assert!(err.message().contains("agent.save = \"maybe\""), "{err}");
        assert!(err.message().contains("reset the agent setting save"), "{err}");
    }

    #[test]
    fn an_invalid_agent_value_keeps_the_store_open_refuses_all_and_is_repaired_by_reset() {
        let dir = tempfile::tempdir().unwrap();
        let first = Repository::open(&dir.path().join("store")).unwrap();
        std::fs::write(first.root().join("config.toml"), "[agent]\nrestore = \"yes\"\n").unwrap();
        let mut store = Repository::open(first.root()).unwrap();
        let status = store.agent_status().unwrap();
        assert!(status.capabilities.iter().all(|c| !c.allowed), "{status:?}");
        assert_eq!(status.warnings.len(), 1);
        assert!(status.warnings[0].starts_with("agent.restore = \"yes\""), "{}", status.warnings[0]);
        assert!(check_agent_permission(&store, Capability::Restore, &[Capability::Restore]).is_ok());
        store.agent_reset(&[Capability::Restore]).unwrap();
        let status = store.agent_status().unwrap();
        assert!(status.warnings.is_empty());
        check_agent_permission(&store, Capability::Save, &[]).unwrap();
    }
}
