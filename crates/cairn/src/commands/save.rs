//! `cairn save [TARGET]`.

use cairn_lib::ops::save::Progress;
use cairn_lib::ops::save::{SaveOptions, SaveResult};
use clap::Args;

use crate::commands::GlobalArgs;
use crate::context::{call_context, open_store};
use crate::error::CommandResult;
use crate::format;
use crate::printer::Printer;

/// Arguments of `cairn save`: the engine's options.
#[derive(Debug, Args)]
pub struct SaveArgs {
    #[command(flatten)]
    options: SaveOptions,
}

pub fn run(global: &GlobalArgs, args: SaveArgs, printer: &Printer) -> CommandResult {
    if !args.options.targets.is_empty() {
        return super::moment::save_many(global, moment_options(args), printer);
    }
    let store = open_store(global)?;
    let progress = Progress::default();
    let result = printer.with_counts("saving", Some(&progress), || {
        store.save_with_progress(&args.options, &call_context(), &progress)
    })?;
    printer.result(&result, human);
    Ok(())
}

/// Several targets: one moment.
fn moment_options(args: SaveArgs) -> cairn_lib::ops::moment::MomentSaveOptions {
    let o = args.options;
    cairn_lib::ops::moment::MomentSaveOptions {
        targets: std::iter::once(o.target).chain(o.targets).collect(),
        name: o.name,
        description: o.description,
        no_ignore: o.no_ignore,
        include_secrets: o.include_secrets,
        session: o.session,
        places: Default::default(),
    }
}

fn human(r: &SaveResult) -> String {
    let s = &r.snapshot;
    let mut out = format!("saved {} of {}\n", format::label(s), s.target) + &format::capture_stats(s, true);
    out.push_str(&format::not_covered(&s.not_covered));
    for removed in &r.removed_by_policy {
        out.push_str(&format!("removed by the keep policy: {}\n", format::label(removed)));
    }
    out
}
