//! `cairn init`: make a store, encrypted or not, before anything is saved in it.

use cairn_lib::Repository;
use cairn_lib::ops::init::{InitOptions, InitResult};

use crate::commands::GlobalArgs;
use crate::context::{call_context, store_address, unlock};
use crate::error::CommandResult;
use crate::printer::Printer;

/// Arguments of `cairn init`: the engine's options as they are.
pub type InitArgs = InitOptions;

pub fn run(global: &GlobalArgs, args: InitArgs, printer: &Printer) -> CommandResult {
    let address = store_address(global)?;
    let result = Repository::init(&address, &args, &unlock(&address), &call_context())?;
    printer.result(&result, human);
    Ok(())
}

fn human(r: &InitResult) -> String {
    match &r.key {
        Some(key) => format!("made an encrypted store at {} (key {key})\n", r.location),
        None => format!("made a store at {} (not encrypted)\n", r.location),
    }
}
