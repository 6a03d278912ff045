//! What opening an encrypted store needs beside its address: the secret (asked of the front
//! only when the store turns out to be encrypted, so a plain store never prompts), whether a
//! store made by this open is encrypted, and where an encrypted store directory caches its
//! catalog. The library never reads the process environment: a front hands over a lookup
//! ([`Unlock::from_env`]) and, for a terminal, a prompt.

use std::path::PathBuf;
use std::sync::Arc;

use super::address::{EnvLookup, env};
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

/// How a front asks its user for the secret of the store at a location (a terminal prompt);
/// `Ok(None)` when it cannot ask.
pub type Prompt = Arc<dyn Fn(SecretUse, &str) -> Result<Option<Secret>> + Send + Sync>;

/// A secret from the variables `password` (the password itself) or `password_file` (a file
/// holding it) of `env`, if either is set.
pub fn secret_from_env(env: &EnvLookup, password: &str, password_file: &str) -> Result<Option<Secret>> {
    secret_from(password, env::var_os(password, env), env::var(password_file, env))
}

/// A secret from a password's variable (`name`, holding `text`) or a password file, if either is
/// given.
fn secret_from(
    name: &str,
    text: Option<std::ffi::OsString>,
    file: Option<PathBuf>,
) -> Result<Option<Secret>> {
    if let Some(text) = text {
        let text = text.into_string().map_err(|_| Error::invalid(format!("{name} is not UTF-8")))?;
        return Ok(Some(Secret::password(text)));
    }
    let Some(path) = file else { return Ok(None) };
    let text = std::fs::read_to_string(&path).map_err(|e| Error::io("read the password file", &path, e))?;
    // A file written by `echo` ends with a newline that is not part of the password.
    let text = text.strip_suffix('\n').map(|t| t.strip_suffix('\r').unwrap_or(t)).unwrap_or(&text);
    Ok(Some(Secret::password(text)))
}

/// The bytes of the key file at `path`, as a secret.
pub fn secret_from_key_file(path: &std::path::Path) -> Result<Secret> {
    let bytes = std::fs::read(path).map_err(|e| Error::io("read the key file", path, e))?;
    Ok(Secret::key_file(bytes))
}

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

    /// Unlocks the store at `location` with `CAIRN_PASSWORD`, else `CAIRN_PASSWORD_FILE`, else
    /// `CAIRN_KEY_FILE` of `env`, else what `prompt` gets; all asked only when the store turns
    /// out to be encrypted, so a plain store never reads a password file.
    pub fn from_env(env: EnvLookup, location: String, prompt: Option<Prompt>) -> Self {
        Self::asking(move |purpose| {
            let password = env::var_os("CAIRN_PASSWORD", &env);
            let password_file = env::var("CAIRN_PASSWORD_FILE", &env);
            if let Some(secret) = secret_from("the password", password, password_file)? {
                return Ok(Some(secret));
            }
            if let Some(path) = env::var("CAIRN_KEY_FILE", &env) {
                return secret_from_key_file(&path).map(Some);
            }
            match &prompt {
                Some(prompt) => prompt(purpose, &location),
                None => Ok(None),
            }
        })
    }

    /// Unlocks the destination of a copy, at `location`, which may have a secret of its own:
    /// `password_file` (a front's flag), else `CAIRN_TO_PASSWORD`, `CAIRN_TO_PASSWORD_FILE` or
    /// `CAIRN_TO_KEY_FILE` of `env`, else as [`Unlock::from_env`] does (so one secret still
    /// serves two stores that share it), whose prompt names `location`, so the user knows
    /// which store's password is asked for. All asked only when the store is encrypted.
    pub fn for_destination(
        env: EnvLookup,
        location: String,
        password_file: Option<PathBuf>,
        prompt: Option<Prompt>,
    ) -> Self {
        let fallback = Self::from_env(env.clone(), location, prompt);
        Self::asking(move |purpose| {
            if let Some(path) = &password_file {
                return secret_from("the destination's password", None, Some(path.clone()));
            }
            let password = env::var_os("CAIRN_TO_PASSWORD", &env);
            let password_file = env::var("CAIRN_TO_PASSWORD_FILE", &env);
            if let Some(secret) = secret_from("the destination's password", password, password_file)? {
                return Ok(Some(secret));
            }
            if let Some(path) = env::var("CAIRN_TO_KEY_FILE", &env) {
                return secret_from_key_file(&path).map(Some);
            }
            match &fallback.ask {
                Some(ask) => ask(purpose),
                None => Ok(None),
            }
        })
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
    pub fn encrypting_by_default(&self) -> Self {
        let mut out = self.clone();
        out.encrypt_new = Some(self.encrypt_new.unwrap_or(true));
        out
    }

    pub(crate) fn encrypts_new(&self) -> bool {
        self.encrypt_new.unwrap_or(false)
    }

    /// The secret, for `purpose`, of the store at `location`: one line when there is none.
    pub fn secret(&self, purpose: SecretUse, location: &str) -> Result<Secret> {
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
pub struct Unlocked {
    pub key: Arc<RepoKey>,
    pub key_id: String,
}
