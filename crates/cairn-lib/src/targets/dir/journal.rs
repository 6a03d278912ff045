//! Saving at the cost of what changed: the watcher's answer (`cairn-watch`) turned into which
//! directories a capture lists again, and which subtrees it takes whole from the last capture.
//!
//! The last capture left a summary of every directory it captured in the directory's stat cache
//! row: its tree id, its direct counts, the entries it left out, and its subtree's totals. A
//! directory the answer does not name, with no named directory below it, is taken from its row
//! without a look, and nothing below it is read: only a subtree with entries left out has the
//! rows below it read, those on the way to the left-out entries. Whatever the
//! journal cannot vouch for is looked at: a directory holding a file with several links (a
//! write through a link outside it makes no event here), one with skipped entries, and
//! everything below a directory whose ignore files changed.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use cairn_watch::{Answer, DirtyDir, Token};
use serde::{Deserialize, Serialize};

use super::statcache::{RowMeta, Totals, join};
use crate::error::Result;
use crate::id::ObjectId;
use crate::snapshot::JournalReport;

/// A path relative to the captured root, as raw bytes.
type RelPath = Vec<u8>;

/// What the last capture knew about one directory it captured.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct DirSummary {
    pub tree: ObjectId,
    /// Direct entries captured.
    pub files: u64,
    pub symlinks: u64,
    pub subdirs: u64,
    pub bytes: u64,
    /// Direct entries left out by the ignore rules: (path, is a directory).
    pub ignored: Vec<(RelPath, bool)>,
    /// Direct entries left out as secrets: (path, rule).
    pub secrets: Vec<(RelPath, String)>,
    /// False when its entries cannot be trusted unseen (hard links, skipped entries).
    pub settled: bool,
}

/// The journal's part of a stat cache (its header): where the last capture stood in the
/// watcher's journal, with which filter, and whether it left directory summaries.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct JournalState {
    pub token: Option<Token>,
    /// `(no_ignore, include_secrets)` of the capture: summaries of another filter do not apply.
    pub filter: (bool, bool),
    /// True when the capture left a summary in every directory row it wrote.
    pub summaries: bool,
    /// Saves since the last one that walked the whole tree.
    pub saves_since_walk: u32,
    /// When the last whole walk started (the coarse clock, in nanoseconds).
    pub walked_at_ns: i64,
}

/// One save in this many walks the whole tree even when the journal vouches for it: a file
/// written through a hard link that was made and removed again between two saves makes no event
/// in its own directory, and this bounds how long such a change can go unseen.
pub(crate) const WALK_EVERY: u32 = 100;

/// A save this long after the last whole walk walks again, for the same reason: a tree whose
/// journal names nothing never rewrites its cache, so its save count does not move.
pub(crate) const WALK_AFTER_NS: i64 = 3600 * 1_000_000_000;

impl JournalState {
    /// Why a save starting at `now_ns` should walk the whole tree although the journal vouches
    /// for it, if it should.
    pub(crate) fn walk_due(&self, now_ns: i64) -> Option<&'static str> {
        if self.saves_since_walk >= WALK_EVERY {
            return Some("one save in a hundred walks the whole tree, for what no event shows");
        }
        (now_ns - self.walked_at_ns > WALK_AFTER_NS)
            .then_some("a save an hour after the last whole walk walks again, for what no event shows")
    }
}

/// The directories a capture must look at, from a watcher's answer.
pub(crate) struct Plan {
    /// The directories the answer named.
    named: Vec<DirtyDir>,
    /// The directories named and each of their ancestors.
    listed: HashSet<RelPath>,
    /// Directories whose whole subtree is new to the journal.
    fresh: Vec<RelPath>,
    /// Named directories any of whose entries may have changed.
    whole: HashSet<RelPath>,
    /// Named directories with the names of the entries that changed in them.
    by_names: HashMap<RelPath, Vec<Vec<u8>>>,
}

/// What a subtree taken from the last capture brings.
pub(crate) struct Reused {
    pub tree: ObjectId,
    pub files: u64,
    pub symlinks: u64,
    /// Directories strictly below the subtree's root.
    pub dirs: u64,
    pub bytes: u64,
    pub ignored: Vec<(RelPath, bool)>,
    pub secrets: Vec<(RelPath, String)>,
    /// Its totals, for the row of the directory above it.
    pub totals: Totals,
    /// Taken from what its parent's row says of it, its own row unread.
    pub unread: bool,
}

impl Reused {
    /// The subtree of tree `tree` with `totals`, nothing left out gathered yet.
    fn new(tree: ObjectId, totals: Totals, unread: bool) -> Self {
        let Totals { files, symlinks, dirs, bytes, .. } = totals;
        Self { tree, files, symlinks, dirs, bytes, ignored: Vec::new(), secrets: Vec::new(), totals, unread }
    }
}

/// Asks the store's watcher what changed below `root` since the last capture. Returns the
/// token to record, the plan (none: walk everything), and what to say in the stats (none when
/// no watcher runs).
pub(crate) fn ask(
    socket: &Path,
    root: &Path,
    old: &JournalState,
    filter: (bool, bool),
) -> (Option<Token>, Option<Plan>, Option<JournalReport>) {
    if !socket.exists() {
        return (None, None, None);
    }
    let walk = |reason: String| {
        Some(JournalReport { used: false, reason: Some(reason), ..JournalReport::default() })
    };
    let Ok(root) = root.canonicalize() else { return (None, None, None) };
    let changes = match cairn_watch::client::changes(socket, &root, old.token) {
        Ok(Some(c)) => c,
        Ok(None) => return (None, None, None),
        Err(e) => return (None, None, walk(e.to_string())),
    };
    let token = Some(changes.token);
    let dirs = match changes.answer {
        Answer::Walk { reason } => return (token, None, walk(reason)),
        Answer::Dirs(dirs) => dirs,
    };
    if !old.summaries || old.filter != filter {
        return (token, None, walk("the last save left no directory summaries for these options".into()));
    }
    let mut listed = HashSet::new();
    let mut fresh = Vec::new();
    let (mut whole, mut by_names) = (HashSet::new(), HashMap::new());
    for d in &dirs {
        match &d.names {
            Some(names) if !d.subtree => {
                by_names.entry(d.path.clone()).or_insert_with(Vec::new).extend(names.iter().cloned());
            }
            _ => {
                whole.insert(d.path.clone());
            }
        }
        let mut path = d.path.as_slice();
        loop {
            if !listed.insert(path.to_vec()) {
                break;
            }
            match path.iter().rposition(|&b| b == b'/') {
                Some(i) => path = &path[..i],
                None if path.is_empty() => break,
                None => path = &[],
            }
        }
        if d.subtree {
            fresh.push(d.path.clone());
        }
    }
    let report =
        Some(JournalReport { used: true, dirs_listed: dirs.len() as u64, ..JournalReport::default() });
    (token, Some(Plan { named: dirs, listed, fresh, whole, by_names }), report)
}

impl DirSummary {
    /// The summary of a directory whose tree is `tree`, before its entries are counted.
    pub(crate) fn new(tree: ObjectId) -> Self {
        Self {
            tree,
            files: 0,
            symlinks: 0,
            subdirs: 0,
            bytes: 0,
            ignored: Vec::new(),
            secrets: Vec::new(),
            settled: true,
        }
    }
}

impl Plan {
    /// The entries of directory `rel` that may have changed since the last capture, when the
    /// journal knows them (none for an ancestor of a named directory: only its subdirectories'
    /// trees changed); `None` when any entry may have, or `rel` is not named.
    pub(crate) fn changed_names(&self, rel: &[u8]) -> Option<&[Vec<u8>]> {
        if self.whole.contains(rel) || self.fresh.iter().any(|f| at_or_below(rel, f)) {
            return None;
        }
        match self.by_names.get(rel) {
            Some(names) => Some(names),
            None => self.listed.contains(rel).then_some(&[]),
        }
    }

    /// The (device, inode) of every file with several links in a named directory that the
    /// capture did not walk (`walked`): ignored, skipped, or inside such a directory. A link
    /// made there to a file of an unchanged directory, and written through, makes no event in
    /// the file's own directory, so the capture checks the file's other paths.
    pub(crate) fn unwalked_links(&self, root: &Path, walked: &HashSet<RelPath>) -> HashSet<(u64, u64)> {
        use std::os::unix::ffi::OsStrExt;
        use std::os::unix::fs::MetadataExt;
        let mut found = HashSet::new();
        let mut stack: Vec<(std::path::PathBuf, bool)> = self
            .named
            .iter()
            .filter(|d| !walked.contains(&d.path))
            .map(|d| (root.join(std::ffi::OsStr::from_bytes(&d.path)), d.subtree))
            .collect();
        while let Some((dir, deep)) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else { continue };
            for entry in entries.flatten() {
                let Ok(meta) = entry.metadata() else { continue };
                if meta.is_file() && meta.nlink() > 1 {
                    found.insert((meta.dev(), meta.ino()));
                } else if meta.is_dir() && deep {
                    stack.push((entry.path(), true));
                }
            }
        }
        found
    }

    /// The subtree at `rel` as the last capture left it, when nothing in it may have changed.
    /// `meta` reads a directory's row; `above` is what its parent's row says of it, which
    /// spares reading its own row unless entries were left out below it.
    pub(crate) fn reuse(
        &self,
        meta: &dyn Fn(&[u8]) -> Result<Option<RowMeta>>,
        rel: &[u8],
        forced: &[RelPath],
        above: Option<(ObjectId, Totals)>,
    ) -> Result<Option<Reused>> {
        if self.listed.contains(rel)
            || self.fresh.iter().any(|f| at_or_below(rel, f))
            || forced.iter().any(|f| at_or_below(rel, f))
        {
            return Ok(None);
        }
        if let Some((tree, totals)) = above
            && totals.settled
            && totals.left_out == 0
        {
            return Ok(Some(Reused::new(tree, totals, true)));
        }
        let Some(top) = meta(rel)? else { return Ok(None) };
        let (Some(summary), Some(totals)) = (&top.summary, top.totals) else { return Ok(None) };
        if !totals.settled {
            return Ok(None);
        }
        let mut reused = Reused::new(summary.tree, totals, false);
        if totals.left_out > 0 && !left_out_below(meta, rel, &top, &mut reused)? {
            return Ok(None);
        }
        Ok(Some(reused))
    }
}

/// Gathers the entries left out in the subtree of `row` (at `rel`) into `out`, reading the rows
/// of the directories on the way to them. False when a row it needs is gone.
fn left_out_below(
    meta: &dyn Fn(&[u8]) -> Result<Option<RowMeta>>,
    rel: &[u8],
    row: &RowMeta,
    out: &mut Reused,
) -> Result<bool> {
    let Some(summary) = &row.summary else { return Ok(false) };
    out.ignored.extend(summary.ignored.iter().cloned());
    out.secrets.extend(summary.secrets.iter().cloned());
    for child in &row.children {
        let path = join(rel, child);
        let Some(child_row) = meta(&path)? else { return Ok(false) };
        match child_row.totals {
            Some(t) if t.left_out == 0 => {}
            Some(_) => {
                if !left_out_below(meta, &path, &child_row, out)? {
                    return Ok(false);
                }
            }
            None => return Ok(false),
        }
    }
    Ok(true)
}

/// True when `path` is `dir` or below it.
pub(crate) fn at_or_below(path: &[u8], dir: &[u8]) -> bool {
    dir.is_empty() || (path.starts_with(dir) && matches!(path.get(dir.len()), None | Some(b'/')))
}

/// The parent of a relative path (`""` for a top-level entry).
pub(crate) fn parent(rel: &[u8]) -> &[u8] {
    rel.iter().rposition(|&b| b == b'/').map_or(&[][..], |i| &rel[..i])
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    /// Rows of a small tree: `a` holds `a/b`; `a-z` sorts between them; `c` is unsettled; `a/b`
    /// ignores one entry.
    fn rows() -> BTreeMap<RelPath, RowMeta> {
        let row = |files, settled, children: &[&[u8]], totals: Totals| {
            let mut summary = DirSummary { files, settled, ..DirSummary::new(ObjectId::of(b"t")) };
            if files == 3 {
                summary.ignored.push((b"a/b/target".to_vec(), true));
            }
            RowMeta {
                summary: Some(summary),
                children: children.iter().map(|c| c.to_vec()).collect(),
                totals: Some(totals),
                tree: None,
                below: Vec::new(),
            }
        };
        let t =
            |files, dirs, settled, left_out| Totals { files, dirs, settled, left_out, ..Totals::default() };
        [
            (b"".to_vec(), row(1, true, &[b"a", b"a-z", b"c"], t(15, 4, false, 1))),
            (b"a".to_vec(), row(2, true, &[b"b"], t(5, 1, true, 1))),
            (b"a/b".to_vec(), row(3, true, &[], t(3, 0, true, 1))),
            (b"a-z".to_vec(), row(4, true, &[], t(4, 0, true, 0))),
            (b"c".to_vec(), row(5, false, &[], t(5, 0, false, 0))),
        ]
        .into_iter()
        .collect()
    }

    fn plan(listed: &[&[u8]], fresh: &[&[u8]]) -> Plan {
        Plan {
            named: Vec::new(),
            listed: listed.iter().map(|p| p.to_vec()).collect(),
            fresh: fresh.iter().map(|p| p.to_vec()).collect(),
            whole: HashSet::new(),
            by_names: HashMap::new(),
        }
    }

    fn reuse(
        rows: &BTreeMap<RelPath, RowMeta>,
        plan: &Plan,
        rel: &[u8],
        forced: &[RelPath],
    ) -> Option<Reused> {
        plan.reuse(&|d: &[u8]| Ok(rows.get(d).cloned()), rel, forced, None).unwrap()
    }

    #[test]
    fn a_clean_subtree_is_reused_whole_with_what_it_left_out() {
        let r = reuse(&rows(), &plan(&[b""], &[]), b"a", &[]).unwrap();
        assert_eq!((r.files, r.dirs), (5, 1));
        assert_eq!(r.ignored, vec![(b"a/b/target".to_vec(), true)]);
    }

    #[test]
    fn a_clean_subtree_is_taken_from_its_parents_row_unless_it_left_entries_out_or_may_have_changed() {
        let plan = plan(&[b""], &[b"new"]);
        let tree = ObjectId::of(b"the tree the parent's row names");
        let clean = Totals { files: 7, dirs: 2, bytes: 9, settled: true, ..Totals::default() };
        let unread = |dir: &[u8]| -> Result<Option<RowMeta>> {
            panic!("the row of {:?} was read", String::from_utf8_lossy(dir))
        };
        let r = plan.reuse(&unread, b"a", &[], Some((tree, clean))).unwrap().unwrap();
        assert_eq!((r.tree, r.files, r.dirs, r.bytes, r.totals, r.unread), (tree, 7, 2, 9, clean, true));
        // Left-out entries are listed only in the rows below: those are read.
        let rows = rows();
        let read = |d: &[u8]| Ok(rows.get(d).cloned());
        let left_out = Totals { left_out: 1, ..clean };
        let r = plan.reuse(&read, b"a", &[], Some((tree, left_out))).unwrap().unwrap();
        assert_eq!((r.ignored, r.unread), (vec![(b"a/b/target".to_vec(), true)], false));
        // Unsettled in the parent's row: its own row decides (here, unsettled too).
        let unsettled = Totals { settled: false, ..clean };
        assert!(plan.reuse(&read, b"c", &[], Some((tree, unsettled))).unwrap().is_none());
        // What the journal names, what is new to it, and what lies below changed ignore rules are
        // never taken, whatever the parent's row says.
        assert!(plan.reuse(&unread, b"", &[], Some((tree, clean))).unwrap().is_none(), "listed");
        assert!(plan.reuse(&unread, b"new/x", &[], Some((tree, clean))).unwrap().is_none(), "fresh");
        let forced = [b"a".to_vec()];
        assert!(plan.reuse(&unread, b"a/b", &forced, Some((tree, clean))).unwrap().is_none(), "forced");
    }

    #[test]
    fn a_subtree_whose_totals_a_restore_dropped_or_whose_rows_are_gone_is_looked_at() {
        let mut rows = rows();
        rows.get_mut(b"a/b".as_slice()).unwrap().totals = None;
        assert!(reuse(&rows, &plan(&[b""], &[]), b"a", &[]).is_none(), "no totals below");
        rows.remove(b"a/b".as_slice());
        assert!(reuse(&rows, &plan(&[b""], &[]), b"a", &[]).is_none(), "a row on the way is gone");
        assert!(reuse(&rows, &plan(&[b""], &[]), b"a-z", &[]).is_some());
    }

    #[test]
    fn a_whole_walk_is_due_after_a_hundred_journal_saves_or_an_hour() {
        let hour = WALK_AFTER_NS;
        let state = |saves, walked_at_ns| JournalState {
            saves_since_walk: saves,
            walked_at_ns,
            summaries: true,
            ..JournalState::default()
        };
        assert_eq!(state(WALK_EVERY - 1, 0).walk_due(hour), None);
        assert!(state(WALK_EVERY, 0).walk_due(0).is_some());
        assert!(state(0, 0).walk_due(hour + 1).is_some());
    }

    #[test]
    fn listed_fresh_forced_and_unsettled_subtrees_are_looked_at() {
        let s = rows();
        assert!(reuse(&s, &plan(&[b"", b"a"], &[]), b"a", &[]).is_none());
        assert!(reuse(&s, &plan(&[b""], &[b"a"]), b"a/b", &[]).is_none());
        assert!(reuse(&s, &plan(&[b""], &[]), b"a/b", &[b"a".to_vec()]).is_none());
        assert!(reuse(&s, &plan(&[b""], &[]), b"c", &[]).is_none());
        assert!(reuse(&s, &plan(&[], &[]), b"", &[]).is_none(), "an unsettled directory below");
        assert!(reuse(&s, &plan(&[b""], &[]), b"missing", &[]).is_none());
    }
}
