//! The store's settings (`<store>/config.toml`), validated on load: an invalid value is refused
//! with its key and the accepted values, never silently ignored. Code reads a setting through
//! its typed accessor, generated from the table in `table.rs` (`config.gc_grace()`), so a
//! misspelt key does not compile; the user's key (`cairn config set`) is looked up in the same
//! table, and one that is not there is refused naming the nearest known key.
//!
//! One exception: an invalid `agent.*` value does not stop the store from opening. It is kept
//! aside ([`Config::invalid_agent_settings`]) so the agent permission check can refuse everything
//! and say which key to fix, and so `cairn agent allow|deny|reset` can repair it; refusing to
//! open would lock the user out of the very commands that fix it.

mod kind;
mod table;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

use crate::error::{Error, Result};
use kind::{Kind, Type};
use table::{Spec, TABLE};

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

/// The table's row for a key the user gave; an unknown key is refused in one line that names
/// the nearest known key, or lists them all when none is near.
fn spec(key: &str) -> Result<&'static Spec> {
    TABLE.iter().find(|s| s.key == key).ok_or_else(|| match nearest(key) {
        Some(near) => Error::invalid(format!("unknown setting {key:?}; did you mean {near}?")),
        None => {
            let known: Vec<&str> = TABLE.iter().map(|s| s.key).collect();
            Error::invalid(format!("unknown setting {key:?}; known settings: {}", known.join(", ")))
        }
    })
}

/// The known key closest to `key` in edits, when it is close enough to be the one meant: at
/// most a third of the key's letters off, or the same name in another section.
fn nearest(key: &str) -> Option<&'static str> {
    let name = |k: &str| k.rsplit_once('.').map_or(k.to_owned(), |(_, n)| n.to_owned());
    let (distance, near) = TABLE.iter().map(|s| (edits(key, s.key), s.key)).min()?;
    if distance <= (key.chars().count() / 3).max(1) {
        return Some(near);
    }
    TABLE.iter().map(|s| s.key).find(|k| name(k) == name(key))
}

/// Levenshtein distance: insertions, deletions and substitutions that turn `a` into `b`.
fn edits(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1).min(row[j] + 1).min(diagonal + usize::from(ca != *cb));
            diagonal = above;
        }
    }
    row[b.len()]
}

fn validate(key: &str, value: &str) -> Result<String> {
    let spec = spec(key)?;
    let value = value.trim().to_owned();
    if (spec.accepts)(&value) {
        Ok(value)
    } else {
        Err(Error::invalid(format!("invalid value {value:?} for {key}: want {}", spec.kind.accepted())))
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
    pub fn save(&self, path: &Path, tmp: &Path) -> Result<()> {
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
                let kind = spec(key)?.kind;
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
        crate::backend::replace_file(tmp, text.as_bytes(), path, "write")
    }

    /// Sets the user's `key` to `value` after validating both.
    pub fn set(&mut self, key: &str, value: &str) -> Result<()> {
        let value = validate(key, value)?;
        self.invalid.remove(key);
        self.values.insert(key.to_owned(), value);
        Ok(())
    }

    /// Removes the user's `key`, so its default applies again.
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
                accepted: spec(key).map(|s| s.kind.accepted()).unwrap_or_default(),
            })
            .collect()
    }

    /// The effective value of the user's `key` as text (empty when unset with no default), for
    /// `cairn config get`; code reads a setting through its typed accessor instead.
    pub fn get(&self, key: &str) -> Result<String> {
        let spec = spec(key)?;
        Ok(self.values.get(key).cloned().unwrap_or_else(|| spec.default.to_owned()))
    }

    /// Every setting with its effective value.
    pub fn all(&self) -> Vec<Setting> {
        TABLE
            .iter()
            .map(|spec| Setting {
                key: spec.key.to_owned(),
                value: self.values.get(spec.key).cloned().unwrap_or_else(|| spec.default.to_owned()),
                set: self.values.contains_key(spec.key),
                about: spec.about(),
            })
            .collect()
    }

    /// The value config.toml sets for `key`, `None` when it leaves it to its default. The
    /// accessors are the only callers, each with its own key and type.
    fn read<T: Type>(&self, key: &str) -> Option<T::Value> {
        self.values.get(key).and_then(|text| T::read(text))
    }
}
