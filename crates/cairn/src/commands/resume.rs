//! `cairn resume TURN|MOMENT [--to DIR] [--project OLD_ROOT]`: hand an agent turn to this
//! machine: its files into a directory here, its Compose projects up, its conversation as a
//! session of this machine's agent for that directory; then the command that resumes it.

use cairn_lib::ops::resume::{ResumeOptions, ResumeResult};
use clap::Args;

use crate::commands::GlobalArgs;
use crate::context::{call_context, open_store};
use crate::error::CommandResult;
use crate::format;
use crate::printer::Printer;

/// Arguments of `cairn resume`: the library's options, as they are.
#[derive(Debug, Args)]
pub struct ResumeArgs {
    #[command(flatten)]
    options: ResumeOptions,
}

pub fn run(global: &GlobalArgs, args: ResumeArgs, printer: &Printer) -> CommandResult {
    let store = open_store(global)?;
    let places = super::moment::transcript_places()?;
    let ResumeArgs { mut options } = args;
    // A relative `--to` is taken from where the command runs.
    options.to = options.to.take().map(|to| std::path::Path::new(&places.cwd).join(to));
    options.workspace = places.cwd.clone();
    options.places = places;
    let result = store.resume(&options, &call_context())?;
    printer.result(&result, human);
    Ok(())
}

fn human(r: &ResumeResult) -> String {
    let mut out = format!("resumed {}\n", super::moment::moment_line(&r.moment));
    out.push_str(&format!(
        "  files of {} put in {} ({} written)\n",
        format::path(&r.from),
        format::path(&r.to),
        match r.files_written {
            1 => "1 file".to_owned(),
            n => format!("{n} files"),
        }
    ));
    for project in &r.compose {
        out.push_str(&format!("  compose project {} rolled back to its savepoint\n", format::text(project)));
    }
    if let Some(c) = &r.conversation {
        out.push_str(&format!(
            "  conversation written as a new {} session: {}\n",
            c.agent,
            format::path(&c.file.display().to_string())
        ));
        if let Some(cmd) = &c.resume_command {
            out.push_str(&format!("  resume it with: cd {} && {cmd}\n", format::path(&r.to)));
        }
    }
    for note in &r.notes {
        out.push_str(&format!("  note: {}\n", format::text(note)));
    }
    out
}
