//! The marker of a restore into a new directory: a small file in the store's journal,
//! `journal/<hash of the destination>.restore-to`, written before the restore's first file and
//! removed after its last, and beside it a file `.cairn-restore-incomplete` in the destination
//! holding the same random token. One left behind names a destination that a killed restore
//! left incomplete: the next restore into it does it again, and `cairn check` reports it
//! ([`Repository::interrupted_restores_to`]); a person looking into the directory sees it too.
//!
//! The token, not the path or the inode (a directory made again at once gets the inode just
//! freed), tells that the directory is the one the restore wrote into: one made anew at the
//! same path, by hand after the kill, is never emptied. The store's file ends in `.restore-to`,
//! not `.json`, so readers of in-place restore journals pass it by.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::Repository;
use crate::error::{Error, IoContext, Result};
use crate::id::ObjectId;
use crate::snapshot::Snapshot;

const SUFFIX: &str = "restore-to";

/// What a restore into a new directory writes before it starts.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Marker {
    /// The destination, resolved (its stat cache key).
    pub destination: String,
    /// The snapshot being restored.
    pub snapshot: String,
    pub pid: u32,
    /// True when the restore made the directory (an undo removes it), false when it was given
    /// an empty one (an undo empties it).
    pub made: bool,
    /// Also in the destination's [`IN_DESTINATION`] file.
    token: String,
}

/// The file in the destination that holds the marker's token while the restore runs.
pub(crate) const IN_DESTINATION: &str = ".cairn-restore-incomplete";

impl Marker {
    pub(crate) fn of(key: &str, snapshot: &Snapshot, made: bool) -> Self {
        Self {
            destination: key.to_owned(),
            snapshot: snapshot.id.to_string(),
            pid: std::process::id(),
            made,
            token: uuid::Uuid::now_v7().simple().to_string(),
        }
    }

    /// True when `dir` is the directory this marker's restore wrote into.
    pub(crate) fn names(&self, dir: &Path) -> bool {
        std::fs::read(dir.join(IN_DESTINATION)).is_ok_and(|t| t == self.token.as_bytes())
    }
}

fn path_of(store: &Repository, key: &str) -> PathBuf {
    let name = &ObjectId::of(key.as_bytes()).to_hex()[..24];
    store.layout().journal().join(format!("{name}.{SUFFIX}"))
}

/// Writes `marker` into the store, then its token into `dir`; a store's disk without room for
/// it refuses the restore here, before the destination holds anything. The marker is whole or
/// absent after a kill, and goes unflushed, as the token does: flushed alone, it outlived a
/// power cut only to be dropped for a token that did not, and cost every restore two flushes
/// before its first file.
pub(crate) fn write(store: &Repository, marker: &Marker, dir: &Path) -> Result<PathBuf> {
    let path = path_of(store, &marker.destination);
    let bytes = serde_json::to_vec(marker).map_err(|e| Error::corrupt(e.to_string()))?;
    crate::store::backend::create_dir_durably(&store.layout().journal())?;
    crate::store::backend::replace_file_unflushed(
        &store.layout().tmp(),
        &bytes,
        &path,
        "write the restore marker",
    )?;
    let inside = dir.join(IN_DESTINATION);
    std::fs::write(&inside, marker.token.as_bytes()).at("write", &inside)?;
    Ok(path)
}

/// The marker of a restore into the destination `key`, if there is one that reads.
pub(crate) fn read(store: &Repository, key: &str) -> Option<(PathBuf, Marker)> {
    let path = path_of(store, key);
    let marker = serde_json::from_slice(&std::fs::read(&path).ok()?).ok()?;
    Some((path, marker))
}

/// A restore into a new directory that was interrupted: its directory is incomplete.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct InterruptedRestoreTo {
    /// The directory the restore was writing.
    pub destination: String,
    /// The snapshot it was restoring.
    pub snapshot: String,
    /// False when the directory no longer holds the marker's token (the restore got as far as
    /// removing it, or the directory was removed or made anew since): the marker is only in
    /// the way.
    pub destination_left: bool,
}

impl InterruptedRestoreTo {
    /// What `check` says of it, in one sentence.
    pub fn finding(&self) -> String {
        if self.destination_left {
            format!(
                "a restore of snapshot {} into {} was interrupted and left it incomplete; restore into it again to finish it, or delete the directory",
                self.snapshot, self.destination
            )
        } else {
            format!(
                "a restore of snapshot {} into {} was interrupted, and the directory no longer holds its token (finished, removed or made anew since); nothing is left to do",
                self.snapshot, self.destination
            )
        }
    }
}

impl Repository {
    /// Every restore into a new directory that was interrupted (its process is gone), for
    /// `check` to report.
    pub fn interrupted_restores_to(&self) -> Result<Vec<InterruptedRestoreTo>> {
        let mut out = Vec::new();
        let Ok(entries) = std::fs::read_dir(self.layout().journal()) else { return Ok(out) };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.extension().is_none_or(|e| e != SUFFIX) {
                continue;
            }
            let Some(marker) =
                std::fs::read(&path).ok().and_then(|b| serde_json::from_slice::<Marker>(&b).ok())
            else {
                continue;
            };
            if crate::store::layout::pid_alive(marker.pid) {
                continue;
            }
            let destination_left = marker.names(Path::new(&marker.destination));
            out.push(InterruptedRestoreTo {
                destination: marker.destination,
                snapshot: marker.snapshot,
                destination_left,
            });
        }
        out.sort_by(|a, b| a.destination.cmp(&b.destination));
        Ok(out)
    }

    /// Removes the markers of interrupted restores whose directory is gone, returning how many
    /// (for `gc` or `repair` to tidy; the restore itself drops such a marker when it meets it).
    pub fn drop_stale_restore_markers(&self) -> Result<usize> {
        let mut dropped = 0;
        for found in self.interrupted_restores_to()? {
            if !found.destination_left {
                let path = path_of(self, &found.destination);
                std::fs::remove_file(&path).at("remove", &path)?;
                dropped += 1;
            }
        }
        Ok(dropped)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn left(store: &Repository, dir: &Path, token_in_dir: bool) {
        // A process that has exited: its pid is free.
        let mut gone = std::process::Command::new("true").spawn().unwrap();
        let pid = gone.id();
        gone.wait().unwrap();
        let key = dir.to_string_lossy().into_owned();
        let marker =
            Marker { destination: key, snapshot: "s1".into(), pid, made: true, token: "t0k3n".into() };
        std::fs::create_dir_all(dir).unwrap();
        write(store, &marker, dir).unwrap();
        if !token_in_dir {
            std::fs::remove_file(dir.join(IN_DESTINATION)).unwrap();
        }
    }

    #[test]
    fn check_hears_of_a_marker_left_behind_and_whether_its_directory_is_still_there() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Repository::open(&tmp.path().join("store")).unwrap();
        left(&store, &tmp.path().join("a"), true);
        left(&store, &tmp.path().join("b"), false);
        let found = store.interrupted_restores_to().unwrap();
        assert_eq!(found.iter().map(|f| f.destination_left).collect::<Vec<_>>(), [true, false]);
        let a = tmp.path().join("a").display().to_string();
        assert_eq!(
            found[0].finding(),
            format!(
                "a restore of snapshot s1 into {a} was interrupted and left it incomplete; restore into it again to finish it, or delete the directory"
            )
        );
        assert_eq!(store.drop_stale_restore_markers().unwrap(), 1);
        assert_eq!(store.interrupted_restores_to().unwrap().len(), 1);
        // In-place restore journals are not confused by it.
        assert!(store.interrupted_restores().unwrap().is_empty());
    }
}
