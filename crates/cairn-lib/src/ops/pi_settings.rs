//! Pi's own settings for the pi profile's two tools: the `pi-session-snapshot` namespace of
//! Pi's `settings.json`, with a project's `.pi/settings.json` over it, read as the snapshot
//! extension reads them. They give the defaults that [`super::agent`] applies when the store's
//! config leaves a transcript capability unset.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::permissions::Capability;
use super::transcript::AgentPlaces;
use crate::store::address::EnvLookup;

/// The namespace of Pi's settings files that holds the snapshot extension's settings.
pub const PI_SETTINGS_NAMESPACE: &str = "pi-session-snapshot";

/// What Pi's settings files say about the pi profile's two tools.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PiToolDefaults {
    /// `agentSaveToolAllowed`: the default of [`Capability::TranscriptSave`].
    pub save: bool,
    /// `agentRestoreToolAllowed`: the default of [`Capability::TranscriptRestore`].
    pub restore: bool,
    /// One sentence per file or value that could not be used (each of those reads as false).
    pub warnings: Vec<String>,
}

impl PiToolDefaults {
    /// The default for `capability`, for [`check_agent_permission_with_default`]; `None` for
    /// capabilities Pi's settings do not cover.
    pub fn default_for(&self, capability: Capability) -> Option<bool> {
        match capability {
            Capability::TranscriptSave => Some(self.save),
            Capability::TranscriptRestore => Some(self.restore),
            _ => None,
        }
    }
}

/// Reads the pi-session-snapshot settings as the extension does: `global` (Pi's
/// `settings.json` in its agent directory), then `project` (a project's `.pi/settings.json`)
/// field by field over it. Both default to false.
///
/// An untrusted project's file may still turn a tool off (that only narrows what agents may
/// do) but cannot turn one on. A missing file is no setting; a file that is not JSON, a
/// namespace that is not an object, or a value that is not a boolean reads as false (fails
/// closed) and adds a warning naming the file and the key.
pub fn pi_tool_defaults(global: &Path, project: &Path, project_trusted: bool) -> PiToolDefaults {
    let mut out = PiToolDefaults::default();
    let mut save = None;
    let mut restore = None;
    for (file, trusted) in [(global, true), (project, project_trusted)] {
        let Some(section) = pi_section(file, &mut out.warnings) else { continue };
        for (key, slot) in [("agentSaveToolAllowed", &mut save), ("agentRestoreToolAllowed", &mut restore)] {
            match section.get(key) {
                None => {}
                Some(serde_json::Value::Bool(value)) => {
                    if *value && !trusted {
                        out.warnings.push(format!(
                            "{} sets {PI_SETTINGS_NAMESPACE}.{key} to true, but the project is not trusted, so it is ignored",
                            file.display()
                        ));
                    } else {
                        *slot = Some(*value);
                    }
                }
                Some(other) => {
                    out.warnings.push(format!(
                        "{} sets {PI_SETTINGS_NAMESPACE}.{key} to {other}, which is not true or false, so the tool stays denied",
                        file.display()
                    ));
                    *slot = Some(false);
                }
            }
        }
    }
    out.save = save.unwrap_or(false);
    out.restore = restore.unwrap_or(false);
    out
}

/// The `pi-session-snapshot` object of a Pi settings file, if the file has one.
fn pi_section(file: &Path, warnings: &mut Vec<String>) -> Option<serde_json::Map<String, serde_json::Value>> {
    let text = match std::fs::read_to_string(file) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => {
            warnings.push(format!(
                "cannot read {} ({e}), so its settings are ignored and both tools stay denied by it",
                file.display()
            ));
            return Some(deny_both());
        }
    };
    let root: serde_json::Value = match serde_json::from_str(&text) {
        Ok(root) => root,
        Err(e) => {
            warnings.push(format!("{} is not valid JSON ({e}), so both tools stay denied", file.display()));
            return Some(deny_both());
        }
    };
    match root.get(PI_SETTINGS_NAMESPACE) {
        None => None,
        Some(serde_json::Value::Object(section)) => Some(section.clone()),
        Some(other) => {
            warnings.push(format!(
                "{} sets {PI_SETTINGS_NAMESPACE} to {other}, which is not an object, so both tools stay denied",
                file.display()
            ));
            Some(deny_both())
        }
    }
}

fn deny_both() -> serde_json::Map<String, serde_json::Value> {
    let mut section = serde_json::Map::new();
    section.insert("agentSaveToolAllowed".to_owned(), serde_json::Value::Bool(false));
    section.insert("agentRestoreToolAllowed".to_owned(), serde_json::Value::Bool(false));
    section
}

/// The variable that tells cairn a project's `.pi/settings.json` is trusted: Pi keeps its trust
/// answer where cairn cannot see it.
// front words: the variable a front reads to trust a project
pub const PI_TRUST_VARIABLE: &str = "CAIRN_PI_TRUST_PROJECT";

/// Where the pi profile reads Pi's settings: the global file in Pi's agent directory, the
/// working directory's project file, and whether that project may turn a tool on. Every front
/// finds them here, so `cairn agent status` reads what a pi-profile server reads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct PiSettingsFiles {
    /// `<Pi agent dir>/settings.json`.
    pub global: PathBuf,
    /// `<working directory>/.pi/settings.json`.
    pub project: PathBuf,
    /// True when [`PI_TRUST_VARIABLE`] is `1`, `true` or `yes`.
    pub project_trusted: bool,
}

impl PiSettingsFiles {
    /// The files for `places` (Pi's agent directory and the working directory), trusted as
    /// `env` says.
    pub fn new(places: &AgentPlaces, env: &EnvLookup) -> Self {
        let trusted = env(PI_TRUST_VARIABLE)
            .is_some_and(|v| matches!(v.to_string_lossy().trim(), "1" | "true" | "yes"));
        Self {
            global: places.pi_agent_dir().join("settings.json"),
            project: PathBuf::from(&places.cwd).join(".pi").join("settings.json"),
            project_trusted: trusted,
        }
    }

    /// What the files say now (see [`pi_tool_defaults`]).
    pub fn read(&self) -> PiToolDefaults {
        pi_tool_defaults(&self.global, &self.project, self.project_trusted)
    }

    /// The files of these that exist.
    pub fn existing(&self) -> Vec<PathBuf> {
        [&self.global, &self.project].into_iter().filter(|f| f.exists()).cloned().collect()
    }
}
