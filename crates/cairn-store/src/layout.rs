//! The store's on-disk layout, its format version, and its private permissions.
//!
//! ```text
//! <store>/FORMAT            "cairn-store-format 1"
//! <store>/catalog.db        SQLite catalog (WAL)
//! <store>/config.toml       settings (`cairn config`)
//! <store>/current_session   the current-session pointer, shared by the CLI and the MCP server
//! <store>/objects/packs/    pack files, by the hash of their header, below a 2-hex-digit folder
//! <store>/objects/records/  snapshot records as JSON objects (to rebuild the catalog)
//! <store>/tmp/              temporary files, named <pid>-<uuid>.tmp
//! <store>/locks/            lock files
//! <store>/journal/          restores in progress
//! ```

use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::error::{Error, IoContext, Result};

/// The store format this build reads and writes.
pub const FORMAT_VERSION: u32 = 1;
const FORMAT_PREFIX: &str = "cairn-store-format ";

/// Whether opening a store created it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Created {
    /// The store existed.
    No,
    /// The store was made in an empty directory that existed.
    InEmptyDir,
    /// The store was made along with its directory.
    WithRoot,
}

/// Paths inside one store.
#[derive(Debug, Clone)]
pub struct Layout {
    /// The store's directory.
    pub root: PathBuf,
}

impl Layout {
    /// `FORMAT`: the store's format version.
    pub fn format_file(&self) -> PathBuf {
        self.root.join("FORMAT")
    }
    /// `catalog.db`: the SQLite catalog.
    pub fn catalog(&self) -> PathBuf {
        self.root.join("catalog.db")
    }
    /// `config.toml`: the settings.
    pub fn config(&self) -> PathBuf {
        self.root.join("config.toml")
    }
    pub(crate) fn current_session(&self) -> PathBuf {
        self.root.join("current_session")
    }
    pub(crate) fn objects(&self) -> PathBuf {
        self.root.join("objects")
    }
    /// `tmp/`: temporary files.
    pub fn tmp(&self) -> PathBuf {
        self.root.join("tmp")
    }
    /// `locks/`: lock files.
    pub fn locks(&self) -> PathBuf {
        self.root.join("locks")
    }
    /// `journal/`: restores in progress.
    pub fn journal(&self) -> PathBuf {
        self.root.join("journal")
    }

    /// `objects/packs/`: pack files.
    pub fn packs(&self) -> PathBuf {
        self.objects().join("packs")
    }
    /// `objects/records/`: snapshot records.
    pub fn records(&self) -> PathBuf {
        self.objects().join("records")
    }

    /// Creates a new store, or checks the format of an existing one.
    pub fn init_or_check(&self) -> Result<Created> {
        let format = self.format_file();
        if format.exists() {
            self.check_format()?;
            return Ok(Created::No);
        }
        if self.root.exists() {
            let has_entries = std::fs::read_dir(&self.root).at("read", &self.root)?.next().is_some();
            // A skeleton without its FORMAT is a store another command is making at this moment
            // (two agent hooks firing at once into a fresh store) or one a killed command began:
            // it is finished here, as its maker would finish it, and is not this open's to remove.
            if has_entries && self.only_skeleton()? {
                self.complete_skeleton(false)?;
                return Ok(Created::No);
            }
            if has_entries {
                return Err(Error::invalid(format!(
                    "{} is not a cairn store (it has no FORMAT file and is not empty)",
                    self.root.display()
                ))
                .hint(crate::error::Hint::ChooseStore)
                .purpose("in an empty or new directory"));
            }
        }
        let made_root = !self.root.exists();
        self.complete_skeleton(made_root)?;
        Ok(if made_root { Created::WithRoot } else { Created::InEmptyDir })
    }

    /// Makes every directory of the store's skeleton (those that exist are kept), then its
    /// FORMAT file. Two commands doing it at once both succeed: the directories are made if
    /// missing and FORMAT is put in place by an atomic rename of the same text.
    fn complete_skeleton(&self, made_root: bool) -> Result<()> {
        create_private_dir(&self.root)?;
        for dir in [self.objects(), self.packs(), self.records(), self.tmp(), self.locks(), self.journal()] {
            create_private_dir(&dir)?;
        }
        // FORMAT last, and flushed: it marks a store whose skeleton is complete on disk. It is
        // written and flushed while the skeleton's directories are, and renamed in after them.
        let text = format!("{FORMAT_PREFIX}{FORMAT_VERSION}\n");
        let (skeleton, format) = std::thread::scope(|scope| {
            let flushing = scope.spawn(|| {
                for dir in [&self.objects(), &self.root] {
                    super::backend::sync_dir(dir)?;
                }
                match self.root.parent().filter(|_| made_root) {
                    Some(parent) => super::backend::sync_dir(parent),
                    None => Ok(()),
                }
            });
            let format = super::backend::stage_file(&self.tmp(), text.as_bytes());
            (flushing.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)), format)
        });
        skeleton?;
        format?.replace(&self.format_file(), "create")
    }

    /// Whether the directory holds nothing but the entries a store's skeleton is made of.
    fn only_skeleton(&self) -> Result<bool> {
        const SKELETON: [&str; 5] = ["objects", "tmp", "locks", "journal", "FORMAT"];
        for entry in std::fs::read_dir(&self.root).at("read", &self.root)? {
            let name = entry.at("read", &self.root)?.file_name();
            if !SKELETON.iter().any(|s| name == *s) {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Removes a store this process created and stored nothing in: its own entries, and the
    /// directory itself when this process made it.
    pub fn remove_new_store(&self, created: Created) -> Result<()> {
        if created == Created::WithRoot {
            return std::fs::remove_dir_all(&self.root).at("remove", &self.root);
        }
        for entry in std::fs::read_dir(&self.root).at("list", &self.root)? {
            let entry = entry.at("list", &self.root)?;
            let path = entry.path();
            if entry.file_type().at("inspect", &path)?.is_dir() {
                std::fs::remove_dir_all(&path).at("remove", &path)?;
            } else {
                std::fs::remove_file(&path).at("remove", &path)?;
            }
        }
        Ok(())
    }

    /// False when the format file is there but does not read as one (damaged), of any version.
    pub fn format_file_reads(&self) -> bool {
        let path = self.format_file();
        !path.exists() || std::fs::read_to_string(&path).is_ok_and(|text| format_version(&text).is_some())
    }

    fn check_format(&self) -> Result<()> {
        let path = self.format_file();
        let text = std::fs::read_to_string(&path).at("read", &path)?;
        let version = format_version(&text).ok_or_else(|| {
            Error::corrupt(format!("{} is not a cairn store format file", path.display()))
                .hint(crate::error::Hint::ChooseStore)
        })?;
        if version != FORMAT_VERSION {
            return Err(Error::corrupt(format!(
                "the store at {} has format version {version}, and this cairn reads version {FORMAT_VERSION}; use a cairn release that reads version {version}",
                self.root.display()
            ))
            .or_hint(crate::error::Hint::ChooseStore));
        }
        Ok(())
    }
}

/// The version a format file's text names, if it names one.
fn format_version(text: &str) -> Option<u32> {
    text.trim().strip_prefix(FORMAT_PREFIX).and_then(|v| v.parse::<u32>().ok())
}

/// Creates a directory (and missing parents) readable by its owner only. Every directory in
/// the store is 0700 and every file 0600, whatever the umask.
pub fn create_private_dir(path: &Path) -> Result<()> {
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(path).at("create", path)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o700)).at("protect", path)
}

/// True when process `pid` is alive on this machine. A process that was killed and that its
/// parent has not reaped yet (a zombie) is still listed, but holds and writes nothing: dead.
pub fn pid_alive(pid: u32) -> bool {
    if pid == std::process::id() {
        return true;
    }
    let proc = Path::new("/proc").join(pid.to_string());
    match std::fs::read(proc.join("stat")) {
        // The state follows the command's name, which may itself hold `)`.
        Ok(stat) => match stat.iter().rposition(|&b| b == b')') {
            Some(end) => !matches!(stat.get(end + 2), Some(b'Z' | b'X')),
            None => true,
        },
        Err(_) => proc.exists(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_skeleton_without_its_format_is_finished_and_anything_else_refused() {
        let dir = tempfile::tempdir().unwrap();
        let layout = Layout { root: dir.path().join("store") };
        // What a command killed (or still running) between its directories and its FORMAT left.
        for sub in ["objects/packs", "tmp", "locks"] {
            std::fs::create_dir_all(layout.root.join(sub)).unwrap();
        }
        assert_eq!(layout.init_or_check().unwrap(), Created::No);
        assert!(layout.format_file().exists());
        assert!(layout.journal().is_dir());
        assert_eq!(layout.init_or_check().unwrap(), Created::No);

        let other = Layout { root: dir.path().join("mine") };
        std::fs::create_dir_all(other.root.join("tmp")).unwrap();
        std::fs::write(other.root.join("notes.txt"), "mine").unwrap();
        assert!(other.init_or_check().is_err());
        assert!(!other.format_file().exists());
    }

    #[test]
    fn a_killed_process_is_dead_before_it_is_reaped() {
        let mut child = std::process::Command::new("sleep").arg("30").spawn().unwrap();
        assert!(pid_alive(child.id()));
        child.kill().unwrap();
        // Not reaped: the zombie is listed until `wait`.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while pid_alive(child.id()) {
            assert!(std::time::Instant::now() < deadline, "a killed child still reads as alive");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert!(Path::new("/proc").join(child.id().to_string()).exists(), "reaped too early to tell");
        child.wait().unwrap();
        assert!(!pid_alive(child.id()));
        assert!(pid_alive(std::process::id()));
    }
}
