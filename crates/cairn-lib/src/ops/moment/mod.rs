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
mod remove;
mod restore;
mod rewind;
mod save;

pub use compose::{ComposeDiff, LayerDiff, VolumeDiff, VolumeFileChange};
pub use diff::{MomentDiffOptions, MomentDiffPart, MomentDiffResult};
pub use list::{MomentList, MomentListOptions, MomentShowOptions, MomentView};
pub use remove::{MomentRemoveOptions, MomentRemoveResult};
pub use restore::{MomentRestoreOptions, MomentRestoreResult, RestoredPart};
pub use rewind::{RewindList, RewindListOptions, RewindOptions, RewindSession, RewindTurn};
pub use save::{MomentSaveOptions, MomentSaveResult};

pub use conversation::ConversationCut;
pub(crate) use conversation::{cut_after_entry, cut_before_prompt, load_conversation};
pub(crate) use save::{PartPlan, TakeOptions};

use crate::error::{Error, Hint, Operation, Result, echo};

use crate::Repository;
use crate::session::SessionRef;
pub use crate::store::model::moment::{AgentTurn, ForkOrigin, Moment, MomentPart, TurnStart};

impl Repository {
    /// The moments of `session` whose parts still exist, oldest first. A part whose
    /// snapshot was removed on its own is left out; a moment left with no part is not listed.
    pub(crate) fn moments_of(&self, session: &SessionRef) -> Result<Vec<Moment>> {
        let mut out = Vec::new();
        for mut moment in self.catalog().list_moments(session.id)? {
            let mut kept = Vec::new();
            for part in moment.parts {
                if self.catalog().get_snapshot(session.id, part.snapshot)?.is_some() {
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
    pub fn resolve_moment(&self, session: &SessionRef, reference: &str) -> Result<Moment> {
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
    pub fn moment_for_snapshot_ref(&self, session: &SessionRef, reference: &str) -> Result<Option<Moment>> {
        let Ok(Some(moment)) = self.find_moment(session, reference) else { return Ok(None) };
        if moment.name.as_deref() == Some(reference.trim()) {
            return Ok(Some(moment));
        }
        let prefix = reference.trim().to_ascii_lowercase();
        let filter = crate::store::catalog::SnapshotFilter { target: None, include_safety: true };
        let snapshots = self.catalog().list_snapshots(session.id, &filter)?;
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
    pub fn find_moment(&self, session: &SessionRef, reference: &str) -> Result<Option<Moment>> {
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
