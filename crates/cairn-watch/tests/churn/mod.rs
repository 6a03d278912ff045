//! Random file-system churn for the change journal's tests: creates, writes, renames across
//! directories, deletes, chmods, symlink swaps, hard links, whole-subtree moves, and moves out
//! of the tree and back. Shared by `cairn-watch`'s journal test and `cairn-lib`'s journal save
//! test (which includes this file).

use std::cell::RefCell;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

thread_local! {
    /// Hard links made since [`new_batch`]. A file written through a link that is made and
    /// removed again between two saves makes no event in the file's own directory: the
    /// journal's one blind spot (docs/watch.md), which a periodic full walk covers. The churn
    /// keeps such links until the next batch, so the tests check everything else.
    static LINKS: RefCell<Vec<PathBuf>> = const { RefCell::new(Vec::new()) };
}

/// Starts a batch: links made before it may go.
pub fn new_batch() {
    LINKS.with(|l| l.borrow_mut().clear());
}

/// True when removing `path` would remove a link made in this batch.
fn holds_new_link(path: &Path) -> bool {
    LINKS.with(|l| l.borrow().iter().any(|link| link.starts_with(path)))
}

/// A small deterministic generator, so a failure names its seed.
pub struct Rng(pub u64);
impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

pub fn all(root: &Path, dirs: bool) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_owned()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let t = e.file_type().unwrap();
            if t.is_dir() {
                stack.push(e.path());
                if dirs {
                    out.push(e.path());
                }
            } else if !dirs {
                out.push(e.path());
            }
        }
    }
    out.sort();
    out
}

/// One random operation; some fail harmlessly (a name taken, a directory into itself).
pub fn operate(rng: &mut Rng, root: &Path, outside: &Path, n: &mut u64) {
    *n += 1;
    let mut dirs = all(root, true);
    dirs.push(root.to_owned());
    let files = all(root, false);
    let dir = dirs[rng.below(dirs.len())].clone();
    let name = format!("n{n}");
    let file = (!files.is_empty()).then(|| files[rng.below(files.len())].clone());
    match rng.below(14) {
        0 | 1 => std::fs::write(dir.join(&name), vec![b'x'; rng.below(300)]).unwrap(),
        2 => {
            if let Some(f) = file.filter(|f| !f.is_symlink()) {
                use std::io::Write;
                let mut h = std::fs::OpenOptions::new().append(true).open(f).unwrap();
                h.write_all(b"more").unwrap();
            }
        }
        3 => {
            if let Some(f) = file.filter(|f| !holds_new_link(f)) {
                let _ = std::fs::rename(f, dir.join(&name));
            }
        }
        4 => {
            if let Some(f) = file.filter(|f| !holds_new_link(f)) {
                std::fs::remove_file(f).unwrap();
            }
        }
        5 => {
            if let Some(f) = file.filter(|f| !f.is_symlink()) {
                let mode = if rng.below(2) == 0 { 0o600 } else { 0o755 };
                std::fs::set_permissions(f, std::fs::Permissions::from_mode(mode)).unwrap();
            }
        }
        6 => {
            let nested = dir.join(&name).join("inner");
            std::fs::create_dir_all(&nested).unwrap();
            std::fs::write(nested.join("f"), b"made at once").unwrap();
        }
        7 => {
            // A whole subtree moved into another directory (maybe into itself: refused).
            let from = dirs[rng.below(dirs.len())].clone();
            if from != root && !holds_new_link(&from) {
                let _ = std::fs::rename(&from, dir.join(&name));
            }
        }
        8 => {
            let victim = dirs[rng.below(dirs.len())].clone();
            if victim != root && !holds_new_link(&victim) {
                std::fs::remove_dir_all(victim).unwrap();
            }
        }
        9 => {
            // A symlink swap: a new link renamed over an old one.
            let link = dir.join("link");
            let tmp = dir.join(format!("{name}.tmp"));
            std::os::unix::fs::symlink(format!("target-{n}"), &tmp).unwrap();
            std::fs::rename(&tmp, &link).unwrap_or_else(|_| std::fs::remove_file(&tmp).unwrap());
        }
        10 => {
            // Out of the tree and back in as something else.
            let victim = dirs[rng.below(dirs.len())].clone();
            if victim != root && !holds_new_link(&victim) {
                let away = outside.join(&name);
                std::fs::rename(&victim, &away).unwrap();
                std::fs::write(away.join("while-away"), b"x").unwrap();
                std::fs::rename(&away, dir.join(&name))
                    .unwrap_or_else(|_| std::fs::remove_dir_all(&away).unwrap());
            }
        }
        11 => {
            let mode = if rng.below(2) == 0 { 0o700 } else { 0o755 };
            std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(mode)).unwrap();
        }
        12 => {
            if let Some(f) = file.filter(|f| !f.is_symlink()) {
                std::fs::File::options().write(true).open(f).unwrap().set_len(rng.below(10) as u64).unwrap();
            }
        }
        _ => {
            // A hard link in another directory, then a write through it.
            if let Some(f) = file.filter(|f| !f.is_symlink()) {
                let link = dir.join(format!("{name}.link"));
                if std::fs::hard_link(&f, &link).is_ok() {
                    LINKS.with(|l| l.borrow_mut().push(link.clone()));
                    std::fs::write(&link, format!("written through a link {n}")).unwrap();
                }
            }
        }
    }
}
