//! inotify over whole trees: one watch per directory, kept in step with the tree as directories
//! are created, moved and removed, and each event turned into a journal mark.
//!
//! What inotify cannot see is made a walk, never a guess: a queue overflow or a watch the kernel
//! refuses raises the journal's floor; a mount point below a tree, or a directory that cannot be
//! watched, is reported as changed in every answer. Writes through `mmap` and through a hard link
//! outside the tree make no event on the tree; `docs/watch.md` says what a save does about them.

use std::collections::{BTreeMap, HashMap};
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use inotify::{EventMask, Inotify, WatchDescriptor, WatchMask};

use crate::error::{Error, Result};
use crate::journal::Journal;
use crate::protocol::{Answer, DirtyDir, RootStatus};

/// Every change to a directory's entries or to their metadata. Not `CLOSE_WRITE`: a write has
/// already made a `MODIFY`, and a file closed unwritten changed nothing.
fn mask() -> WatchMask {
    WatchMask::CREATE
        | WatchMask::DELETE
        | WatchMask::MODIFY
        | WatchMask::ATTRIB
        | WatchMask::MOVE
        | WatchMask::DELETE_SELF
        | WatchMask::MOVE_SELF
        | WatchMask::ONLYDIR
        | WatchMask::DONT_FOLLOW
        | WatchMask::EXCL_UNLINK
}

/// One watched tree.
struct Root {
    path: PathBuf,
    dev: u64,
    journal: Journal,
    /// Watched directories, by path relative to the root.
    dirs: BTreeMap<Vec<u8>, WatchDescriptor>,
    /// Directories the journal cannot follow (mount points, unwatchable): changed in every answer.
    always: Vec<Vec<u8>>,
    events: u64,
}

/// The trees of one watcher process, on one inotify instance.
pub(crate) struct Watcher {
    inotify: Inotify,
    roots: Vec<Root>,
    /// Who a watch belongs to: nested trees share the watches of their common directories.
    owners: HashMap<i32, Vec<(usize, Vec<u8>)>>,
    buffer: Vec<u8>,
    max_dirty: usize,
}

/// An event, copied out of the read buffer.
struct Event {
    wd: i32,
    mask: EventMask,
    name: Option<Vec<u8>>,
}

impl Watcher {
    pub(crate) fn new(max_dirty: usize) -> Result<Self> {
        let inotify = Inotify::init().map_err(Error::Inotify)?;
        Ok(Self { inotify, roots: Vec::new(), owners: HashMap::new(), buffer: vec![0; 64 << 10], max_dirty })
    }

    /// A descriptor to poll for events on, without holding the watcher.
    pub(crate) fn event_fd(&self) -> Result<std::os::fd::OwnedFd> {
        use std::os::fd::AsFd;
        self.inotify.as_fd().try_clone_to_owned().map_err(Error::Inotify)
    }

    /// Starts watching `root` (absolute, without symlinks); returns how many directories it
    /// watches there.
    pub(crate) fn watch(&mut self, root: &Path) -> Result<u64> {
        if let Some(r) = self.roots.iter().position(|r| r.path == root) {
            return Ok(self.roots[r].dirs.len() as u64);
        }
        let meta = std::fs::metadata(root)
            .map_err(|e| Error::Root { path: root.to_owned(), message: e.to_string() })?;
        if !meta.is_dir() {
            return Err(Error::Root { path: root.to_owned(), message: "not a directory".into() });
        }
        self.roots.push(Root {
            path: root.to_owned(),
            dev: meta.dev(),
            journal: Journal::new(self.max_dirty),
            dirs: BTreeMap::new(),
            always: Vec::new(),
            events: 0,
        });
        let r = self.roots.len() - 1;
        self.add_tree(r, Vec::new());
        Ok(self.roots[r].dirs.len() as u64)
    }

    /// Reads every event the kernel has queued, so an answer given next covers every change
    /// made before it was asked for.
    pub(crate) fn drain(&mut self) {
        loop {
            let events: Vec<Event> = match self.inotify.read_events(&mut self.buffer) {
                Ok(events) => events
                    .map(|e| Event {
                        wd: e.wd.get_watch_descriptor_id(),
                        mask: e.mask,
                        name: e.name.map(|n| n.as_bytes().to_vec()),
                    })
                    .collect(),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    self.doubt_all(&format!("reading the kernel's events failed: {e}"));
                    return;
                }
            };
            if events.is_empty() {
                return;
            }
            for event in events {
                self.handle(event);
            }
        }
    }

    /// What changed below `path` (a watched tree or a directory inside one) since `since`.
    pub(crate) fn changes(&mut self, path: &Path, since: Option<u64>) -> Option<(u64, Answer)> {
        let (r, prefix) = self.roots.iter().enumerate().find_map(|(i, root)| {
            let rel = path.strip_prefix(&root.path).ok()?;
            Some((i, rel.as_os_str().as_bytes().to_vec()))
        })?;
        let root = &mut self.roots[r];
        let (token, answer) = root.journal.answer(since);
        let Answer::Dirs(mut dirs) = answer else { return Some((token, answer)) };
        dirs.extend(root.always.iter().map(|p| DirtyDir::whole(p.clone(), true)));
        if prefix.is_empty() {
            dirs.sort_by(|a, b| a.path.cmp(&b.path));
            dirs.dedup();
            return Some((token, Answer::Dirs(dirs)));
        }
        // Below a watched tree: keep what is inside the target, relative to it; a new subtree
        // above or at the target covers all of it.
        let mut inside = Vec::new();
        for d in dirs {
            if let Some(rest) = below(&d.path, &prefix) {
                inside.push(DirtyDir { path: rest.to_vec(), ..d });
            } else if d.subtree && below(&prefix, &d.path).is_some() {
                let reason = "the directory was created or moved since the last save".to_owned();
                return Some((token, Answer::Walk { reason }));
            }
        }
        inside.sort_by(|a, b| a.path.cmp(&b.path));
        inside.dedup();
        Some((token, Answer::Dirs(inside)))
    }

    /// Each tree's figures.
    pub(crate) fn status(&self) -> Vec<RootStatus> {
        self.roots
            .iter()
            .map(|r| RootStatus {
                root: r.path.clone(),
                dirs: r.dirs.len() as u64,
                dirty: r.journal.dirty_len() as u64,
                events: r.events,
                memory_bytes: (r.journal.memory_bytes()
                    + r.dirs.keys().map(|k| 2 * k.len() + 96).sum::<usize>())
                    as u64,
                walk_reason: r.journal.walk_reason(),
            })
            .collect()
    }

    fn doubt_all(&mut self, reason: &str) {
        for root in &mut self.roots {
            root.journal.doubt(reason);
        }
    }

    fn handle(&mut self, event: Event) {
        if event.mask.contains(EventMask::Q_OVERFLOW) {
            let limit =
                read_limit("max_queued_events").map(|n| format!(" (fs.inotify.max_queued_events = {n})"));
            self.doubt_all(&format!("the kernel's event queue overflowed{}", limit.unwrap_or_default()));
            return;
        }
        let Some(owners) = self.owners.get(&event.wd).cloned() else { return };
        for (r, rel) in owners {
            self.roots[r].events += 1;
            self.handle_for(r, &rel, &event);
        }
    }

    fn handle_for(&mut self, r: usize, rel: &[u8], event: &Event) {
        let mask = event.mask;
        if mask.contains(EventMask::IGNORED) {
            // The kernel dropped the watch (its directory is gone): the parent's own event says
            // what happened to the entry; a tree whose root went has nothing left to vouch for.
            self.forget(r, rel, event.wd);
            if rel.is_empty() {
                self.roots[r].journal.degrade("the watched directory was removed or moved away");
            }
            return;
        }
        if mask.contains(EventMask::UNMOUNT) {
            self.roots[r].journal.degrade("a file system below the watched directory was unmounted");
            return;
        }
        let journal = &mut self.roots[r].journal;
        let Some(name) = &event.name else {
            if rel.is_empty() && mask.intersects(EventMask::MOVE_SELF | EventMask::DELETE_SELF) {
                journal.degrade("the watched directory was removed or moved away");
            } else if mask.contains(EventMask::ATTRIB) {
                // A directory's own metadata is recorded in its parent's entries.
                journal.mark(rel, false);
                if !rel.is_empty() {
                    journal.mark_name(parent(rel), base_name(rel));
                }
            }
            return;
        };
        journal.mark_name(rel, name);
        if !mask.contains(EventMask::ISDIR) {
            return;
        }
        let child = join(rel, name);
        if mask.intersects(EventMask::DELETE | EventMask::MOVED_FROM) {
            self.remove_tree(r, &child);
        }
        if mask.intersects(EventMask::CREATE | EventMask::MOVED_TO) {
            // Watched before it is marked, so nothing made in it from now on goes unseen, and
            // marked as a whole, for what was made in it before the watch.
            self.remove_tree(r, &child);
            self.add_tree(r, child.clone());
            self.roots[r].journal.mark(&child, true);
        }
    }

    /// Watches `rel` and every directory below it.
    fn add_tree(&mut self, r: usize, rel: Vec<u8>) {
        let mut stack = vec![rel];
        while let Some(rel) = stack.pop() {
            let root = &self.roots[r];
            let path =
                if rel.is_empty() { root.path.clone() } else { root.path.join(OsStr::from_bytes(&rel)) };
            match std::fs::symlink_metadata(&path) {
                Ok(meta) if !meta.is_dir() => continue,
                Ok(meta) if meta.dev() != root.dev => {
                    // A mount point: its events are not this tree's to follow reliably.
                    self.roots[r].always.push(rel);
                    continue;
                }
                Ok(_) => {}
                Err(_) => continue, // gone already; its parent's event says so
            }
            let wd = match self.inotify.watches().add(&path, mask()) {
                Ok(wd) => wd,
                Err(e) if e.raw_os_error() == Some(libc_enospc()) => {
                    let limit = read_limit("max_user_watches").map(|n| format!(" ({n})")).unwrap_or_default();
                    self.roots[r].journal.degrade(format!(
                        "the system's inotify watch limit{limit} is too low for this tree: raise \
                         fs.inotify.max_user_watches"
                    ));
                    return;
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(_) => {
                    // Unreadable or otherwise unwatchable: looked at by every save.
                    self.roots[r].always.push(rel);
                    continue;
                }
            };
            let id = wd.get_watch_descriptor_id();
            let owners = self.owners.entry(id).or_default();
            if !owners.iter().any(|(o, p)| *o == r && *p == rel) {
                owners.push((r, rel.clone()));
            }
            self.roots[r].dirs.insert(rel.clone(), wd);
            let Ok(entries) = std::fs::read_dir(&path) else { continue };
            for entry in entries.flatten() {
                if entry.file_type().is_ok_and(|t| t.is_dir()) {
                    stack.push(join(&rel, entry.file_name().as_bytes()));
                }
            }
        }
    }

    /// Stops watching `rel` and everything below it.
    fn remove_tree(&mut self, r: usize, rel: &[u8]) {
        let mut lower = rel.to_vec();
        lower.push(b'/');
        let mut upper = rel.to_vec();
        upper.push(b'/' + 1);
        let root = &mut self.roots[r];
        let mut gone: Vec<Vec<u8>> = root.dirs.range(lower..upper).map(|(k, _)| k.clone()).collect();
        if root.dirs.contains_key(rel) {
            gone.push(rel.to_vec());
        }
        root.always.retain(|a| below(a, rel).is_none());
        for path in gone {
            let Some(wd) = self.roots[r].dirs.remove(&path) else { continue };
            let id = wd.get_watch_descriptor_id();
            let shared = self.owners.get_mut(&id).is_some_and(|o| {
                o.retain(|(o, p)| !(*o == r && *p == path));
                !o.is_empty()
            });
            if !shared {
                self.owners.remove(&id);
                // Already gone when the directory was deleted; nothing to do about a failure.
                let _ = self.inotify.watches().remove(wd);
            }
        }
    }

    fn forget(&mut self, r: usize, rel: &[u8], wd: i32) {
        if self.roots[r].dirs.get(rel).is_some_and(|w| w.get_watch_descriptor_id() == wd) {
            self.roots[r].dirs.remove(rel);
        }
        if let Some(o) = self.owners.get_mut(&wd) {
            o.retain(|(o, p)| !(*o == r && p == rel));
            if o.is_empty() {
                self.owners.remove(&wd);
            }
        }
    }
}

/// `path` relative to `dir`, when it is `dir` or below it.
fn below<'a>(path: &'a [u8], dir: &[u8]) -> Option<&'a [u8]> {
    if dir.is_empty() {
        return Some(path);
    }
    let rest = path.strip_prefix(dir)?;
    match rest.first() {
        None => Some(rest),
        Some(b'/') => Some(&rest[1..]),
        Some(_) => None,
    }
}

fn parent(rel: &[u8]) -> &[u8] {
    rel.iter().rposition(|&b| b == b'/').map_or(&[][..], |i| &rel[..i])
}

/// The last component of a relative path.
fn base_name(rel: &[u8]) -> &[u8] {
    rel.iter().rposition(|&b| b == b'/').map_or(rel, |i| &rel[i + 1..])
}

fn join(dir: &[u8], name: &[u8]) -> Vec<u8> {
    if dir.is_empty() {
        return name.to_vec();
    }
    let mut out = Vec::with_capacity(dir.len() + 1 + name.len());
    out.extend_from_slice(dir);
    out.push(b'/');
    out.extend_from_slice(name);
    out
}

fn libc_enospc() -> i32 {
    rustix::io::Errno::NOSPC.raw_os_error()
}

/// One of the kernel's inotify limits, from `/proc/sys/fs/inotify/`.
pub(crate) fn read_limit(name: &str) -> Option<u64> {
    std::fs::read_to_string(Path::new("/proc/sys/fs/inotify").join(name)).ok()?.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn below_and_parent_respect_component_boundaries() {
        assert_eq!(below(b"a/b", b"a"), Some(&b"b"[..]));
        assert_eq!(below(b"a", b"a"), Some(&b""[..]));
        assert_eq!(below(b"ab", b"a"), None);
        assert_eq!(below(b"x", b""), Some(&b"x"[..]));
        assert_eq!(parent(b"a/b/c"), b"a/b");
        assert_eq!(parent(b"a"), b"");
    }
}
