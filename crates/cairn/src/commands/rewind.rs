//! `cairn rewind [TURN|MOMENT] [--code|--conversation]`: go back to an agent turn of the
//! current directory. With no argument it lists the turns, or on a terminal asks which one.

use std::io::{BufRead, IsTerminal, Write};

use cairn_lib::ops::moment::{RewindList, RewindListOptions, RewindOptions};
use clap::Args;

use crate::commands::GlobalArgs;
use crate::context::{call_context, open_store};
use crate::error::CommandResult;
use crate::format;
use crate::printer::Printer;

/// Arguments of `cairn rewind`.
#[derive(Debug, Args)]
pub struct RewindArgs {
    /// The turn (its number in the newest agent session) or a moment; omit it to list the turns.
    turn: Option<String>,
    /// Put back the files only.
    #[arg(long, conflicts_with = "conversation")]
    code: bool,
    /// Put back the conversation only.
    #[arg(long)]
    conversation: bool,
    /// The session (name or id).
    #[arg(long)]
    session: Option<String>,
}

pub fn run(global: &GlobalArgs, args: RewindArgs, printer: &Printer) -> CommandResult {
    let store = open_store(global)?;
    let context = call_context();
    let places = super::moment::transcript_places()?;
    let workspace = places.cwd.clone();
    let turn = match args.turn {
        Some(turn) => turn,
        None => {
            let list = store.rewind_list(
                &RewindListOptions { workspace: workspace.clone(), session: args.session.clone() },
                &context,
            )?;
            let interactive =
                !global.json && std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
            match (interactive && !list.turns.is_empty()).then(|| pick(&list)).transpose()? {
                Some(Some(turn)) => turn,
                Some(None) => return Ok(()),
                None => {
                    printer.result(&list, human_list);
                    return Ok(());
                }
            }
        }
    };
    let options = RewindOptions {
        turn,
        code: args.code,
        conversation: args.conversation,
        workspace,
        session: args.session,
        places,
    };
    let result = store.rewind(&options, &context)?;
    printer.result(&result, |r| {
        let mut out = format!("rewound to {}\n", super::moment::moment_line(&r.moment));
        for p in &r.parts {
            match p.kind.as_str() {
                "dir" => out.push_str(&format!(
                    "  files of {} put back{}\n",
                    format::path(&p.target),
                    p.safety_snapshot
                        .as_deref()
                        .map(|s| format!(" (safety snapshot {s})"))
                        .unwrap_or_default()
                )),
                _ => {
                    let file = p.file.as_ref().map(|f| f.display().to_string()).unwrap_or_default();
                    out.push_str(&format!("  conversation forked before that prompt: {file}\n"));
                    if let Some(cmd) = &p.resume_command {
                        out.push_str(&format!("  resume it with: {cmd}\n"));
                    }
                }
            }
        }
        out
    });
    Ok(())
}

fn human_list(list: &RewindList) -> String {
    if list.turns.is_empty() {
        return format!("no agent turns recorded for {}\n", format::path(&list.workspace));
    }
    let rows: Vec<Vec<String>> = list
        .turns
        .iter()
        .map(|t| {
            vec![
                t.number.to_string(),
                format::created(&t.created_at),
                t.files_changed_since.to_string(),
                if t.conversation { "yes" } else { "no" }.to_owned(),
                format::text(&t.prompt).into_owned(),
            ]
        })
        .collect();
    format::table(&["TURN", "TIME", "CHANGED SINCE", "CONVERSATION", "PROMPT"], &rows)
}

/// Asks on stderr which turn to go back to; `None` when the answer is empty.
fn pick(list: &RewindList) -> CommandResult<Option<String>> {
    let mut err = std::io::stderr().lock();
    let _ = write!(err, "{}", human_list(list));
    let _ = write!(err, "rewind to which turn (empty to cancel)? ");
    let _ = err.flush();
    let mut line = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut line)
        .map_err(|e| crate::error::usage(format!("cannot read the answer: {e}")))?;
    let line = line.trim();
    Ok((!line.is_empty()).then(|| line.to_owned()))
}
