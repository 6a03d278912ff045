//! Saving a moment: one snapshot per target, then one moment over them.
//!
//! Pipeline: resolve every target first (`transcript:auto` = the newest Pi or Claude Code
//! session of the directory) → refuse a taken moment name → take each part as an ordinary save
//! → commit the moment. A part that fails takes back the parts already taken (their snapshots
//! leave the session), so a failed moment leaves no half of itself behind.

use serde::{Deserialize, Serialize};

use super::{AgentTurn, Moment, MomentPart};
use crate::Repository;
use crate::error::{Error, Hint, Result};
use crate::id::MomentId;
use crate::name::validate_name;
use crate::ops::resolve::CallContext;
use crate::ops::save::SaveOptions;
use crate::ops::transcript::AgentPlaces;
use crate::session::SessionRef;
use crate::snapshot::Snapshot;
use crate::store::catalog::SnapshotFilter;
use crate::targets::Target;

/// What to save as one moment.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct MomentSaveOptions {
    /// The targets: directories, `transcript:FILE` or `transcript:auto` (the newest agent
    /// session of the directory), `compose:PROJECT`.
    #[schemars(
        description = "The targets to capture together: directory paths, \"transcript:<file>\" or \"transcript:auto\" (the newest Pi or Claude Code session of the working directory), \"compose:<project>\"."
    )]
    #[cfg_attr(feature = "clap", arg(required = true, num_args = 1..))]
    pub targets: Vec<String>,
    /// A name for the moment, unique per session; each part gets it too.
    #[cfg_attr(feature = "clap", arg(long, short))]
    pub name: Option<String>,
    /// What the moment is being taken before.
    #[cfg_attr(feature = "clap", arg(long, short))]
    pub description: Option<String>,
    /// Move the name to this moment (and each part's snapshot name to its part) when another
    /// moment holds it.
    #[serde(default)]
    #[cfg_attr(feature = "clap", arg(long, short))]
    pub force: bool,
    /// Capture paths that ignore rules leave out (directory parts).
    #[serde(default)]
    #[cfg_attr(feature = "clap", arg(long))]
    pub no_ignore: bool,
    /// Capture files that hold credentials too (directory parts).
    #[serde(default)]
    #[cfg_attr(feature = "clap", arg(long))]
    pub include_secrets: bool,
    /// The session to save into (name or id).
    #[cfg_attr(feature = "clap", arg(long))]
    pub session: Option<String>,
    /// Where the agents keep their sessions, for `transcript:auto` (filled in by the front).
    #[serde(skip)]
    #[schemars(skip)]
    #[cfg_attr(feature = "clap", arg(skip))]
    pub places: AgentPlaces,
}

/// The moment saved, with its parts' snapshots.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct MomentSaveResult {
    /// The moment.
    pub moment: Moment,
    /// Each part's snapshot, in the moment's order.
    pub snapshots: Vec<Snapshot>,
    /// Snapshots the keep policies removed after the parts were saved.
    pub removed_by_policy: Vec<Snapshot>,
}

/// One part to take: a target as given, and whether an unchanged target reuses its last
/// snapshot instead of recording a new one (agent checkpoints do).
#[derive(Debug, Clone)]
pub(crate) struct PartPlan {
    pub target: String,
    pub reuse_unchanged: bool,
}

/// How the moment is taken, beyond its parts.
#[derive(Debug, Clone, Default)]
pub(crate) struct TakeOptions {
    pub name: Option<String>,
    pub description: Option<String>,
    /// Move a name another moment (or part snapshot) holds instead of refusing it.
    pub force: bool,
    pub no_ignore: bool,
    pub include_secrets: bool,
    pub auto: bool,
    pub turn: Option<AgentTurn>,
    /// Record no moment when every part reused its last snapshot (nothing changed).
    pub skip_if_unchanged: bool,
}

/// A part taken, and whether it is a new snapshot.
struct Taken {
    part: MomentPart,
    snapshot: Snapshot,
    fresh: bool,
}

impl Repository {
    /// Saves the targets of `options` together as one moment.
    pub fn moment_save(
        &self,
        options: &MomentSaveOptions,
        context: &CallContext,
    ) -> Result<MomentSaveResult> {
        // Every field is mapped here, so a new option cannot be dropped on the way to the parts.
        let MomentSaveOptions {
            targets,
            name,
            description,
            force,
            no_ignore,
            include_secrets,
            session,
            places,
        } = options;
        if targets.is_empty() {
            return Err(Error::invalid("a moment needs at least one target"));
        }
        let session = self.resolve_session(&context.choice(session.clone()))?;
        let mut plans = Vec::new();
        for text in targets {
            let target = if text == "transcript:auto" {
                match places.newest_session()? {
                    Some(file) => format!("transcript:{}", file.display()),
                    None => {
                        return Err(Error::not_found(format!(
                            "no Pi or Claude Code session of {} to save for transcript:auto; pass transcript:<session file>",
                            places.cwd
                        )));
                    }
                }
            } else {
                text.clone()
            };
            plans.push(PartPlan { target, reuse_unchanged: false });
        }
        let take = TakeOptions {
            name: name.clone(),
            description: description.clone(),
            force: *force,
            no_ignore: *no_ignore,
            include_secrets: *include_secrets,
            ..TakeOptions::default()
        };
        let saved = self.take_moment(&session, &plans, &take)?;
        saved.ok_or_else(|| Error::corrupt("a moment saved by hand was skipped as unchanged"))
    }

    /// Takes every part of `plans` and commits the moment over them; all or nothing. `None`
    /// when `take.skip_if_unchanged` and nothing changed.
    pub(crate) fn take_moment(
        &self,
        session: &SessionRef,
        plans: &[PartPlan],
        take: &TakeOptions,
    ) -> Result<Option<MomentSaveResult>> {
        if let Some(name) = &take.name {
            validate_name("moment", name)?;
            if !take.force && self.moments_of(session)?.iter().any(|m| m.name.as_deref() == Some(name)) {
                return Err(Error::conflict(format!(
                    "a moment named {name:?} already exists in session {:?}; pick another name",
                    session.name
                ))
                .or_hint(Hint::SetOption("force"))
                .purpose("to move the name to the new moment"));
            }
        }
        let mut keys = Vec::new();
        for plan in plans {
            let target = Target::parse(&plan.target)?;
            if let Target::Debug(_) = target {
                return Err(Error::invalid(format!(
                    "{} is a debug target; a moment holds directories, transcripts and Compose projects",
                    plan.target
                )));
            }
            if keys.contains(&target.key()) {
                return Err(Error::invalid(format!(
                    "{} is named twice; name each target once",
                    target.key()
                )));
            }
            keys.push(target.key());
        }
        let mut taken: Vec<Taken> = Vec::new();
        let mut removed_by_policy = Vec::new();
        for plan in plans {
            match self.take_part(session, plan, take) {
                Ok((part, removed)) => {
                    removed_by_policy.extend(removed);
                    taken.push(part);
                }
                Err(e) => {
                    let undone = self.take_back(session, &taken);
                    return Err(e.context(format!(
                        "the moment was not saved: its {} part failed{undone}",
                        Target::parse(&plan.target).map(|t| t.key()).unwrap_or_else(|_| plan.target.clone())
                    )));
                }
            }
        }
        if take.skip_if_unchanged && taken.iter().all(|t| !t.fresh) {
            return Ok(None);
        }
        let moment = Moment {
            id: MomentId::new(),
            name: take.name.clone(),
            description: take.description.clone(),
            session: session.id,
            created_at: crate::time::now_rfc3339(),
            auto: take.auto,
            turn: take.turn.clone(),
            parts: taken.iter().map(|t| t.part.clone()).collect(),
        };
        let committed =
            if take.force { self.commit_moment_taking_name(&moment) } else { self.commit_moment(&moment) };
        if let Err(e) = committed {
            let undone = self.take_back(session, &taken);
            return Err(e.context(format!("the moment was not saved{undone}")));
        }
        Ok(Some(MomentSaveResult {
            moment,
            snapshots: taken.into_iter().map(|t| t.snapshot).collect(),
            removed_by_policy,
        }))
    }

    /// Takes one part: an ordinary save, or the target's last snapshot when it is unchanged
    /// and the plan allows reusing it.
    fn take_part(
        &self,
        session: &SessionRef,
        plan: &PartPlan,
        take: &TakeOptions,
    ) -> Result<(Taken, Vec<Snapshot>)> {
        let target = Target::parse(&plan.target)?;
        let previous =
            if plan.reuse_unchanged { self.last_snapshot_of(session, &target.key())? } else { None };
        let saved = self.save(
            &SaveOptions {
                target: plan.target.clone(),
                name: take.name.clone(),
                description: take.description.clone(),
                force: take.force,
                no_ignore: take.no_ignore,
                session: Some(session.id.to_string()),
                include_secrets: take.include_secrets,
                targets: Vec::new(),
            },
            &CallContext::default(),
        )?;
        let snapshot = saved.snapshot;
        if let Some(previous) = previous
            && previous.root.is_some()
            && previous.root == snapshot.root
            && previous.kind == snapshot.kind
        {
            // Nothing changed: no second record of the same state.
            self.catalog().remove_membership(session.id, snapshot.id)?;
            let part = MomentPart {
                kind: previous.kind.to_string(),
                target: previous.target.clone(),
                snapshot: previous.id,
            };
            return Ok((Taken { part, snapshot: previous, fresh: false }, saved.removed_by_policy));
        }
        let part = MomentPart {
            kind: snapshot.kind.to_string(),
            target: snapshot.target.clone(),
            snapshot: snapshot.id,
        };
        Ok((Taken { part, snapshot, fresh: true }, saved.removed_by_policy))
    }

    /// Takes back the new snapshots of a moment that failed; the words that say so.
    fn take_back(&self, session: &SessionRef, taken: &[Taken]) -> String {
        let mut undone = Vec::new();
        for t in taken.iter().filter(|t| t.fresh) {
            if self.catalog().remove_membership(session.id, t.snapshot.id).is_ok() {
                undone.push(t.part.target.clone());
            }
        }
        if undone.is_empty() {
            String::new()
        } else {
            format!(", and the parts already saved ({}) were removed", undone.join(", "))
        }
    }

    /// The newest regular snapshot of `target` in `session`.
    pub(crate) fn last_snapshot_of(&self, session: &SessionRef, target: &str) -> Result<Option<Snapshot>> {
        let filter = SnapshotFilter { target: Some(target.to_owned()), include_safety: false };
        Ok(self.catalog().list_snapshots(session.id, &filter)?.pop())
    }

    /// The snapshot id of a moment part, checked to still be in `session`.
    pub(crate) fn part_snapshot(&self, session: &SessionRef, part: &MomentPart) -> Result<Snapshot> {
        self.catalog().get_snapshot(session.id, part.snapshot)?.ok_or_else(|| {
            Error::not_found(format!("the {} part of the moment ({}) was removed", part.kind, part.snapshot))
        })
    }
}
