//! `cairn diff A [B]`.

use cairn_lib::ops::diff::{ChangeKind, DiffEntry, DiffOptions, DiffResult};
use clap::Args;

use crate::commands::GlobalArgs;
use crate::context::{call_context, open_store};
use crate::error::CommandResult;
use crate::format;
use crate::printer::Printer;

/// Arguments of `cairn diff`: the engine's options.
#[derive(Debug, Args)]
pub struct DiffArgs {
    #[command(flatten)]
    options: DiffOptions,
}

pub fn run(global: &GlobalArgs, args: DiffArgs, printer: &Printer) -> CommandResult {
    let store = open_store(global)?;
    if args.options.target.is_none()
        && super::moment::diff_if_moments(
            &store,
            &args.options.from,
            args.options.to.as_deref(),
            args.options.session.as_deref(),
            args.options.patch,
            printer,
        )?
    {
        return Ok(());
    }
    let (patch, stat) = (args.options.patch, args.options.stat);
    let result = store.diff(&args.options, &call_context())?;
    printer.result(&result, |r| human(r, patch, stat));
    Ok(())
}

/// The right-hand column of `--stat`: line counts for text, and for everything else what
/// changed instead (git's `Bin` only for binary files).
fn stat_column(e: &DiffEntry) -> String {
    let opt = |v: &Option<String>| v.as_deref().map_or("none".into(), |v| format::path(v).into_owned());
    let bytes = |v: Option<u64>| v.unwrap_or(0);
    if let (Some(a), Some(d)) = (e.lines_added, e.lines_removed) {
        return format!("{:>5} {}{}", a + d, "+".repeat(a.min(40) as usize), "-".repeat(d.min(40) as usize));
    }
    if e.binary {
        return format!("  Bin {} -> {} bytes", bytes(e.size_before), bytes(e.size_after));
    }
    if e.too_large {
        return format!(
            "  {} -> {} bytes, too large for a line count",
            bytes(e.size_before),
            bytes(e.size_after)
        );
    }
    let what = |w: &str| e.what.iter().any(|x| x == w);
    if e.change == ChangeKind::TypeChanged {
        return format!("  type changed to {}", e.kind);
    }
    if e.kind == "symlink" && (e.change != ChangeKind::Modified || what("link_target")) {
        return format!("  link {} -> {}", opt(&e.link_before), opt(&e.link_after));
    }
    if what("mode") {
        return format!("  mode {} -> {}", opt(&e.mode_before), opt(&e.mode_after));
    }
    format!("  {}", e.what.join(", "))
}

/// A patch as a terminal shows it: the path in its header lines escaped as the change's own
/// line has it, and control characters of the content escaped too, so a hostile file cannot
/// move the cursor or rewrite what was printed above it. Tabs and line ends (a CRLF file's
/// `\r` too) stay as they are.
fn terminal_patch(patch: &str, path: &str) -> String {
    let escaped = format::path(path);
    let mut patch = patch.to_owned();
    if escaped != path {
        for side in ["a/", "b/"] {
            patch = patch.replacen(&format!("{side}{path}"), &format!("{side}{escaped}"), 1);
        }
    }
    patch.split_inclusive('\n').map(content_line).collect()
}

/// One line of a patch with its control characters escaped but its tabs and line end kept.
fn content_line(line: &str) -> String {
    let end_at =
        line.strip_suffix('\n').map_or(line.len(), |body| body.strip_suffix('\r').unwrap_or(body).len());
    let (body, end) = line.split_at(end_at);
    let pieces: Vec<String> = body.split('\t').map(|piece| format::text(piece).into_owned()).collect();
    pieces.join("\t") + end
}

fn human(r: &DiffResult, patch: bool, stat: bool) -> String {
    let mut out = String::new();
    let to = r.to.as_ref().map(|s| s.id.to_string()).unwrap_or_else(|| "the live tree".into());
    out.push_str(&format!("diff {} → {} of {}\n", r.from.id, to, format::path(&r.target)));
    if let Some(transcript) = &r.transcript {
        out.push_str(&super::transcript::human_diff(transcript));
        return out;
    }
    let width = r.entries.iter().map(|e| format::path(&e.path).chars().count()).max().unwrap_or(0);
    for e in &r.entries {
        let mark = match e.change {
            ChangeKind::Added => "A",
            ChangeKind::Removed => "D",
            ChangeKind::TypeChanged => "T",
            ChangeKind::Modified => "M",
        };
        if stat {
            out.push_str(&format!(" {mark} {:<width$} | {}\n", format::path(&e.path), stat_column(e)));
        } else {
            let what = if e.change == ChangeKind::Modified {
                format!(" ({})", e.what.join(", "))
            } else {
                String::new()
            };
            out.push_str(&format!("{mark} {}{what}\n", format::path(&e.path)));
        }
        if let (true, Some(p)) = (patch, &e.patch) {
            out.push_str(&terminal_patch(p, &e.path));
        }
    }
    let s = &r.summary;
    out.push_str(&format!(
        "{} added, {} removed, {} modified, {} unchanged\n",
        s.added, s.removed, s.modified, s.unchanged
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_patch_line_keeps_its_tabs_and_line_end_and_escapes_the_rest() {
        assert_eq!(content_line("+a\x1b[2Jb\tc\r\n"), "+a\\033[2Jb\tc\r\n");
        assert_eq!(content_line("-over\rwritten"), "-over\\rwritten");
        let patch = "--- a/x\ny\n+++ b/x\ny\n@@ -1 +1 @@\n+\x07\n";
        assert_eq!(terminal_patch(patch, "x\ny"), "--- a/x\\ny\n+++ b/x\\ny\n@@ -1 +1 @@\n+\\a\n");
    }
}
