//! Narrowed restores: the tree an in-place restore goes to when it must not make the target
//! exactly a snapshot. Three rules, each building a goal tree by grafting (`tree::graft`), so
//! the plan, the journal, the safety snapshot and the replay of an ordinary restore serve it
//! unchanged:
//!
//! - **Paths**: only the given files or directories are put back; the rest stays as it is.
//! - **Agent only** (a rewind's default): each path's history is read from the checkpoints
//!   since the turn. A change that shows between a turn's checkpoints was the agent's; one
//!   that shows between the end of a turn and the next prompt, or after the last checkpoint,
//!   was someone else's (the user's, another tool's). A path that holds what the turn or the
//!   agent left in it (an earlier rewind may have put it back) is put back; otherwise one only
//!   someone else changed is kept and reported, and one both changed is merged three-way
//!   (base: the path before someone else first changed it; ours: the path now; theirs: the
//!   turn's), conflicts written with markers and reported.
//! - **Undo**: one turn's changes taken back, every later change kept: a path the turn changed
//!   goes back to before it when it still holds what the turn left, is merged three-way when it
//!   changed since (base: what the turn left; ours: now; theirs: before the turn), and is
//!   otherwise kept and reported.

use std::collections::BTreeMap;

use crate::error::{Error, Result};
use crate::id::ObjectId;
use crate::store::chunker;
use crate::store::writer::BlobWriter;
use crate::targets::dir::restore::PlanEntry;
use crate::tree::diff::TreeSource;
use crate::tree::graft::{graft, is_at_or_below, node_at};
use crate::tree::{DirRoot, Node, NodeKind};

/// How a restore in place is narrowed beyond its paths (set by the engine, never by a front).
#[derive(Debug, Clone)]
pub enum RestoreRule {
    /// Put back only what an agent changed.
    AgentOnly {
        /// The checkpoints of the target from the turn on, oldest first (the turn's own
        /// first): each root, and whether the agent took it inside a turn (after a tool ran)
        /// rather than when a prompt arrived.
        checkpoints: Vec<(ObjectId, bool)>,
    },
    /// Take back the changes from `before` to `after` (one turn's), keeping every later one.
    Undo {
        /// The root before the turn.
        before: ObjectId,
        /// The root the turn left.
        after: ObjectId,
    },
}

/// What a narrowed restore left out or merged, one entry per path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Held {
    /// Kept as it is now: changed by someone else since.
    Keep,
    /// Merged three-way, cleanly.
    Merge,
    /// Merged three-way with conflicts, written with markers.
    Conflict,
}

impl Held {
    fn word(self) -> &'static str {
        match self {
            Held::Keep => "keep",
            Held::Merge => "merge",
            Held::Conflict => "conflict",
        }
    }
}

/// The goal of a narrowed restore, and what it held back or merged.
pub(crate) struct Narrowed {
    /// The tree to restore towards.
    pub goal: DirRoot,
    /// The entries of the plan's report for the paths kept or merged.
    pub report: Vec<PlanEntry>,
}

/// Files larger than this are not merged (kept, and reported).
const MERGE_LIMIT: u64 = 8 << 20;

/// Where a narrowed restore reads what it needs.
pub(crate) struct Sources<'a> {
    /// The trees of the live state, the snapshot and the rule's roots.
    pub trees: &'a dyn TreeSource,
    /// A stored blob's bytes.
    pub read: &'a dyn Fn(&ObjectId) -> Result<Vec<u8>>,
    /// The target directory, to read a live file a dry run hashed but did not store.
    pub live_dir: &'a std::path::Path,
}

/// Builds the goal for restoring `want` over `live` with `paths` (relative, none for all) and
/// `rule`. Returns `None` when nothing narrows the restore. New trees and merged files are
/// written through `writer`.
pub(crate) fn narrow(
    sources: &Sources<'_>,
    writer: &BlobWriter<'_>,
    live: &DirRoot,
    want: &DirRoot,
    paths: &[Vec<u8>],
    rule: Option<&RestoreRule>,
) -> Result<Option<Narrowed>> {
    if paths.is_empty() && rule.is_none() {
        return Ok(None);
    }
    let source = sources.trees;
    let read = |id: &ObjectId| (sources.read)(id);
    // Every rule is a set of edits to the live tree, made in one graft: the restore then changes
    // exactly the edited paths.
    let mut edits = BTreeMap::new();
    let mut report = Vec::new();
    for path in paths {
        if node_at(source, want, path)?.is_none() && node_at(source, live, path)?.is_none() {
            return Err(Error::not_found(format!(
                "{} is neither in the snapshot nor in the directory",
                String::from_utf8_lossy(path)
            )));
        }
    }
    let shape = match rule {
        None => {
            for path in paths {
                edits.insert(path.clone(), node_at(source, want, path)?);
            }
            want.clone()
        }
        Some(RestoreRule::AgentOnly { checkpoints }) => {
            let roots: Vec<(DirRoot, bool)> = checkpoints
                .iter()
                .map(|(id, by_agent)| Ok((read_root(&read, id)?, *by_agent)))
                .collect::<Result<_>>()?;
            for (path, now, wanted) in differences(source, live, want, paths)? {
                let history = History::of(source, &roots, &path, now.as_ref())?;
                let left_by_agent = history.agent_left.iter().any(|v| same_entry(v.as_ref(), now.as_ref()));
                let Some(base) = history.first_by_others.filter(|_| !left_by_agent) else {
                    edits.insert(path, wanted);
                    continue;
                };
                let held = if history.by_agent {
                    let (node, held) =
                        merge_or_keep(sources, writer, &path, base.as_ref(), now.as_ref(), wanted.as_ref())?;
                    if held != Held::Keep {
                        edits.insert(path.clone(), node);
                    }
                    held
                } else {
                    Held::Keep
                };
                report.push(entry(&path, held, now.as_ref().or(wanted.as_ref())));
            }
            want.clone()
        }
        Some(RestoreRule::Undo { before, after }) => {
            let before = read_root(&read, before)?;
            let after = read_root(&read, after)?;
            for (path, was, left) in differences(source, &before, &after, paths)? {
                let now = node_at(source, live, &path)?;
                if same_entry(now.as_ref(), was.as_ref()) {
                    continue;
                }
                if same_entry(now.as_ref(), left.as_ref()) {
                    edits.insert(path, was);
                    continue;
                }
                let (node, held) =
                    merge_or_keep(sources, writer, &path, left.as_ref(), now.as_ref(), was.as_ref())?;
                report.push(entry(&path, held, now.as_ref().or(was.as_ref())));
                if held != Held::Keep {
                    edits.insert(path, node);
                }
            }
            before
        }
    };
    let goal = graft(source, writer, live, &shape, &edits)?;
    Ok(Some(Narrowed { goal, report }))
}

/// Who changed one path since a turn, read from the checkpoints.
struct History {
    /// Whether a change shows between two checkpoints of one turn (the agent's).
    by_agent: bool,
    /// What the turn and the agent's changes left in the path.
    agent_left: Vec<Option<Node>>,
    /// The path before someone other than the agent first changed it, if anyone did: a change
    /// between turns, or after the last checkpoint.
    first_by_others: Option<Option<Node>>,
}

impl History {
    fn of(
        source: &dyn TreeSource,
        roots: &[(DirRoot, bool)],
        path: &[u8],
        now: Option<&Node>,
    ) -> Result<Self> {
        let mut history = History { by_agent: false, agent_left: Vec::new(), first_by_others: None };
        let mut last: Option<Option<Node>> = None;
        for (root, by_agent) in roots {
            let here = node_at(source, root, path)?;
            match &last {
                None => history.agent_left.push(here.clone()),
                Some(before) if !same_entry(before.as_ref(), here.as_ref()) => {
                    history.note(*by_agent, before);
                    if *by_agent {
                        history.agent_left.push(here.clone());
                    }
                }
                Some(_) => {}
            }
            last = Some(here);
        }
        if let Some(before) = &last
            && !same_entry(before.as_ref(), now)
        {
            history.note(false, before);
        }
        Ok(history)
    }

    fn note(&mut self, by_agent: bool, before: &Option<Node>) {
        if by_agent {
            self.by_agent = true;
        } else if self.first_by_others.is_none() {
            self.first_by_others = Some(before.clone());
        }
    }
}

/// One path where two trees differ: the path, and its entry on each side (absent when missing).
type Difference = (Vec<u8>, Option<Node>, Option<Node>);

/// The paths where `a` and `b` differ (in content, link target, kind or mode; not in times),
/// file by file: a directory only one side has is listed by the entries under it (itself when
/// it is empty). With `within`, only paths at or below one of them.
fn differences(
    source: &dyn TreeSource,
    a: &DirRoot,
    b: &DirRoot,
    within: &[Vec<u8>],
) -> Result<Vec<Difference>> {
    let mut out = Vec::new();
    walk(source, Vec::new(), Some(&a.top), Some(&b.top), &mut out)?;
    if !within.is_empty() {
        out.retain(|(path, _, _)| within.iter().any(|w| is_at_or_below(path, w)));
    }
    Ok(out)
}

fn walk(
    source: &dyn TreeSource,
    path: Vec<u8>,
    a: Option<&Node>,
    b: Option<&Node>,
    out: &mut Vec<Difference>,
) -> Result<()> {
    let tree = |n: Option<&Node>| match n.map(|n| &n.kind) {
        Some(NodeKind::Dir { tree }) => Some(*tree),
        _ => None,
    };
    let both_dirs_or_one = match (tree(a), tree(b)) {
        (Some(x), Some(y)) if x == y => return Ok(()),
        (Some(_), Some(_)) => true,
        (Some(_), None) => b.is_none(),
        (None, Some(_)) => a.is_none(),
        (None, None) => false,
    };
    if !both_dirs_or_one {
        if !same_entry(a, b) {
            out.push((path, a.cloned(), b.cloned()));
        }
        return Ok(());
    }
    let left = match tree(a) {
        Some(id) => source.tree(&id)?.nodes.clone(),
        None => Vec::new(),
    };
    let right = match tree(b) {
        Some(id) => source.tree(&id)?.nodes.clone(),
        None => Vec::new(),
    };
    if left.is_empty() && right.is_empty() {
        // An empty directory on one side only is itself the difference.
        if a.is_none() || b.is_none() {
            out.push((path, a.cloned(), b.cloned()));
        }
        return Ok(());
    }
    let mut names: Vec<&[u8]> = left.iter().chain(&right).map(|n| n.name.as_slice()).collect();
    names.sort_unstable();
    names.dedup();
    for name in names {
        let find = |nodes: &[Node]| nodes.binary_search_by(|n| n.name.as_slice().cmp(name)).ok();
        let x = find(&left).map(|i| &left[i]);
        let y = find(&right).map(|i| &right[i]);
        let mut child = path.clone();
        if !child.is_empty() {
            child.push(b'/');
        }
        child.extend_from_slice(name);
        walk(source, child, x, y, out)?;
    }
    Ok(())
}

/// Whether two entries (either absent) hold the same thing with the same mode.
fn same_entry(a: Option<&Node>, b: Option<&Node>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => a.same_bytes(b) && a.mode == b.mode,
        _ => false,
    }
}

/// Merges `ours` (the live file at `path`) and `theirs` from `base` when all three are plain
/// text files small enough; otherwise keeps `ours`. Returns the entry to put at the path and
/// what was done.
fn merge_or_keep(
    sources: &Sources<'_>,
    writer: &BlobWriter<'_>,
    path: &[u8],
    base: Option<&Node>,
    ours: Option<&Node>,
    theirs: Option<&Node>,
) -> Result<(Option<Node>, Held)> {
    let read = sources.read;
    let live = |node: &Node| -> Result<Option<Vec<u8>>> {
        match text_of(read, node) {
            Ok(text) => Ok(text),
            // A dry run hashes the live files it reads without storing them: read it again.
            Err(_) => {
                use std::os::unix::ffi::OsStrExt;
                let file = sources.live_dir.join(std::ffi::OsStr::from_bytes(path));
                let bytes = std::fs::read(&file).map_err(|e| Error::io("read", &file, e))?;
                Ok((!bytes.contains(&0) && bytes.len() as u64 <= MERGE_LIMIT).then_some(bytes))
            }
        }
    };
    let texts = match (base, ours, theirs) {
        (Some(b), Some(o), Some(t)) => match (text_of(read, b)?, live(o)?, text_of(read, t)?) {
            (Some(b), Some(o), Some(t)) => Some((b, o, t)),
            _ => None,
        },
        _ => None,
    };
    let (Some((base_text, our_text, their_text)), Some(ours)) = (texts, ours) else {
        return Ok((ours.cloned(), Held::Keep));
    };
    let mut options = diffy::MergeOptions::new();
    options.set_conflict_style(diffy::ConflictStyle::Merge);
    let (bytes, held) = match options.merge_bytes(&base_text, &our_text, &their_text) {
        Ok(merged) => (merged, Held::Merge),
        Err(conflicted) => (conflicted, Held::Conflict),
    };
    let (content, size) = chunker::store_chunks(writer, std::io::Cursor::new(&bytes))
        .map_err(|e| Error::corrupt(format!("could not store a merged file: {e}")))??;
    let node = Node { kind: NodeKind::File { size, content }, extra: Default::default(), ..ours.clone() };
    Ok((Some(node), held))
}

/// The bytes of a regular file that can be merged as text: not sparse, within
/// [`MERGE_LIMIT`], with no NUL byte.
fn text_of(read: &dyn Fn(&ObjectId) -> Result<Vec<u8>>, node: &Node) -> Result<Option<Vec<u8>>> {
    let NodeKind::File { size, content } = &node.kind else { return Ok(None) };
    if *size > MERGE_LIMIT || node.extra.extents.is_some() {
        return Ok(None);
    }
    let mut bytes = Vec::with_capacity(*size as usize);
    for id in content {
        bytes.extend(read(id)?);
    }
    Ok((!bytes.contains(&0)).then_some(bytes))
}

fn read_root(read: &dyn Fn(&ObjectId) -> Result<Vec<u8>>, id: &ObjectId) -> Result<DirRoot> {
    crate::tree::decode(id, &read(id)?)
}

fn entry(path: &[u8], held: Held, node: Option<&Node>) -> PlanEntry {
    PlanEntry {
        path: String::from_utf8_lossy(path).into_owned(),
        action: held.word().to_owned(),
        kind: node.map_or("file", |n| n.kind.label()).to_owned(),
    }
}
