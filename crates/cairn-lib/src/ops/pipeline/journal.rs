//! The restore journal: written before an in-place restore changes the tree, removed when it
//! is done, and read by the next command when a killed restore left it behind.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::Repository;
use crate::error::{Error, Result};
use crate::id::ObjectId;
use crate::snapshot::Snapshot;
use crate::store::backend::StagedFile;

/// The journal of an in-place restore, written before the first change to the tree.
#[derive(Serialize, Deserialize)]
pub(crate) struct Journal {
    pub target: String,
    pub restoring: String,
    pub safety: String,
    pub safety_root: String,
    pub no_ignore: bool,
    pub pid: u32,
    /// The root of the snapshot being restored (absent in journals of older versions).
    #[serde(default)]
    pub restoring_root: Option<String>,
    /// The session the restore ran in (absent in journals of older versions).
    #[serde(default)]
    pub session: Option<String>,
    #[serde(default)]
    pub preserve_mtime: bool,
}

impl Repository {
    /// Where the journal of a restore of target `key` is written.
    pub(crate) fn journal_path(&self, key: &str) -> PathBuf {
        let name = &ObjectId::of(key.as_bytes()).to_hex()[..24];
        self.layout().journal().join(format!("{name}.json"))
    }

    /// The journal of an in-place restore of `key` to `snapshot`, behind `safety`, written to
    /// tmp/ and flushed, so a whole restore can flush it beside the safety snapshot's record;
    /// [`Repository::place_journal`] puts it where the next command looks.
    pub(crate) fn stage_journal(
        &self,
        key: &str,
        snapshot: &Snapshot,
        safety: &Snapshot,
        no_ignore: bool,
        preserve_mtime: bool,
    ) -> Result<StagedFile> {
        let journal = Journal {
            target: key.to_owned(),
            restoring: snapshot.id.to_string(),
            safety: safety.id.to_string(),
            safety_root: safety.root.map(|r| r.to_hex()).unwrap_or_default(),
            no_ignore,
            pid: std::process::id(),
            restoring_root: snapshot.root.map(|r| r.to_hex()),
            session: Some(safety.session.to_string()),
            preserve_mtime,
        };
        let bytes = serde_json::to_vec(&journal).map_err(|e| Error::corrupt(e.to_string()))?;
        crate::store::backend::stage_file(&self.layout().tmp(), &bytes)
    }

    /// Renames a journal [`Repository::stage_journal`] wrote into place and flushes that.
    pub(crate) fn place_journal(&self, key: &str, staged: StagedFile) -> Result<PathBuf> {
        let path = self.journal_path(key);
        staged.replace(&path, "write the journal")?;
        Ok(path)
    }
}
