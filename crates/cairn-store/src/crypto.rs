//! Client-side encryption of a store: the repository key, the AEAD that seals objects, and the
//! keyed hash that names the objects keyed by a target or a name.
//!
//! The repository key is 64 random bytes made once per store: 32 for XChaCha20-Poly1305 and
//! 32 for keyed BLAKE3. It never leaves the process in the clear: key objects (`keys.rs`) hold
//! it wrapped under a password or a key file. A sealed object is `nonce (24 bytes) ‖
//! ciphertext ‖ tag (16 bytes)`; a random 192-bit nonce per seal needs no counter shared
//! between machines, and at that size two machines never draw the same one.

use chacha20poly1305::aead::{Aead, KeyInit, OsRng, Payload, rand_core::RngCore};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use zeroize::{Zeroize, Zeroizing};

use crate::error::{Error, Result};

/// Bytes a seal adds: the nonce and the tag.
pub const OVERHEAD: usize = NONCE_LEN + 16;
const NONCE_LEN: usize = 24;

/// The key every object of an encrypted store is sealed with, and the key of its keyed hash.
pub struct RepoKey {
    encrypt: [u8; 32],
    hash: [u8; 32],
}

impl std::fmt::Debug for RepoKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RepoKey(…)")
    }
}

impl Drop for RepoKey {
    fn drop(&mut self) {
        self.encrypt.zeroize();
        self.hash.zeroize();
    }
}

impl RepoKey {
    /// A new key from the operating system's random source.
    pub fn random() -> Self {
        let mut key = Self { encrypt: [0; 32], hash: [0; 32] };
        OsRng.fill_bytes(&mut key.encrypt);
        OsRng.fill_bytes(&mut key.hash);
        key
    }

    /// The 64 bytes a key object wraps.
    pub fn to_bytes(&self) -> Zeroizing<Vec<u8>> {
        let mut out = Zeroizing::new(Vec::with_capacity(64));
        out.extend_from_slice(&self.encrypt);
        out.extend_from_slice(&self.hash);
        out
    }

    /// Reverses [`RepoKey::to_bytes`].
    pub fn from_bytes(bytes: &[u8]) -> Option<Self> {
        if bytes.len() != 64 {
            return None;
        }
        let mut key = Self { encrypt: [0; 32], hash: [0; 32] };
        key.encrypt.copy_from_slice(&bytes[..32]);
        key.hash.copy_from_slice(&bytes[32..]);
        Some(key)
    }

    /// Seals `plain`, bound to `context` (the object's key, a blob's id): a sealed object
    /// moved under another name fails to open.
    pub fn seal(&self, plain: &[u8], context: &[u8]) -> Vec<u8> {
        seal_with(&self.encrypt, plain, context)
    }

    /// Opens what [`RepoKey::seal`] sealed with the same `context`; `None` when it was made
    /// with another key or changed since.
    pub fn open(&self, sealed: &[u8], context: &[u8]) -> Option<Vec<u8>> {
        open_with(&self.encrypt, sealed, context)
    }

    /// A keyed BLAKE3 hash of `data`, in hex: names objects by a target or a name without
    /// letting anyone without the key test a guess.
    pub fn keyed_hash(&self, data: &[u8]) -> String {
        blake3::keyed_hash(&self.hash, data).to_hex().to_string()
    }

    /// A fingerprint of the key that reveals nothing of it, kept in the store marker, so a key
    /// object that unwraps some other key (one left by a machine that lost the race to create
    /// the store) is told apart from the store's own.
    pub fn fingerprint(&self) -> String {
        let mut hasher = blake3::Hasher::new_keyed(&self.hash);
        hasher.update(b"cairn repository key fingerprint");
        hasher.update(&self.encrypt);
        hasher.finalize().to_hex()[..32].to_owned()
    }
}

/// Seals `plain` under a raw 32-byte key (a repository key, or a key that wraps one).
pub fn seal_with(key: &[u8; 32], plain: &[u8], context: &[u8]) -> Vec<u8> {
    let cipher = XChaCha20Poly1305::new(key.into());
    let mut nonce = [0u8; NONCE_LEN];
    OsRng.fill_bytes(&mut nonce);
    // Encryption fails only for inputs of 256 GiB and more; packs and records are far smaller.
    let sealed =
        cipher.encrypt(XNonce::from_slice(&nonce), Payload { msg: plain, aad: context }).unwrap_or_default();
    let mut out = Vec::with_capacity(NONCE_LEN + sealed.len());
    out.extend_from_slice(&nonce);
    out.extend_from_slice(&sealed);
    out
}

/// Opens what [`seal_with`] sealed under `key` with the same `context`.
pub fn open_with(key: &[u8; 32], sealed: &[u8], context: &[u8]) -> Option<Vec<u8>> {
    if sealed.len() < OVERHEAD {
        return None;
    }
    let cipher = XChaCha20Poly1305::new(key.into());
    let (nonce, body) = sealed.split_at(NONCE_LEN);
    cipher.decrypt(XNonce::from_slice(nonce), Payload { msg: body, aad: context }).ok()
}

/// Random bytes from the operating system (salts, key ids).
pub fn random_bytes<const N: usize>() -> [u8; N] {
    let mut out = [0u8; N];
    OsRng.fill_bytes(&mut out);
    out
}

/// What unlocks an encrypted store: a password, or the bytes of a key file. Its `Debug` shows
/// which kind it is, never the secret.
#[derive(Clone)]
pub enum Secret {
    /// A password, stretched with argon2id.
    Password(Zeroizing<String>),
    /// A key file's bytes (at least 32, random), hashed without stretching.
    KeyFile(Zeroizing<Vec<u8>>),
}

impl Secret {
    /// A password.
    pub fn password(text: impl Into<String>) -> Self {
        Self::Password(Zeroizing::new(text.into()))
    }

    /// A key file's bytes.
    pub fn key_file(bytes: Vec<u8>) -> Self {
        Self::KeyFile(Zeroizing::new(bytes))
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Password(_) => f.write_str("Secret::Password(…)"),
            Self::KeyFile(_) => f.write_str("Secret::KeyFile(…)"),
        }
    }
}

/// Pads `data` to a multiple of [`PAD_TO`] bytes before it is sealed (0x80, then zeros), so
/// a record's size tells the length of the path it names only to within that much.
pub fn pad(data: &[u8]) -> Zeroizing<Vec<u8>> {
    let len = (data.len() + 1).div_ceil(PAD_TO) * PAD_TO;
    let mut out = Zeroizing::new(Vec::with_capacity(len));
    out.extend_from_slice(data);
    out.push(0x80);
    out.resize(len, 0);
    out
}

/// Reverses [`pad`].
pub fn unpad(mut data: Vec<u8>) -> Result<Vec<u8>> {
    while data.last() == Some(&0) {
        data.pop();
    }
    if data.pop() != Some(0x80) {
        return Err(Error::corrupt("a sealed object has bad padding; the store is damaged"));
    }
    Ok(data)
}

const PAD_TO: usize = 256;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seal_opens_only_with_its_key_and_context() {
        let key = RepoKey::random();
        let sealed = key.seal(b"hello", b"records/1.json");
        assert_eq!(sealed.len(), 5 + OVERHEAD);
        assert_eq!(key.open(&sealed, b"records/1.json").unwrap(), b"hello");
        assert!(key.open(&sealed, b"records/2.json").is_none(), "moved under another name");
        assert!(RepoKey::random().open(&sealed, b"records/1.json").is_none(), "another key");
        let mut flipped = sealed.clone();
        flipped[30] ^= 1;
        assert!(key.open(&flipped, b"records/1.json").is_none(), "changed");
        assert_ne!(key.seal(b"hello", b""), key.seal(b"hello", b""), "a nonce per seal");
    }

    #[test]
    fn padding_round_trips_and_hides_lengths_within_a_step() {
        for len in [0, 1, 255, 256, 1000] {
            let data = vec![7u8; len];
            let padded = pad(&data);
            assert_eq!(padded.len() % PAD_TO, 0);
            assert_eq!(unpad(padded.to_vec()).unwrap(), data);
        }
        assert_eq!(pad(b"a").len(), pad(&[b'a'; 200]).len());
        assert!(unpad(vec![1, 2, 0]).is_err());
    }

    #[test]
    fn the_key_round_trips_and_hashes_are_keyed() {
        let key = RepoKey::random();
        let again = RepoKey::from_bytes(&key.to_bytes()).unwrap();
        assert_eq!(key.keyed_hash(b"dir:/x"), again.keyed_hash(b"dir:/x"));
        assert_eq!(key.fingerprint(), again.fingerprint());
        assert_ne!(key.keyed_hash(b"dir:/x"), RepoKey::random().keyed_hash(b"dir:/x"));
        assert_ne!(key.keyed_hash(b"dir:/x"), blake3::hash(b"dir:/x").to_hex().to_string());
    }
}
