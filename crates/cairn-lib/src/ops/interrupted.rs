//! Interrupted in-place restores: what the next command does when a killed restore left its
//! journal (`pipeline/journal.rs`) behind.
//!
//! No command resolves one on its own: a command that would change the target (a save, a
//! restore, an agent's checkpoint) refuses in one sentence that names the restore's `continue`
//! and `abort` options, and commands that only read (check, diff against the live tree, a dry
//! run) report it instead of working on the mixed tree. A refusal, not a roll back, because
//! what the user wrote since the kill is on disk, and a command they ran to save it must not
//! take it away; a refusal, not a guess at finishing, because the user saw the restore fail.
//!
//! `continue` and `abort` resolve it: the tree as it is found (half restored, plus whatever
//! was written since) is captured as a recovery snapshot before a file is touched, then the
//! restore is finished or rolled back, but for the files written since: every file or link
//! whose content is neither the one before the restore nor the one it was restoring was put
//! there by someone else, and is left as it is and listed (`keep` entries of the plan).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub(crate) use super::pipeline::journal::Journal;
use super::save::{DirCapture, Progress, SaveOptions};
use crate::Repository;
use crate::error::{Error, Hint, Operation, Result};
use crate::id::{ObjectId, SessionId};
use crate::targets::dir::materialize::split;
use crate::targets::dir::restore::{Plan, PlanEntry};
use crate::tree::diff::{Change, TreeSource};
use crate::tree::graft::node_at;
use crate::tree::{self, DirRoot, Node, NodeKind};

/// A restore that a killed process left half-applied.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
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
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
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

impl Repository {
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

    /// Refuses to work on the live tree of `key` while an interrupted restore has left it
    /// mixed: what every command but the restore's `continue` and `abort` does, whether it
    /// would read the tree (a diff, a dry run) or change it (a save, a restore, a checkpoint).
    pub(crate) fn refuse_interrupted(&self, key: &str) -> Result<()> {
        match self.interrupted_restore(key)? {
            None => Ok(()),
            Some(found) => Err(refusal(&found)),
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
        Ok(!self.catalog().has_snapshot(&journal.safety)? && self.catalog().blob_location(&root)?.is_none())
    }

    /// Resolves an interrupted restore of `key`, if there is one: says so, captures the tree as
    /// it is as a recovery snapshot, then rolls back or finishes, leaving the files written
    /// since as they are. Returns what it did and what it applied; the files it left as they
    /// were written since are `keep` entries of the plan. The caller holds the target's lock.
    pub(crate) fn resolve_interrupted_applied(
        &self,
        key: &str,
        how: Resolve,
    ) -> Result<Option<(Recovered, Applied)>> {
        let Some((path, journal)) = self.read_journal(&self.journal_path(key))? else {
            return Ok(None);
        };
        let found = found(&journal);
        let (goal_hex, other_hex) = match how {
            Resolve::RollBack => (Some(journal.safety_root.clone()), journal.restoring_root.clone()),
            Resolve::Finish => (journal.restoring_root.clone(), Some(journal.safety_root.clone())),
        };
        let goal_hex = goal_hex.ok_or_else(|| {
            Error::conflict(format!(
                "{}; this journal does not say what was being restored, so it can only be rolled back",
                found.sentence()
            ))
        })?;
        let goal = tree::read_root(self, &ObjectId::from_hex(&goal_hex)?)?;
        // Without the other side (a journal of an older version), a file is compared with the
        // goal alone: kept unless it is already as the goal has it.
        let other = match other_hex.as_deref().map(ObjectId::from_hex) {
            Some(Ok(id)) => Some(tree::read_root(self, &id)?),
            _ => None,
        };
        self.notice(&format!(
            "{}: saving the tree as it is, then {}, keeping the files written since",
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
        let DirCapture { snapshot: recovery, uncovered } = self
            .publish_dir_capture(&target, key, session, &save, false, None, &Progress::default())?
            .commit()?;
        let live = tree::read_root(
            self,
            &recovery.root.ok_or_else(|| Error::corrupt("the recovery snapshot has no root"))?,
        )?;
        let with_mtimes = how == Resolve::RollBack || journal.preserve_mtime;
        let mut plan = Plan::between(self, &live, &goal, with_mtimes, &uncovered)?;
        let kept = keep_written_since(self, &mut plan, &goal, other.as_ref())?;
        crate::store::fault::kill_at(crate::store::fault::FaultPoint::RecoverySaved);
        let (mut entries, files, bytes) = crate::targets::dir::apply::apply_planned(
            self,
            &plan,
            &target,
            key,
            &goal,
            with_mtimes,
            &Progress::default(),
        )?;
        std::fs::remove_file(&path).map_err(|e| Error::io("remove", &path, e))?;
        entries.extend(kept);
        let recovered = Recovered {
            found,
            recovery_snapshot: recovery.id.to_string(),
            outcome: match how {
                Resolve::RollBack => "rolled_back",
                Resolve::Finish => "finished",
            }
            .into(),
        };
        Ok(Some((recovered, (entries, files, bytes))))
    }
}

/// Takes out of `plan` every change that would overwrite or remove a file or link written
/// since the restore began, and returns them as `keep` entries.
///
/// Written since means its content (a link's target) is neither the goal's nor the other
/// side's (the state before the restore, or the snapshot it was restoring): the restore only
/// ever wrote the one, and the tree held the other. Content rather than mtimes, because a
/// file the restore wrote is newer than its journal too, and a file copied or unpacked since
/// can carry an old mtime. A directory the plan removes or replaces that holds such a file
/// stays, with that file; its other entries go.
fn keep_written_since(
    source: &dyn TreeSource,
    plan: &mut Plan,
    goal: &DirRoot,
    other: Option<&DirRoot>,
) -> Result<Vec<PlanEntry>> {
    let written_since = |path: &[u8], node: &Node, goal_node: Option<&Node>| -> Result<bool> {
        if goal_node.is_some_and(|g| node.same_bytes(g)) || half_written(path) {
            return Ok(false);
        }
        Ok(match other {
            Some(root) => !node_at(source, root, path)?.is_some_and(|o| node.same_bytes(&o)),
            None => true,
        })
    };
    let mut kept: Vec<(Vec<u8>, &'static str)> = Vec::new();
    let mut changes = Vec::with_capacity(plan.changes.len());
    for change in std::mem::take(&mut plan.changes) {
        match (&change.old, &change.new) {
            (Some(old), new) if !matches!(old.kind, NodeKind::Dir { .. }) => {
                if written_since(&change.path, old, new.as_ref())? {
                    kept.push((change.path, old.kind.label()));
                } else {
                    changes.push(change);
                }
            }
            (Some(Node { kind: NodeKind::Dir { tree }, .. }), new)
                if !new.as_ref().is_some_and(|n| matches!(n.kind, NodeKind::Dir { .. })) =>
            {
                let mut held = Vec::new();
                let mut removals = Vec::new();
                sort_below(source, &change.path, tree, &written_since, &mut held, &mut removals)?;
                if held.is_empty() {
                    changes.push(change);
                } else {
                    kept.extend(held);
                    // Removed: only what was not written since goes. Replaced by a file or a
                    // link: the directory stays as it is, and the goal's entry is not put back.
                    if new.is_none() {
                        changes.extend(removals);
                    }
                }
            }
            _ => changes.push(change),
        }
    }
    plan.changes = changes;
    if kept.is_empty() {
        return Ok(Vec::new());
    }
    // The directories that hold a kept file are not as the goal has them: their trees are not
    // the goal's, and no hard link of the goal's is made over a kept file.
    let holding: HashSet<&[u8]> = kept.iter().flat_map(|(p, _)| ancestors(p)).collect();
    plan.settled_trees.retain(|(dir, _)| !holding.contains(dir.as_slice()));
    if goal.hardlinks.iter().flatten().any(|p| kept.iter().any(|(k, _)| k == p)) {
        plan.relink = false;
    }
    Ok(kept
        .into_iter()
        .map(|(p, kind)| PlanEntry {
            path: String::from_utf8_lossy(&p).into_owned(),
            action: "keep".into(),
            kind: kind.into(),
        })
        .collect())
}

/// Whether the entry at a path (the live node, the goal's node there) was written since the
/// restore began.
type WrittenSince<'a> = dyn Fn(&[u8], &Node, Option<&Node>) -> Result<bool> + 'a;

/// Sorts the entries below directory `path` (tree `tree`, which the goal does not have) into
/// the files written since (`held`) and the removals of everything else (`removals`): a
/// subdirectory holding nothing written since is removed whole.
fn sort_below(
    source: &dyn TreeSource,
    path: &[u8],
    tree: &ObjectId,
    written_since: &WrittenSince<'_>,
    held: &mut Vec<(Vec<u8>, &'static str)>,
    removals: &mut Vec<Change>,
) -> Result<()> {
    for node in source.tree(tree)?.nodes.iter() {
        let child = [path, b"/", &node.name].concat();
        match &node.kind {
            NodeKind::Dir { tree } => {
                let before = held.len();
                let mut inner = Vec::new();
                sort_below(source, &child, tree, written_since, held, &mut inner)?;
                if held.len() == before {
                    removals.push(Change { path: child, old: Some(node.clone()), new: None });
                } else {
                    removals.extend(inner);
                }
            }
            _ if written_since(&child, node, None)? => held.push((child, node.kind.label())),
            _ => removals.push(Change { path: child, old: Some(node.clone()), new: None }),
        }
    }
    Ok(())
}

/// Whether `path` is a file the killed restore was writing beside its target (named as
/// `targets/dir/materialize.rs` names them: `.cairn-tmp-` and 32 hex digits): its own, never
/// the user's, so it goes.
fn half_written(path: &[u8]) -> bool {
    split(path)
        .1
        .strip_prefix(b".cairn-tmp-")
        .is_some_and(|id| id.len() == 32 && id.iter().all(u8::is_ascii_hexdigit))
}

/// The directories that hold `path`, from its own up to the top (`""`).
fn ancestors(path: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut at = path;
    while !at.is_empty() {
        at = split(at).0;
        out.push(at);
    }
    out
}

/// The one-sentence refusal of a command that meets the interrupted restore `found`. Its
/// code, `interrupted_restore`, lets a front that speaks to someone else (an agent's hook)
/// say it where they look.
pub(crate) fn refusal(found: &InterruptedRestore) -> Error {
    Error::conflict(format!(
        "{}; finish or roll back that restore first (either way keeps the files written since)",
        found.sentence()
    ))
    .hint(Hint::Run(Operation::ContinueRestore))
    .hint(Hint::Run(Operation::AbortRestore))
    .with_code(REFUSAL_CODE)
}

/// The code of [`refusal`].
pub const REFUSAL_CODE: &str = "interrupted_restore";

fn found(j: &Journal) -> InterruptedRestore {
    InterruptedRestore { target: j.target.clone(), restoring: j.restoring.clone(), safety: j.safety.clone() }
}
