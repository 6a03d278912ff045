//! `cairn man --out DIR`: one man page per command (`cairn.1`, `cairn-save.1`,
//! `cairn-session-create.1`, …), generated from the same clap definitions that parse the
//! command line.

use std::path::{Path, PathBuf};

use clap::Args;
use serde::Serialize;

use crate::commands::{GlobalArgs, whole_tree};
use crate::error::{CommandError, CommandResult};
use crate::printer::Printer;

/// Arguments of `cairn man`.
#[derive(Debug, Args)]
pub struct ManArgs {
    /// The directory to write the pages into (created when missing; pages there are replaced).
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
}

/// What was written.
#[derive(Debug, Serialize)]
struct Pages {
    dir: PathBuf,
    pages: Vec<String>,
}

pub fn run(_global: &GlobalArgs, args: ManArgs, printer: &Printer) -> CommandResult {
    let failed =
        |e: std::io::Error| CommandError::from(cairn_lib::Error::io("write man pages to", &args.out, e));
    std::fs::create_dir_all(&args.out).map_err(failed)?;
    let mut cmd = whole_tree().disable_help_subcommand(true);
    // Building names each subcommand `cairn-session-create`, which is its page's title.
    cmd.build();
    let mut pages = Vec::new();
    write_pages(&cmd, &args.out, &mut pages).map_err(failed)?;
    pages.sort();
    printer.result(&Pages { dir: args.out.clone(), pages }, |p| {
        let mut out = format!("wrote {} man pages to {}\n", p.pages.len(), p.dir.display());
        for page in &p.pages {
            out.push_str(&format!("  {page}\n"));
        }
        out
    });
    Ok(())
}

/// Writes the page of `cmd` and of each of its visible subcommands, depth first.
fn write_pages(cmd: &clap::Command, dir: &Path, pages: &mut Vec<String>) -> std::io::Result<()> {
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        write_pages(sub, dir, pages)?;
    }
    let path = clap_mangen::Man::new(cmd.clone()).generate_to(dir)?;
    pages.push(path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default());
    Ok(())
}
