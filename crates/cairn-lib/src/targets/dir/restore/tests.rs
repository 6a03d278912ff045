//! Tests of restoring a directory snapshot: into a new directory and in place.

use super::*;
use crate::store::Store;
use crate::store::catalog::StatCacheWrite;
use crate::store::writer::BlobWriter;
use crate::tree::{self, Extra, Tree};

fn node(name: &str, kind: NodeKind, mtime_ns: i64) -> Node {
    Node { name: name.into(), kind, mode: 0o644, uid: 0, gid: 0, mtime_ns, extra: Extra::default() }
}

fn file(name: &str, content: &[u8], mtime_ns: i64) -> Node {
    let kind = NodeKind::File { size: content.len() as u64, content: vec![ObjectId::of(content)] };
    node(name, kind, mtime_ns)
}

/// A root holding `sub/a`, `sub/b` (of mtime `b_mtime`) and `c` (holding `c`).
fn root(writer: &BlobWriter<'_>, b_mtime: i64, c: &[u8]) -> DirRoot {
    let sub = Tree { nodes: vec![file("a", b"a", 1), file("b", b"b", b_mtime)] };
    let sub = node("sub", NodeKind::Dir { tree: tree::write(writer, &sub).unwrap() }, 1);
    let top = tree::write(writer, &Tree { nodes: vec![file("c", c, 1), sub] }).unwrap();
    DirRoot { top: node("", NodeKind::Dir { tree: top }, 1), hardlinks: Vec::new() }
}

fn tree_of(root: &DirRoot) -> ObjectId {
    match root.top.kind {
        NodeKind::Dir { tree } => tree,
        _ => unreachable!(),
    }
}

fn sub_of(store: &Store, root: &DirRoot) -> ObjectId {
    match store.tree(&tree_of(root)).unwrap().nodes[1].kind {
        NodeKind::Dir { tree } => tree,
        _ => unreachable!(),
    }
}

#[test]
fn a_plan_skips_unread_the_trees_an_earlier_plan_found_alike_but_for_mtimes() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("store")).unwrap();
    let writer = BlobWriter::new(&store);
    let (snapshot, drifted, changed) =
        (root(&writer, 1, b"c"), root(&writer, 2, b"c"), root(&writer, 2, b"C"));
    writer.finish().unwrap();
    let plan = |live: &DirRoot, with_mtimes: bool| {
        Plan::between(&store, live, &snapshot, with_mtimes, &Uncovered::default()).unwrap()
    };
    let note = |plan: &Plan| {
        let write = StatCacheWrite { alike: plan.alike.clone(), ..StatCacheWrite::default() };
        store.catalog().write_stat_cache("t", &write).unwrap();
    };

    // Only `sub/b`'s mtime differs: nothing to do, and both pairs compared are alike.
    let first = plan(&drifted, false);
    assert!(first.changes.is_empty());
    let pairs =
        [(tree_of(&drifted), tree_of(&snapshot)), (sub_of(&store, &drifted), sub_of(&store, &snapshot))];
    assert_eq!(first.alike, pairs);
    note(&first);
    // Known alike, the roots are not even compared.
    let again = plan(&drifted, false);
    assert!(again.changes.is_empty() && again.alike.is_empty() && again.settled_trees.is_empty());

    // With `c` changed as well, the roots differ for real and are compared, `sub` is not.
    let third = plan(&changed, false);
    let paths: Vec<&[u8]> = third.changes.iter().map(|c| c.path.as_slice()).collect();
    assert_eq!(paths, [b"c".as_slice()]);
    assert!(third.alike.is_empty(), "the roots are not alike and sub was skipped");
    assert_eq!(third.settled_trees, [(Vec::new(), tree_of(&snapshot))]);

    // A plan that puts mtimes back neither skips nor records a pair.
    let exact = plan(&drifted, true);
    let paths: Vec<&[u8]> = exact.changes.iter().map(|c| c.path.as_slice()).collect();
    assert_eq!(paths, [b"sub/b".as_slice()]);
    assert!(exact.alike.is_empty());
}
/// A store that notes the trees read through it.
struct Noting<'s>(&'s Store, std::sync::Mutex<Vec<ObjectId>>);

impl TreeSource for Noting<'_> {
    fn tree(&self, id: &ObjectId) -> crate::error::Result<std::sync::Arc<Tree>> {
        self.1.lock().unwrap().push(*id);
        self.0.tree(id)
    }
    fn shape(&self, id: &ObjectId) -> crate::error::Result<crate::tree::diff::Shape> {
        self.0.shape(id)
    }
    fn alike(&self, old: &ObjectId, new: &ObjectId) -> bool {
        self.0.alike(old, new)
    }
}

#[test]
fn in_a_parted_directory_a_plan_skips_unread_the_parts_an_earlier_plan_found_alike() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("store")).unwrap();
    let writer = BlobWriter::new(&store);
    let wide = |drift: bool, change: bool| {
        let nodes: Vec<Node> = (0..3000)
            .map(|i| {
                let name = format!("f{i:05}");
                let content =
                    if change && i == 2900 { b"changed".to_vec() } else { name.clone().into_bytes() };
                file(&name, &content, if drift && i == 10 { 2 } else { 1 })
            })
            .collect();
        let wide = node("wide", NodeKind::Dir { tree: tree::write(&writer, &Tree { nodes }).unwrap() }, 1);
        let top = tree::write(&writer, &Tree { nodes: vec![wide] }).unwrap();
        DirRoot { top: node("", NodeKind::Dir { tree: top }, 1), hardlinks: Vec::new() }
    };
    let (snapshot, live) = (wide(false, false), wide(true, true));
    writer.finish().unwrap();
    let noting = Noting(&store, Default::default());
    let plan = || Plan::between(&noting, &live, &snapshot, false, &Uncovered::default()).unwrap();

    // The first plan reads the two pairs of parts that differ, and finds one alike.
    let first = plan();
    let paths: Vec<&[u8]> = first.changes.iter().map(|c| c.path.as_slice()).collect();
    assert_eq!(paths, [b"wide/f02900".as_slice()]);
    let read_first = std::mem::take(&mut *noting.1.lock().unwrap());
    assert_eq!(read_first.len(), 4, "two parts on each side");
    assert_eq!(first.alike.len(), 1, "only the pair of parts with f00010: {:?}", first.alike);
    assert!(first.settled_trees.iter().all(|(dir, _)| dir != b"wide"), "an mtime left alone in it");
    let write = StatCacheWrite { alike: first.alike.clone(), ..StatCacheWrite::default() };
    store.catalog().write_stat_cache("t", &write).unwrap();

    // The next reads only the pair that holds the change, and still leaves the directory's
    // row to the live tree.
    let again = plan();
    let paths: Vec<&[u8]> = again.changes.iter().map(|c| c.path.as_slice()).collect();
    assert_eq!(paths, [b"wide/f02900".as_slice()]);
    assert_eq!(noting.1.lock().unwrap().len(), 2);
    assert!(again.alike.is_empty());
    assert!(again.settled_trees.iter().all(|(dir, _)| dir != b"wide"));
}
