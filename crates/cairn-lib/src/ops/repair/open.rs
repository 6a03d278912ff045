//! Opening a damaged store for `repair`: what would make every other command refuse it is put
//! right or put aside first, never deleted. A catalog that does not open, or that SQLite's own
//! check finds damaged, and a `config.toml` that does not load are renamed aside (the store
//! then starts from a new catalog and default settings); a missing or garbled `FORMAT` is
//! written again when the store's objects prove it is a store, and so is the marker of an
//! encrypted store directory (`store/reopen.rs`). A shared store (an encrypted
//! directory, a bucket) is opened without its catalog's catch-up, which the repair does itself.

use std::path::{Path, PathBuf};

use crate::Repository;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::store::address::StoreAddress;
use crate::store::layout::{FORMAT_VERSION, Layout};
use crate::store::{Store, Unlock};

/// What opening a store for a repair did before the repair began.
#[derive(Debug, Clone, Default)]
pub struct RepairStart {
    /// Where a damaged catalog was put aside.
    pub catalog_set_aside: Option<PathBuf>,
    /// Where a `config.toml` that did not load was put aside.
    pub config_set_aside: Option<PathBuf>,
    /// Whether `FORMAT` was written again.
    pub format_rewritten: bool,
    /// Whether an encrypted store directory's lost marker was written again.
    pub marker_rewritten: bool,
}

impl Repository {
    /// Opens the store directory at `root` for a repair (see the module documentation).
    pub fn open_to_repair(root: &Path) -> Result<(Self, RepairStart)> {
        let layout = Layout { root: std::path::absolute(root).map_err(|e| Error::io("resolve", root, e))? };
        let mut start = RepairStart::default();
        let has_objects = has_entries(&layout.packs()) || has_entries(&layout.records());
        let has_format = layout.format_file().exists();
        if !has_format && !has_objects && !layout.catalog().exists() {
            return Err(Error::not_found(format!("there is no store at {}", layout.root.display())));
        }
        let format_sound = std::fs::read_to_string(layout.format_file()).is_ok_and(|t| {
            t.trim().strip_prefix("cairn-store-format ").is_some_and(|v| v.parse::<u32>().is_ok())
        });
        if !format_sound && has_objects {
            // Packs and records below `objects/` are what only a store holds: the file that
            // says so was lost, and the version is the one this build writes (a store of
            // another version keeps a FORMAT that reads, and is refused as before).
            let text = format!("cairn-store-format {FORMAT_VERSION}\n");
            crate::store::layout::create_private_dir(&layout.tmp())?;
            crate::store::backend::replace_file(
                &layout.tmp(),
                text.as_bytes(),
                &layout.format_file(),
                "write",
            )?;
            start.format_rewritten = true;
        }
        let stamp = jiff::Timestamp::now().as_second();
        if Config::load(&layout.config()).is_err() {
            start.config_set_aside = Some(set_aside(&layout.config(), stamp)?);
        }
        let sound = crate::store::catalog::Catalog::open(&layout.catalog())
            .and_then(|c| c.thorough_integrity_problems())
            .is_ok_and(|p| p.is_empty());
        if !sound {
            let aside = set_aside(&layout.catalog(), stamp)?;
            for suffix in ["-wal", "-shm"] {
                let from = PathBuf::from(format!("{}{suffix}", layout.catalog().display()));
                if from.exists() {
                    std::fs::rename(&from, format!("{}{suffix}", aside.display()))
                        .map_err(|e| Error::io("set aside", &from, e))?;
                }
            }
            start.catalog_set_aside = Some(aside);
        }
        Ok((Store::open_to_rebuild(&layout.root).map(Repository::from)?, start))
    }

    /// Opens the store at `address` for a repair: a store directory as
    /// [`Repository::open_to_repair`] does, a shared one unlocked with `unlock` but without the
    /// catch-up of its catalog (the repair reads every object itself, listing what it cannot).
    pub fn open_address_to_repair(address: &StoreAddress, unlock: &Unlock) -> Result<(Self, RepairStart)> {
        let mut start = RepairStart::default();
        if let StoreAddress::Dir(dir) = address {
            start.marker_rewritten = crate::store::reopen::rewrite_lost_marker(dir, unlock)?;
            if !dir.join(crate::store::remote::STORE_OBJECT).exists() {
                return Self::open_to_repair(dir);
            }
        }
        Ok((Store::open_shared_to_rebuild(address, unlock).map(Repository::from)?, start))
    }
}

/// Renames `path` to `<path>.damaged-<stamp>` and returns the new name.
fn set_aside(path: &Path, stamp: i64) -> Result<PathBuf> {
    let to = PathBuf::from(format!("{}.damaged-{stamp}", path.display()));
    if path.exists() {
        std::fs::rename(path, &to).map_err(|e| Error::io("set aside", path, e))?;
    }
    Ok(to)
}

/// Whether `dir` exists and holds anything.
fn has_entries(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|mut d| d.next().is_some())
}
