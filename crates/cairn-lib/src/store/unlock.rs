//! What opening an encrypted store needs beside its address: the secret (asked of the front
//! only when the store turns out to be encrypted, so a plain store never prompts), whether a
//! store made by this open is encrypted, and where an encrypted store directory caches its
//! catalog. The library never reads a password itself: a front hands it over here.

use std::path::PathBuf;
use std::sync::Arc;

use super::crypto::{RepoKey, Secret};
use crate::error::{Error, Hint, Result};

/// Why a secret is asked for, so a front can ask twice (to confirm) for a new one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SecretUse {
    /// To unlock a store that exists.
    Unlock,
    /// To make the first key of a new store.
    Create,
}

type Ask = dyn Fn(SecretUse) -> Result<Option<Secret>> + Send + Sync;

/// How to unlock (or make) an encrypted store. The default has no secret and makes new
/// stores as their address does by default (a remote store encrypted, a directory plain).
#[derive(Clone, Default)]
pub struct Unlock {
    ask: Option<Arc<Ask>>,
    encrypt_new: Option<bool>,
    cache_home: Option<PathBuf>,
}

impl std::fmt::Debug for Unlock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Unlock")
            .field("has_secret", &self.ask.is_some())
            .field("encrypt_new", &self.encrypt_new)
            .field("cache_home", &self.cache_home)
            .finish()
    }
}

impl Unlock {
    /// Unlocks with `secret`.
    pub fn with_secret(secret: Secret) -> Self {
        Self::asking(move |_| Ok(Some(secret.clone())))
    }

    /// Asks `ask` for the secret when, and only when, the store needs one; `Ok(None)` means
    /// the front has none to give (no terminal to ask on), and the open fails in one line.
    pub fn asking(ask: impl Fn(SecretUse) -> Result<Option<Secret>> + Send + Sync + 'static) -> Self {
        Self { ask: Some(Arc::new(ask)), ..Self::default() }
    }

    /// Whether a store this open makes is encrypted (else: as its address does by default).
    pub fn encrypt_new(mut self, encrypt: bool) -> Self {
        self.encrypt_new = Some(encrypt);
        self
    }

    /// Where an encrypted store directory keeps its catalog cache (one folder per store id,
    /// as remote stores do): the catalog names paths, so it cannot live beside the objects.
    pub fn cache_home(mut self, dir: PathBuf) -> Self {
        self.cache_home = Some(dir);
        self
    }

    pub(crate) fn cache_dir(&self) -> Option<&std::path::Path> {
        self.cache_home.as_deref()
    }

    /// This, making new stores encrypted unless it says otherwise.
    pub(crate) fn encrypting_by_default(&self) -> Self {
        let mut out = self.clone();
        out.encrypt_new = Some(self.encrypt_new.unwrap_or(true));
        out
    }

    pub(crate) fn encrypts_new(&self) -> bool {
        self.encrypt_new.unwrap_or(false)
    }

    /// The secret, for `purpose`, of the store at `location`: one line when there is none.
    pub(crate) fn secret(&self, purpose: SecretUse, location: &str) -> Result<Secret> {
        let given = match &self.ask {
            Some(ask) => ask(purpose)?,
            None => None,
        };
        given.ok_or_else(|| {
            let message = match purpose {
                SecretUse::Unlock => {
                    format!("the store at {location} is encrypted, and no password or key file was given")
                }
                SecretUse::Create => {
                    format!(
                        "a new store at {location} is made encrypted, and no password or key file was given"
                    )
                }
            };
            Error::invalid(message).hint(Hint::GiveSecret)
        })
    }
}

/// An open encrypted store's key, and the id of the key object that unlocked it.
pub(crate) struct Unlocked {
    pub key: Arc<RepoKey>,
    pub key_id: String,
}
