//! `cairn repair`.

use cairn_lib::Store;
use cairn_lib::ops::repair::RepairResult;
use clap::Args;

use crate::commands::GlobalArgs;
use crate::context::{store_address, unlock};
use crate::error::CommandResult;
use crate::printer::Printer;

/// Arguments of `cairn repair`.
#[derive(Debug, Args)]
pub struct RepairArgs {}

pub fn run(global: &GlobalArgs, _args: RepairArgs, printer: &Printer) -> CommandResult {
    // A remote (or encrypted) store's catalog is a cache, rebuilt from the objects as it
    // opens; the repair then checks and re-indexes every pack there.
    let (store, aside) = match store_address(global)? {
        cairn_lib::StoreAddress::Dir(dir) if !dir.join("cairn-store.json").exists() => {
            Store::open_to_repair(&dir)?
        }
        shared => (Store::open_address_with(&shared, cairn_lib::OpenMode::Existing, &unlock(&shared))?, None),
    };
    let result = printer.with_progress("repairing", || store.repair(aside.as_deref()))?;
    printer.result(&result, human);
    Ok(())
}

fn human(r: &RepairResult) -> String {
    let mut out = String::new();
    if let Some(aside) = &r.catalog_set_aside {
        out.push_str(&format!(
            "the catalog was damaged: set aside as {aside}; {} snapshot(s) added back from their records\n",
            r.snapshots_recovered
        ));
    }
    out.push_str(&format!("indexed {} blob(s) of {} pack(s)\n", r.blobs_indexed, r.packs_indexed));
    for pack in &r.packs_damaged {
        out.push_str(&format!("damaged pack, not indexed (`cairn gc` removes it): {pack}\n"));
    }
    for blob in &r.blobs_dropped {
        out.push_str(&format!("damaged blob dropped (the next save writes it again): {blob}\n"));
    }
    for s in &r.damaged_snapshots {
        out.push_str(&format!("snapshot {} of {} lost {} path(s):\n", s.id, s.target, s.lost.len()));
        for path in &s.lost {
            out.push_str(&format!("  {path}\n"));
        }
    }
    if r.damaged_snapshots.is_empty() {
        out.push_str("every snapshot holds all its data\n");
    }
    out
}
