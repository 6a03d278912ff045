//! The note that lets a save's catalog commit go unflushed ([`super::Flush::Recoverable`]).
//!
//! A save flushes its packs and its record object before its catalog commit, so a power cut
//! can take back the commit but never what it points at. What it takes back must come back by
//! itself, not wait for `cairn repair`: before the first such commit of a boot, the catalog
//! notes that boot, durably, in `catalog.boot` beside it. An open that finds the note naming
//! another boot knows the machine went down since commits that were not flushed, and adds back
//! what the objects hold (`Repository::catch_up_after_power_cut`, which then notes this boot).
//! A process killed any other way loses nothing: its commits are in the WAL, which the kernel
//! keeps. Where the boot cannot be known, every commit is flushed.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::error::Result;

pub(super) struct BootNote {
    path: PathBuf,
    /// The boot this process runs in; `None` where the kernel does not say.
    current: Option<String>,
    /// The boot the note names, as read on open or last written.
    noted: Mutex<Option<String>>,
}

impl BootNote {
    /// Reads the note of the catalog at `catalog`, if it has one.
    pub(super) fn read(catalog: &Path) -> Self {
        let path = catalog.with_extension("boot");
        let noted = std::fs::read_to_string(&path).ok().map(|text| text.trim().to_owned());
        Self { path, current: current_boot(), noted: Mutex::new(noted) }
    }

    /// Whether commits made in another boot may not have reached the disk.
    pub(super) fn names_another_boot(&self) -> bool {
        let noted = self.noted.lock().unwrap_or_else(|p| p.into_inner());
        noted.is_some() && *noted != self.current
    }

    /// Notes this boot, durably, unless the note names it already; false where the boot is
    /// not known, and nothing may go unflushed.
    pub(super) fn note(&self) -> Result<bool> {
        let Some(current) = &self.current else { return Ok(false) };
        let mut noted = self.noted.lock().unwrap_or_else(|p| p.into_inner());
        if noted.as_ref() != Some(current) {
            let dir = self.path.parent().unwrap_or(Path::new("."));
            // The store's own temp directory, which the next open clears of a crash's leftovers.
            let tmp = Some(dir.join("tmp")).filter(|t| t.is_dir()).unwrap_or_else(|| dir.to_path_buf());
            crate::backend::replace_file(
                &tmp,
                format!("{current}\n").as_bytes(),
                &self.path,
                "note the boot in",
            )?;
            *noted = Some(current.clone());
        }
        Ok(true)
    }

    /// Notes this boot beside a catalog just made, while `flush_catalog` flushes the catalog's
    /// files, and puts them all in their directory with one flush of it: made at the store's first
    /// commit instead, the note was two more flushes of a first save.
    pub(super) fn note_new_catalog(&self, flush_catalog: impl FnOnce() -> Result<()> + Send) -> Result<()> {
        let dir = self.path.parent().unwrap_or(Path::new("."));
        let mut noted = self.noted.lock().unwrap_or_else(|p| p.into_inner());
        let Some(current) = self.current.as_ref().filter(|c| noted.as_ref() != Some(*c)) else {
            flush_catalog()?;
            return crate::backend::sync_dir(dir);
        };
        let tmp = Some(dir.join("tmp")).filter(|t| t.is_dir()).unwrap_or_else(|| dir.to_path_buf());
        let (flushed, staged) = std::thread::scope(|scope| {
            let flushing = scope.spawn(flush_catalog);
            let staged = crate::backend::stage_file(&tmp, format!("{current}\n").as_bytes());
            (flushing.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)), staged)
        });
        flushed?;
        // The rename's flush of the directory is the catalog file's too.
        staged?.replace(&self.path, "note the boot in")?;
        *noted = Some(current.clone());
        Ok(())
    }
}

/// The kernel's id of this boot: a power cut, a crash of the kernel or a reboot changes it.
fn current_boot() -> Option<String> {
    crate::fault::boot_id().or_else(|| {
        let id = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
        Some(id.trim().to_owned()).filter(|id| !id.is_empty())
    })
}

impl super::Catalog {
    /// Whether the machine went down since commits that were not flushed: the objects may hold
    /// snapshots, moments and packs this catalog lost.
    pub fn may_have_lost_commits(&self) -> bool {
        self.boot.names_another_boot()
    }

    /// Notes this boot as the one whose commits may go unflushed, once what an earlier boot's
    /// commits lost is back.
    pub fn note_boot(&self) -> Result<()> {
        self.boot.note().map(drop)
    }
}
