//! `cairn repair`.

use cairn_lib::Repository;
use cairn_lib::ops::repair::{Recovery, RepairResult};
use clap::Args;

use crate::commands::GlobalArgs;
use crate::context::{store_address, unlock};
use crate::error::CommandResult;
use crate::printer::Printer;

/// Arguments of `cairn repair`.
#[derive(Debug, Args)]
pub struct RepairArgs {}

pub fn run(global: &GlobalArgs, _args: RepairArgs, printer: &Printer) -> CommandResult {
    let address = store_address(global)?;
    let (store, start) = Repository::open_address_to_repair(&address, &unlock(&address))?;
    let result = printer.with_progress("repairing", || store.repair(&start))?;
    printer.result(&result, human);
    Ok(())
}

fn human(r: &RepairResult) -> String {
    let mut out = String::new();
    if r.format_rewritten {
        out.push_str("the store's FORMAT file was missing or garbled: written again\n");
    }
    if r.marker_rewritten {
        out.push_str(
            "the store's marker (cairn-store.json) was missing: written again, with a new store id\n",
        );
    }
    if let Some(aside) = &r.config_set_aside {
        out.push_str(&format!(
            "config.toml did not load: set aside as {aside}; the store uses default settings\n"
        ));
    }
    if let Some(aside) = &r.catalog_set_aside {
        out.push_str(&format!("the catalog was damaged: set aside as {aside}\n"));
    }
    out.push_str(&format!(
        "indexed {} blob(s) of {} pack(s); {} snapshot(s) added back from their records\n",
        r.blobs_indexed, r.packs_indexed, r.snapshots_recovered
    ));
    for record in &r.snapshots_corrected {
        out.push_str(&format!("snapshot put right in the catalog from its record: {record}\n"));
    }
    for pack in &r.packs_recovered {
        let how = match (pack.recovery, pack.whole) {
            (Recovery::Header, true) => "its header found again, every blob",
            (Recovery::Header, false) => "its header found again, some blobs",
            (Recovery::Blobs, _) => "no header, some blobs",
            (Recovery::Cache, _) => "put back whole from this machine's pack cache",
        };
        out.push_str(&format!("damaged pack recovered ({how}: {} blob(s)): {}\n", pack.blobs, pack.key));
    }
    for pack in &r.packs_damaged {
        out.push_str(&format!("damaged pack, nothing recovered (kept as it is): {pack}\n"));
    }
    for blob in &r.blobs_dropped {
        out.push_str(&format!("damaged blob left out (the next save writes it again): {blob}\n"));
    }
    for record in &r.records_damaged {
        out.push_str(&format!(
            "damaged record, not added (kept as it is): {}: {}\n",
            record.key, record.problem
        ));
    }
    for s in &r.damaged_snapshots {
        out.push_str(&format!("snapshot {} of {} lost {} path(s):\n", s.id, s.target, s.lost.len()));
        for path in &s.lost {
            out.push_str(&format!("  {path}\n"));
        }
    }
    if r.damaged_snapshots.is_empty() {
        out.push_str("every snapshot in the catalog holds all its data\n");
    }
    out
}
