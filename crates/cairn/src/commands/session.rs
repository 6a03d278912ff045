//! `cairn session …`.

use cairn_lib::Session;
use cairn_lib::ops::session::{
    SessionCreateOptions, SessionDeleteOptions, SessionList, SessionListOptions, SessionSetOptions,
};
use clap::Subcommand;

use crate::commands::GlobalArgs;
use crate::context::{call_context, open_store};
use crate::error::CommandResult;
use crate::format;
use crate::printer::Printer;

/// The session commands.
#[derive(Debug, Subcommand)]
pub enum SessionCommand {
    /// List sessions.
    List(SessionListOptions),
    /// Create a session, empty or forked from another (records only: no data is copied).
    Create(SessionCreateOptions),
    /// Delete a session and its snapshot records (`cairn gc` reclaims the data).
    Delete(SessionDeleteOptions),
    /// Show the session commands work in when given no --session.
    Current,
    /// Make a session the current one.
    Set(SessionSetOptions),
    /// Clear the current session, so commands work in baseline.
    Unset,
}

pub fn run(global: &GlobalArgs, cmd: SessionCommand, printer: &Printer) -> CommandResult {
    let store = open_store(global)?;
    let context = call_context();
    match cmd {
        SessionCommand::List(options) => {
            let list = store.session_list(&options, &context)?;
            printer.result(&list, human_list);
        }
        SessionCommand::Create(options) => {
            let s = store.session_create(&options, &context)?;
            printer.result(&s, |s| format!("created session {} ({})\n", s.name, s.id));
        }
        SessionCommand::Delete(options) => {
            let d = store.session_delete(&options, &context)?;
            printer.result(&d, |d| {
                format!(
                    "deleted session {}; run `cairn gc` to reclaim up to {}\n",
                    d.session,
                    format::bytes(d.freed_bytes)
                )
            });
        }
        SessionCommand::Current => {
            let s = store.session_current(&context)?;
            printer.result(&s, human_one);
        }
        SessionCommand::Set(options) => {
            let s = store.session_set(&options, &context)?;
            printer.result(&s, |s| format!("current session: {} ({})\n", s.name, s.id));
        }
        SessionCommand::Unset => {
            let s = store.session_unset(&context)?;
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
                // The parent by name, as the user named it on `session create --from`.
                s.from
                    .as_ref()
                    .map(|f| {
                        let parent = list.sessions.iter().find(|p| p.id == f.session);
                        parent.map(|p| p.name.clone()).unwrap_or_else(|| f.session.to_string())
                    })
                    .unwrap_or_default(),
            ]
        })
        .collect();
    format::table(&["", "NAME", "ID", "SNAPSHOTS", "SIZE", "FROM"], &rows)
}
