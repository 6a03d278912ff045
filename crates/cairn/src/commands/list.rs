//! `cairn list [TARGET]`.

use cairn_lib::ops::list::{ListOptions, SnapshotList};
use clap::Args;

use crate::commands::GlobalArgs;
use crate::context::{call_context, open_store};
use crate::error::CommandResult;
use crate::format;
use crate::printer::Printer;

/// Arguments of `cairn list`: the engine's options.
#[derive(Debug, Args)]
pub struct ListArgs {
    #[command(flatten)]
    options: ListOptions,
}

pub fn run(global: &GlobalArgs, args: ListArgs, printer: &Printer) -> CommandResult {
    let store = open_store(global)?;
    let context = call_context();
    let list = store.list(&args.options, &context)?;
    // Short ids must be unique among every snapshot a prefix is resolved among: all targets of
    // the session, safety snapshots too. `--json` has full ids and needs none of this.
    let id_len = if global.json {
        0
    } else {
        let every = ListOptions {
            include_safety_snapshots: true,
            session: args.options.session.clone(),
            ..ListOptions::default()
        };
        let all = store.list(&every, &context)?;
        let ids = |l: &SnapshotList| l.snapshots.iter().map(|s| s.id.to_string()).collect::<Vec<_>>();
        format::short_id_len(&ids(&list), &ids(&all))
    };
    printer.result(&list, |list| human(list, id_len));
    Ok(())
}

fn human(list: &SnapshotList, id_len: usize) -> String {
    if list.snapshots.is_empty() {
        return "no snapshots\n".into();
    }
    let rows: Vec<Vec<String>> = list
        .snapshots
        .iter()
        .map(|s| {
            vec![
                format::short_id(&s.id.to_string(), id_len),
                format::path(s.name.as_deref().unwrap_or_default()).into_owned()
                    + if s.safety { "(safety)" } else { "" },
                format::created(&s.created_at),
                s.stats.files.to_string(),
                format::bytes(s.stats.bytes),
                format::path(&s.target).into_owned(),
            ]
        })
        .collect();
    format::table(&["ID", "NAME", "CREATED (UTC)", "FILES", "SIZE", "TARGET"], &rows)
}
