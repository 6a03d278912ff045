//! File system operations relative to directory handles, never following a symlink.
//!
//! Every restore step opens each path component with `O_NOFOLLOW | O_DIRECTORY` from the
//! destination's own handle, so a symlink planted in the destination (or stored in a snapshot)
//! can never redirect a write outside the destination.

use std::ffi::OsStr;
use std::io::Write;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, Mode, OFlags, Timespec, Timestamps};

use super::statcache::Stamp;
use super::xattrs;
use crate::error::{Error, IoContext, Result};
use crate::tree::Extra;
use crate::tree::sparse::Placer;

/// An open directory and the path it was opened as (for messages).
pub(crate) struct DirHandle {
    pub fd: OwnedFd,
    pub path: PathBuf,
}

fn os(name: &[u8]) -> &OsStr {
    OsStr::from_bytes(name)
}

fn dir_flags() -> OFlags {
    OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC
}

impl DirHandle {
    /// Opens `path` itself as the root of a restore (it must be a real directory, not a link).
    pub(crate) fn open_root(path: &Path) -> Result<Self> {
        let fd = rustix::fs::open(path, dir_flags(), Mode::empty()).at("open the directory", path)?;
        Ok(Self { fd, path: path.to_path_buf() })
    }

    /// The path of `name` inside this directory, for messages.
    pub(crate) fn child_path(&self, name: &[u8]) -> PathBuf {
        self.path.join(os(name))
    }

    /// Opens the subdirectory `name`, refusing a symlink.
    pub(crate) fn open_dir(&self, name: &[u8]) -> Result<Self> {
        let path = self.child_path(name);
        let fd = rustix::fs::openat(&self.fd, os(name), dir_flags(), Mode::empty())
            .at("open the directory", &path)?;
        Ok(Self { fd, path })
    }

    /// Opens the directory at `rel` (a `/`-separated path) below this one, component by component.
    pub(crate) fn open_rel(&self, rel: &[u8]) -> Result<Self> {
        let mut current = Self { fd: self.fd.try_clone().at("open", &self.path)?, path: self.path.clone() };
        for part in rel.split(|b| *b == b'/').filter(|p| !p.is_empty()) {
            current = current.open_dir(part)?;
        }
        Ok(current)
    }

    /// Creates subdirectory `name` (private until its mode is set).
    pub(crate) fn mkdir(&self, name: &[u8]) -> Result<()> {
        rustix::fs::mkdirat(&self.fd, os(name), Mode::from_raw_mode(0o700))
            .at("create the directory", &self.child_path(name))
    }

    /// Creates file `name`, which must not exist, writes `chunks` into it, gives it `meta` and
    /// returns its final stat. Metadata is set through the open file, not by name, which spares a
    /// path lookup per call on restores of many small files.
    ///
    /// A sparse file (`extra.extents`) gets each chunk written at its extent's offset and is then
    /// extended to `size`: its holes are never written, so it stays sparse.
    pub(crate) fn create_file(
        &self,
        name: &[u8],
        meta: &Meta,
        (extra, size): (&Extra, u64),
        mut chunks: impl FnMut(&mut dyn FnMut(&[u8]) -> Result<()>) -> Result<()>,
    ) -> Result<rustix::fs::Stat> {
        let path = self.child_path(name);
        let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        // Made with its mode where nothing comes after that could change it: no set-id bit
        // (the owner's change below clears those), no attributes (an access ACL sets the group
        // bits from the mode), and a umask that took nothing from a file made so before. That
        // spares a `fchmod`, one of the six calls a file takes; the stat below checks it.
        let moded = meta.mode & !0o777 == 0
            && extra.xattrs.is_empty()
            && !meta.strip_xattrs
            && !UMASK_TAKES.load(std::sync::atomic::Ordering::Relaxed);
        let made = if moded { meta.mode } else { 0o600 };
        let fd =
            rustix::fs::openat(&self.fd, os(name), flags, Mode::from_raw_mode(made)).at("create", &path)?;
        let mut file = std::fs::File::from(fd);
        match &extra.extents {
            None => chunks(&mut |data| file.write_all(data).at("write", &path))?,
            Some(extents) => {
                use std::os::unix::fs::FileExt;
                let mut placer = Placer::default();
                let overflow =
                    || Error::corrupt(format!("the stored data of {} overruns its extents", path.display()));
                chunks(&mut |data| {
                    placer.place(
                        extents,
                        data,
                        |off, bytes| file.write_all_at(bytes, off).at("write", &path),
                        overflow,
                    )
                })?;
                file.set_len(size).at("write", &path)?;
            }
        }
        // Owner before mode: a change of owner clears the set-id bits. A file made by root for
        // root is left as it is (most of a restore by root), and its stat below tells whether
        // it got another group all the same (from a set-group-id directory).
        let owner = (rustix::fs::Uid::from_raw(meta.uid), rustix::fs::Gid::from_raw(meta.gid));
        let own_file = owner == own_ids();
        if running_as_root() && !own_file {
            rustix::fs::fchown(&file, Some(owner.0), Some(owner.1)).at("set the owner of", &path)?;
        }
        if !moded {
            rustix::fs::fchmod(&file, Mode::from_raw_mode(meta.mode)).at("set the mode of", &path)?;
        }
        // After the mode: an access ACL carries the group bits the mode had when it was saved.
        if !extra.xattrs.is_empty() || meta.strip_xattrs {
            xattrs::apply(&file, &extra.xattrs, meta.strip_xattrs)
                .at("set the extended attributes of", &path)?;
        }
        if let Some(mtime) = meta.mtime_ns {
            let ts = timespec(mtime);
            rustix::fs::futimens(&file, &Timestamps { last_access: ts, last_modification: ts })
                .at("set the time of", &path)?;
        }
        let mut stat = rustix::fs::fstat(&file).at("inspect", &path)?;
        if moded && stat.st_mode & 0o7777 != meta.mode {
            // The umask (or a default ACL of the directory) took bits: this file gets its mode
            // as every one did before, and so does every later one.
            UMASK_TAKES.store(true, std::sync::atomic::Ordering::Relaxed);
            rustix::fs::fchmod(&file, Mode::from_raw_mode(meta.mode)).at("set the mode of", &path)?;
            stat = rustix::fs::fstat(&file).at("inspect", &path)?;
        }
        if running_as_root() && own_file && (stat.st_uid, stat.st_gid) != (meta.uid, meta.gid) {
            rustix::fs::fchown(&file, Some(owner.0), Some(owner.1)).at("set the owner of", &path)?;
            rustix::fs::fchmod(&file, Mode::from_raw_mode(meta.mode)).at("set the mode of", &path)?;
            return rustix::fs::fstat(&file).at("inspect", &path);
        }
        Ok(stat)
    }

    /// Creates a symlink `name` pointing at `target`.
    pub(crate) fn symlink(&self, name: &[u8], target: &[u8]) -> Result<()> {
        rustix::fs::symlinkat(os(target), &self.fd, os(name)).at("create the link", &self.child_path(name))
    }

    /// Makes `name` a hard link of `existing` (both relative to their directories).
    pub(crate) fn hardlink(&self, name: &[u8], from: &DirHandle, existing: &[u8]) -> Result<()> {
        rustix::fs::linkat(&from.fd, os(existing), &self.fd, os(name), AtFlags::empty())
            .at("create the hard link", &self.child_path(name))
    }

    /// Renames `from` to `to` inside this directory, replacing `to`.
    pub(crate) fn rename(&self, from: &[u8], to: &[u8]) -> Result<()> {
        rustix::fs::renameat(&self.fd, os(from), &self.fd, os(to)).at("replace", &self.child_path(to))
    }

    /// Stats `name` without following a link.
    pub(crate) fn stat(&self, name: &[u8]) -> Result<rustix::fs::Stat> {
        rustix::fs::statat(&self.fd, os(name), AtFlags::SYMLINK_NOFOLLOW)
            .at("inspect", &self.child_path(name))
    }

    /// Sets mode, owner (when running as root) and mtime of entry `name`, never following a link.
    pub(crate) fn set_meta(&self, name: &[u8], meta: &Meta, is_link: bool) -> Result<()> {
        let path = self.child_path(name);
        if running_as_root() {
            let owner = rustix::fs::Uid::from_raw(meta.uid);
            let group = rustix::fs::Gid::from_raw(meta.gid);
            rustix::fs::chownat(&self.fd, os(name), Some(owner), Some(group), AtFlags::SYMLINK_NOFOLLOW)
                .at("set the owner of", &path)?;
        }
        if !is_link {
            rustix::fs::chmodat(&self.fd, os(name), Mode::from_raw_mode(meta.mode), AtFlags::empty())
                .at("set the mode of", &path)?;
        }
        if let Some(mtime) = meta.mtime_ns {
            let ts = timespec(mtime);
            let times = Timestamps { last_access: ts, last_modification: ts };
            rustix::fs::utimensat(&self.fd, os(name), &times, AtFlags::SYMLINK_NOFOLLOW)
                .at("set the time of", &path)?;
        }
        Ok(())
    }

    /// Gives entry `name` (a file or directory, never a link) exactly the captured extended
    /// attributes `want`. Set by name through the directory's descriptor (`/proc/self/fd`), so
    /// it needs no read permission on the entry and never follows a link in its name.
    pub(crate) fn set_xattrs(&self, name: &[u8], want: &[(Vec<u8>, Vec<u8>)]) -> Result<()> {
        use std::os::fd::AsRawFd;
        let path = self.child_path(name);
        let by_fd = PathBuf::from(format!("/proc/self/fd/{}", self.fd.as_raw_fd())).join(os(name));
        let result = (|| -> std::io::Result<()> {
            for attr in xattr::list(&by_fd)? {
                if xattrs::captured(attr.as_bytes()) && !want.iter().any(|(n, _)| n == attr.as_bytes()) {
                    xattr::remove(&by_fd, &attr)?;
                }
            }
            for (attr, value) in want {
                xattr::set(&by_fd, os(attr), value)?;
            }
            Ok(())
        })();
        match result {
            Err(e) if e.raw_os_error() == Some(libc::ENOTSUP) && want.is_empty() => Ok(()),
            other => other.at("set the extended attributes of", &path),
        }
    }

    /// Removes entry `name`; a directory is removed with everything in it.
    pub(crate) fn remove(&self, name: &[u8]) -> Result<()> {
        let path = self.child_path(name);
        let stat = match rustix::fs::statat(&self.fd, os(name), AtFlags::SYMLINK_NOFOLLOW) {
            Ok(s) => s,
            Err(rustix::io::Errno::NOENT) => return Ok(()),
            Err(e) => return Err(Error::io("inspect", &path, e.into())),
        };
        if rustix::fs::FileType::from_raw_mode(stat.st_mode) == rustix::fs::FileType::Directory {
            let child = self.open_dir(name)?;
            // A directory without write permission (as a snapshot may have it) must be opened
            // up before its entries can go.
            let _ = rustix::fs::fchmod(&child.fd, Mode::from_raw_mode(0o700));
            for entry_name in child.entries()? {
                child.remove(&entry_name)?;
            }
            rustix::fs::unlinkat(&self.fd, os(name), AtFlags::REMOVEDIR).at("remove", &path)
        } else {
            rustix::fs::unlinkat(&self.fd, os(name), AtFlags::empty()).at("remove", &path)
        }
    }

    /// The names in this directory, without `.` and `..`.
    pub(crate) fn entries(&self) -> Result<Vec<Vec<u8>>> {
        let fd = rustix::fs::openat(&self.fd, ".", dir_flags(), Mode::empty()).at("list", &self.path)?;
        let dir = rustix::fs::Dir::read_from(fd.as_fd()).at("list", &self.path)?;
        let mut names = Vec::new();
        for entry in dir {
            let entry = entry.at("list", &self.path)?;
            let name = entry.file_name().to_bytes();
            if name != b"." && name != b".." {
                names.push(name.to_vec());
            }
        }
        Ok(names)
    }
}

/// Set once a file made with its mode did not get it ([`DirHandle::create_file`]): the umask
/// takes bits, so files are made private and given their mode after.
static UMASK_TAKES: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// True when this process may give entries any owner (asked once: restores ask per entry).
fn running_as_root() -> bool {
    own_ids().0.is_root()
}

/// The effective user and group of this process, which own what it creates.
fn own_ids() -> (rustix::fs::Uid, rustix::fs::Gid) {
    static IDS: std::sync::OnceLock<(rustix::fs::Uid, rustix::fs::Gid)> = std::sync::OnceLock::new();
    *IDS.get_or_init(|| (rustix::process::geteuid(), rustix::process::getegid()))
}

/// Metadata to apply to a restored entry.
pub(crate) struct Meta {
    pub mode: u32,
    pub uid: u32,
    pub gid: u32,
    /// `None` keeps the time the write gave it (the current time).
    pub mtime_ns: Option<i64>,
    /// Remove captured extended attributes the snapshot lacks (ones a new file inherited
    /// from a default ACL).
    pub strip_xattrs: bool,
}

fn timespec(ns: i64) -> Timespec {
    Timespec { tv_sec: ns.div_euclid(1_000_000_000), tv_nsec: ns.rem_euclid(1_000_000_000) as _ }
}

/// A [`Stamp`] from a raw stat, to record restored files in the stat cache.
pub(crate) fn stamp_of(st: &rustix::fs::Stat) -> Stamp {
    Stamp {
        dev: st.st_dev,
        ino: st.st_ino,
        size: st.st_size as u64,
        mtime_ns: st.st_mtime * 1_000_000_000 + st.st_mtime_nsec as i64,
        ctime_ns: st.st_ctime * 1_000_000_000 + st.st_ctime_nsec as i64,
        mode: st.st_mode,
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};

    use super::*;

    fn create(dir: &DirHandle, name: &[u8], meta: &Meta) -> rustix::fs::Stat {
        dir.create_file(name, meta, (&Extra::default(), 5), |sink| sink(b"hello")).unwrap()
    }

    #[test]
    fn a_file_gets_its_owner_and_mode_in_a_set_group_id_directory_too() {
        if !running_as_root() {
            return; // Only root gives files an owner; the suite runs as root.
        }
        let tmp = tempfile::tempdir().unwrap();
        let shared = tmp.path().join("shared");
        std::fs::create_dir(&shared).unwrap();
        // New entries of a set-group-id directory take its group, not the creator's.
        std::os::unix::fs::chown(&shared, None, Some(4321)).unwrap();
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o2775)).unwrap();
        let dir = DirHandle::open_root(&shared).unwrap();
        let (uid, gid) = (own_ids().0.as_raw(), own_ids().1.as_raw());

        let meta =
            |mode, uid, gid| Meta { mode, uid, gid, mtime_ns: Some(1_000_000_000), strip_xattrs: false };
        let own = create(&dir, b"own", &meta(0o2755, uid, gid));
        let other = create(&dir, b"other", &meta(0o4750, 1234, 5678));
        let plain = create(&dir, b"plain", &meta(0o644, uid, 4321));

        for (name, stat, want) in [
            ("own", own, (uid, gid, 0o2755)),
            ("other", other, (1234, 5678, 0o4750)),
            ("plain", plain, (uid, 4321, 0o644)),
        ] {
            let on_disk = std::fs::metadata(shared.join(name)).unwrap();
            let found = (on_disk.uid(), on_disk.gid(), on_disk.mode() & 0o7777);
            assert_eq!(found, want, "{name}");
            // The stat returned is the file's final one, as the stat cache records it.
            assert_eq!((stat.st_uid, stat.st_gid, stat.st_mode & 0o7777), want, "{name}");
            assert_eq!(on_disk.mtime(), 1, "{name}");
        }
    }
}
