//! Grafting: a directory snapshot's tree with chosen entries set from elsewhere. A narrowed
//! restore (only some paths, only what an agent changed, one turn undone) builds the tree it
//! restores towards this way, so the plan, the journal and the replay of an ordinary restore
//! serve it unchanged.
//!
//! Only the directories above an edited path are read and written again; every other subtree
//! keeps its id.

use std::collections::BTreeMap;

use super::diff::TreeSource;
use super::{DirRoot, Node, NodeKind, Tree};
use crate::error::Result;
use crate::writer::BlobWriter;

/// The entry at relative `path` (`/`-separated) of the tree under `root`, if there is one.
pub fn node_at(source: &dyn TreeSource, root: &DirRoot, path: &[u8]) -> Result<Option<Node>> {
    let NodeKind::Dir { tree } = &root.top.kind else { return Ok(None) };
    let mut tree = *tree;
    let mut names = path.split(|b| *b == b'/').peekable();
    while let Some(name) = names.next() {
        let nodes = source.tree(&tree)?;
        let Ok(i) = nodes.nodes.binary_search_by(|n| n.name.as_slice().cmp(name)) else {
            return Ok(None);
        };
        let node = &nodes.nodes[i];
        if names.peek().is_none() {
            return Ok(Some(node.clone()));
        }
        match &node.kind {
            NodeKind::Dir { tree: inner } => tree = *inner,
            _ => return Ok(None),
        }
    }
    Ok(None)
}

impl Node {
    /// Whether two entries hold the same bytes: files of the same content and layout, links of
    /// the same target, directories of the same tree. Modes, owners and times are not compared.
    pub fn same_bytes(&self, other: &Node) -> bool {
        match (&self.kind, &other.kind) {
            (NodeKind::File { content: x, .. }, NodeKind::File { content: y, .. }) => {
                x == y && self.extra.extents == other.extra.extents
            }
            (NodeKind::Symlink { target: x }, NodeKind::Symlink { target: y }) => x == y,
            (NodeKind::Dir { tree: x }, NodeKind::Dir { tree: y }) => x == y,
            _ => false,
        }
    }
}

/// `base` with the entry at each path of `edits` set to the given node (its name is taken
/// from the path), or removed when `None`. A directory an edit needs that `base` lacks is made
/// with the mode, owner and time of the same directory in `shape` when it has one (the tree
/// the entries come from), else as a plain 0755 directory. No edited path may lie below
/// another. Hard-link groups are kept where no member was edited.
pub fn graft(
    source: &dyn TreeSource,
    writer: &BlobWriter<'_>,
    base: &DirRoot,
    shape: &DirRoot,
    edits: &BTreeMap<Vec<u8>, Option<Node>>,
) -> Result<DirRoot> {
    let edits: Vec<Edit<'_>> = edits.iter().map(|(p, n)| (p.as_slice(), n)).collect();
    let top = graft_dir(source, writer, Some(&base.top), Some(&shape.top), &edits)?;
    let touched = |member: &Vec<u8>| edits.iter().any(|(p, _)| is_at_or_below(member, p));
    let hardlinks = base.hardlinks.iter().filter(|group| !group.iter().any(touched)).cloned().collect();
    Ok(DirRoot { top, hardlinks })
}

/// Whether `path` is `at` or lies below it.
pub fn is_at_or_below(path: &[u8], at: &[u8]) -> bool {
    at.is_empty() || path == at || path.len() > at.len() && path.starts_with(at) && path[at.len()] == b'/'
}

/// One edit below a directory: the path under it, and the entry to put there (none: remove).
type Edit<'a> = (&'a [u8], &'a Option<Node>);

/// The directory entry `dir` (of `base`, else made like `shape`'s) with `edits` applied below it.
fn graft_dir(
    source: &dyn TreeSource,
    writer: &BlobWriter<'_>,
    dir: Option<&Node>,
    shape: Option<&Node>,
    edits: &[Edit<'_>],
) -> Result<Node> {
    let tree_of = |node: Option<&Node>| -> Result<Vec<Node>> {
        match node.map(|n| &n.kind) {
            Some(NodeKind::Dir { tree }) => Ok(source.tree(tree)?.nodes.clone()),
            _ => Ok(Vec::new()),
        }
    };
    let is_dir = |node: Option<&Node>| node.is_some_and(|n| matches!(n.kind, NodeKind::Dir { .. }));
    let mut nodes = if is_dir(dir) { tree_of(dir)? } else { Vec::new() };
    let shapes = if is_dir(shape) { tree_of(shape)? } else { Vec::new() };
    let mut groups: BTreeMap<&[u8], Vec<Edit<'_>>> = BTreeMap::new();
    for (path, node) in edits {
        let (name, rest) = match path.iter().position(|b| *b == b'/') {
            Some(at) => (&path[..at], &path[at + 1..]),
            None => (*path, &[][..]),
        };
        groups.entry(name).or_default().push((rest, node));
    }
    for (name, below) in groups {
        let at = nodes.binary_search_by(|n| n.name.as_slice().cmp(name));
        let edited = match below.as_slice() {
            [([], node)] => (*node).clone().map(|n| Node { name: name.to_vec(), ..n }),
            _ => {
                let here = at.ok().map(|i| &nodes[i]).filter(|n| matches!(n.kind, NodeKind::Dir { .. }));
                let like = shapes
                    .binary_search_by(|n| n.name.as_slice().cmp(name))
                    .ok()
                    .map(|i| &shapes[i])
                    .filter(|n| matches!(n.kind, NodeKind::Dir { .. }));
                let here = here.cloned();
                Some(Node { name: name.to_vec(), ..graft_dir(source, writer, here.as_ref(), like, &below)? })
            }
        };
        match (at, edited) {
            (Ok(i), Some(node)) => nodes[i] = node,
            (Ok(i), None) => {
                nodes.remove(i);
            }
            (Err(i), Some(node)) => nodes.insert(i, node),
            (Err(_), None) => {}
        }
    }
    let tree = super::write(writer, &Tree { nodes })?;
    let like = dir.filter(|n| is_dir(Some(n))).or(shape.filter(|n| is_dir(Some(n))));
    Ok(match like {
        Some(node) => Node { kind: NodeKind::Dir { tree }, ..node.clone() },
        None => Node {
            name: Vec::new(),
            kind: NodeKind::Dir { tree },
            mode: 0o755,
            uid: 0,
            gid: 0,
            mtime_ns: jiff::Timestamp::now().as_nanosecond() as i64,
            extra: Default::default(),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Store;
    use crate::id::ObjectId;
    use crate::pack::BlobKind;

    fn file(name: &str, content: ObjectId) -> Node {
        Node {
            name: name.as_bytes().to_vec(),
            kind: NodeKind::File { size: 1, content: vec![content] },
            mode: 0o644,
            uid: 0,
            gid: 0,
            mtime_ns: 0,
            extra: Default::default(),
        }
    }

    fn dir(writer: &BlobWriter<'_>, name: &str, nodes: Vec<Node>) -> Node {
        let tree = crate::tree::write(writer, &Tree { nodes }).unwrap();
        Node { name: name.as_bytes().to_vec(), kind: NodeKind::Dir { tree }, mode: 0o700, ..file(name, tree) }
    }

    #[test]
    fn edits_set_remove_and_make_directories_leaving_the_rest_alone() {
        let work = tempfile::tempdir().unwrap();
        let store = Store::open(&work.path().join("store")).unwrap();
        let writer = BlobWriter::new(&store);
        let a = writer.write(BlobKind::Data, b"a").unwrap();
        let b = writer.write(BlobKind::Data, b"b").unwrap();
        let untouched = dir(&writer, "lib", vec![file("x", a)]);
        let src = dir(&writer, "src", vec![file("one", a), file("two", a)]);
        let top = dir(&writer, "", vec![untouched.clone(), src]);
        let base = DirRoot { top, hardlinks: vec![vec![b"src/one".to_vec(), b"src/two".to_vec()]] };
        let edits = BTreeMap::from([
            (b"src/one".to_vec(), Some(file("ignored", b))),
            (b"src/two".to_vec(), None),
            (b"new/deep/file".to_vec(), Some(file("file", b))),
        ]);
        writer.finish().unwrap();
        // Grafting reads what is stored and writes new trees beside it.
        let grafting = BlobWriter::new(&store);
        let out = graft(&store, &grafting, &base, &base, &edits).unwrap();
        grafting.finish().unwrap();
        let at = |p: &str| node_at(&store, &out, p.as_bytes()).unwrap();
        assert_eq!(at("src/one").unwrap().kind, file("one", b).kind);
        assert_eq!(at("src/one").unwrap().name, b"one");
        assert!(at("src/two").is_none());
        assert_eq!(at("new/deep/file").unwrap().kind, file("file", b).kind);
        assert_eq!(at("new").unwrap().mode, 0o755);
        assert!(at("lib").unwrap().same_bytes(&untouched));
        assert_eq!(at("src").unwrap().mode, 0o700);
        assert!(out.hardlinks.is_empty());
    }

    #[test]
    fn paths_below_and_beside_are_told_apart() {
        assert!(is_at_or_below(b"src/a", b"src"));
        assert!(is_at_or_below(b"src", b"src"));
        assert!(is_at_or_below(b"anything", b""));
        assert!(!is_at_or_below(b"srcs/a", b"src"));
        assert!(!is_at_or_below(b"sr", b"src"));
    }
}
