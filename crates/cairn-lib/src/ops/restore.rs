//! `cairn restore`: put a snapshot back, into a new directory or in place.
//!
//! In place: take the target's lock → capture a safety snapshot of the live state (an
//! incremental save, so it reads only what changed) and publish its packs, a whole restore's
//! journal flushed beside its record → commit it and, beside, put the journal in place, while
//! the plan (Merkle diff of live vs snapshot) is made → apply the plan →
//! record the written files in the stat cache, unless they are few → drop the journal. If
//! applying fails, the safety snapshot is put back by the same machinery and both errors are
//! reported. The journal, plan application and replay live in `pipeline/`.
//!
//! [`Repository::restore_ref`] is the one entry point every front calls: a reference that names a
//! moment puts the moment's parts back (`ops/moment/restore.rs`), any other a snapshot.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::interrupted::{Recovered, Resolve};
use super::moment::{MomentRestoreOptions, MomentRestoreResult};
use super::pipeline::capture::StageBeside;
pub use super::pipeline::narrow::RestoreRule;
use super::pipeline::narrow::{Narrowed, Sources, narrow};
use super::resolve::CallContext;
use super::save::{Progress, SaveOptions};
use super::transcript::AgentPlaces;
use crate::Repository;
use crate::error::{Error, Hint, Operation, Result, echo};
use crate::id::ObjectId;
use crate::snapshot::Snapshot;
use crate::store::writer::BlobWriter;
use crate::targets::TargetKind;
use crate::targets::dir::apply::{apply_planned, read_dry_root, replay};
use crate::targets::dir::capture;
use crate::targets::dir::restore::{Plan, PlanEntry};
use crate::targets::dir::statcache::StatCache;
use crate::tree::{self, DirRoot};

mod marker;
mod to;

pub use marker::InterruptedRestoreTo;

/// What to restore, and where. The CLI's help is the doc comment of each field; the MCP
/// description, written for an agent, is the `schemars` one.
#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct RestoreOptions {
    /// The snapshot: an id, a unique id prefix, a name, or `latest`.
    // Required of a tool call; on the command line `--continue` and `--abort` stand without it.
    #[serde(rename = "ref", deserialize_with = "super::options::required")]
    #[schemars(
        with = "String",
        description = "The snapshot to put back: its id, a unique id prefix, its name, or \"latest\"."
    )]
    #[cfg_attr(feature = "clap", arg(required_unless_present_any = ["continue_interrupted", "abort_interrupted"]))]
    pub reference: Option<String>,
    /// The target the reference is resolved among (for names and `latest`).
    // The command line lists `--to` first, as it always has.
    #[schemars(description = "The target the reference is looked up among.")]
    #[cfg_attr(feature = "clap", arg(long, display_order = 1))]
    pub target: Option<String>,
    /// Restore into this new or empty directory instead of in place.
    #[schemars(
        description = "Restore into this new or empty directory instead of overwriting the target in place."
    )]
    #[cfg_attr(feature = "clap", arg(long, value_name = "DIR", display_order = 0))]
    pub to: Option<PathBuf>,
    /// Print the plan and change nothing.
    #[schemars(
        description = "Only report what would change; change nothing (allowed without the restore permission)."
    )]
    #[serde(default)]
    #[cfg_attr(feature = "clap", arg(long))]
    pub dry_run: bool,
    /// Give rewritten files the snapshot's mtimes instead of the current time.
    #[schemars(
        description = "Give rewritten files the snapshot's modification times instead of the current time."
    )]
    #[serde(default)]
    #[cfg_attr(feature = "clap", arg(long))]
    pub preserve_mtime: bool,
    /// The session (name or id).
    #[schemars(description = "The session to look in, for this call only (name or id).")]
    #[cfg_attr(feature = "clap", arg(long))]
    pub session: Option<String>,
    /// A moment: put back only these part kinds (dir, transcript, compose).
    #[schemars(
        description = "When `ref` names a moment: put back only its parts of these kinds (\"dir\", \"transcript\", \"compose\"); every part when omitted."
    )]
    #[serde(default)]
    #[cfg_attr(
        feature = "clap",
        arg(long, value_delimiter = ',', value_name = "KIND[,KIND]", conflicts_with_all = ["to", "dry_run"])
    )]
    pub only: Vec<String>,
    /// Finish a restore that was killed half way (the tree as found is saved first).
    // Of `target`, or of the only one there is, instead of restoring `reference`.
    #[serde(skip)]
    #[cfg_attr(
        feature = "clap",
        arg(long = "continue", conflicts_with_all = ["reference", "abort_interrupted", "dry_run", "to"])
    )]
    pub continue_interrupted: bool,
    /// Roll back a restore that was killed half way (the tree as found is saved first).
    #[serde(skip)]
    #[cfg_attr(feature = "clap", arg(long = "abort", conflicts_with_all = ["reference", "dry_run", "to"]))]
    pub abort_interrupted: bool,
    /// An agent's checkpoint (a moment): make the files exactly it, including what others
    /// changed since (by default only what the agent changed goes back).
    #[schemars(
        description = "When `ref` names an agent's checkpoint: make the files exactly the checkpoint's, including what others changed since. By default only what the agent changed goes back."
    )]
    #[serde(default)]
    #[cfg_attr(feature = "clap", arg(long))]
    pub exact: bool,
    /// Put back only these files or directories (relative to the target, or absolute inside
    /// it); the rest of the target stays as it is.
    #[schemars(
        description = "Put back only these files or directories, relative to the target's top directory; everything else stays as it is. Every path when omitted."
    )]
    #[serde(default)]
    #[cfg_attr(feature = "clap", arg(last = true, value_name = "PATH"))]
    pub paths: Vec<String>,
    /// How the engine narrows an in-place restore beyond `paths` (a rewind puts back only what
    /// the agent changed); never set by a front.
    #[serde(skip)]
    #[schemars(skip)]
    #[cfg_attr(feature = "clap", arg(skip))]
    pub rule: Option<RestoreRule>,
}

/// Where a restore writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RestoreMode {
    /// Over the target itself, behind a safety snapshot.
    InPlace,
    /// Into a new or empty directory; the target is untouched.
    NewDirectory,
}

word_schema!(RestoreMode);

/// What a restore did (or, with `dry_run`, would do).
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RestoreResult {
    /// The snapshot restored.
    pub snapshot: Snapshot,
    /// Where it was restored.
    pub destination: String,
    /// `in_place` or `new_directory`.
    pub mode: RestoreMode,
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
    /// The interrupted restore that `continue` or `abort` resolved.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interrupted_restore: Option<Recovered>,
}

/// What a restore put back: one snapshot, or the parts of a moment (both boxed: the results
/// are large and of different sizes).
#[derive(Debug, Clone)]
pub enum Restored {
    /// The reference named a snapshot.
    Snapshot(Box<RestoreResult>),
    /// The reference named a moment.
    Moment(Box<MomentRestoreResult>),
}

impl Repository {
    /// Restores what `options.reference` names: a moment's parts (in place, not as a dry run;
    /// `only` picks kinds, and `places` says where the agents keep their sessions, or why the
    /// front could not tell, which matters only for a moment), else a snapshot. `only` with a
    /// reference that names no moment is refused.
    pub fn restore_ref(
        &self,
        options: &RestoreOptions,
        places: Result<AgentPlaces>,
        context: &CallContext,
        progress: &Progress,
    ) -> Result<Restored> {
        if let Some(reference) = options.reference.as_deref()
            && options.to.is_none()
            && !options.dry_run
        {
            let session = self.call_session(options.session.as_deref(), context)?;
            if self.moment_for_snapshot_ref(&session, reference)?.is_some() {
                let moment = MomentRestoreOptions {
                    reference: reference.to_owned(),
                    only: options.only.clone(),
                    session: options.session.clone(),
                    places: places?,
                    cut: None,
                    paths: options.paths.clone(),
                    dry_run: false,
                    exact: options.exact,
                    rule: None,
                };
                return self.moment_restore(&moment, context).map(|r| Restored::Moment(Box::new(r)));
            }
            if !options.only.is_empty() {
                return Err(Error::invalid(format!(
                    "`only` picks parts of a moment, and {reference:?} names no moment"
                )));
            }
        }
        self.restore_with_progress(options, context, progress).map(|r| Restored::Snapshot(Box::new(r)))
    }

    /// Restores a snapshot.
    pub fn restore(&self, options: &RestoreOptions, context: &CallContext) -> Result<RestoreResult> {
        self.restore_with_progress(options, context, &Progress::default())
    }

    /// [`Repository::restore`], counting the files it scans (for the safety snapshot) and writes
    /// into `progress` for a front end to show while it runs.
    pub fn restore_with_progress(
        &self,
        options: &RestoreOptions,
        context: &CallContext,
        progress: &Progress,
    ) -> Result<RestoreResult> {
        if options.continue_interrupted || options.abort_interrupted {
            return self.resolve_interrupted_restore(options, context);
        }
        let session = self.call_session(options.session.as_deref(), context)?;
        let target_key =
            options.target.as_deref().map(crate::targets::Target::parse).transpose()?.map(|t| t.key());
        let reference = options.reference.as_deref().unwrap_or_default();
        if !options.only.is_empty() {
            return Err(Error::invalid_value(
                "only",
                &options.only.join(","),
                format!("it picks parts of a moment, and {:?} names a snapshot", echo(reference)),
            ));
        }
        let snapshot = self.resolve_snapshot(&session, reference, target_key.as_deref())?;
        self.refuse_out_of_scope(&snapshot, target_key.is_some() || options.to.is_some() || options.dry_run)?;
        restorable(&snapshot)?;
        let root_id =
            snapshot.root.ok_or_else(|| Error::corrupt(format!("snapshot {} has no root", snapshot.id)))?;
        if options.to.is_some() && !options.dry_run {
            // From a remote store, everything a new directory needs is fetched at once.
            self.prefetch_dir(&root_id)?;
        }
        let root = tree::read_root(self, &root_id)?;
        if !options.paths.is_empty() && options.to.is_some() {
            return Err(Error::invalid(
                "paths narrow a restore in place; a restore to a new directory writes the whole snapshot",
            ));
        }
        match &options.to {
            Some(dest) => self.restore_new(snapshot, &root, dest, options.dry_run, progress),
            None => self.restore_in_place(&session, snapshot, &root, options, progress),
        }
    }

    fn restore_in_place(
        &self,
        session: &crate::session::SessionRef,
        snapshot: Snapshot,
        want: &DirRoot,
        options: &RestoreOptions,
        progress: &Progress,
    ) -> Result<RestoreResult> {
        let path = PathBuf::from(&snapshot.target);
        if !path.exists() && (!options.paths.is_empty() || options.rule.is_some()) {
            return Err(Error::not_found(format!(
                "{} does not exist; only a whole snapshot is restored where there is nothing",
                path.display()
            )));
        }
        if !path.exists() {
            return self.restore_new(snapshot, want, &path, options.dry_run, progress).map(|mut r| {
                r.mode = RestoreMode::InPlace;
                r
            });
        }
        self.refuse_overlap(&path)?;
        let key = snapshot.target.clone();
        let paths = relative_paths(&options.paths, &path)?;
        let filter = capture::Filter::of_snapshot(&snapshot.details);
        let no_ignore = filter.no_ignore;
        let _lock = (!options.dry_run).then(|| self.lock_target(&key, "a restore")).transpose()?;
        // Another restore over a tree an interrupted one left mixed would roll back what was
        // written since the kill: only `continue` and `abort` resolve it, keeping that.
        self.refuse_interrupted(&key)?;
        if options.dry_run {
            let cache = StatCache::load(self, &key)?;
            let writer = BlobWriter::dry(self);
            let live = capture::capture_observed(&writer, &path, &cache, filter, progress)?;
            let live_root = read_dry_root(&writer, &live.root)?;
            let read = |id: &ObjectId| writer.read_object(id);
            let sources = Sources { trees: &writer, read: &read, live_dir: &path };
            let narrowed = narrow(&sources, &writer, &live_root, want, &paths, options.rule.as_ref())?;
            let goal = narrowed.as_ref().map_or(want, |n| &n.goal);
            let plan = Plan::between(&writer, &live_root, goal, options.preserve_mtime, &live.uncovered)?;
            let mut entries = plan.entries();
            entries.extend(narrowed.map(|n| n.report).unwrap_or_default());
            return Ok(RestoreResult {
                destination: key,
                mode: RestoreMode::InPlace,
                dry_run: true,
                safety_snapshot: None,
                plan: entries,
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
        // The plan diffs the trees the safety snapshot reads and writes: they are kept decoded.
        let kept_trees = self.trees().keeping();
        // A whole restore's journal is known once the safety snapshot is: it is flushed beside
        // the snapshot's record, and only renamed into place below. A narrowed one names a goal
        // made from the safety snapshot's trees, so it is written once those are published.
        let stage_journal = |safety: &Snapshot| {
            self.stage_journal(&key, &snapshot, safety, no_ignore, options.preserve_mtime)
        };
        let whole = paths.is_empty() && options.rule.is_none();
        let beside = whole.then_some(&stage_journal as &StageBeside<'_>);
        let mut published =
            self.publish_dir_capture(&path, &key, session.id, &save, true, beside, progress)?;
        let staged_journal = published.beside.take();
        let uncovered = std::mem::take(&mut published.uncovered);
        let safety_root = tree::read_root(
            self,
            &published.snapshot.root.ok_or_else(|| Error::corrupt("safety snapshot has no root"))?,
        )?;
        // A narrowed restore goes to a goal grafted from the live state and the snapshot, stored
        // before the journal names it, so a `continue` finishes the same narrowed restore.
        let (narrowed, journaled) = match self.narrowed_goal(&safety_root, want, &paths, options, &path)? {
            Some(narrowed) => {
                let root = self.store_goal(&narrowed.goal)?;
                (Some(narrowed), Snapshot { root: Some(root), ..snapshot.clone() })
            }
            None => (None, snapshot.clone()),
        };
        let (want, held) = match &narrowed {
            Some(n) => (&n.goal, n.report.clone()),
            None => (want, Vec::new()),
        };
        // The safety snapshot's trees are in the store once its packs are published: while its
        // record is committed, the plan is made and the journal written, each on a thread of its
        // own. Nothing changes until the record and the journal are both durable, so a journal
        // whose safety snapshot never reached the catalog changed nothing (`ops/interrupted.rs`).
        let safety_snapshot = published.snapshot.clone();
        let (committed, journal, plan) = std::thread::scope(|scope| {
            let planning =
                scope.spawn(|| Plan::between(self, &safety_root, want, options.preserve_mtime, &uncovered));
            let journaling = scope.spawn(|| {
                let staged = match staged_journal {
                    Some(staged) => staged,
                    None => self.stage_journal(
                        &key,
                        &journaled,
                        &safety_snapshot,
                        no_ignore,
                        options.preserve_mtime,
                    )?,
                };
                self.place_journal(&key, staged)
            });
            let committed = published.commit();
            let journal = journaling.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            let plan = planning.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            (committed, journal, plan)
        });
        drop(kept_trees);
        let (safety, journal) = match (committed, journal) {
            (Ok(capture), Ok(journal)) => (capture.snapshot, journal),
            (Err(e), journal) => {
                if let Ok(path) = journal {
                    let _ = std::fs::remove_file(path);
                }
                return Err(e);
            }
            (Ok(_), Err(e)) => return Err(e),
        };
        // A plan refused (it would remove uncovered paths) has changed nothing, so there is
        // nothing to put back: the journal goes.
        let plan = plan.inspect_err(|_| {
            let _ = std::fs::remove_file(&journal);
        })?;
        // Older safety snapshots are let go while the plan is applied: the new one is kept,
        // whatever the apply does, so the live state is in a snapshot either way.
        let (outcome, expired) = std::thread::scope(|scope| {
            let expiring = scope.spawn(|| self.expire_safety(session, &key, safety.id));
            let outcome = apply_planned(self, &plan, &path, &key, want, options.preserve_mtime, progress);
            (outcome, expiring.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
        });
        let (plan, files, bytes) = match outcome {
            Ok(done) => done,
            Err(first) => {
                let replay = replay(self, &path, &key, &safety_root, no_ignore);
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
        expired?;
        let mut plan = plan;
        plan.extend(held);
        Ok(RestoreResult {
            destination: key,
            mode: RestoreMode::InPlace,
            dry_run: false,
            safety_snapshot: Some(safety),
            plan,
            files_written: files,
            bytes_written: bytes,
            snapshot,
            interrupted_restore: None,
        })
    }

    /// The goal of an in-place restore narrowed by `paths` or the options' rule, its new trees
    /// and merged files written; `None` when nothing narrows it.
    fn narrowed_goal(
        &self,
        live: &DirRoot,
        want: &DirRoot,
        paths: &[Vec<u8>],
        options: &RestoreOptions,
        dir: &std::path::Path,
    ) -> Result<Option<Narrowed>> {
        let writer = BlobWriter::new(self);
        let read = |id: &ObjectId| self.read_blob(id);
        let sources = Sources { trees: self.store(), read: &read, live_dir: dir };
        let narrowed = narrow(&sources, &writer, live, want, paths, options.rule.as_ref())
            .inspect_err(|_| writer.abandon())?;
        writer.finish()?;
        Ok(narrowed)
    }

    /// Stores a goal's root document, so a journal can name it.
    fn store_goal(&self, goal: &DirRoot) -> Result<ObjectId> {
        let writer = BlobWriter::new(self);
        let id = tree::write_root(&writer, goal).inspect_err(|_| writer.abandon())?;
        writer.finish()?;
        Ok(id)
    }

    /// Finishes or rolls back an interrupted restore, as the options ask.
    fn resolve_interrupted_restore(
        &self,
        options: &RestoreOptions,
        context: &CallContext,
    ) -> Result<RestoreResult> {
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
        let session = self.call_session(options.session.as_deref(), context)?;
        let id = match how {
            Resolve::RollBack => &recovered.found.safety,
            Resolve::Finish => &recovered.found.restoring,
        };
        let snapshot = self.resolve_snapshot(&session, id, Some(&key))?;
        Ok(RestoreResult {
            destination: key,
            mode: RestoreMode::InPlace,
            dry_run: false,
            safety_snapshot: None,
            plan,
            files_written: files,
            bytes_written: bytes,
            snapshot,
            interrupted_restore: Some(recovered),
        })
    }
}

/// `paths` as relative paths of the target `dir`: a relative one as it is, an absolute one
/// inside `dir` made relative; anything leading outside the target is refused. A path below
/// another given one is dropped (the other covers it).
fn relative_paths(paths: &[String], dir: &std::path::Path) -> Result<Vec<Vec<u8>>> {
    use std::os::unix::ffi::OsStrExt;
    use std::path::{Component, Path};
    let mut out: Vec<Vec<u8>> = Vec::new();
    for given in paths {
        let path = Path::new(given);
        let relative = if path.is_absolute() {
            path.strip_prefix(dir).map_err(|_| {
                Error::invalid(format!("{} is not inside the target {}", echo(given), dir.display()))
            })?
        } else {
            path
        };
        let mut parts: Vec<&[u8]> = Vec::new();
        for component in relative.components() {
            match component {
                Component::Normal(name) => parts.push(name.as_bytes()),
                Component::CurDir => {}
                _ => {
                    return Err(Error::invalid(format!(
                        "{} leads outside the target; give a path inside it",
                        echo(given)
                    )));
                }
            }
        }
        if parts.is_empty() {
            // The target itself: the whole of it, as with no path.
            return Ok(Vec::new());
        }
        out.push(parts.join(&b'/'));
    }
    out.sort();
    out.dedup();
    let mut kept: Vec<Vec<u8>> = Vec::new();
    for path in out {
        if !kept.iter().any(|k| crate::tree::graft::is_at_or_below(&path, k)) {
            kept.push(path);
        }
    }
    Ok(kept)
}

/// Refuses a snapshot a directory restore cannot put back, saying what puts it back instead:
/// the one place a restore tells the kinds apart.
fn restorable(snapshot: &Snapshot) -> Result<()> {
    let reference = || snapshot.name.clone().unwrap_or_else(|| snapshot.id.to_string());
    Err(match snapshot.kind {
        TargetKind::Dir => return Ok(()),
        TargetKind::Transcript => {
            let reference = reference();
            Error::invalid(format!("snapshot {reference} is a transcript, which a restore does not write"))
                .hint(Hint::Run(Operation::LoadTranscript { snapshot: reference }))
        }
        TargetKind::Debug => Error::invalid(format!(
            "snapshot {} is a debug capture of a paused program's variables, which cannot be restored",
            reference()
        ))
        .hint(Hint::Run(Operation::DiffDebugCaptures)),
        TargetKind::Compose => {
            let project = snapshot.target.strip_prefix("compose:").unwrap_or(&snapshot.target);
            let reference = reference();
            Error::invalid(format!("snapshot {reference} is of a Docker Compose project"))
                .hint(Hint::Run(Operation::Rollback { project: project.to_owned(), snapshot: reference }))
        }
    })
}
