//! `cairn save [TARGET]`.

use cairn_lib::ops::save::Progress;
use cairn_lib::ops::save::{SaveOptions, SaveResult};
use clap::Args;

use crate::commands::GlobalArgs;
use crate::context::{open_store, session_choice};
use crate::error::CommandResult;
use crate::format;
use crate::printer::Printer;

/// Arguments of `cairn save`.
#[derive(Debug, Args)]
pub struct SaveArgs {
    /// What to capture: a directory (the default is the current one).
    #[arg(default_value = ".")]
    target: String,
    /// More targets: with several, they are saved together as one moment
    /// (`transcript:auto` is the newest agent session of the current directory).
    #[arg(value_name = "MORE")]
    more_targets: Vec<String>,
    /// A name to refer to the snapshot by (unique per session and target).
    #[arg(long, short)]
    name: Option<String>,
    /// What this snapshot is being taken before.
    #[arg(long, short)]
    description: Option<String>,
    /// Move an existing name to the new snapshot.
    #[arg(long, short)]
    force: bool,
    /// Capture paths that .gitignore and .cairnignore leave out.
    #[arg(long)]
    no_ignore: bool,
    /// The session to save into (name or id).
    #[arg(long)]
    session: Option<String>,
    /// Capture files that hold credentials (.env, private keys, access tokens) too.
    #[arg(long)]
    include_secrets: bool,
}

pub fn run(global: &GlobalArgs, args: SaveArgs, printer: &Printer) -> CommandResult {
    if !args.more_targets.is_empty() {
        return super::moment::save_many(global, moment_options(args), printer);
    }
    let store = open_store(global)?;
    let options = SaveOptions {
        target: args.target,
        name: args.name,
        description: args.description,
        force: args.force,
        no_ignore: args.no_ignore,
        session: session_choice(args.session.as_deref()),
        include_secrets: args.include_secrets,
    };
    let progress = Progress::default();
    let result =
        printer.with_counts("saving", Some(&progress), || store.save_with_progress(&options, &progress))?;
    printer.result(&result, human);
    Ok(())
}

/// Several targets: one moment.
fn moment_options(args: SaveArgs) -> cairn_lib::ops::moment::MomentSaveOptions {
    cairn_lib::ops::moment::MomentSaveOptions {
        targets: std::iter::once(args.target).chain(args.more_targets).collect(),
        name: args.name,
        description: args.description,
        no_ignore: args.no_ignore,
        include_secrets: args.include_secrets,
        session: args.session,
        places: Default::default(),
    }
}

fn human(r: &SaveResult) -> String {
    let s = &r.snapshot;
    let recovered = r.interrupted_restore.as_ref().map(format::recovered).unwrap_or_default();
    let mut out = recovered
        + &format!("saved {} of {}\n", format::label(s), s.target)
        + &format::capture_stats(s, true);
    out.push_str(&format::not_covered(&s.not_covered));
    for removed in &r.removed_by_policy {
        out.push_str(&format!("removed by the keep policy: {}\n", format::label(removed)));
    }
    out
}
