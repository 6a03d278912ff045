//! Which of a local store's packs changed on disk since they were last checked, heard from
//! inotify. A save vouches for the blobs it dedups against only after asking every ready pack
//! its size (a pack missing or cut short is stored again, see `writer.rs`); that grows with
//! the store's history, one `stat` a pack, a millisecond at 500 packs. A process that saves
//! for hours (the watcher) hears of every change to the packs' directories instead, and asks
//! the size of only the packs it heard of.
//!
//! What inotify cannot vouch for is asked whole, never guessed: a queue overflow, a directory
//! of packs made, removed or moved, a watch the kernel dropped.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};

use inotify::{EventMask, Inotify, WatchDescriptor, WatchMask};

/// What a pack check must ask since the last one.
pub(crate) enum Heard {
    /// Every pack.
    All,
    /// The packs with these keys (`packs/xx/<name>.pack`), which may be gone.
    Keys(BTreeSet<String>),
}

/// The inotify watches on a store's `objects/packs` and its two-digit directories, and what
/// the last check found.
pub(crate) struct PackWatch {
    inotify: Inotify,
    /// The store's `objects/packs`.
    packs: PathBuf,
    /// The two-digit directory each watch is on; the empty name for `objects/packs` itself.
    dirs: HashMap<WatchDescriptor, String>,
    /// Packs heard of since the last check, or `None` when everything must be asked.
    heard: Option<BTreeSet<String>>,
    /// The packs the last check found missing or cut short; `None` before the first.
    pub(crate) suspect: Option<HashSet<String>>,
    buffer: Vec<u8>,
}

/// Changes to the packs' directories and the pack files in them: what removes, adds, replaces
/// or cuts a pack.
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
}

impl PackWatch {
    /// Watches `packs` (a store's `objects/packs`) and every directory in it.
    pub(crate) fn start(packs: &Path) -> std::io::Result<Self> {
        let inotify = Inotify::init()?;
        let mut watch = Self {
            inotify,
            packs: packs.to_owned(),
            dirs: HashMap::new(),
            heard: None,
            suspect: None,
            buffer: vec![0; 16 << 10],
        };
        // The directories are watched before they are listed: one made in between is heard of.
        watch.add(packs.to_owned(), String::new())?;
        for entry in std::fs::read_dir(packs)? {
            let entry = entry?;
            if entry.file_type()?.is_dir()
                && let Some(name) = entry.file_name().to_str()
            {
                watch.add(entry.path(), name.to_owned())?;
            }
        }
        Ok(watch)
    }

    fn add(&mut self, path: PathBuf, name: String) -> std::io::Result<()> {
        let wd = self.inotify.watches().add(&path, mask())?;
        self.dirs.insert(wd, name);
        Ok(())
    }

    /// Reads what the kernel queued and says what the next check must ask; the caller checks
    /// that and then calls [`PackWatch::checked`].
    pub(crate) fn heard(&mut self) -> Heard {
        loop {
            let events: Vec<(WatchDescriptor, EventMask, Option<String>)> =
                match self.inotify.read_events(&mut self.buffer) {
                    Ok(events) => events
                        .map(|e| (e.wd, e.mask, e.name.map(|n| n.to_string_lossy().into_owned())))
                        .collect(),
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                    Err(_) => {
                        self.heard = None;
                        break;
                    }
                };
            if events.is_empty() {
                break;
            }
            for (wd, mask, name) in events {
                self.handle(&wd, mask, name);
            }
        }
        match &self.heard {
            Some(keys) if self.suspect.is_some() => Heard::Keys(keys.clone()),
            _ => Heard::All,
        }
    }

    fn handle(&mut self, wd: &WatchDescriptor, mask: EventMask, name: Option<String>) {
        let dir = self.dirs.get(wd).cloned();
        let whole_dir = mask.intersects(EventMask::DELETE_SELF | EventMask::MOVE_SELF | EventMask::IGNORED);
        match (dir, name) {
            _ if mask.contains(EventMask::Q_OVERFLOW) => self.heard = None,
            (Some(dir), _) if whole_dir => {
                self.dirs.remove(wd);
                // `objects/packs` itself gone or moved: nothing more can be heard of.
                if dir.is_empty() {
                    self.dirs.clear();
                }
                self.heard = None;
            }
            (Some(dir), Some(name)) if dir.is_empty() => {
                // A two-digit directory made or moved in: watched from now, its packs asked.
                if mask.intersects(EventMask::CREATE | EventMask::MOVED_TO) && mask.contains(EventMask::ISDIR)
                {
                    let _ = self.add(self.packs.join(&name), name);
                }
                self.heard = None;
            }
            (Some(dir), Some(name)) => {
                if let Some(keys) = &mut self.heard {
                    keys.insert(format!("packs/{dir}/{name}"));
                }
            }
            _ => self.heard = None,
        }
    }

    /// Records what a check of what [`PackWatch::heard`] said found.
    pub(crate) fn checked(&mut self, suspect: HashSet<String>) {
        self.suspect = Some(suspect);
        self.heard = if self.dirs.values().any(String::is_empty) { Some(BTreeSet::new()) } else { None };
    }
}

impl crate::Store {
    /// Hears of changes to a local store's packs from now on: a process that saves for hours
    /// (the watcher) then asks, at each save's pack check, only the size of the packs changed
    /// since the last check. Without inotify every check asks every pack, as before.
    pub fn watch_packs(&self) -> crate::error::Result<()> {
        if self.is_shared() {
            return Ok(());
        }
        let packs = self.layout().packs();
        let watch = PackWatch::start(&packs).map_err(|e| crate::error::Error::io("watch", &packs, e))?;
        *self.pack_watch.lock().unwrap_or_else(|p| p.into_inner()) = Some(watch);
        Ok(())
    }

    /// The ready packs of a local store that are missing or not the size the index gives
    /// them: a save stores their blobs again rather than dedup against them.
    pub(crate) fn suspect_packs(&self) -> crate::error::Result<HashSet<String>> {
        let mut guard = self.pack_watch.lock().unwrap_or_else(|p| p.into_inner());
        let Some(watch) = guard.as_mut() else { return self.check_every_pack() };
        let suspect = match watch.heard() {
            Heard::All => self.check_every_pack()?,
            Heard::Keys(keys) => {
                let mut suspect = watch.suspect.clone().unwrap_or_default();
                for key in keys {
                    let indexed = self.catalog().ready_pack_size(&key)?;
                    let on_disk = match indexed {
                        Some(_) => self.backend().size(&key)?,
                        None => None,
                    };
                    if indexed.is_some() && on_disk != indexed {
                        suspect.insert(key);
                    } else {
                        suspect.remove(&key);
                    }
                }
                suspect
            }
        };
        watch.checked(suspect.clone());
        Ok(suspect)
    }

    fn check_every_pack(&self) -> crate::error::Result<HashSet<String>> {
        let (keys, sizes): (Vec<String>, Vec<u64>) =
            self.catalog().ready_packs()?.into_iter().map(|(key, size, _)| (key, size)).unzip();
        let found = self.backend().sizes(&keys)?;
        Ok(keys
            .into_iter()
            .zip(sizes.into_iter().zip(found))
            .filter(|(_, (indexed, on_disk))| *on_disk != Some(*indexed))
            .map(|(key, _)| key)
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::Heard;
    use crate::Store;
    use crate::pack::BlobKind;
    use crate::writer::BlobWriter;

    /// Writes a pack of one blob; its key.
    fn pack(store: &Store, i: usize) -> String {
        let before: HashSet<String> =
            store.catalog().ready_packs().unwrap().into_iter().map(|(key, ..)| key).collect();
        let writer = BlobWriter::new(store);
        writer.write(BlobKind::Data, format!("blob {i}\n").repeat(50).as_bytes()).unwrap();
        writer.finish().unwrap();
        let mut new = store.catalog().ready_packs().unwrap().into_iter().map(|(key, ..)| key);
        new.find(|key| !before.contains(key)).unwrap()
    }

    /// What a check hears, which must be what asking every pack finds.
    fn suspect(store: &Store) -> HashSet<String> {
        let heard = store.suspect_packs().unwrap();
        assert_eq!(heard, store.check_every_pack().unwrap());
        heard
    }

    fn nothing_to_ask(store: &Store) -> bool {
        let mut watch = store.pack_watch.lock().unwrap();
        let watch = watch.as_mut().unwrap();
        matches!(watch.heard(), Heard::Keys(keys) if keys.is_empty())
    }

    #[test]
    fn a_watched_pack_check_finds_what_asking_every_pack_finds() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("store")).unwrap();
        let keys: Vec<String> = (0..4).map(|i| pack(&store, i)).collect();
        let path = |key: &str| store.layout().objects().join(key);
        store.watch_packs().unwrap();
        assert!(suspect(&store).is_empty());
        assert!(nothing_to_ask(&store), "a check with nothing changed asks a pack");

        std::fs::remove_file(path(&keys[0])).unwrap();
        assert_eq!(suspect(&store), HashSet::from([keys[0].clone()]));
        let whole = std::fs::read(path(&keys[1])).unwrap();
        std::fs::write(path(&keys[1]), &whole[..whole.len() / 2]).unwrap();
        assert_eq!(suspect(&store), HashSet::from([keys[0].clone(), keys[1].clone()]));
        std::fs::write(path(&keys[1]), &whole).unwrap();
        assert_eq!(suspect(&store), HashSet::from([keys[0].clone()]));

        // A pack written since, and a check with nothing heard, change nothing.
        pack(&store, 9);
        assert_eq!(suspect(&store), HashSet::from([keys[0].clone()]));
        assert!(nothing_to_ask(&store));
        // A whole directory of packs gone: every pack is asked.
        std::fs::remove_dir_all(path(&keys[2]).parent().unwrap()).unwrap();
        assert!(suspect(&store).contains(&keys[2]));
    }
}
