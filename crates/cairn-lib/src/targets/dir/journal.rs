//! Saving at the cost of what changed: the watcher's answer (`cairn-watch`) turned into which
//! directories a capture lists again, and which subtrees it takes whole from the last capture.
//!
//! The last capture left a summary of every directory it captured in the stat cache: its tree
//! id, its direct counts, and the entries it left out. A directory the answer does not name, with
//! no named directory below it, is taken from those summaries without a look. Whatever the
//! journal cannot vouch for is looked at: a directory holding a file with several links (a
//! write through a link outside it makes no event here), one with skipped entries, and
//! everything below a directory whose ignore files changed.

use std::collections::{BTreeMap, HashSet};
use std::ops::Bound;
use std::path::Path;

use cairn_watch::{Answer, DirtyDir, Token};
use serde::{Deserialize, Serialize};

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

/// The journal's part of a stat cache: where the last capture stood in the watcher's journal,
/// with which filter, and its directory summaries.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct JournalState {
    pub token: Option<Token>,
    /// `(no_ignore, include_secrets)` of the capture: summaries of another filter do not apply.
    pub filter: (bool, bool),
    pub dirs: BTreeMap<RelPath, DirSummary>,
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
    /// Every tree id in it, to check the store still vouches for them.
    pub trees: Vec<ObjectId>,
    pub summaries: Vec<(RelPath, DirSummary)>,
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
    let walk = |reason: String| Some(JournalReport { used: false, dirs_listed: 0, reason: Some(reason) });
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
    if old.dirs.is_empty() || old.filter != filter {
        return (token, None, walk("the last save left no directory summaries for these options".into()));
    }
    let mut listed = HashSet::new();
    let mut fresh = Vec::new();
    for d in &dirs {
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
    let report = Some(JournalReport { used: true, dirs_listed: dirs.len() as u64, reason: None });
    (token, Some(Plan { named: dirs, listed, fresh }), report)
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
    pub(crate) fn reuse(&self, old: &JournalState, rel: &[u8], forced: &[RelPath]) -> Option<Reused> {
        if self.listed.contains(rel)
            || self.fresh.iter().any(|f| at_or_below(rel, f))
            || forced.iter().any(|f| at_or_below(rel, f))
        {
            return None;
        }
        let top = old.dirs.get(rel)?;
        let mut reused = Reused {
            tree: top.tree,
            files: 0,
            symlinks: 0,
            dirs: 0,
            bytes: 0,
            ignored: Vec::new(),
            secrets: Vec::new(),
            trees: Vec::new(),
            summaries: Vec::new(),
        };
        // Everything below the root is below `""`; below any other directory, below `dir/`.
        let prefix = if rel.is_empty() { Vec::new() } else { [rel, b"/"].concat() };
        let lower = if rel.is_empty() { Bound::Excluded(rel) } else { Bound::Included(&prefix[..]) };
        let below =
            old.dirs.range::<[u8], _>((lower, Bound::Unbounded)).take_while(|(k, _)| k.starts_with(&prefix));
        for (path, s) in std::iter::once((&rel.to_vec(), top)).chain(below) {
            if !s.settled {
                return None;
            }
            reused.files += s.files;
            reused.symlinks += s.symlinks;
            reused.dirs += s.subdirs;
            reused.bytes += s.bytes;
            reused.ignored.extend(s.ignored.iter().cloned());
            reused.secrets.extend(s.secrets.iter().cloned());
            reused.trees.push(s.tree);
            reused.summaries.push((path.clone(), s.clone()));
        }
        Some(reused)
    }
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
    use super::*;

    fn state() -> JournalState {
        let summary = |files, settled| DirSummary { files, settled, ..DirSummary::new(ObjectId::of(b"t")) };
        JournalState {
            token: None,
            filter: (false, false),
            saves_since_walk: 0,
            walked_at_ns: 0,
            dirs: [
                (b"".to_vec(), summary(1, true)),
                (b"a".to_vec(), summary(2, true)),
                (b"a/b".to_vec(), summary(3, true)),
                (b"a-z".to_vec(), summary(4, true)),
                (b"c".to_vec(), summary(5, false)),
            ]
            .into_iter()
            .collect(),
        }
    }

    fn plan(listed: &[&[u8]], fresh: &[&[u8]]) -> Plan {
        Plan {
            named: Vec::new(),
            listed: listed.iter().map(|p| p.to_vec()).collect(),
            fresh: fresh.iter().map(|p| p.to_vec()).collect(),
        }
    }

    #[test]
    fn a_clean_subtree_is_reused_whole_and_its_sibling_prefix_is_not_counted() {
        let r = plan(&[b""], &[]).reuse(&state(), b"a", &[]).unwrap();
        assert_eq!((r.files, r.trees.len()), (5, 2));
    }

    #[test]
    fn the_root_reused_whole_counts_every_directory() {
        let s =
            JournalState { dirs: state().dirs.into_iter().filter(|(_, d)| d.settled).collect(), ..state() };
        let r = plan(&[], &[]).reuse(&s, b"", &[]).unwrap();
        assert_eq!((r.files, r.trees.len()), (10, 4));
        assert!(plan(&[], &[]).reuse(&state(), b"", &[]).is_none(), "an unsettled directory below");
    }

    #[test]
    fn a_whole_walk_is_due_after_a_hundred_journal_saves_or_an_hour() {
        let hour = WALK_AFTER_NS;
        let state = |saves, walked_at_ns| JournalState { saves_since_walk: saves, walked_at_ns, ..state() };
        assert_eq!(state(WALK_EVERY - 1, 0).walk_due(hour), None);
        assert!(state(WALK_EVERY, 0).walk_due(0).is_some());
        assert!(state(0, 0).walk_due(hour + 1).is_some());
    }

    #[test]
    fn listed_fresh_forced_and_unsettled_subtrees_are_looked_at() {
        let s = state();
        assert!(plan(&[b"", b"a"], &[]).reuse(&s, b"a", &[]).is_none());
        assert!(plan(&[b""], &[b"a"]).reuse(&s, b"a/b", &[]).is_none());
        assert!(plan(&[b""], &[]).reuse(&s, b"a/b", &[b"a".to_vec()]).is_none());
        assert!(plan(&[b""], &[]).reuse(&s, b"c", &[]).is_none());
        assert!(plan(&[b""], &[]).reuse(&s, b"missing", &[]).is_none());
    }
}
