//! `cairn config get|set|unset`.

use cairn_lib::Setting;
use clap::Subcommand;

use crate::commands::GlobalArgs;
use crate::context::open_store;
use crate::error::CommandResult;
use crate::printer::Printer;

/// The config commands.
#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// Show one setting, or all of them.
    Get {
        /// The key (e.g. keep.recent); all settings when omitted.
        key: Option<String>,
    },
    /// Change a setting (validated: an invalid value is refused with the accepted values).
    Set {
        /// The key.
        key: String,
        /// The value.
        value: String,
    },
    /// Return a setting to its default.
    Unset {
        /// The key.
        key: String,
    },
}

#[derive(serde::Serialize)]
struct Settings {
    settings: Vec<Setting>,
}

pub fn run(global: &GlobalArgs, cmd: ConfigCommand, printer: &Printer) -> CommandResult {
    let mut store = match (open_store(global), &cmd) {
        (Ok(store), _) => store,
        // With no store yet, `config get` shows the defaults a new store starts with, and
        // leaves no store behind (a reader never makes one).
        (Err(err), ConfigCommand::Get { key }) if err.code() == Some(cairn_lib::NO_STORE) => {
            let config = cairn_lib::Config::default();
            let mut settings = config.all();
            if let Some(key) = key {
                config.get(key)?;
                settings.retain(|s| &s.key == key);
            }
            printer.result(&Settings { settings }, human);
            return Ok(());
        }
        (Err(err), _) => return Err(err),
    };
    match cmd {
        ConfigCommand::Get { key } => {
            let mut settings = store.config().all();
            if let Some(key) = key {
                store.config().get(&key)?;
                settings.retain(|s| s.key == key);
            }
            printer.result(&Settings { settings }, human);
        }
        ConfigCommand::Set { key, value } => {
            let mut config = store.config().clone();
            config.set(&key, &value)?;
            store.save_config(config)?;
            let settings = store.config().all().into_iter().filter(|s| s.key == key).collect();
            printer.result(&Settings { settings }, human);
        }
        ConfigCommand::Unset { key } => {
            let mut config = store.config().clone();
            config.unset(&key)?;
            store.save_config(config)?;
            let settings = store.config().all().into_iter().filter(|s| s.key == key).collect();
            printer.result(&Settings { settings }, human);
        }
    }
    Ok(())
}

/// One line per setting, the same after get, set and unset: `key = value`, `(unset)` for an
/// empty value, and `(default)` when the store does not set it.
fn human(s: &Settings) -> String {
    s.settings
        .iter()
        .map(|s| {
            format!(
                "{} = {}{}\n",
                s.key,
                if s.value.is_empty() { "(unset)" } else { &s.value },
                if s.set { "" } else { "  (default)" }
            )
        })
        .collect()
}
