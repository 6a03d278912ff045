//! Key objects: `keys/<id>.json`, each holding the repository key wrapped under a key derived
//! from one password (argon2id) or one key file (keyed BLAKE3), so that several secrets unlock
//! one store and each can be added or removed without touching any other object.
//!
//! A key object is plain JSON: the derivation's name and parameters, its salt, when it was
//! made, an optional label, and the wrapped key (sealed with XChaCha20-Poly1305, bound to the
//! object's own key). Nothing in it tells anything about the store's content.

use serde::{Deserialize, Serialize};
use zeroize::Zeroizing;

use super::backend::Backend;
use super::crypto::{self, RepoKey, Secret};
use crate::error::{Error, Result};

/// Where key objects live.
pub const PREFIX: &str = "keys/";

/// argon2id memory, in KiB: 64 MiB, the second choice of RFC 9106 §4 (for machines that
/// cannot spare 2 GiB): each guess at a password costs an attacker 64 MiB of memory, which is
/// what makes GPUs and ASICs slow at it.
const ARGON2_MEMORY_KIB: u32 = 64 * 1024;
/// argon2id passes, as RFC 9106 §4 pairs with 64 MiB.
const ARGON2_ITERATIONS: u32 = 3;
/// One lane: the `argon2` crate computes lanes one after another, so more lanes would cost
/// an open more time on this machine without costing an attacker more.
const ARGON2_LANES: u32 = 1;

/// How a key object's wrapping key is derived.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(tag = "algorithm", rename_all = "snake_case")]
pub enum Kdf {
    /// argon2id (version 0x13) over a password.
    Argon2id {
        /// Memory in KiB.
        memory_kib: u32,
        /// Passes.
        iterations: u32,
        /// Lanes.
        lanes: u32,
        /// Hex.
        salt: String,
    },
    /// Keyed BLAKE3 over a key file's bytes: a key file is random already, so stretching it
    /// would buy nothing.
    Blake3KeyFile {
        /// Hex.
        salt: String,
    },
}

/// What `keys/<id>.json` holds.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct KeyObject {
    /// How the key that wraps the repository key is derived.
    pub kdf: Kdf,
    /// RFC 3339.
    pub created: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// The label given when the key was added, if any.
    pub label: Option<String>,
    /// The repository key, sealed under the derived key (hex).
    pub wrapped: String,
}

impl KeyObject {
    /// `password` or `key_file`.
    pub fn kind(&self) -> &'static str {
        match self.kdf {
            Kdf::Argon2id { .. } => "password",
            Kdf::Blake3KeyFile { .. } => "key_file",
        }
    }
}

fn object_key(id: &str) -> String {
    format!("{PREFIX}{id}.json")
}

/// The id of the key object stored under `key`.
pub fn id_of(key: &str) -> &str {
    key.trim_start_matches(PREFIX).trim_end_matches(".json")
}

/// Derives the key that wraps the repository key from `secret`, as `kdf` says; `None` when
/// the secret is of the other kind.
fn derive(kdf: &Kdf, secret: &Secret) -> Result<Option<Zeroizing<[u8; 32]>>> {
    let bad = |e: &dyn std::fmt::Display| Error::corrupt(format!("a key object has bad parameters: {e}"));
    match (kdf, secret) {
        (Kdf::Argon2id { memory_kib, iterations, lanes, salt }, Secret::Password(password)) => {
            let salt = hex::decode(salt).map_err(|e| bad(&e))?;
            let params =
                argon2::Params::new(*memory_kib, *iterations, *lanes, Some(32)).map_err(|e| bad(&e))?;
            let argon = argon2::Argon2::new(argon2::Algorithm::Argon2id, argon2::Version::V0x13, params);
            let mut out = Zeroizing::new([0u8; 32]);
            argon.hash_password_into(password.as_bytes(), &salt, out.as_mut()).map_err(|e| bad(&e))?;
            Ok(Some(out))
        }
        (Kdf::Blake3KeyFile { salt }, Secret::KeyFile(bytes)) => {
            let mut hasher = blake3::Hasher::new_derive_key("cairn 2026 key file wrapping key");
            hasher.update(&hex::decode(salt).map_err(|e| bad(&e))?);
            hasher.update(bytes);
            Ok(Some(Zeroizing::new(*hasher.finalize().as_bytes())))
        }
        _ => Ok(None),
    }
}

/// Writes a new key object wrapping `repo` under `secret`; returns its id.
pub fn add(backend: &dyn Backend, repo: &RepoKey, secret: &Secret, label: Option<&str>) -> Result<String> {
    let salt = hex::encode(crypto::random_bytes::<16>());
    let kdf = match secret {
        Secret::Password(p) if p.is_empty() => {
            return Err(Error::invalid("an empty password unlocks nothing; give one"));
        }
        Secret::Password(_) => Kdf::Argon2id {
            memory_kib: ARGON2_MEMORY_KIB,
            iterations: ARGON2_ITERATIONS,
            lanes: ARGON2_LANES,
            salt,
        },
        Secret::KeyFile(bytes) if bytes.len() < 32 => {
            return Err(Error::invalid(format!(
                "a key file must hold at least 32 random bytes, and this one holds {}",
                bytes.len()
            )));
        }
        Secret::KeyFile(_) => Kdf::Blake3KeyFile { salt },
    };
    let wrapping =
        derive(&kdf, secret)?.ok_or_else(|| Error::invalid("the secret does not fit its key kind"))?;
    let id = hex::encode(crypto::random_bytes::<16>());
    let key = object_key(&id);
    let object = KeyObject {
        kdf,
        created: jiff::Timestamp::now().to_string(),
        label: label.map(str::to_owned),
        wrapped: hex::encode(crypto::seal_with(&wrapping, &repo.to_bytes(), key.as_bytes())),
    };
    let bytes = serde_json::to_vec_pretty(&object).map_err(|e| Error::corrupt(e.to_string()))?;
    backend.put_if_absent(&key, &bytes)?;
    Ok(id)
}

/// Every key object, by id, sorted by id.
pub fn list(backend: &dyn Backend) -> Result<Vec<(String, KeyObject)>> {
    let mut out = Vec::new();
    for key in backend.list(PREFIX)? {
        let bytes = backend.get(&key)?;
        let object: KeyObject = serde_json::from_slice(&bytes)
            .map_err(|e| Error::corrupt(format!("key object {key} does not decode: {e}")))?;
        out.push((id_of(&key).to_owned(), object));
    }
    Ok(out)
}

/// Finds the key object `secret` opens whose repository key has `fingerprint`, and returns
/// the key and the object's id. A wrong secret is one sentence. A key object that does not
/// read (it does not decode, or its parameters or wrapped key are garbled) is damage, not a
/// wrong secret: the others are still tried, and when none opens the error names the damage.
pub fn unlock(backend: &dyn Backend, secret: &Secret, fingerprint: &str) -> Result<(RepoKey, String)> {
    find(backend, secret, Some(fingerprint))
}

/// [`unlock`] for a store whose marker was lost, so its key's fingerprint is unknown: any key
/// object `secret` opens gives the key (the wrapping is authenticated, so only a key object
/// of this store, opened with its own secret, yields one).
pub fn unlock_without_marker(backend: &dyn Backend, secret: &Secret) -> Result<(RepoKey, String)> {
    find(backend, secret, None)
}

/// The key object `secret` opens, whose key has `fingerprint` when one is given.
fn find(backend: &dyn Backend, secret: &Secret, fingerprint: Option<&str>) -> Result<(RepoKey, String)> {
    let mut sound = 0;
    let mut damaged = Vec::new();
    for key in backend.list(PREFIX)? {
        let id = id_of(&key).to_owned();
        let Ok(object) = serde_json::from_slice::<KeyObject>(&backend.get(&key)?) else {
            damaged.push(id);
            continue;
        };
        let (Ok(derived), Ok(wrapped)) = (derive(&object.kdf, secret), hex::decode(&object.wrapped)) else {
            damaged.push(id);
            continue;
        };
        sound += 1;
        let Some(wrapping) = derived else { continue };
        let Some(bytes) = crypto::open_with(&wrapping, &wrapped, object_key(&id).as_bytes()) else {
            continue;
        };
        let bytes = Zeroizing::new(bytes);
        if let Some(repo) =
            RepoKey::from_bytes(&bytes).filter(|k| fingerprint.is_none_or(|f| k.fingerprint() == f))
        {
            return Ok((repo, id));
        }
    }
    let what = match secret {
        Secret::Password(_) => "password",
        Secret::KeyFile(_) => "key file",
    };
    let which = match sound {
        0 => "it has no key object that reads".to_owned(),
        1 => "its one key does not match".to_owned(),
        n => format!("none of its {n} keys matches"),
    };
    if let Some(first) = damaged.first() {
        // The secret may belong to the damaged key: this is damage to report, not a refusal.
        return Err(Error::corrupt(format!(
            "the {what} does not unlock the store at {} ({which}), and {} key object(s) are damaged (first: {first}); unlock with another secret of the store, or put back a copy of the key object",
            backend.describe(),
            damaged.len()
        )));
    }
    Err(Error::new(
        crate::error::ErrorKind::PermissionDenied,
        format!("the {what} does not unlock the store at {} ({which})", backend.describe()),
    ))
}

/// Deletes key object `id`.
pub fn remove(backend: &dyn Backend, id: &str) -> Result<()> {
    backend.delete(&object_key(id))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::MemoryBackend;

    #[test]
    fn any_of_several_secrets_unlocks_and_a_wrong_one_is_one_sentence() {
        let backend = MemoryBackend::default();
        let repo = RepoKey::random();
        let first = add(&backend, &repo, &Secret::password("correct horse"), None).unwrap();
        let file = Secret::key_file(vec![9u8; 32]);
        let second = add(&backend, &repo, &file, Some("ci")).unwrap();
        let (key, id) = unlock(&backend, &Secret::password("correct horse"), &repo.fingerprint()).unwrap();
        assert_eq!((key.fingerprint(), id), (repo.fingerprint(), first));
        assert_eq!(unlock(&backend, &file, &repo.fingerprint()).unwrap().1, second);
        let err = unlock(&backend, &Secret::password("wrong"), &repo.fingerprint()).unwrap_err();
        assert_eq!(
            err.message(),
            "the password does not unlock the store at an in-memory store (none of its 2 keys matches)"
        );
        // A damaged key object is damage, named as such, and the other keys still unlock.
        let third = add(&backend, &repo, &Secret::password("third"), None).unwrap();
        let bytes = backend.get(&object_key(&third)).unwrap();
        backend.delete(&object_key(&third)).unwrap();
        backend.put_if_absent(&object_key(&third), &bytes[..bytes.len() / 2]).unwrap();
        assert_eq!(unlock(&backend, &file, &repo.fingerprint()).unwrap().1, second);
        let err = unlock(&backend, &Secret::password("third"), &repo.fingerprint()).unwrap_err();
        assert_eq!(err.kind(), crate::error::ErrorKind::Corrupt);
        assert!(
            err.message().contains(&format!("1 key object(s) are damaged (first: {third})")),
            "{}",
            err.message()
        );
        // A key that unwraps another store's key is not this store's.
        assert!(unlock(&backend, &file, &RepoKey::random().fingerprint()).is_err());
        assert!(add(&backend, &repo, &Secret::key_file(vec![1; 8]), None).is_err());
        assert!(add(&backend, &repo, &Secret::password(""), None).is_err());
    }
}
