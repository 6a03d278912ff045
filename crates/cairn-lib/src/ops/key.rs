//! `key add|list|remove`: the secrets that unlock an encrypted store. Each is one key object
//! wrapping the same repository key, so adding or removing one touches nothing else; the last
//! one is never removed, since a store no key unlocks is lost.

use serde::{Deserialize, Serialize};

use super::resolve::CallContext;
use crate::Repository;
use crate::error::{Error, Hint, Result};
use crate::store::Secret;
use crate::store::keys::{self, KeyObject};

/// The key to add.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct KeyAddOptions {
    /// A label to tell the key apart by (a person, a machine).
    #[schemars(description = "A label to tell the key apart by (a person, a machine).")]
    #[cfg_attr(feature = "clap", arg(long))]
    pub label: Option<String>,
    /// The new key's password or key file, given by the front, never in a tool call.
    #[serde(skip)]
    #[schemars(skip)]
    #[cfg_attr(feature = "clap", arg(skip))]
    pub secret: Option<Secret>,
}

/// Which keys to list (all of them).
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct KeyListOptions {}

/// The key to remove.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct KeyRemoveOptions {
    /// The key's id, or a unique start of it.
    #[schemars(description = "The key's id, or a unique start of it.")]
    pub id: String,
}

/// One key of the store.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct KeyInfo {
    /// Its id (the name of its key object).
    pub id: String,
    /// `password` or `key_file`.
    pub kind: String,
    /// Its label, if it has one.
    pub label: Option<String>,
    /// When it was added (RFC 3339).
    pub created: String,
    /// Whether it is the key that unlocked the store for this call.
    pub current: bool,
}

/// The keys of a store.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct KeyListResult {
    /// Every key, by id.
    pub keys: Vec<KeyInfo>,
}

/// A key added or removed.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct KeyResult {
    /// The key.
    pub key: KeyInfo,
    /// How many keys the store has now.
    pub keys: usize,
}

impl Repository {
    /// Adds a key: the repository key wrapped under the options' secret.
    pub fn key_add(&self, options: &KeyAddOptions, _context: &CallContext) -> Result<KeyResult> {
        let unlocked = self.require_encrypted()?;
        let secret = options.secret.as_ref().ok_or_else(|| {
            Error::invalid("no password or key file was given for the new key").hint(Hint::GiveSecret)
        })?;
        if let Some(label) = &options.label {
            crate::validate_name("key label", label)?;
        }
        let id = keys::add(self.backend(), unlocked, secret, options.label.as_deref())?;
        let all = self.key_list(&KeyListOptions {}, _context)?.keys;
        let key = all.iter().find(|k| k.id == id).cloned().ok_or_else(|| {
            Error::corrupt(format!("key {id} was added to {} and is not there", self.location()))
        })?;
        Ok(KeyResult { key, keys: all.len() })
    }

    /// Lists the keys.
    pub fn key_list(&self, _options: &KeyListOptions, _context: &CallContext) -> Result<KeyListResult> {
        self.require_encrypted()?;
        let current = self.key_id();
        let mut keys: Vec<_> = keys::list(self.backend())?
            .into_iter()
            .map(|(id, object)| info(&id, &object, current == Some(id.as_str())))
            .collect();
        // Oldest first: key ids are random, so their order would change from store to store.
        keys.sort_by_key(|k| (k.created.parse::<jiff::Timestamp>().ok(), k.id.clone()));
        Ok(KeyListResult { keys })
    }

    /// Removes a key, refusing the last one.
    pub fn key_remove(&self, options: &KeyRemoveOptions, _context: &CallContext) -> Result<KeyResult> {
        self.require_encrypted()?;
        let all = keys::list(self.backend())?;
        let matching: Vec<_> = all.iter().filter(|(id, _)| id.starts_with(&options.id)).collect();
        let (id, object) = match matching.as_slice() {
            [one] if !options.id.is_empty() => *one,
            [] | [_] => {
                return Err(Error::not_found(format!(
                    "the store at {} has no key {:?}",
                    self.location(),
                    crate::echo(&options.id)
                )));
            }
            _ => {
                return Err(Error::invalid(format!(
                    "{:?} starts {} key ids; give more of the id",
                    crate::echo(&options.id),
                    matching.len()
                )));
            }
        };
        if all.len() == 1 {
            return Err(Error::conflict(format!(
                "key {id} is the only key of the store at {}, and a store no key unlocks is lost; add another key first",
                self.location()
            )));
        }
        keys::remove(self.backend(), id)?;
        Ok(KeyResult { key: info(id, object, self.key_id() == Some(id.as_str())), keys: all.len() - 1 })
    }

    /// The id of the key that unlocked this store, when it is encrypted.
    pub fn key_id(&self) -> Option<&str> {
        self.unlocked_key_id()
    }

    fn require_encrypted(&self) -> Result<&crate::store::crypto::RepoKey> {
        self.sealing().ok_or_else(|| {
            Error::invalid(format!("the store at {} is not encrypted, so it has no keys", self.location()))
        })
    }
}

fn info(id: &str, object: &KeyObject, current: bool) -> KeyInfo {
    KeyInfo {
        id: id.to_owned(),
        kind: object.kind().to_owned(),
        label: object.label.clone(),
        created: object.created.clone(),
        current,
    }
}
