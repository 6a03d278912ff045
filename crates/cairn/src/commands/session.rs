//! `cairn session …`.

use cairn_lib::Session;
use cairn_lib::ops::session::SessionList;
use clap::Subcommand;

use crate::commands::GlobalArgs;
use crate::context::{open_store, session_choice};
use crate::error::CommandResult;
use crate::format;
use crate::printer::Printer;

/// The session commands.
#[derive(Debug, Subcommand)]
pub enum SessionCommand {
    /// List sessions.
    List {
        /// Sessions are always complete (a fork is one transaction); accepted for arcave parity.
        #[arg(long)]
        all: bool,
        /// `desc` (newest first) or `asc`.
        #[arg(long, default_value = "desc")]
        sort: String,
    },
    /// Create a session, empty or forked from another (records only: no data is copied).
    Create {
        /// Its name (default: made from the time).
        name: Option<String>,
        /// The session to fork (name or id).
        #[arg(long)]
        from: Option<String>,
    },
    /// Delete a session and its snapshot records (`cairn gc` reclaims the data).
    Delete {
        /// The session (name or id).
        session: String,
        /// Also delete the current session (clearing the pointer).
        #[arg(long)]
        force: bool,
    },
    /// Show the session commands work in when given no --session.
    Current,
    /// Make a session the current one.
    Set {
        /// The session (name or id).
        session: String,
    },
    /// Clear the current session, so commands work in baseline.
    Unset,
}

pub fn run(global: &GlobalArgs, cmd: SessionCommand, printer: &Printer) -> CommandResult {
    let store = open_store(global)?;
    let choice = session_choice(None);
    match cmd {
        SessionCommand::List { all: _, sort } => {
            let list = store.session_list(Some(&sort), &choice)?;
            printer.result(&list, human_list);
        }
        SessionCommand::Create { name, from } => {
            let s = store.session_create(name.as_deref(), from.as_deref(), &choice)?;
            printer.result(&s, |s| format!("created session {} ({})\n", s.name, s.id));
        }
        SessionCommand::Delete { session, force } => {
            let d = store.session_delete(&session, force, &choice)?;
            printer.result(&d, |d| {
                format!(
                    "deleted session {}; run `cairn gc` to reclaim up to {}\n",
                    d.session,
                    format::bytes(d.freed_bytes)
                )
            });
        }
        SessionCommand::Current => {
            let s = store.session_current(&choice)?;
            printer.result(&s, human_one);
        }
        SessionCommand::Set { session } => {
            let s = store.session_set(&session, &choice)?;
            printer.result(&s, |s| format!("current session: {} ({})\n", s.name, s.id));
        }
        SessionCommand::Unset => {
            let s = store.session_unset(&choice)?;
            printer.result(&s, |s| format!("current session: {} ({})\n", s.name, s.id));
        }
    }
    Ok(())
}

fn human_one(s: &Session) -> String {
    format!("{} ({}): {} snapshot(s), {}\n", s.name, s.id, s.snapshot_count, format::bytes(s.size_bytes))
}

fn human_list(list: &SessionList) -> String {
    let rows: Vec<Vec<String>> = list
        .sessions
        .iter()
        .map(|s| {
            vec![
                if s.current { "*".into() } else { String::new() },
                s.name.clone(),
                s.id.to_string(),
                s.snapshot_count.to_string(),
                format::bytes(s.size_bytes),
                s.from.as_ref().map(|f| f.session.to_string()).unwrap_or_default(),
            ]
        })
        .collect();
    format::table(&["", "NAME", "ID", "SNAPSHOTS", "SIZE", "FROM"], &rows)
}
