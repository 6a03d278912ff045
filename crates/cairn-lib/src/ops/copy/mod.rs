//! `cairn copy`: snapshots, moments or a whole session from one store to another (local or
//! remote), sending only the blobs the destination lacks.
//!
//! Pipeline: resolve what to copy in the source (moments with all their parts, snapshots, or
//! with no reference every snapshot and moment of the session) → check that the destination
//! can take it (no other session under the same name, no name held by another snapshot or
//! moment there), so a refusal writes nothing → make the session there, with the source's id,
//! name and creation time → per snapshot, the blobs the destination's index lacks are read
//! from the source (fetched in coalesced parallel ranges from a remote one) and written into
//! new packs, then the record is committed with the source's id, name, time and stats → the
//! moments' records last. A copy killed midway leaves packs no record names (gc reclaims them)
//! and whole records; running it again sends only what is still missing, so copying twice
//! sends nothing the second time.
//!
//! Transcript snapshots copied to a remote store have every secret-shaped string replaced by
//! a marker, as a redacted transcript export does (`send.rs`), unless asked not to.

mod send;

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};

use super::moment::Moment;
use super::resolve::CallContext;
use crate::Repository;
use crate::error::{Error, Result};
use crate::session::{Session, SessionRef};
use crate::snapshot::Snapshot;
use crate::store::catalog::SnapshotFilter;

pub use send::CopyProgress;

/// What to copy. The other store (`--to` or `--from` on the command line) is opened by the
/// front and passed to [`Repository::copy_to`].
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct CopyOptions {
    /// Snapshots or moments to copy: ids, unique id prefixes, names, or `latest`. A moment is
    /// copied with all its parts. With none, the whole session is copied.
    #[serde(default, rename = "refs")]
    #[schemars(
        description = "Snapshots or moments to copy (ids, id prefixes, names, or \"latest\"); none copies the whole session."
    )]
    #[cfg_attr(feature = "clap", arg(value_name = "REF"))]
    pub references: Vec<String>,
    /// The target names and `latest` are looked up among.
    #[schemars(description = "The target names and \"latest\" are looked up among.")]
    #[cfg_attr(feature = "clap", arg(long))]
    pub target: Option<String>,
    /// Copy transcript snapshots with their secret-shaped strings, even to a remote store.
    #[schemars(description = "Keep secret-shaped strings in transcript snapshots copied to a remote store.")]
    #[serde(default)]
    #[cfg_attr(feature = "clap", arg(long))]
    pub no_redact: bool,
    /// The session to copy from (and into, under the same id and name on the other store).
    #[schemars(description = "The session to copy from; it is made on the other store if missing.")]
    #[cfg_attr(feature = "clap", arg(long))]
    pub session: Option<String>,
}

/// Whether a snapshot or moment was sent, or the destination had it already.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CopyStatus {
    /// Its record was written to the destination.
    Copied,
    /// The destination held it already in that session.
    AlreadyPresent,
}
word_schema!(CopyStatus);

/// One snapshot of a copy.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct CopiedSnapshot {
    /// The snapshot (the same id on both stores).
    pub snapshot: Snapshot,
    /// Sent or already there.
    pub status: CopyStatus,
    /// Transcript entries whose secret-shaped strings were replaced by a marker.
    pub redacted_entries: u64,
}

/// What a copy did.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct CopyResult {
    /// The store copied from.
    pub from: String,
    /// The store copied to.
    pub to: String,
    /// The session (the same id and name on both stores).
    pub session: Session,
    /// True when the destination did not have the session and it was made there.
    pub session_created: bool,
    /// Every snapshot asked for, oldest first.
    pub snapshots: Vec<CopiedSnapshot>,
    /// Snapshots whose records were written to the destination.
    pub snapshots_copied: u64,
    /// Snapshots the destination held already.
    pub snapshots_present: u64,
    /// Moments written to the destination.
    pub moments_copied: u64,
    /// Moments the destination held already.
    pub moments_present: u64,
    /// Blobs written to the destination.
    pub blobs_sent: u64,
    /// Blobs the copied snapshots refer to that the destination held already.
    pub blobs_present: u64,
    /// Bytes written into the destination's packs (compressed as stored).
    pub bytes_sent: u64,
    /// Transcript entries whose secret-shaped strings were replaced by a marker.
    pub redacted_entries: u64,
}

/// What the source's session holds that is to be copied.
struct Selection {
    snapshots: Vec<Snapshot>,
    moments: Vec<Moment>,
}

impl Repository {
    /// Copies what `options` names from this store to `destination` (see the module
    /// documentation).
    pub fn copy_to(
        &self,
        destination: &Repository,
        options: &CopyOptions,
        context: &CallContext,
    ) -> Result<CopyResult> {
        self.copy_with_progress(destination, options, context, &CopyProgress::default())
    }

    /// [`Repository::copy_to`], counting blobs and bytes sent into `progress` as it goes.
    pub fn copy_with_progress(
        &self,
        destination: &Repository,
        options: &CopyOptions,
        context: &CallContext,
        progress: &CopyProgress,
    ) -> Result<CopyResult> {
        if self.location() == destination.location() {
            return Err(Error::invalid(format!(
                "both sides of the copy are {}; copy between two different stores",
                self.location()
            )));
        }
        // The whole record: a destination without the session is given it as it is here.
        let session =
            self.find_session(&self.call_session(options.session.as_deref(), context)?.id.to_string())?;
        let selection = self.select(&session.to_ref(), options)?;
        let _lock = destination.lock_target("copy", "a copy")?;
        let present = destination.check_room(&session, &selection)?;
        let session_created = destination.adopt_session(&session)?;
        let redact = destination.is_shared() && !options.no_redact;
        let mut result = CopyResult {
            from: self.location(),
            to: destination.location(),
            session: session.clone(),
            session_created,
            snapshots: Vec::new(),
            snapshots_copied: 0,
            snapshots_present: 0,
            moments_copied: 0,
            moments_present: 0,
            blobs_sent: 0,
            blobs_present: 0,
            bytes_sent: 0,
            redacted_entries: 0,
        };
        let sender = send::Sender::new(self, destination, progress);
        let mut to_commit = Vec::new();
        for snapshot in selection.snapshots {
            if present.contains(&snapshot.id.to_string()) {
                result.snapshots_present += 1;
                result.snapshots.push(CopiedSnapshot {
                    snapshot,
                    status: CopyStatus::AlreadyPresent,
                    redacted_entries: 0,
                });
                continue;
            }
            let (copied, redacted) = sender.send_snapshot(snapshot, redact)?;
            result.redacted_entries += redacted;
            to_commit.push((copied, redacted));
        }
        // Every pack is published before the first record that refers to it.
        let (blobs_sent, blobs_present, bytes_sent) = sender.finish()?;
        (result.blobs_sent, result.blobs_present, result.bytes_sent) =
            (blobs_sent, blobs_present, bytes_sent);
        for (snapshot, redacted) in to_commit {
            destination.put_copied_record(&session, &snapshot)?;
            result.snapshots_copied += 1;
            result.snapshots.push(CopiedSnapshot {
                snapshot,
                status: CopyStatus::Copied,
                redacted_entries: redacted,
            });
        }
        for moment in selection.moments {
            if destination.catalog().has_moment(moment.id)? {
                result.moments_present += 1;
                continue;
            }
            destination.commit_moment(&moment)?;
            result.moments_copied += 1;
        }
        result.snapshots.sort_by_key(|c| c.snapshot.id.to_string());
        Ok(result)
    }

    /// The snapshots and moments `options` names in `session`, each once, oldest first.
    fn select(&self, session: &SessionRef, options: &CopyOptions) -> Result<Selection> {
        let target =
            options.target.as_deref().map(crate::targets::Target::parse).transpose()?.map(|t| t.key());
        let mut snapshots: Vec<Snapshot> = Vec::new();
        let mut moments: Vec<Moment> = Vec::new();
        if options.references.is_empty() {
            snapshots = self.catalog().list_snapshots(session.id, &SnapshotFilter::default())?;
            moments = self.moments_of(session)?;
        }
        for reference in &options.references {
            // A moment first: its parts share its name, which names no one snapshot.
            if target.is_none()
                && reference.trim() != "latest"
                && let Some(moment) = self.find_moment(session, reference)?
            {
                for part in &moment.parts {
                    if let Some(s) = self.catalog().get_snapshot(session.id, part.snapshot)? {
                        snapshots.push(s);
                    }
                }
                moments.push(moment);
                continue;
            }
            snapshots.push(self.resolve_snapshot(session, reference, target.as_deref())?);
        }
        let mut seen = HashSet::new();
        snapshots.retain(|s| seen.insert(s.id));
        snapshots.sort_by_key(|s| s.id.to_string());
        let mut seen = HashSet::new();
        moments.retain(|m| seen.insert(m.id));
        Ok(Selection { snapshots, moments })
    }

    /// Refuses, before anything is written, a copy this store cannot take as it is: another
    /// session with the session's name, or a name held here by another snapshot or moment.
    /// Returns the ids of the snapshots this store already holds in that session.
    fn check_room(&self, session: &Session, selection: &Selection) -> Result<HashSet<String>> {
        let mut present = HashSet::new();
        let Some(here) = self.catalog().find_session_ref(&session.name)? else { return Ok(present) };
        if here.id != session.id {
            return Err(Error::conflict(format!(
                "{} has another session named {:?} (made apart from this one); rename one of them first",
                self.location(),
                session.name
            )));
        }
        let all = SnapshotFilter { target: None, include_safety: true };
        let mut names: HashMap<(String, String), String> = HashMap::new();
        for s in self.catalog().list_snapshots(session.id, &all)? {
            if let Some(name) = &s.name {
                names.insert((s.target.clone(), name.clone()), s.id.to_string());
            }
            present.insert(s.id.to_string());
        }
        for s in &selection.snapshots {
            let Some(name) = &s.name else { continue };
            if let Some(holder) = names.get(&(s.target.clone(), name.clone()))
                && *holder != s.id.to_string()
            {
                return Err(Error::conflict(format!(
                    "{} already has another snapshot named {name:?} for {} in session {:?} ({holder}); remove or rename it there first",
                    self.location(),
                    s.target,
                    session.name
                )));
            }
        }
        let moments: HashMap<String, String> = self
            .moments_of(&session.to_ref())?
            .into_iter()
            .filter_map(|m| m.name.clone().map(|n| (n, m.id.to_string())))
            .collect();
        for m in &selection.moments {
            let Some(name) = &m.name else { continue };
            if let Some(holder) = moments.get(name)
                && *holder != m.id.to_string()
            {
                return Err(Error::conflict(format!(
                    "{} already has another moment named {name:?} in session {:?} ({holder}); remove or rename it there first",
                    self.location(),
                    session.name
                )));
            }
        }
        Ok(present)
    }

    /// Makes `session` here under its own id, name and creation time when this store lacks
    /// it; returns whether it did.
    fn adopt_session(&self, session: &Session) -> Result<bool> {
        if self.catalog().find_session(&session.id.to_string())?.is_some() {
            return Ok(false);
        }
        self.catalog().adopt_session(session, Vec::new())?;
        Ok(true)
    }

    /// Commits a copied snapshot's record in `session`: a new record with the source's id, or,
    /// when this store holds the record already (in another session), its membership only.
    fn put_copied_record(&self, session: &Session, snapshot: &Snapshot) -> Result<()> {
        if self.catalog().has_snapshot(&snapshot.id.to_string())? {
            let member = crate::store::catalog::Member {
                snapshot: snapshot.id.to_string(),
                target: snapshot.target.clone(),
                name: snapshot.name.clone(),
            };
            return self.catalog().adopt_session(session, vec![member]);
        }
        self.commit_snapshot(snapshot, false)
    }
}
