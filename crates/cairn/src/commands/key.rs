//! `cairn key add|list|remove`: the passwords and key files that unlock an encrypted store.

use std::path::PathBuf;

use cairn_lib::ops::key::{KeyAddOptions, KeyListOptions, KeyListResult, KeyRemoveOptions, KeyResult};
use clap::{Args, Subcommand};

use crate::commands::GlobalArgs;
use crate::context::{call_context, open_store};
use crate::error::CommandResult;
use crate::format;
use crate::printer::Printer;

/// The key commands.
#[derive(Debug, Subcommand)]
pub enum KeyCommand {
    /// Add a key: a new password (CAIRN_NEW_PASSWORD, CAIRN_NEW_PASSWORD_FILE or a prompt) or
    /// a key file (--key-file), unlocked with a key the store has.
    Add(KeyAddArgs),
    /// List the keys (* marks the one that unlocked the store).
    List(KeyListOptions),
    /// Remove a key (never the last one).
    Remove(KeyRemoveOptions),
}

/// Arguments of `cairn key add`.
#[derive(Debug, Args)]
pub struct KeyAddArgs {
    #[command(flatten)]
    options: KeyAddOptions,
    /// Make the new key a key file (at least 32 random bytes) instead of a password.
    #[arg(long, value_name = "PATH")]
    key_file: Option<PathBuf>,
}

pub fn run(global: &GlobalArgs, cmd: KeyCommand, printer: &Printer) -> CommandResult {
    let store = open_store(global)?;
    let context = call_context();
    match cmd {
        KeyCommand::Add(args) => {
            let secret = crate::password::new_key_secret(args.key_file.as_deref())?;
            let options = KeyAddOptions { secret: Some(secret), ..args.options };
            let added = store.key_add(&options, &context)?;
            printer.result(&added, |r| human_one("added", r));
        }
        KeyCommand::List(options) => {
            let list = store.key_list(&options, &context)?;
            printer.result(&list, human_list);
        }
        KeyCommand::Remove(options) => {
            let removed = store.key_remove(&options, &context)?;
            printer.result(&removed, |r| human_one("removed", r));
        }
    }
    Ok(())
}

fn human_one(what: &str, r: &KeyResult) -> String {
    let label = r.key.label.as_deref().map(|l| format!(" {l:?}")).unwrap_or_default();
    format!("{what} key {} ({}{label}); the store has {} key(s)\n", r.key.id, r.key.kind, r.keys)
}

fn human_list(list: &KeyListResult) -> String {
    let rows: Vec<Vec<String>> = list
        .keys
        .iter()
        .map(|k| {
            vec![
                if k.current { "*".into() } else { String::new() },
                k.id.clone(),
                k.kind.clone(),
                k.label.clone().unwrap_or_default(),
                k.created.clone(),
            ]
        })
        .collect();
    format::table(&["", "ID", "KIND", "LABEL", "CREATED"], &rows)
}
