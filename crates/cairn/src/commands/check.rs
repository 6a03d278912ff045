//! `cairn check`.

use cairn_lib::ops::check::{CheckOptions, CheckResult};

use crate::commands::GlobalArgs;
use crate::context::open_store;
use crate::error::{CommandError, CommandResult};
use crate::format;
use crate::printer::Printer;

/// Arguments of `cairn check`: the engine's options as they are.
pub type CheckArgs = CheckOptions;

pub fn run(global: &GlobalArgs, args: CheckArgs, printer: &Printer) -> CommandResult {
    // A catalog too damaged to open is what check is for: report it as its finding.
    let result =
        match open_store(global).and_then(|store| printer.with_progress("checking", || store.check(&args))) {
            Ok(result) => result,
            Err(e) if e.code() == Some("catalog_damaged") => {
                CheckResult { problems: vec![crate::error::render(&e)], ..CheckResult::default() }
            }
            Err(e) => return Err(e),
        };
    printer.result(&result, human);
    if result.problems.is_empty() {
        Ok(())
    } else {
        Err(CommandError::corrupt(format!("the store has {} problem(s); see above", result.problems.len())))
    }
}

fn human(r: &CheckResult) -> String {
    let mut out = format!(
        "{} snapshot(s), {} object(s) referenced, {} read back\n",
        r.snapshots, r.objects, r.objects_read
    );
    for p in &r.problems {
        out.push_str(&format!("problem: {}\n", format::text(p)));
    }
    if r.problems.is_empty() {
        out.push_str("no problems found\n");
    }
    out
}
