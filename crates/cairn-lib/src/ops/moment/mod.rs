//! Moments: one id and name over one snapshot per target, taken together (a directory, an
//! agent's conversation, a Compose project), listed, shown, diffed, restored and removed as
//! one. Each part stays an ordinary snapshot, addressable alone by its id (and by the moment's
//! name with its target).
//!
//! A moment exists once its catalog row is committed; before that its record object
//! (`moments/<id>.json`) is written, so a catalog rebuilt from the objects gets it back.

mod compose;
mod conversation;
mod diff;
mod list;
mod names;
mod remove;
mod restore;
mod rewind;
mod save;

use serde::{Deserialize, Serialize};

pub use compose::{ComposeDiff, LayerDiff, VolumeDiff, VolumeFileChange};
pub use diff::{MomentDiffOptions, MomentDiffPart, MomentDiffResult};
pub use list::{MomentList, MomentListOptions, MomentShowOptions, MomentView};
pub use remove::{MomentRemoveOptions, MomentRemoveResult};
pub use restore::{MomentRestoreOptions, MomentRestoreResult, RestoredPart};
pub use rewind::{RewindList, RewindListOptions, RewindOptions, RewindTurn};
pub use save::{MomentSaveOptions, MomentSaveResult};

pub(crate) use conversation::load_conversation;
pub(crate) use save::{PartPlan, TakeOptions};

use crate::error::{Error, Hint, Operation, Result, echo};
use crate::id::{MomentId, SessionId, SnapshotId};
use crate::session::Session;
use crate::store::Store;

/// A moment: the snapshots of several targets taken together.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Moment {
    /// UUIDv7 id; sorts by creation time.
    pub id: MomentId,
    /// Optional name, unique per session among moments.
    pub name: Option<String>,
    /// What the moment was taken before, in the caller's words (or the agent turn's label).
    pub description: Option<String>,
    /// The session it belongs to.
    pub session: SessionId,
    /// Creation time, RFC 3339 UTC.
    pub created_at: String,
    /// True for the checkpoints agent hooks take; they have their own keep policy.
    pub auto: bool,
    /// The agent turn an automatic moment was taken at.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn: Option<AgentTurn>,
    /// One snapshot per target.
    pub parts: Vec<MomentPart>,
}

/// One part of a moment: the snapshot of one target.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MomentPart {
    /// `dir`, `transcript` or `compose`.
    pub kind: String,
    /// The target's key (an absolute path, `transcript:<file>`, `compose:<project>`).
    pub target: String,
    /// The snapshot of that target.
    pub snapshot: SnapshotId,
}

/// Where in an agent's conversation an automatic moment was taken.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AgentTurn {
    /// The agent (`claude-code`, `gemini-cli`).
    pub agent: String,
    /// The agent's session id.
    pub agent_session: String,
    /// The workspace directory (its target key).
    pub workspace: String,
    /// The turn's number in the agent session, from 1.
    pub number: u64,
    /// What triggered it: `prompt` (before the agent acts on a prompt) or the tool that ran.
    pub trigger: String,
    /// The first line of the prompt (prompt moments only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
}

impl Moment {
    /// The part of `kind`, if the moment has one.
    pub fn part(&self, kind: &str) -> Option<&MomentPart> {
        self.parts.iter().find(|p| p.kind == kind)
    }

    /// How the moment is spoken of in messages: its name, else its id.
    pub fn label(&self) -> String {
        match &self.name {
            Some(name) => format!("{name:?} ({})", self.id),
            None => self.id.to_string(),
        }
    }
}

impl Store {
    /// Writes the moment's record object, then commits its catalog row.
    pub(crate) fn commit_moment(&self, moment: &Moment) -> Result<()> {
        let bytes = serde_json::to_vec(moment)
            .map_err(|e| Error::corrupt(format!("could not encode the moment record: {e}")))?;
        self.backend().put_if_absent(&format!("moments/{}.json", moment.id), &bytes)?;
        self.catalog.insert_moment(moment)
    }

    /// Adds every moment record object the catalog lacks whose parts it still holds (after
    /// a repair rebuilt the catalog from the objects); returns how many.
    pub(crate) fn add_moment_records(&self) -> Result<u64> {
        let mut added = 0;
        for key in self.backend().list("moments/")? {
            let Ok(bytes) = self.backend().get(&key) else { continue };
            let Ok(moment) = serde_json::from_slice::<Moment>(&bytes) else { continue };
            if self.insert_moment_record(&moment)? {
                added += 1;
            }
        }
        Ok(added)
    }

    /// Adds a moment record another machine (or a copy) wrote to a shared store, unless the
    /// catalog has it. A record that does not decode is left out, as a rebuild from the objects
    /// leaves it out; of two moments holding one name, the newer keeps it (see `names.rs`).
    pub(crate) fn add_moment_record(&self, bytes: &[u8]) -> Result<()> {
        let Ok(moment) = serde_json::from_slice::<Moment>(bytes) else { return Ok(()) };
        self.insert_moment_record(&moment)?;
        Ok(())
    }

    /// The moments of `session` whose parts still exist, oldest first. A part whose
    /// snapshot was removed on its own is left out; a moment left with no part is not listed.
    pub(crate) fn moments_of(&self, session: &Session) -> Result<Vec<Moment>> {
        let mut out = Vec::new();
        for mut moment in self.catalog.list_moments(session.id)? {
            let mut kept = Vec::new();
            for part in moment.parts {
                if self.catalog.get_snapshot(session.id, part.snapshot)?.is_some() {
                    kept.push(part);
                }
            }
            moment.parts = kept;
            if !moment.parts.is_empty() {
                out.push(moment);
            }
        }
        Ok(out)
    }

    /// The moment `reference` names in `session`: an id, a unique id prefix (4 characters or
    /// more), a name, or `latest`.
    pub fn resolve_moment(&self, session: &Session, reference: &str) -> Result<Moment> {
        let found = if reference.trim() == "latest" {
            self.moments_of(session)?.pop()
        } else {
            self.find_moment(session, reference)?
        };
        found.ok_or_else(|| {
            Error::not_found(format!("no moment {:?} in session {:?}", echo(reference), session.name))
                .hint(Hint::Run(Operation::ListSnapshots))
                .with_code("MOMENT_NOT_FOUND")
        })
    }

    /// The moment a snapshot command's `reference` stands for, if it stands for one: a
    /// moment's name, or a prefix of a moment's id that no snapshot's id also starts with.
    /// A prefix of both (ids made in the same millisecond share one) is refused, so that a
    /// command that destroys or overwrites never picks the wrong one; a prefix shared by
    /// several moments is taken as no moment, for the snapshot lookup to judge.
    pub fn moment_for_snapshot_ref(&self, session: &Session, reference: &str) -> Result<Option<Moment>> {
        let Ok(Some(moment)) = self.find_moment(session, reference) else { return Ok(None) };
        if moment.name.as_deref() == Some(reference.trim()) {
            return Ok(Some(moment));
        }
        let prefix = reference.trim().to_ascii_lowercase();
        let filter = crate::store::catalog::SnapshotFilter { target: None, include_safety: true };
        let snapshots = self.catalog.list_snapshots(session.id, &filter)?;
        if let Some(snapshot) = snapshots.iter().find(|s| s.id.to_string().starts_with(&prefix)) {
            return Err(Error::invalid(format!(
                "{:?} starts the id of moment {} and of snapshot {}; give more of the id",
                echo(reference),
                moment.id,
                snapshot.id
            )));
        }
        Ok(Some(moment))
    }

    /// The moment `reference` names by name, id or unique id prefix (never `latest`, which
    /// a snapshot command keeps for snapshots); `None` when nothing matches.
    pub fn find_moment(&self, session: &Session, reference: &str) -> Result<Option<Moment>> {
        let reference = reference.trim();
        let mut all = self.moments_of(session)?;
        if let Some(i) = all.iter().position(|m| m.name.as_deref() == Some(reference)) {
            return Ok(Some(all.swap_remove(i)));
        }
        let prefix = reference.to_ascii_lowercase();
        if prefix.len() < 4 {
            return Ok(None);
        }
        let mut matches: Vec<Moment> =
            all.into_iter().filter(|m| m.id.to_string().starts_with(&prefix)).collect();
        if matches.len() > 1 {
            return Err(Error::invalid(format!(
                "{:?} matches {} moment ids; give more of the id",
                echo(reference),
                matches.len()
            )));
        }
        Ok(matches.pop())
    }
}
