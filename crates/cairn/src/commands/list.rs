//! `cairn list [TARGET]`.

use cairn_lib::ops::list::{ListOptions, SnapshotList};
use clap::Args;

use crate::commands::GlobalArgs;
use crate::context::{open_store, session_choice};
use crate::error::CommandResult;
use crate::format;
use crate::printer::Printer;

/// Arguments of `cairn list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Only snapshots of this target.
    target: Option<String>,
    /// `desc` (newest first) or `asc`.
    #[arg(long, default_value = "desc")]
    sort: String,
    /// Also list the safety snapshots restores take of the live state.
    #[arg(long)]
    include_safety_snapshots: bool,
    /// The session to list (name or id).
    #[arg(long)]
    session: Option<String>,
}

pub fn run(global: &GlobalArgs, args: ListArgs, printer: &Printer) -> CommandResult {
    let store = open_store(global)?;
    let list = store.list(&ListOptions {
        target: args.target,
        include_safety_snapshots: args.include_safety_snapshots,
        sort: Some(args.sort),
        session: session_choice(args.session.as_deref()),
    })?;
    printer.result(&list, human);
    Ok(())
}

fn human(list: &SnapshotList) -> String {
    if list.snapshots.is_empty() {
        return "no snapshots\n".into();
    }
    let rows: Vec<Vec<String>> = list
        .snapshots
        .iter()
        .map(|s| {
            vec![
                s.id.to_string(),
                s.name.clone().unwrap_or_default() + if s.safety { "(safety)" } else { "" },
                s.created_at.chars().take(19).collect::<String>().replace('T', " "),
                s.stats.files.to_string(),
                format::bytes(s.stats.bytes),
                s.target.clone(),
            ]
        })
        .collect();
    format::table(&["ID", "NAME", "CREATED (UTC)", "FILES", "SIZE", "TARGET"], &rows)
}
