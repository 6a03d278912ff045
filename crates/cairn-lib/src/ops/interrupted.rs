//! Interrupted in-place restores: what the next command does when a killed restore left its
//! journal (`pipeline/journal.rs`) behind.
//!
//! Nothing is destroyed that is not in a snapshot first: the tree as it is found (half restored,
//! plus whatever was written since the kill) is captured as a recovery snapshot, and only then
//! is a file touched. The tree is then rolled back to the restore's safety snapshot (a restore
//! that did not finish was never reported, so the tree goes back to what it was before it, as
//! after a restore that fails), or, when asked, the restore is finished. Commands that only read
//! (check, diff against the live tree, a dry run) report the interrupted restore instead of
//! working on the mixed tree.

use std::path::{Path, PathBuf};

use serde::Serialize;

pub(crate) use super::pipeline::journal::Journal;
use super::save::{DirCapture, Progress, SaveOptions};
use crate::error::{Error, Result};
use crate::id::{ObjectId, SessionId};
use crate::store::Store;
use crate::targets::dir::restore::Plan;
use crate::tree;

/// A restore that a killed process left half-applied.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct InterruptedRestore {
    /// The target the restore was writing.
    pub target: String,
    /// The snapshot it was restoring.
    pub restoring: String,
    /// The safety snapshot of the tree before it began.
    pub safety: String,
}

impl InterruptedRestore {
    /// One sentence saying what was found.
    pub fn sentence(&self) -> String {
        format!(
            "an interrupted restore of snapshot {} left {} half restored (its state before was saved as snapshot {})",
            self.restoring, self.target, self.safety
        )
    }
}

/// What was done about an interrupted restore.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Recovered {
    /// What was found.
    #[serde(flatten)]
    pub found: InterruptedRestore,
    /// The snapshot of the tree as it was found, taken before anything was changed.
    pub recovery_snapshot: String,
    /// `rolled_back` (the tree is back as it was before the restore) or `finished` (the tree
    /// is the snapshot that was being restored).
    pub outcome: String,
}

/// The plan entries applied, files written and bytes written.
pub(crate) type Applied = (Vec<crate::PlanEntry>, u64, u64);

/// How to resolve an interrupted restore.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Resolve {
    RollBack,
    Finish,
}

impl Store {
    /// The interrupted restore of target `key`, if a journal of a process that is gone is there.
    pub fn interrupted_restore(&self, key: &str) -> Result<Option<InterruptedRestore>> {
        Ok(self.read_journal(&self.journal_path(key))?.map(|(_, j)| found(&j)))
    }

    /// Every interrupted restore in the store.
    pub fn interrupted_restores(&self) -> Result<Vec<InterruptedRestore>> {
        let dir = self.layout().journal();
        let mut out = Vec::new();
        let Ok(entries) = std::fs::read_dir(&dir) else { return Ok(out) };
        for entry in entries.flatten() {
            if entry.path().extension().is_some_and(|e| e == "json")
                && let Some((_, j)) = self.read_journal(&entry.path())?
            {
                out.push(found(&j));
            }
        }
        out.sort_by(|a, b| a.target.cmp(&b.target));
        Ok(out)
    }

    /// Refuses to work on the live tree of `key` while an interrupted restore has left it mixed.
    pub(crate) fn refuse_interrupted(&self, key: &str) -> Result<()> {
        match self.interrupted_restore(key)? {
            None => Ok(()),
            Some(found) => Err(Error::conflict(format!(
                "{}; finish it (the restore's continue option) or roll it back (its abort option) first",
                found.sentence()
            ))
            .with_code("interrupted_restore")),
        }
    }

    fn read_journal(&self, path: &Path) -> Result<Option<(PathBuf, Journal)>> {
        let Ok(bytes) = std::fs::read(path) else {
            return Ok(None);
        };
        let journal: Journal = serde_json::from_slice(&bytes).map_err(|e| {
            Error::corrupt(format!("the restore journal {} is damaged ({e}); remove it", path.display()))
        })?;
        if crate::store::layout::pid_alive(journal.pid) && journal.pid != std::process::id() {
            return Ok(None);
        }
        if self.never_applied(&journal)? {
            // Its process is gone, and it changed nothing: it is only in the way.
            let _ = std::fs::remove_file(path);
            return Ok(None);
        }
        Ok(Some((path.to_path_buf(), journal)))
    }

    /// True when the restore of `journal` was stopped before it changed the tree. A restore
    /// writes its journal while it commits its safety snapshot, and changes nothing until both
    /// are durable; so a journal whose safety snapshot is neither in the catalog nor readable
    /// (its root unknown to the index) was left by a restore stopped before its first change.
    fn never_applied(&self, journal: &Journal) -> Result<bool> {
        let Ok(root) = ObjectId::from_hex(&journal.safety_root) else { return Ok(false) };
        Ok(!self.catalog.has_snapshot(&journal.safety)? && self.catalog.blob_location(&root)?.is_none())
    }

    /// Resolves an interrupted restore of `key`, if there is one: says so, captures the tree as
    /// it is as a recovery snapshot, then rolls back or finishes. The caller holds the target's
    /// lock.
    pub(crate) fn resolve_interrupted(&self, key: &str, how: Resolve) -> Result<Option<Recovered>> {
        Ok(self.resolve_interrupted_applied(key, how)?.map(|(r, _)| r))
    }

    /// [`Store::resolve_interrupted`], also returning what the resolution applied.
    pub(crate) fn resolve_interrupted_applied(
        &self,
        key: &str,
        how: Resolve,
    ) -> Result<Option<(Recovered, Applied)>> {
        let Some((path, journal)) = self.read_journal(&self.journal_path(key))? else {
            return Ok(None);
        };
        let found = found(&journal);
        let goal_hex = match how {
            Resolve::RollBack => Some(journal.safety_root.clone()),
            Resolve::Finish => journal.restoring_root.clone(),
        };
        let goal_hex = goal_hex.ok_or_else(|| {
            Error::conflict(format!(
                "{}; this journal does not say what was being restored, so it can only be rolled back",
                found.sentence()
            ))
        })?;
        let goal = tree::read_root(self, &ObjectId::from_hex(&goal_hex)?)?;
        self.notice(&format!(
            "{}: saving the tree as it is, then {}",
            found.sentence(),
            match how {
                Resolve::RollBack => format!("putting back snapshot {}", found.safety),
                Resolve::Finish => format!("finishing the restore of snapshot {}", found.restoring),
            }
        ));
        let session = match journal.session.as_deref().map(str::parse::<SessionId>) {
            Some(Ok(id)) => id,
            _ => self.resolve_session(&Default::default())?.id,
        };
        let target = PathBuf::from(&journal.target);
        let save = SaveOptions {
            target: key.to_owned(),
            description: Some(format!(
                "the tree as found after an interrupted restore of {}",
                journal.restoring
            )),
            no_ignore: journal.no_ignore,
            ..SaveOptions::default()
        };
        let DirCapture { snapshot: recovery, uncovered } =
            self.publish_dir_capture(&target, key, session, &save, false, &Progress::default())?.commit()?;
        let live = tree::read_root(
            self,
            &recovery.root.ok_or_else(|| Error::corrupt("the recovery snapshot has no root"))?,
        )?;
        let with_mtimes = how == Resolve::RollBack || journal.preserve_mtime;
        let plan = Plan::between(self, &live, &goal, with_mtimes, &uncovered)?;
        crate::store::fault::kill_at(crate::store::fault::FaultPoint::RecoverySaved);
        let applied = self.apply_planned(&plan, &target, key, &goal, with_mtimes, &Progress::default())?;
        std::fs::remove_file(&path).map_err(|e| Error::io("remove", &path, e))?;
        let recovered = Recovered {
            found,
            recovery_snapshot: recovery.id.to_string(),
            outcome: match how {
                Resolve::RollBack => "rolled_back",
                Resolve::Finish => "finished",
            }
            .into(),
        };
        Ok(Some((recovered, applied)))
    }
}

fn found(j: &Journal) -> InterruptedRestore {
    InterruptedRestore { target: j.target.clone(), restoring: j.restoring.clone(), safety: j.safety.clone() }
}
