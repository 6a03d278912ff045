//! `cairn save`: capture a target as a new snapshot.
//!
//! Pipeline: resolve the target and session → check the name → take the target's lock →
//! capture through the blob writer (stat cache first) → publish the last pack → write the
//! record object → commit the catalog row (the snapshot exists from here) → store the new
//! stat cache → apply the store's keep policy.

use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::resolve::SessionChoice;
use crate::error::{Error, Hint, Result};
use crate::id::SnapshotId;
use crate::name::validate_name;
use crate::snapshot::Snapshot;
use crate::store::Store;
use crate::store::catalog::NewSnapshot;
use crate::store::writer::BlobWriter;
use crate::targets::Target;
pub use crate::targets::dir::Progress;
use crate::targets::dir::capture::{self, Uncovered};
use crate::targets::dir::statcache::{CacheEntry, StatCache};

/// The stat cache a capture made, not stored yet.
pub(crate) struct FreshCache {
    pub scan_started_ns: i64,
    pub entries: Vec<(Vec<u8>, CacheEntry)>,
}

impl FreshCache {
    /// Stores it as the stat cache of target `key`.
    pub(crate) fn store(self, store: &Store, key: &str) -> Result<()> {
        StatCache::store(store, key, self.scan_started_ns, self.entries)
    }
}

/// A committed directory snapshot, and what its capture learned about the live tree.
pub(crate) struct DirCapture {
    pub snapshot: Snapshot,
    /// The stat cache the capture made, when it differs from the stored one; the caller
    /// stores it (or carries it into a restore that rewrites it anyway).
    pub cache: Option<FreshCache>,
    /// Every path the capture left out, which a restore must not remove.
    pub uncovered: Uncovered,
}

/// What to save.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
pub struct SaveOptions {
    /// The target: a directory path (or `dir:PATH`).
    pub target: String,
    /// A name for the snapshot, unique per session and target.
    pub name: Option<String>,
    /// What the snapshot is being taken before.
    pub description: Option<String>,
    /// Move an existing name to the new snapshot instead of refusing.
    #[serde(default)]
    pub force: bool,
    /// Capture ignored paths too (`.gitignore` / `.cairnignore` are honoured by default).
    #[serde(default)]
    pub no_ignore: bool,
    /// The session to save into.
    #[serde(default)]
    pub session: SessionChoice,
    /// Capture files that hold credentials too (`.env`, private keys, files with access
    /// tokens), which are left out by default and listed in `not_covered`.
    #[serde(default)]
    pub include_secrets: bool,
}

/// The new snapshot, and what the keep policy removed after it.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct SaveResult {
    /// The snapshot record.
    #[serde(flatten)]
    pub snapshot: Snapshot,
    /// Snapshots the store's keep policy (`keep.*` settings) removed after this save.
    pub removed_by_policy: Vec<Snapshot>,
    /// An interrupted restore of the same target that was found and resolved first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interrupted_restore: Option<super::interrupted::Recovered>,
}

impl Store {
    /// Captures `options.target` as a new snapshot.
    pub fn save(&self, options: &SaveOptions) -> Result<SaveResult> {
        self.save_with_progress(options, &Progress::default())
    }

    /// [`Store::save`], counting the files and bytes of a directory it scans into `progress`
    /// for a front end to show while it runs.
    pub fn save_with_progress(&self, options: &SaveOptions, progress: &Progress) -> Result<SaveResult> {
        let target = Target::parse(&options.target)?;
        if let Target::Transcript(file) = &target {
            return self.save_transcript_target(file, options);
        }
        if let Target::Compose(project) = &target {
            let saved = self.compose_save(&super::compose::ComposeSaveOptions {
                project: project.clone(),
                name: options.name.clone(),
                description: options.description.clone(),
                force: options.force,
                session: options.session.clone(),
                ..Default::default()
            })?;
            return Ok(SaveResult {
                snapshot: saved.snapshot,
                removed_by_policy: saved.removed_snapshots,
                interrupted_restore: None,
            });
        }
        let Target::Dir(path) = &target else {
            return Err(Error::invalid(format!(
                "cairn cannot save {} targets with this command yet; pass a directory",
                target.kind()
            )));
        };
        if let Some(name) = &options.name {
            validate_name("snapshot", name)?;
        }
        let session = self.resolve_session(&options.session)?;
        self.refuse_overlap(path)?;
        let key = target.key();
        if let (Some(name), false) = (&options.name, options.force)
            && self.resolve_snapshot(&session, name, Some(&key)).is_ok()
        {
            return Err(Error::conflict(format!(
                "a snapshot named {name:?} already exists for {key}; pick another name"
            ))
            .or_hint(Hint::SetOption("force"))
            .purpose("to move the name to the new snapshot"));
        }
        let _lock = self.lock_target(&key, "a save")?;
        let interrupted_restore = self.resolve_interrupted(&key, super::interrupted::Resolve::RollBack)?;
        let DirCapture { snapshot, cache, .. } =
            self.capture_dir(path, &key, session.id, options, false, progress)?;
        if let Some(cache) = cache {
            cache.store(self, &key)?;
        }
        let removed_by_policy = self.apply_keep_policy(&session, &key, snapshot.id)?;
        Ok(SaveResult { snapshot, removed_by_policy, interrupted_restore })
    }

    /// Refuses a directory that holds the store, or lies inside it.
    pub(crate) fn refuse_overlap(&self, path: &std::path::Path) -> Result<()> {
        let store = std::fs::canonicalize(self.root()).unwrap_or_else(|_| self.root().to_path_buf());
        if store.starts_with(path) {
            // Best effort: a store left behind is clutter in the tree, never a loss.
            let _ = self.discard_if_new();
            return Err(Error::invalid(format!(
                "the store {} lies inside {}; a snapshot must never live inside the tree it captures",
                store.display(),
                path.display()
            ))
            .hint(Hint::ChooseStore)
            .purpose("outside it"));
        }
        if path.starts_with(&store) {
            return Err(Error::invalid(format!(
                "{} is inside the store {}; pick a directory outside it",
                path.display(),
                store.display()
            )));
        }
        Ok(())
    }

    /// Captures directory `path` and commits the record. The caller holds the target's lock.
    pub(crate) fn capture_dir(
        &self,
        path: &std::path::Path,
        key: &str,
        session: crate::id::SessionId,
        options: &SaveOptions,
        safety: bool,
        progress: &Progress,
    ) -> Result<DirCapture> {
        let started = Instant::now();
        let old_cache = StatCache::load(self, key)?;
        let writer = BlobWriter::new(self);
        let include_secrets = options.include_secrets || self.config().flag("secrets.include");
        let filter = capture::Filter { no_ignore: options.no_ignore, include_secrets };
        let captured = capture::capture_observed(&writer, path, &old_cache, filter, progress)
            .and_then(|c| writer.finish().map(|()| c))
            .inspect_err(|_| writer.abandon())?;
        drop(old_cache);
        let (new_bytes, stored_bytes) = writer.totals();
        let mut stats = captured.stats;
        stats.new_bytes = new_bytes;
        stats.stored_bytes = stored_bytes;
        stats.duration_ms = started.elapsed().as_millis() as u64;
        let snapshot = Snapshot {
            id: SnapshotId::new(),
            name: if safety { None } else { options.name.clone() },
            description: options.description.clone(),
            target: key.to_owned(),
            kind: "dir".into(),
            session,
            created_at: crate::time::now_rfc3339(),
            safety,
            stats,
            not_covered: captured.not_covered,
            details: serde_json::json!({ "no_ignore": options.no_ignore, "include_secrets": include_secrets }),
            root: Some(captured.root),
        };
        self.commit_snapshot(&snapshot, options.force).inspect_err(|_| writer.abandon())?;
        let cache = (!captured.cache_unchanged)
            .then_some(FreshCache { scan_started_ns: captured.scan_started_ns, entries: captured.cache });
        Ok(DirCapture { snapshot, cache, uncovered: captured.uncovered })
    }

    /// Makes a snapshot durable: its record object first (so the catalog can be rebuilt from
    /// objects), then the catalog row, which is the moment the snapshot exists.
    pub(crate) fn commit_snapshot(&self, snapshot: &Snapshot, force_name: bool) -> Result<()> {
        let mut record = serde_json::to_value(snapshot)
            .map_err(|e| Error::corrupt(format!("could not encode the snapshot record: {e}")))?;
        record["root"] = serde_json::json!(snapshot.root.map(|r| r.to_hex()));
        let bytes = serde_json::to_vec(&record)
            .map_err(|e| Error::corrupt(format!("could not encode the snapshot record: {e}")))?;
        self.claim_name(snapshot, force_name)?;
        self.backend().put_if_absent(&format!("records/{}.json", snapshot.id), &bytes)?;
        self.catalog.insert_snapshot(NewSnapshot { snapshot, force_name })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

    #[test]
    fn a_second_writer_on_one_target_is_refused_with_the_holder_and_others_proceed() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        std::fs::write(a.join("f"), "x").unwrap();
        std::fs::write(b.join("f"), "y").unwrap();
        let store = Store::open(&dir.path().join("store")).unwrap();
        let other = Store::open(&dir.path().join("store")).unwrap();
        let key = crate::targets::Target::parse(a.to_str().unwrap()).unwrap().key();
        let held = store.lock_target(&key, "a restore").unwrap();
        let err = other
            .save(&SaveOptions { target: a.display().to_string(), ..SaveOptions::default() })
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Locked);
        let text = err.to_string();
        assert!(text.contains("a restore (pid ") && text.contains("retry when it finishes"), "{text}");
        other.save(&SaveOptions { target: b.display().to_string(), ..SaveOptions::default() }).unwrap();
        drop(held);
        other.save(&SaveOptions { target: a.display().to_string(), ..SaveOptions::default() }).unwrap();
    }
}
