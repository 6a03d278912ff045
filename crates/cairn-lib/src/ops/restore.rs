//! `cairn restore`: put a snapshot back, into a new directory or in place.
//!
//! In place: take the target's lock → capture a safety snapshot of the live state (an
//! incremental save, so it reads only what changed) → plan = Merkle diff of live vs snapshot →
//! write a journal → apply the plan → record the written files in the stat cache → drop the
//! journal. If applying fails, the safety snapshot is put back by the same machinery and both
//! errors are reported.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::interrupted::{Journal, Recovered, Resolve};
use super::resolve::SessionChoice;
use super::save::{DirCapture, Progress, SaveOptions};
use crate::error::{Error, Hint, IoContext, Operation, Result};
use crate::snapshot::Snapshot;
use crate::store::Store;
use crate::store::writer::BlobWriter;
use crate::targets::dir::capture::{self, Uncovered};
use crate::targets::dir::fsops::DirHandle;
use crate::targets::dir::materialize::Materializer;
use crate::targets::dir::restore::{Plan, PlanEntry, creation_plan, later_links, restore_fresh};
use crate::targets::dir::statcache::{CacheEntry, StatCache, coarse_now_ns};
use crate::tree::{self, DirRoot};

/// What to restore, and where.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
pub struct RestoreOptions {
    /// The snapshot: an id, a unique id prefix, a name, or `latest`.
    pub reference: String,
    /// The target the reference is resolved among (needed for names and `latest` when the
    /// session has several targets).
    pub target: Option<String>,
    /// Restore into this new or empty directory instead of in place.
    pub to: Option<PathBuf>,
    /// Report the plan and change nothing.
    #[serde(default)]
    pub dry_run: bool,
    /// Give rewritten files the snapshot's mtimes instead of the current time.
    #[serde(default)]
    pub preserve_mtime: bool,
    /// The session to resolve the reference in.
    #[serde(default)]
    pub session: SessionChoice,
    /// Finish a restore a killed process left half-applied (of `target`, or of the only one
    /// there is) instead of restoring `reference`; the tree as found is saved first.
    #[serde(default)]
    pub continue_interrupted: bool,
    /// Roll back a restore a killed process left half-applied (of `target`, or of the only
    /// one there is) instead of restoring `reference`; the tree as found is saved first.
    #[serde(default)]
    pub abort_interrupted: bool,
}

/// What a restore did (or, with `dry_run`, would do).
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct RestoreResult {
    /// The snapshot restored.
    pub snapshot: Snapshot,
    /// Where it was restored.
    pub destination: String,
    /// `in_place` or `new_directory`.
    pub mode: String,
    /// True when nothing was changed.
    pub dry_run: bool,
    /// The safety snapshot of the live state taken first (in place only).
    pub safety_snapshot: Option<Snapshot>,
    /// Changes applied: created, rewritten, removed, replaced entries.
    pub plan: Vec<PlanEntry>,
    /// Files written.
    pub files_written: u64,
    /// Bytes written.
    pub bytes_written: u64,
    /// An interrupted restore of the same target that was found and resolved first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interrupted_restore: Option<Recovered>,
}

impl Store {
    /// Restores a snapshot.
    pub fn restore(&self, options: &RestoreOptions) -> Result<RestoreResult> {
        self.restore_with_progress(options, &Progress::default())
    }

    /// [`Store::restore`], counting the files it scans (for the safety snapshot) and writes
    /// into `progress` for a front end to show while it runs.
    pub fn restore_with_progress(
        &self,
        options: &RestoreOptions,
        progress: &Progress,
    ) -> Result<RestoreResult> {
        if options.continue_interrupted || options.abort_interrupted {
            return self.resolve_interrupted_restore(options);
        }
        let session = self.resolve_session(&options.session)?;
        let target_key =
            options.target.as_deref().map(crate::targets::Target::parse).transpose()?.map(|t| t.key());
        let snapshot = self.resolve_snapshot(&session, &options.reference, target_key.as_deref())?;
        if snapshot.kind != "dir" {
            return Err(not_a_dir_snapshot(&snapshot));
        }
        let root_id =
            snapshot.root.ok_or_else(|| Error::corrupt(format!("snapshot {} has no root", snapshot.id)))?;
        let root = tree::read_root(self, &root_id)?;
        match &options.to {
            Some(dest) => self.restore_new(snapshot, &root, dest, options.dry_run, progress),
            None => self.restore_in_place(&session, snapshot, &root, options, progress),
        }
    }

    fn restore_new(
        &self,
        snapshot: Snapshot,
        root: &DirRoot,
        dest: &Path,
        dry_run: bool,
        progress: &Progress,
    ) -> Result<RestoreResult> {
        let dest = std::path::absolute(dest).at("resolve", dest)?;
        if let Ok(meta) = std::fs::symlink_metadata(&dest) {
            if !meta.is_dir() {
                return Err(Error::conflict(format!(
                    "{} exists and is not a directory; pass a new or empty directory",
                    dest.display()
                )));
            }
            if std::fs::read_dir(&dest).at("list", &dest)?.next().is_some() {
                return Err(Error::conflict(format!(
                    "{} is not empty; pass a new or empty directory",
                    dest.display()
                ))
                .or_hint(Hint::DropOption("to"))
                .purpose("to restore in place"));
            }
        }
        let (files, bytes) = (snapshot.stats.files, snapshot.stats.bytes);
        let mut result = RestoreResult {
            interrupted_restore: None,
            destination: dest.display().to_string(),
            mode: "new_directory".into(),
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
        let existed = dest.exists();
        std::fs::create_dir_all(&dest).at("create", &dest)?;
        let canonical = std::fs::canonicalize(&dest).at("resolve", &dest)?;
        let key = canonical.to_string_lossy().into_owned();
        let undo = || {
            // Leave the destination as it was found: removed if this restore made it, else
            // emptied again (it was empty), so a retry is not refused.
            if existed {
                if let Ok(entries) = std::fs::read_dir(&canonical) {
                    for entry in entries.flatten() {
                        let path = entry.path();
                        let _ = if entry.file_type().is_ok_and(|t| t.is_dir()) {
                            std::fs::remove_dir_all(&path)
                        } else {
                            std::fs::remove_file(&path)
                        };
                    }
                }
            } else {
                let _ = std::fs::remove_dir_all(&canonical);
            }
        };
        if let Err(e) = self.refuse_overlap(&canonical) {
            undo();
            return Err(e);
        }
        let _lock = match self.lock_target(&key, "a restore") {
            Ok(lock) => lock,
            Err(e) => {
                undo();
                return Err(e);
            }
        };
        let (files, bytes, written) = match restore_fresh(self, root, &canonical, progress) {
            Ok(done) => done,
            Err(e) => {
                undo();
                return Err(
                    e.context(format!("the restore into {} failed and was undone", canonical.display()))
                );
            }
        };
        StatCache::store(self, &key, settle_clock(&written), written)?;
        result.files_written = files;
        result.bytes_written = bytes;
        Ok(result)
    }

    fn restore_in_place(
        &self,
        session: &crate::session::Session,
        snapshot: Snapshot,
        want: &DirRoot,
        options: &RestoreOptions,
        progress: &Progress,
    ) -> Result<RestoreResult> {
        let path = PathBuf::from(&snapshot.target);
        if !path.exists() {
            return self.restore_new(snapshot, want, &path, options.dry_run, progress).map(|mut r| {
                r.mode = "in_place".into();
                r
            });
        }
        self.refuse_overlap(&path)?;
        let key = snapshot.target.clone();
        let filter = capture::Filter::of_snapshot(&snapshot.details);
        let no_ignore = filter.no_ignore;
        let _lock = (!options.dry_run).then(|| self.lock_target(&key, "a restore")).transpose()?;
        let interrupted_restore =
            if options.dry_run { None } else { self.resolve_interrupted(&key, Resolve::RollBack)? };
        if options.dry_run {
            self.refuse_interrupted(&key)?;
            let cache = StatCache::load(self, &key)?;
            let writer = BlobWriter::dry(self);
            let live = capture::capture_observed(&writer, &path, &cache, filter, progress)?;
            let live_root = read_dry_root(&writer, &live.root)?;
            let plan = Plan::between(&writer, &live_root, want, options.preserve_mtime, &live.uncovered)?;
            return Ok(RestoreResult {
                destination: key,
                mode: "in_place".into(),
                dry_run: true,
                safety_snapshot: None,
                plan: plan.entries(),
                files_written: 0,
                bytes_written: 0,
                snapshot,
                interrupted_restore: None,
            });
        }
        let save = SaveOptions {
            target: key.clone(),
            description: Some(format!("live state before restoring {}", snapshot.id)),
            no_ignore,
            include_secrets: filter.include_secrets,
            ..SaveOptions::default()
        };
        let DirCapture { snapshot: safety, cache: live_cache, uncovered } =
            self.capture_dir(&path, &key, session.id, &save, true, progress)?;
        let safety_root = tree::read_root(
            self,
            &safety.root.ok_or_else(|| Error::corrupt("safety snapshot has no root"))?,
        )?;
        // Planned before the journal: a plan refused (it would remove uncovered paths) has
        // changed nothing, so there is nothing to put back.
        let plan = Plan::between(self, &safety_root, want, options.preserve_mtime, &uncovered)?;
        let journal = self.write_journal(&key, &snapshot, &safety, no_ignore, options.preserve_mtime)?;
        let live_cache = live_cache.map(|c| StatCache::from_scan(c.scan_started_ns, c.entries));
        let outcome =
            self.apply_planned(&plan, &path, &key, want, options.preserve_mtime, live_cache, progress);
        let (plan, files, bytes) = match outcome {
            Ok(done) => done,
            Err(first) => {
                let replay = self.replay(&path, &key, &safety_root, no_ignore);
                let _ = std::fs::remove_file(&journal);
                return Err(match replay {
                    Ok(_) => Error::new(
                        first.kind(),
                        format!(
                            "the restore failed ({first}); the live state was put back from safety snapshot {}",
                            safety.id
                        ),
                    ),
                    Err(second) => Error::new(
                        first.kind(),
                        format!(
                            "the restore failed ({first}), and putting back safety snapshot {} failed too ({second})",
                            safety.id
                        ),
                    )
                    .hint(Hint::Run(Operation::Restore { snapshot: safety.id.to_string() })),
                });
            }
        };
        let _ = std::fs::remove_file(&journal);
        self.expire_safety(session, &key, safety.id)?;
        Ok(RestoreResult {
            destination: key,
            mode: "in_place".into(),
            dry_run: false,
            safety_snapshot: Some(safety),
            plan,
            files_written: files,
            bytes_written: bytes,
            snapshot,
            interrupted_restore,
        })
    }

    /// Finishes or rolls back an interrupted restore, as the options ask.
    fn resolve_interrupted_restore(&self, options: &RestoreOptions) -> Result<RestoreResult> {
        let how = if options.abort_interrupted { Resolve::RollBack } else { Resolve::Finish };
        if options.abort_interrupted && options.continue_interrupted {
            return Err(Error::invalid("pick one of continue and abort for an interrupted restore"));
        }
        let key = match options.target.as_deref() {
            Some(t) => crate::targets::Target::parse(t)?.key(),
            None => {
                let found = self.interrupted_restores()?;
                match found.as_slice() {
                    [one] => one.target.clone(),
                    [] => {
                        return Err(Error::not_found(
                            "no interrupted restore was found; there is nothing to continue or abort",
                        ));
                    }
                    _ => {
                        let targets: Vec<&str> = found.iter().map(|f| f.target.as_str()).collect();
                        return Err(Error::invalid(format!(
                            "interrupted restores were found for {}; name the target",
                            targets.join(", ")
                        )));
                    }
                }
            }
        };
        let _lock = self.lock_target(&key, "a restore")?;
        let Some((recovered, (plan, files, bytes))) = self.resolve_interrupted_applied(&key, how)? else {
            return Err(Error::not_found(format!(
                "no interrupted restore of {key} was found; there is nothing to continue or abort"
            )));
        };
        let session = self.resolve_session(&options.session)?;
        let id = match how {
            Resolve::RollBack => &recovered.found.safety,
            Resolve::Finish => &recovered.found.restoring,
        };
        let snapshot = self.resolve_snapshot(&session, id, Some(&key))?;
        Ok(RestoreResult {
            destination: key,
            mode: "in_place".into(),
            dry_run: false,
            safety_snapshot: None,
            plan,
            files_written: files,
            bytes_written: bytes,
            snapshot,
            interrupted_restore: Some(recovered),
        })
    }

    /// Applies the plan from `live` to `want` under `path`, and records what it wrote in the
    /// stat cache so the next save reads nothing. `live_cache` is the cache of the capture of
    /// `live` when it was not stored (else the stored one is read).
    pub(crate) fn apply_plan(
        &self,
        path: &Path,
        key: &str,
        live: &DirRoot,
        want: &DirRoot,
        preserve_mtime: bool,
        live_cache: Option<StatCache>,
    ) -> Result<(Vec<PlanEntry>, u64, u64)> {
        // `live` is a stored capture, not a scan of now: what it left out is not known here.
        let plan = Plan::between(self, live, want, preserve_mtime, &Uncovered::default())?;
        self.apply_planned(&plan, path, key, want, preserve_mtime, live_cache, &Progress::default())
    }

    /// Applies `plan` (towards `want`) under `path`, as [`Store::apply_plan`] does.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn apply_planned(
        &self,
        plan: &Plan,
        path: &Path,
        key: &str,
        want: &DirRoot,
        preserve_mtime: bool,
        live_cache: Option<StatCache>,
        progress: &Progress,
    ) -> Result<(Vec<PlanEntry>, u64, u64)> {
        let handle = DirHandle::open_root(path)?;
        let m = Materializer::new(self, preserve_mtime, later_links(want)).observed(progress);
        plan.apply(&m, &handle, want)?;
        let files = m.files_written.load(std::sync::atomic::Ordering::Relaxed);
        let bytes = m.bytes_written.load(std::sync::atomic::Ordering::Relaxed);
        let written = m.written.into_inner().unwrap_or_else(|p| p.into_inner());
        let changed: Vec<Vec<u8>> = plan.changes.iter().map(|c| c.path.clone()).collect();
        let base = match live_cache {
            Some(cache) => cache,
            None => StatCache::load(self, key)?,
        };
        let mut entries = base.into_trusted_entries();
        entries.retain(|p, _| {
            !changed.iter().any(|c| p == c || (p.starts_with(c) && p.get(c.len()) == Some(&b'/')))
        });
        let settled = settle_clock(&written);
        entries.extend(written);
        StatCache::store(self, key, settled, entries.into_iter().collect())?;
        Ok((plan.entries(), files, bytes))
    }

    /// Puts the safety snapshot back after a failed apply. The tree is now partly changed, so
    /// the live state is scanned again rather than trusted.
    /// Returns what it did: paths changed, files written, bytes written.
    pub(crate) fn replay(
        &self,
        path: &Path,
        key: &str,
        safety: &DirRoot,
        no_ignore: bool,
    ) -> Result<(u64, u64, u64)> {
        self.catalog.drop_stat_cache(key)?;
        let writer = BlobWriter::dry(self);
        let live = capture::capture(
            &writer,
            path,
            &StatCache::default(),
            capture::Filter { no_ignore, include_secrets: false },
        )?;
        let live_root = read_dry_root(&writer, &live.root)?;
        let plan = Plan::between(&writer, &live_root, safety, true, &live.uncovered)?;
        let handle = DirHandle::open_root(path)?;
        let m = Materializer::new(self, true, later_links(safety));
        plan.apply(&m, &handle, safety)?;
        let files = m.files_written.load(std::sync::atomic::Ordering::Relaxed);
        let bytes = m.bytes_written.load(std::sync::atomic::Ordering::Relaxed);
        Ok((plan.changes.len() as u64, files, bytes))
    }

    fn write_journal(
        &self,
        key: &str,
        snapshot: &Snapshot,
        safety: &Snapshot,
        no_ignore: bool,
        preserve_mtime: bool,
    ) -> Result<PathBuf> {
        let path = self.journal_path(key);
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
        crate::store::backend::replace_file(&self.layout().tmp(), &bytes, &path, "write the journal")?;
        Ok(path)
    }
}

/// Why a snapshot of another kind cannot be restored as a directory, and what puts it back.
fn not_a_dir_snapshot(snapshot: &Snapshot) -> Error {
    let reference = snapshot.name.clone().unwrap_or_else(|| snapshot.id.to_string());
    match snapshot.kind.as_str() {
        super::transcript::KIND => Error::invalid(format!(
            "snapshot {reference} is a transcript, which a restore does not write"
        ))
        .hint(Hint::Run(Operation::LoadTranscript { snapshot: reference })),
        super::debug::KIND => Error::invalid(format!(
            "snapshot {reference} is a debug capture of a paused program's variables, which cannot be restored"
        ))
        .hint(Hint::Run(Operation::DiffDebugCaptures)),
        "compose" => {
            let project = snapshot.target.strip_prefix("compose:").unwrap_or(&snapshot.target);
            Error::invalid(format!("snapshot {reference} is of a Docker Compose project"))
                .hint(Hint::Run(Operation::Rollback { project: project.to_owned(), snapshot: reference }))
        }
        kind => Error::invalid(format!("snapshot {reference} is of a {kind} target, which a restore cannot put back")),
    }
}

/// `path` with its longest existing ancestor resolved (links followed), the rest as given: what
/// it will be once created.
fn resolved(path: &std::path::Path) -> std::path::PathBuf {
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

/// Reads a root document a dry writer holds in memory.
fn read_dry_root(writer: &BlobWriter<'_>, id: &crate::id::ObjectId) -> Result<DirRoot> {
    tree::decode(id, &writer.read_object(id)?)
}

/// Waits for the coarse clock (which stamps file times) to tick past the last write and past
/// every time recorded in `written`, and returns the new time: files written before it are
/// then trusted by the racy-git rule. The kernel may stamp an inode whose times were just read
/// with a fine-grained time (multigrain timestamps), up to a tick ahead of the coarse clock, so
/// one tick after the last write is not always enough.
fn settle_clock(written: &[(Vec<u8>, CacheEntry)]) -> i64 {
    // ctime only: the kernel sets it to the time of the change, where mtime may be the
    // snapshot's (any date). A ctime far ahead (a clock set back meanwhile) is not waited for.
    let now = coarse_now_ns();
    let latest = written.iter().map(|(_, e)| e.stamp.ctime_ns).filter(|t| *t < now + 1_000_000_000).max();
    let start = latest.unwrap_or(now).max(now);
    loop {
        let now = coarse_now_ns();
        if now > start {
            return now;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}
