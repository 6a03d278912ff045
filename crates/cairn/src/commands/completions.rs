//! `cairn completions SHELL`: the shell completion script, generated from the same clap
//! definitions that parse the command line, so it never falls behind a new flag.

use clap::Args;
use clap_complete::Shell;
use serde::Serialize;

use crate::commands::{GlobalArgs, whole_tree};
use crate::error::CommandResult;
use crate::printer::Printer;

/// Arguments of `cairn completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell: bash, zsh, fish, elvish or powershell.
    shell: Shell,
}

/// The script, and the shell it is for (what `--json` prints).
#[derive(Debug, Serialize)]
struct Script {
    shell: String,
    script: String,
}

pub fn run(_global: &GlobalArgs, args: CompletionsArgs, printer: &Printer) -> CommandResult {
    let mut cmd = whole_tree();
    let mut out = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "cairn", &mut out);
    let script = String::from_utf8(out).map_err(|e| {
        crate::error::usage(format!("the {} completion script is not UTF-8: {e}", args.shell))
    })?;
    printer.result(&Script { shell: args.shell.to_string(), script }, |s| s.script.clone());
    Ok(())
}
