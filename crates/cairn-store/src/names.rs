//! Names and the session pointer of a shared store, kept in the objects with conditional
//! writes (`If-None-Match` / `If-Match` on S3), so that machines racing on one name get one
//! winner and one clear refusal, with no lock server.
//!
//! A snapshot name is the object `names/<session>/<target hash>/<name>`, holding the id of the
//! snapshot that has it and when it was claimed. It is claimed before the snapshot's record is
//! written: the record of a refused save is never published. A claim whose snapshot is not in
//! the catalog is a save still running elsewhere, and refused, until it is older than
//! [`CLAIM_TIMEOUT`] (its save died), when it may be taken over. In an encrypted store the
//! object is `names/<keyed hash of session, target and name>` instead, so its key tells
//! nothing of the target or the name.

use serde::{Deserialize, Serialize};

use super::Store;
use crate::error::{Error, Hint, Result};
use crate::id::{ObjectId, SessionId};
use crate::model::snapshot::Snapshot;

/// How long a claim whose snapshot never appeared blocks its name.
const CLAIM_TIMEOUT_SECS: i64 = 15 * 60;

/// The current-session pointer of a shared store.
const POINTER: &str = "current_session";

#[derive(Debug, Serialize, Deserialize)]
struct Claim {
    snapshot: String,
    at: i64,
}

impl Store {
    /// Claims the name of `snapshot` in a shared store (a no-op for a store of one machine,
    /// whose catalog transaction decides). Refuses when another snapshot holds it, unless
    /// `force`, and when another machine claims it at the same moment.
    pub fn claim_name(&self, snapshot: &Snapshot, force: bool) -> Result<()> {
        let Some(name) = snapshot.name.as_deref().filter(|_| self.shared) else {
            return Ok(());
        };
        let key = self.name_key(snapshot, name);
        // What other machines committed since this store was opened decides who holds it.
        self.sync()?;
        let taken = || {
            Error::conflict(format!(
                "a snapshot named {name:?} already exists for {}; pick another name",
                snapshot.target
            ))
            .or_hint(Hint::SetOption("force"))
            .purpose("to move the name to the new snapshot")
        };
        let current = self.backend.get_versioned(&key)?;
        let held: Option<Claim> = current.as_ref().and_then(|v| serde_json::from_slice(&v.data).ok());
        if let Some(held) = held.filter(|c| c.snapshot != snapshot.id.to_string()) {
            let now = jiff::Timestamp::now().as_second();
            if self.holds_name(snapshot.session, &held.snapshot, name)? {
                if !force {
                    return Err(taken());
                }
            } else if !self.catalog.has_snapshot(&held.snapshot)? && now - held.at < CLAIM_TIMEOUT_SECS {
                return Err(Error::conflict(format!(
                    "another machine is saving a snapshot named {name:?} for {} right now; pick another name",
                    snapshot.target
                )));
            }
            // Otherwise the holder was removed, renamed, or died before committing: free.
        }
        let claim = Claim { snapshot: snapshot.id.to_string(), at: jiff::Timestamp::now().as_second() };
        let bytes = serde_json::to_vec(&claim).map_err(|e| Error::corrupt(e.to_string()))?;
        if !self.backend.put_versioned(&key, &bytes, current.as_ref().map(|v| v.tag.as_str()))? {
            return Err(Error::conflict(format!(
                "another machine took the name {name:?} for {} at the same moment; pick another name",
                snapshot.target
            )));
        }
        Ok(())
    }

    /// Gives up the name claim of `snapshot`, whose record could not be written: the claim is
    /// replaced (compare-and-swap, so a claim another machine made since stays) by one dated
    /// long ago, which the next save of the name takes over at once.
    pub fn release_name(&self, snapshot: &Snapshot) -> Result<()> {
        let Some(name) = snapshot.name.as_deref().filter(|_| self.shared) else {
            return Ok(());
        };
        let key = self.name_key(snapshot, name);
        let Some(current) = self.backend.get_versioned(&key)? else { return Ok(()) };
        let ours = serde_json::from_slice::<Claim>(&current.data)
            .is_ok_and(|c| c.snapshot == snapshot.id.to_string());
        if ours {
            let expired = Claim { snapshot: snapshot.id.to_string(), at: 0 };
            let bytes = serde_json::to_vec(&expired).map_err(|e| Error::corrupt(e.to_string()))?;
            self.backend.put_versioned(&key, &bytes, Some(&current.tag))?;
        }
        Ok(())
    }

    /// The object that holds `name` for `snapshot`'s session and target.
    fn name_key(&self, snapshot: &Snapshot, name: &str) -> String {
        match self.sealing() {
            Some(seal) => {
                let what = format!("{}\0{}\0{name}", snapshot.session, snapshot.target);
                format!("names/{}", &seal.keyed_hash(what.as_bytes())[..48])
            }
            None => {
                let target = ObjectId::of(snapshot.target.as_bytes()).to_hex();
                format!("names/{}/{}/{name}", snapshot.session, &target[..32])
            }
        }
    }

    /// True when `snapshot` is in `session` under `name` in this catalog.
    fn holds_name(&self, session: SessionId, snapshot: &str, name: &str) -> Result<bool> {
        let Ok(id) = snapshot.parse::<uuid::Uuid>() else { return Ok(false) };
        Ok(self
            .catalog
            .get_snapshot(session, crate::id::SnapshotId(id))?
            .is_some_and(|s| s.name.as_deref() == Some(name)))
    }

    /// The shared current-session pointer, if set.
    pub fn shared_pointer(&self) -> Result<Option<String>> {
        Ok(self
            .backend
            .get_versioned(POINTER)?
            .map(|v| String::from_utf8_lossy(&v.data).trim().to_owned())
            .filter(|s| !s.is_empty()))
    }

    /// Points the shared current-session pointer at `id`, or clears it: a compare-and-swap
    /// retried until no other machine wrote in between, so the last writer wins whole.
    pub fn set_shared_pointer(&self, id: Option<SessionId>) -> Result<()> {
        let text = id.map(|i| i.to_string()).unwrap_or_default();
        for _ in 0..16 {
            let current = self.backend.get_versioned(POINTER)?;
            if self.backend.put_versioned(
                POINTER,
                text.as_bytes(),
                current.as_ref().map(|v| v.tag.as_str()),
            )? {
                return Ok(());
            }
        }
        Err(Error::conflict("other machines kept changing the current session; retry"))
    }
}
