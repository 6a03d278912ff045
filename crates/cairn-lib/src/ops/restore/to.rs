//! `cairn restore --to DIR`: put a snapshot into a new or empty directory.
//!
//! Refuse a destination that is not a new or empty directory, or lies in the store → create it
//! → take its lock → write a marker in the store's journal naming it (`marker.rs`) → write the
//! tree → record what was written in the stat cache, if the store's disk has room for it →
//! drop the marker. A failure removes what the restore made, so a retry is not refused. A kill
//! leaves the marker: the next restore into the same directory finds it, empties the directory
//! (it holds only what the killed restore wrote) and does the restore again, and `cairn check`
//! reports it meanwhile.

use std::path::{Path, PathBuf};

use super::marker::{self, Marker};
use super::{RestoreMode, RestoreResult};
use crate::Repository;
use crate::error::{Error, Hint, IoContext, Result};
use crate::ops::save::Progress;
use crate::snapshot::Snapshot;
use crate::store::catalog::room;
use crate::targets::dir::restore::{creation_plan, restore_fresh};
use crate::targets::dir::statcache::{StatCache, settling};
use crate::tree::DirRoot;

/// About what the stat cache of one restored file costs the catalog, WAL included.
const CACHE_BYTES_PER_FILE: u64 = 1024;
/// Room the store's disk keeps after the stat cache is written.
const CACHE_RESERVE: u64 = 8 << 20;

impl Repository {
    pub(super) fn restore_new(
        &self,
        snapshot: Snapshot,
        root: &DirRoot,
        dest: &Path,
        dry_run: bool,
        progress: &Progress,
    ) -> Result<RestoreResult> {
        let dest = std::path::absolute(dest).at("resolve", dest)?;
        // A destination an interrupted restore left is done again: what it holds is what that
        // restore wrote. It is found, locked and emptied before anything else looks at it.
        let mut redo = None;
        if let Ok(meta) = std::fs::symlink_metadata(&dest) {
            if !meta.is_dir() {
                return Err(Error::conflict(format!(
                    "{} exists and is not a directory; pass a new or empty directory",
                    dest.display()
                )));
            }
            if std::fs::read_dir(&dest).at("list", &dest)?.next().is_some() {
                match self.leftover_restore_to(&dest)? {
                    Some(found) if !dry_run => redo = Some(found),
                    _ => {
                        return Err(Error::conflict(format!(
                            "{} is not empty; pass a new or empty directory",
                            dest.display()
                        ))
                        .or_hint(Hint::DropOption("to"))
                        .purpose("to restore in place"));
                    }
                }
            }
        }
        let (files, bytes) = (snapshot.stats.files, snapshot.stats.bytes);
        let mut result = RestoreResult {
            interrupted_restore: None,
            destination: dest.display().to_string(),
            mode: RestoreMode::NewDirectory,
            dry_run,
            safety_snapshot: None,
            plan: Vec::new(),
            files_written: files,
            bytes_written: bytes,
            snapshot,
        };
        if dry_run {
            result.plan = creation_plan(self, root)?;
            return Ok(result);
        }
        // Refused before anything is created: a destination inside the store is never made,
        // even when it is named through a link to the store.
        self.refuse_overlap(&dest)?;
        self.refuse_overlap(&resolved(&dest))?;
        let (made, held) = match redo {
            Some((found, lock)) => {
                self.notice(&format!(
                    "a restore of snapshot {} into {} was interrupted; it is done again from the start",
                    found.snapshot,
                    dest.display()
                ));
                empty(&dest);
                (found.made, Some(lock))
            }
            None => (!dest.exists(), None),
        };
        std::fs::create_dir_all(&dest).at("create", &dest)?;
        let canonical = std::fs::canonicalize(&dest).at("resolve", &dest)?;
        let key = canonical.to_string_lossy().into_owned();
        // Leave the destination as it was found: removed if a restore made it, else emptied
        // again (it was empty), so a retry is not refused.
        let undo = |marker: Option<&Path>| {
            if made {
                let _ = std::fs::remove_dir_all(&canonical);
            } else {
                empty(&canonical);
            }
            if let Some(marker) = marker {
                let _ = std::fs::remove_file(marker);
            }
        };
        if let Err(e) = self.refuse_overlap(&canonical) {
            undo(None);
            return Err(e);
        }
        let _lock = match held.map_or_else(|| self.lock_target(&key, "a restore"), Ok) {
            Ok(lock) => lock,
            Err(e) => {
                undo(None);
                return Err(e);
            }
        };
        let marker = match self.write_restore_marker(&canonical, &key, &result.snapshot, made) {
            Ok(path) => path,
            Err(e) => {
                undo(None);
                return Err(e.context(format!("the restore into {} did not start", canonical.display())));
            }
        };
        let (files, bytes, written) = match restore_fresh(self, root, &canonical, progress) {
            Ok(done) => done,
            Err(e) => {
                undo(Some(&marker));
                return Err(
                    e.context(format!("the restore into {} failed and was undone", canonical.display()))
                );
            }
        };
        // The directory is whole: its token goes, and it gets back the time the restore gave
        // it, before the stat cache looks at it. The store's marker goes last.
        remove_token(&canonical)?;
        let time = rustix::fs::Timespec {
            tv_sec: root.top.mtime_ns.div_euclid(1_000_000_000),
            tv_nsec: root.top.mtime_ns.rem_euclid(1_000_000_000) as _,
        };
        let times = rustix::fs::Timestamps { last_access: time, last_modification: time };
        rustix::fs::utimensat(rustix::fs::CWD, &canonical, &times, rustix::fs::AtFlags::empty())
            .map_err(|e| Error::io("set the time of", &canonical, e.into()))?;
        // The stat cache spares the first save of the new directory reading it back; it is
        // only a cache, and the directory is whole without it, so a store's disk short of room
        // for it keeps none, and a failure to write it fails nothing.
        let need = files.saturating_mul(CACHE_BYTES_PER_FILE).saturating_mul(2) + CACHE_RESERVE;
        if room::free_bytes(self.root()).is_some_and(|free| free < need) {
            self.notice(&format!(
                "the store's disk is short of room, so no stat cache was kept for {}: its first save reads every file",
                canonical.display()
            ));
        } else if let Err(e) = StatCache::store_written(self, &key, settling(&written), written) {
            self.notice(&format!(
                "no stat cache was kept for {} ({e}): its first save reads every file",
                canonical.display()
            ));
        }
        let _ = std::fs::remove_file(&marker);
        result.files_written = files;
        result.bytes_written = bytes;
        Ok(result)
    }

    /// The marker of an interrupted restore into `dest`, with `dest`'s lock, when `dest` is the
    /// very directory that restore wrote into and no process is still writing it. A marker
    /// whose directory is gone or was replaced is dropped.
    fn leftover_restore_to(
        &self,
        dest: &Path,
    ) -> Result<Option<(Marker, (crate::store::lock::LockGuard, crate::store::lock::LockGuard))>> {
        let Ok(canonical) = std::fs::canonicalize(dest) else { return Ok(None) };
        let key = canonical.to_string_lossy().into_owned();
        let Some((path, found)) = marker::read(self, &key) else { return Ok(None) };
        if crate::store::layout::pid_alive(found.pid) {
            return Ok(None);
        }
        if !found.names(&canonical) {
            let _ = std::fs::remove_file(path);
            return Ok(None);
        }
        let lock = self.lock_target(&key, "a restore")?;
        Ok(Some((found, lock)))
    }

    /// Writes the marker of a restore into `dir` (key `key`), before its first file.
    fn write_restore_marker(
        &self,
        dir: &Path,
        key: &str,
        snapshot: &Snapshot,
        made: bool,
    ) -> Result<PathBuf> {
        marker::write(self, &Marker::of(key, snapshot, made), dir)
    }
}

/// Removes the marker's token from `dir`, which the restore has just given the snapshot's
/// mode: a directory saved without write permission is made writable for the removal only.
fn remove_token(dir: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let inside = dir.join(marker::IN_DESTINATION);
    match std::fs::remove_file(&inside) {
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
            let mode = std::fs::metadata(dir).at("read the metadata of", dir)?.permissions().mode();
            let set = |mode: u32| {
                std::fs::set_permissions(dir, std::fs::Permissions::from_mode(mode))
                    .at("set the mode of", dir)
            };
            set(mode | 0o700)?;
            let removed = std::fs::remove_file(&inside).at("remove", &inside);
            set(mode)?;
            removed
        }
        removed => removed.at("remove", &inside),
    }
}

/// Removes every entry of `dir` (links as links, never what they point to). A directory the
/// restore had already given a mode without write permission is made writable first.
fn empty(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            if std::fs::remove_dir_all(&path).is_err() {
                make_writable(&path);
                let _ = std::fs::remove_dir_all(&path);
            }
        } else {
            let _ = std::fs::remove_file(&path);
        }
    }
}

/// Gives `dir` and every directory below it (never through a link) its owner's permissions.
fn make_writable(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let Ok(meta) = std::fs::symlink_metadata(dir) else { return };
    if !meta.is_dir() {
        return;
    }
    let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(meta.permissions().mode() | 0o700));
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            make_writable(&entry.path());
        }
    }
}

/// `path` with its longest existing ancestor resolved (links followed), the rest as given: what
/// it will be once created.
fn resolved(path: &Path) -> PathBuf {
    let mut rest = Vec::new();
    let mut base = path;
    loop {
        if let Ok(real) = std::fs::canonicalize(base) {
            return rest.iter().rev().fold(real, |p, name| p.join(name));
        }
        match (base.parent(), base.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_owned());
                base = parent;
            }
            _ => return path.to_path_buf(),
        }
    }
}
