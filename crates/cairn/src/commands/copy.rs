//! `cairn copy REF… --to STORE` (or `--from STORE`): snapshots, moments or a whole session
//! from one store to another. The store of `--store` is the other side. The destination is
//! unlocked by a secret of its own when one is given (`--to-password-file`, `CAIRN_TO_*`).

use std::path::PathBuf;

use cairn_lib::ops::copy::{CopyOptions, CopyProgress, CopyResult, CopyStatus};
use clap::Args;

use crate::commands::GlobalArgs;
use crate::context::{call_context, open_destination, open_store};
use crate::error::CommandResult;
use crate::format;
use crate::printer::Printer;

/// Arguments of `cairn copy`: where to, or where from, and the engine's options.
#[derive(Debug, Args)]
#[command(group = clap::ArgGroup::new("other").required(true).args(["to", "from"]))]
pub struct CopyArgs {
    /// Copy from the store (--store) into this one: a directory or s3://BUCKET/PREFIX.
    #[arg(long, value_name = "STORE")]
    to: Option<PathBuf>,
    /// Copy from this store into the store (--store).
    #[arg(long, value_name = "STORE")]
    from: Option<PathBuf>,
    /// The destination's password, read from this file, for two encrypted stores with
    /// different passwords (else CAIRN_TO_PASSWORD, CAIRN_TO_PASSWORD_FILE or CAIRN_TO_KEY_FILE,
    /// else the store's own secret, else it is asked for).
    #[arg(long, value_name = "FILE")]
    to_password_file: Option<PathBuf>,
    #[command(flatten)]
    options: CopyOptions,
}

pub fn run(global: &GlobalArgs, args: CopyArgs, printer: &Printer) -> CommandResult {
    let here = |path: Option<PathBuf>, mode| GlobalArgs { store: path, json: global.json, open_mode: mode };
    let (source, destination) = match (&args.to, &args.from) {
        (Some(to), _) => (
            here(global.store.clone(), cairn_lib::OpenMode::Existing),
            here(Some(to.clone()), cairn_lib::OpenMode::CreateIfMissing),
        ),
        (None, from) => (
            here(from.clone(), cairn_lib::OpenMode::Existing),
            here(global.store.clone(), cairn_lib::OpenMode::CreateIfMissing),
        ),
    };
    let source = open_store(&source)?;
    let destination = open_destination(&destination, args.to_password_file.clone())?;
    let progress = CopyProgress::default();
    let text = || {
        let sent = progress.blobs_sent();
        if sent == 0 {
            "copying".to_owned()
        } else {
            format!("copying: {sent} blobs ({}) sent", format::bytes(progress.bytes_sent()))
        }
    };
    let result = printer.with_text("copying", &text, || {
        source.copy_with_progress(&destination, &args.options, &call_context(), &progress)
    })?;
    printer.result(&result, human);
    Ok(())
}

fn human(r: &CopyResult) -> String {
    let mut out = format!("copied from {} to {} (session {:?}", r.from, r.to, r.session.name);
    out.push_str(if r.session_created { ", made there)\n" } else { ")\n" });
    for c in &r.snapshots {
        let status = match c.status {
            CopyStatus::Copied => "copied",
            CopyStatus::AlreadyPresent => "present",
        };
        out.push_str(&format!("  {status:<8} {}", format::label(&c.snapshot)));
        if c.redacted_entries > 0 {
            out.push_str(&format!(" ({} transcript entries redacted)", c.redacted_entries));
        }
        out.push('\n');
    }
    out.push_str(&format!(
        "{} snapshot(s) copied, {} already there; {} moment(s) copied, {} already there\n",
        r.snapshots_copied, r.snapshots_present, r.moments_copied, r.moments_present
    ));
    out.push_str(&format!(
        "{} blob(s) sent ({}), {} already there\n",
        r.blobs_sent,
        format::bytes(r.bytes_sent),
        r.blobs_present
    ));
    if r.redacted_entries > 0 {
        out.push_str(&format!(
            "{} transcript entries had secret-shaped strings replaced by a marker (--no-redact keeps them)\n",
            r.redacted_entries
        ));
    }
    out
}
