//! The store's settings (`<store>/config.toml`), validated on load: an invalid value is refused
//! with its key and the accepted values, never silently ignored.
//!
//! One exception: an invalid `agent.*` value does not stop the store from opening. It is kept
//! aside ([`Config::invalid_agent_settings`]) so the agent permission check can refuse everything
//! and say which key to fix, and so `cairn agent allow|deny|reset` can repair it; refusing to
//! open would lock the user out of the very commands that fix it.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use serde::Serialize;

use crate::error::{Error, Result};

/// What values a key accepts.
#[derive(Debug, Clone, Copy)]
enum Kind {
    Count,
    Bytes,
    Duration,
    Bool,
    Choice(&'static [&'static str]),
}

impl Kind {
    fn accepted(self) -> String {
        match self {
            Kind::Count => format!("a whole number from 0 to {MAX_INTEGER}"),
            Kind::Bytes => format!("a size in bytes, a whole number from 0 to {MAX_INTEGER}"),
            Kind::Duration => "a unit-bearing duration like 90s, 2m, 1h30m or 7d".into(),
            Kind::Bool => "true or false".into(),
            Kind::Choice(values) => format!("one of {}", values.join(", ")),
        }
    }
}

/// The largest number a setting holds: TOML integers are signed 64-bit, so anything larger
/// could not be written back to config.toml as it was given.
const MAX_INTEGER: u64 = i64::MAX as u64;

/// Every setting: key, kind, default (as text, empty for unset) and what it is for.
const KEYS: &[(&str, Kind, &str, &str)] = &[
    (
        "keep.recent",
        Kind::Count,
        "",
        "after each save, the newest this many snapshots of the target are kept; an older one is removed only if every other keep.* rule set would remove it too",
    ),
    (
        "keep.within",
        Kind::Duration,
        "",
        "after each save, snapshots younger than this are kept; an older one is removed only if every other keep.* rule set would remove it too",
    ),
    (
        "keep.max_bytes",
        Kind::Bytes,
        "",
        "after each save, the newest snapshots of the target that together hold at most this many bytes are kept; another is removed only if every other keep.* rule set would remove it too",
    ),
    ("safety.keep_recent", Kind::Count, "10", "safety snapshots kept per target"),
    (
        "safety.keep_within",
        Kind::Duration,
        "7d",
        "safety snapshots older than this are removed after each restore",
    ),
    (
        "hooks.keep_turns",
        Kind::Count,
        "200",
        "after each agent checkpoint, the newest this many turns of the workspace keep their checkpoints; an older one goes only if hooks.keep_within would remove it too",
    ),
    (
        "hooks.keep_within",
        Kind::Duration,
        "30d",
        "after each agent checkpoint, checkpoints younger than this are kept; an older one goes only if hooks.keep_turns would remove it too",
    ),
    (
        "hooks.budget",
        Kind::Duration,
        "5s",
        "how long an agent's turn waits for its checkpoint; a slower one goes on in the background",
    ),
    (
        "hooks.watch",
        Kind::Bool,
        "true",
        "an agent checkpoint of a workspace of hooks.watch_from entries or more starts a change-journal watcher for it",
    ),
    (
        "hooks.watch_from",
        Kind::Count,
        "10000",
        "how many entries (files, directories, links) a workspace holds before an agent checkpoint starts a watcher for it (with hooks.watch)",
    ),
    (
        "mcp.watch",
        Kind::Bool,
        "true",
        "a save through the MCP server of a directory of hooks.watch_from entries or more starts a change-journal watcher for it",
    ),
    ("gc.grace", Kind::Duration, "1h", "gc leaves unreferenced data younger than this alone"),
    (
        "cache.max_bytes",
        Kind::Bytes,
        "1073741824",
        "a remote store keeps at most this many bytes of the packs it fetched on this machine, least recently used out first (1 GiB)",
    ),
    (
        "secrets.include",
        Kind::Bool,
        "false",
        "directory saves capture files that hold credentials (.env, private keys, access tokens) instead of leaving them out",
    ),
    (
        "import.max_bytes",
        Kind::Bytes,
        "8589934592",
        "an archive import is refused once its entries declare more than this many bytes in all (8 GiB)",
    ),
    (
        "import.max_entries",
        Kind::Count,
        "500000",
        "an archive import is refused once it holds more than this many entries",
    ),
    ("agent.save", Kind::Bool, "true", "MCP agents may save snapshots"),
    ("agent.restore", Kind::Bool, "false", "MCP agents may restore snapshots (destructive)"),
    (
        "agent.remove",
        Kind::Bool,
        "false",
        "MCP agents may remove snapshots and delete sessions (destructive)",
    ),
    (
        "agent.transcript-save",
        Kind::Bool,
        "false",
        "agents using the pi profile may save transcript snapshots",
    ),
    (
        "agent.transcript-restore",
        Kind::Bool,
        "false",
        "agents using the pi profile may restore transcript snapshots",
    ),
    (
        "rollback.leftover_volumes",
        Kind::Choice(&["reuse", "replace", "refuse"]),
        "replace",
        "what a compose rollback of a project with no containers does with named volumes that still exist",
    ),
];

/// One setting with its effective value, for `cairn config get`.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Setting {
    /// Dotted key, e.g. `keep.recent`.
    pub key: String,
    /// Effective value as text (empty when unset).
    pub value: String,
    /// True when the value comes from config.toml, false for the default.
    pub set: bool,
    /// What the setting is for.
    pub about: String,
}

/// An `agent.*` value in config.toml that is not valid: agents are refused everything while
/// one exists.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct InvalidSetting {
    /// The key, e.g. `agent.restore`.
    pub key: String,
    /// The value as written in the file.
    pub value: String,
    /// What the key accepts.
    pub accepted: String,
}

/// The store's settings, validated.
#[derive(Debug, Clone, Default)]
pub struct Config {
    values: BTreeMap<String, String>,
    /// Invalid `agent.*` values, kept (and written back) as found until a command replaces them.
    invalid: BTreeMap<String, String>,
}

fn spec(key: &str) -> Result<(Kind, &'static str)> {
    KEYS.iter().find(|(k, ..)| *k == key).map(|(_, kind, default, _)| (*kind, *default)).ok_or_else(|| {
        let known: Vec<&str> = KEYS.iter().map(|(k, ..)| *k).collect();
        Error::invalid(format!("unknown setting {key:?}; known settings: {}", known.join(", ")))
    })
}

fn validate(key: &str, value: &str) -> Result<String> {
    let (kind, _) = spec(key)?;
    let value = value.trim().to_owned();
    let ok = match kind {
        Kind::Count | Kind::Bytes => value.parse::<u64>().is_ok_and(|n| n <= MAX_INTEGER),
        Kind::Duration => crate::duration::duration_of(&value).is_ok(),
        Kind::Bool => matches!(value.as_str(), "true" | "false"),
        Kind::Choice(values) => values.contains(&value.as_str()),
    };
    if ok {
        Ok(value)
    } else {
        Err(Error::invalid(format!("invalid value {value:?} for {key}: want {}", kind.accepted())))
    }
}

fn flatten(prefix: &str, table: &toml::Table, out: &mut BTreeMap<String, String>) {
    for (k, v) in table {
        let key = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
        match v {
            toml::Value::Table(t) => flatten(&key, t, out),
            toml::Value::String(s) => {
                out.insert(key, s.clone());
            }
            other => {
                out.insert(key, other.to_string());
            }
        }
    }
}

impl Config {
    /// Reads and validates `config.toml`; a missing file means all defaults.
    pub fn load(path: &Path) -> Result<Self> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Self::default()),
            Err(e) => return Err(Error::io("read", path, e)),
        };
        let table: toml::Table = text.parse().map_err(|e| {
            Error::invalid(format!("{} is not valid TOML: {e}; fix or remove it", path.display()))
        })?;
        let mut raw = BTreeMap::new();
        flatten("", &table, &mut raw);
        let mut values = BTreeMap::new();
        let mut invalid = BTreeMap::new();
        for (key, value) in raw {
            match validate(&key, &value) {
                Ok(value) => {
                    values.insert(key, value);
                }
                // Only a known agent key is set aside; an unknown one is a typo to refuse.
                Err(_) if key.starts_with("agent.") && spec(&key).is_ok() => {
                    invalid.insert(key, value);
                }
                Err(e) => return Err(e.context(format!("in {}", path.display()))),
            }
        }
        Ok(Self { values, invalid })
    }

    /// Writes the settings to `path` atomically.
    pub(crate) fn save(&self, path: &Path, tmp: &Path) -> Result<()> {
        let mut root = toml::Table::new();
        let entries = self
            .values
            .iter()
            .map(|(k, v)| (k, v, true))
            .chain(self.invalid.iter().map(|(k, v)| (k, v, false)));
        for (key, value, valid) in entries {
            let (section, name) = key.split_once('.').unwrap_or(("", key));
            let entry =
                root.entry(section.to_owned()).or_insert_with(|| toml::Value::Table(toml::Table::new()));
            if let toml::Value::Table(t) = entry {
                let (kind, _) = spec(key)?;
                let v = match kind {
                    // An invalid value goes back as the text it was, for the user to see and fix.
                    _ if !valid => toml::Value::String(value.clone()),
                    Kind::Count | Kind::Bytes => {
                        toml::Value::Integer(value.parse::<i64>().map_err(|_| {
                            Error::invalid(format!(
                                "invalid value {value:?} for {key}: want {}",
                                kind.accepted()
                            ))
                        })?)
                    }
                    Kind::Bool => toml::Value::Boolean(value == "true"),
                    _ => toml::Value::String(value.clone()),
                };
                t.insert(name.to_owned(), v);
            }
        }
        let text =
            toml::to_string(&root).map_err(|e| Error::invalid(format!("could not write settings: {e}")))?;
        crate::store::backend::replace_file(tmp, text.as_bytes(), path, "write")
    }

    /// Sets `key` to `value` after validating it.
    pub fn set(&mut self, key: &str, value: &str) -> Result<()> {
        let value = validate(key, value)?;
        self.invalid.remove(key);
        self.values.insert(key.to_owned(), value);
        Ok(())
    }

    /// Removes `key`, so its default applies again.
    pub fn unset(&mut self, key: &str) -> Result<()> {
        spec(key)?;
        self.invalid.remove(key);
        self.values.remove(key);
        Ok(())
    }

    /// The `agent.*` values in the file that are not valid, in key order.
    pub fn invalid_agent_settings(&self) -> Vec<InvalidSetting> {
        self.invalid
            .iter()
            .map(|(key, value)| InvalidSetting {
                key: key.clone(),
                value: value.clone(),
                accepted: spec(key).map(|(kind, _)| kind.accepted()).unwrap_or_default(),
            })
            .collect()
    }

    /// The effective value of `key` as text (empty when unset with no default).
    pub fn get(&self, key: &str) -> Result<String> {
        let (_, default) = spec(key)?;
        Ok(self.values.get(key).cloned().unwrap_or_else(|| default.to_owned()))
    }

    /// Every setting with its effective value.
    pub fn all(&self) -> Vec<Setting> {
        KEYS.iter()
            .map(|(key, _, default, about)| Setting {
                key: (*key).to_owned(),
                value: self.values.get(*key).cloned().unwrap_or_else(|| (*default).to_owned()),
                set: self.values.contains_key(*key),
                about: (*about).to_owned(),
            })
            .collect()
    }

    /// A count setting, `None` when unset.
    pub fn count(&self, key: &str) -> Option<u64> {
        self.get(key).ok().and_then(|v| v.parse().ok())
    }

    /// A duration setting, `None` when unset.
    pub fn duration(&self, key: &str) -> Option<Duration> {
        let v = self.get(key).ok()?;
        if v.is_empty() { None } else { crate::duration::duration_of(&v).ok() }
    }

    /// A boolean setting.
    pub fn flag(&self, key: &str) -> bool {
        self.get(key).map(|v| v == "true").unwrap_or(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_invalid_values_with_key_and_accepted_values() {
        let mut c = Config::default();
        let err = c.set("keep.recent", "many").unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid value \"many\" for keep.recent: want a whole number from 0 to 9223372036854775807"
        );
        let err = c.set("keep.within", "120").unwrap_err();
        assert!(err.to_string().contains("unit-bearing duration"), "{err}");
        let err = c.set("rollback.leftover_volumes", "maybe").unwrap_err();
        assert!(err.to_string().contains("one of reuse, replace, refuse"), "{err}");
        assert!(c.set("nope.key", "1").unwrap_err().to_string().contains("known settings"));
    }

    #[test]
    fn round_trips_through_toml_and_refuses_bad_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        let mut c = Config::default();
        c.set("keep.recent", "3").unwrap();
        c.set("keep.within", "7d").unwrap();
        c.set("agent.restore", "true").unwrap();
        c.save(&path, dir.path()).unwrap();
        let back = Config::load(&path).unwrap();
        assert_eq!(back.count("keep.recent"), Some(3));
        assert!(back.flag("agent.restore"));
        assert_eq!(back.get("gc.grace").unwrap(), "1h");
        std::fs::write(&path, "[keep]\nrecent = \"lots\"\n").unwrap();
        let err = Config::load(&path).unwrap_err();
        assert!(err.to_string().contains("keep.recent"), "{err}");
    }

    #[test]
    fn sizes_beyond_what_toml_holds_are_refused_not_written_as_zero() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        let mut c = Config::default();
        let err = c.set("keep.max_bytes", "18446744073709551615").unwrap_err();
        assert!(err.to_string().contains("from 0 to 9223372036854775807"), "{err}");
        c.set("keep.max_bytes", "9223372036854775807").unwrap();
        c.save(&path, dir.path()).unwrap();
        assert_eq!(Config::load(&path).unwrap().count("keep.max_bytes"), Some(i64::MAX as u64));
    }

    #[test]
    fn an_invalid_agent_value_is_set_aside_and_replaced_by_set_or_unset() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, "[agent]\nrestore = \"yes\"\nremove = 1\n[keep]\nrecent = 2\n").unwrap();
        let mut c = Config::load(&path).unwrap();
        let bad = c.invalid_agent_settings();
        assert_eq!(
            bad.iter().map(|b| (b.key.as_str(), b.value.as_str())).collect::<Vec<_>>(),
            [("agent.remove", "1"), ("agent.restore", "yes")]
        );
        assert_eq!(bad[0].accepted, "true or false");
        assert_eq!(c.count("keep.recent"), Some(2));
        // Saving keeps the bad text for the user to see; set and unset replace it.
        c.save(&path, dir.path()).unwrap();
        assert_eq!(Config::load(&path).unwrap().invalid_agent_settings().len(), 2);
        c.set("agent.restore", "false").unwrap();
        c.unset("agent.remove").unwrap();
        c.save(&path, dir.path()).unwrap();
        assert!(Config::load(&path).unwrap().invalid_agent_settings().is_empty());
        // Other keys still refuse at load.
        std::fs::write(&path, "[agent]\nrestore = \"yes\"\n[gc]\ngrace = \"10\"\n").unwrap();
        assert!(Config::load(&path).unwrap_err().to_string().contains("gc.grace"));
    }
}
