//! `cairn rewind [TURN|MOMENT] [--code|--conversation] [--exact|--undo] [--force] [-- PATH…]`: go back to an agent turn of the
//! current directory. With no argument it lists the turns, or on a terminal asks which one.

use std::io::{BufRead, IsTerminal, Write};

use cairn_lib::ops::moment::{MomentRestoreResult, RewindList, RewindListOptions, RewindOptions};
use clap::Args;

use crate::commands::GlobalArgs;
use crate::context::{call_context, open_store};
use crate::error::CommandResult;
use crate::format;
use crate::printer::Printer;

/// Arguments of `cairn rewind`: the library's options, as they are.
#[derive(Debug, Args)]
pub struct RewindArgs {
    #[command(flatten)]
    options: RewindOptions,
}

pub fn run(global: &GlobalArgs, args: RewindArgs, printer: &Printer) -> CommandResult {
    let store = open_store(global)?;
    let context = call_context();
    let places = super::moment::transcript_places()?;
    let RewindArgs { mut options } = args;
    options.workspace = places.cwd.clone();
    options.paths = super::restore::paths_from_here(std::mem::take(&mut options.paths));
    options.places = places;
    if options.turn.is_none() {
        let list = store.rewind_list(
            &RewindListOptions { workspace: options.workspace.clone(), session: options.session.clone() },
            &context,
        )?;
        let interactive = !global.json && std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
        match (interactive && !list.turns.is_empty()).then(|| pick(&list)).transpose()? {
            Some(Some(turn)) => options.turn = Some(turn),
            Some(None) => return Ok(()),
            None => {
                printer.result(&list, human_list);
                return Ok(());
            }
        }
    }
    let result = store.rewind(&options, &context)?;
    let dry_run = options.dry_run;
    printer.result(&result, |r| human_rewind(r, dry_run));
    Ok(())
}

/// What a rewind did (or, as a dry run, would do).
fn human_rewind(r: &MomentRestoreResult, dry_run: bool) -> String {
    let mut out = if dry_run {
        format!("would rewind to {}\n", super::moment::moment_line(&r.moment))
    } else {
        format!("rewound to {}\n", super::moment::moment_line(&r.moment))
    };
    for p in &r.parts {
        if p.kind == "dir" {
            if dry_run {
                let count = match p.plan.len() {
                    0 => "nothing to put back".to_owned(),
                    1 => "1 change".to_owned(),
                    n => format!("{n} changes"),
                };
                out.push_str(&format!("  files of {}: {count}\n", format::path(&p.target)));
                for entry in &p.plan {
                    out.push_str(&format!("    {:<8} {}\n", entry.action, format::text(&entry.path)));
                }
            } else {
                out.push_str(&format!(
                    "  files of {} put back{}\n",
                    format::path(&p.target),
                    p.safety_snapshot
                        .as_deref()
                        .map(|s| format!(" (safety snapshot {s})"))
                        .unwrap_or_default()
                ));
            }
            for held in &p.held {
                let why = match (held.action.as_str(), dry_run) {
                    ("keep", _) => "kept: changed since by someone other than the agent",
                    ("merge", false) => "merged: your changes kept, the agent's taken back",
                    ("merge", true) => "would be merged: your changes kept, the agent's taken back",
                    (_, false) => "conflict: both changed it; resolve the marked lines",
                    (_, true) => "would conflict: both changed it",
                };
                out.push_str(&format!("    {} ({why})\n", format::text(&held.path)));
            }
            continue;
        }
        if let Some(note) = &p.note {
            out.push_str(&format!("  conversation: {note}\n"));
            continue;
        }
        let file = p.file.as_ref().map(|f| f.display().to_string()).unwrap_or_default();
        out.push_str(&format!("  conversation forked before that prompt: {}\n", format::text(&file)));
        if let Some(cmd) = &p.resume_command {
            out.push_str(&format!("  resume it with: {cmd}\n"));
        }
    }
    for note in &r.notes {
        out.push_str(&format!("  conversation: {note}\n"));
    }
    out
}

fn human_list(list: &RewindList) -> String {
    if list.turns.is_empty() {
        return format!(
            "no agent turns recorded for {}; run `cairn hooks install claude-code` (or gemini-cli) to checkpoint each turn\n",
            format::path(&list.workspace)
        );
    }
    let session_label = |agent_session: &str| {
        let s = list.sessions.iter().find(|s| s.agent_session == agent_session);
        let short: String = agent_session.chars().take(8).collect();
        match s {
            Some(s) => format!("{} {short}{}", s.agent, if s.current { " (current)" } else { "" }),
            None => short,
        }
    };
    let rows: Vec<Vec<String>> = list
        .turns
        .iter()
        .map(|t| {
            let number = if t.exact { t.number.to_string() } else { format!("{} (late)", t.number) };
            vec![
                session_label(&t.agent_session),
                number,
                format::created(&t.created_at),
                t.files_changed_since.to_string(),
                if t.conversation { "yes" } else { "no" }.to_owned(),
                format::text(&t.prompt).into_owned(),
                t.moment.to_string(),
            ]
        })
        .collect();
    let mut out = format::table(
        &["SESSION", "TURN", "TIME", "CHANGED SINCE", "CONVERSATION", "PROMPT", "MOMENT"],
        &rows,
    );
    if list.sessions.len() > 1 {
        out.push_str(
            "a turn number means the current session; reach another session's turn by its moment id\n",
        );
    }
    out
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
