//! `cairn compose save|rollback|list`: savepoints of a running Docker Compose project.

use cairn_lib::ops::compose::{
    ComposeListOptions, ComposeRollbackOptions, ComposeRollbackResult, ComposeSaveOptions, ComposeSaveResult,
    ComposeSavepoint, ComposeSavepointList,
};
use clap::{Args, Subcommand};

use crate::commands::GlobalArgs;
use crate::context::{call_context, open_store};
use crate::error::CommandResult;
use crate::format;
use crate::printer::Printer;

/// The `compose` subcommands.
#[derive(Debug, Subcommand)]
pub enum ComposeCommand {
    /// Capture a running compose project: volumes, bind mounts, container layers, images, setup.
    Save(SaveArgs),
    /// Return a compose project to a savepoint (a safety snapshot of the live state is taken first).
    Rollback(RollbackArgs),
    /// List a project's savepoints, newest first.
    #[command(alias = "ls")]
    List(ListArgs),
}

/// Arguments of `cairn compose save`: the engine's options.
#[derive(Debug, Args)]
pub struct SaveArgs {
    #[command(flatten)]
    options: ComposeSaveOptions,
}

/// Arguments of `cairn compose rollback`: the engine's options.
#[derive(Debug, Args)]
pub struct RollbackArgs {
    #[command(flatten)]
    options: ComposeRollbackOptions,
}

/// Arguments of `cairn compose list`: the engine's options.
#[derive(Debug, Args)]
pub struct ListArgs {
    #[command(flatten)]
    options: ComposeListOptions,
}

pub fn run(global: &GlobalArgs, cmd: ComposeCommand, printer: &Printer) -> CommandResult {
    let store = open_store(global)?;
    let context = call_context();
    match cmd {
        ComposeCommand::Save(a) => {
            let result = printer.with_progress("saving", || store.compose_save(&a.options, &context))?;
            printer.result(&result, human_save);
        }
        ComposeCommand::Rollback(a) => {
            let result =
                printer.with_progress("rolling back", || store.compose_rollback(&a.options, &context))?;
            printer.result(&result, human_rollback);
        }
        ComposeCommand::List(a) => {
            let result = store.compose_list(&a.options, &context)?;
            // Short ids, unique among every snapshot of the session (as in `cairn list`).
            let id_len = if global.json {
                0
            } else {
                let every = cairn_lib::ops::list::ListOptions {
                    include_safety_snapshots: true,
                    session: a.options.session.clone(),
                    ..Default::default()
                };
                let all = store.list(&every, &context)?;
                let all: Vec<String> = all.snapshots.iter().map(|s| s.id.to_string()).collect();
                let shown: Vec<String> = result.savepoints.iter().map(|s| s.id.clone()).collect();
                format::short_id_len(&shown, &all)
            };
            printer.result(&result, |r| human_list(r, id_len));
        }
    }
    Ok(())
}

fn label(s: &ComposeSavepoint) -> String {
    match &s.name {
        Some(n) => format!("{} ({n})", s.id),
        None => s.id.clone(),
    }
}

fn human_save(r: &ComposeSaveResult) -> String {
    let s = &r.savepoint;
    let t = &s.totals;
    let mut out = format!(
        "saved {} of compose project {}\n  {} volume(s) and bind mount(s): {} files, {}; read {}, stored {} new in {}\n",
        label(s),
        s.project,
        s.stats.len(),
        t.files,
        format::bytes(t.bytes),
        format::bytes(t.read_bytes),
        format::bytes(t.new_bytes),
        format::millis(t.duration_ms),
    );
    for l in &s.writable_layers {
        out.push_str(&format!(
            "  layer of {}: {} change(s), {}\n",
            l.container_name,
            l.changes,
            format::bytes(l.bytes)
        ));
    }
    for i in &s.images {
        out.push_str(&format!(
            "  image {} {}{}\n",
            i.id,
            i.tags.join(", "),
            if i.stored { " (stored)" } else { "" }
        ));
    }
    let nc = &s.not_covered;
    for m in &nc.skipped_mounts {
        out.push_str(&format!("not covered: {} in {} ({})\n", m.source, m.container, m.reason));
    }
    for svc in &nc.services_without_volumes {
        out.push_str(&format!(
            "not covered: service {svc} has no volume (only its container layer is held)\n"
        ));
    }
    for c in &nc.killed_at_stop_deadline {
        out.push_str(&format!("not covered: {c} was killed at the stop deadline\n"));
    }
    for g in &nc.replica_gaps {
        out.push_str(&format!("not covered: service {} is missing replica(s) {:?}\n", g.service, g.missing));
    }
    for i in &nc.unresolvable_images {
        out.push_str(&format!("not covered: image {i} is gone from the engine\n"));
    }
    for e in &nc.skipped_entries {
        out.push_str(&format!("not covered: {} ({})\n", format::path(&e.path), e.reason));
    }
    for removed in &r.removed_by_policy {
        out.push_str(&format!("removed by the keep policy: {}\n", label(removed)));
    }
    out
}

fn human_rollback(r: &ComposeRollbackResult) -> String {
    let s = &r.rolled_back_to;
    let how = if r.recreated { "recreated from" } else { "rolled back to" };
    let mut out = format!("{} {how} {}\n", s.project, label(s));
    if let Some(safety) = &r.safety_snapshot {
        out.push_str(&format!("safety snapshot of the previous state: {safety}\n"));
    }
    for m in &r.restored {
        out.push_str(&format!(
            "  {:<8} {} ({} change(s), {} written)\n",
            m.action,
            m.object_id,
            m.changes,
            format::bytes(m.bytes_written)
        ));
    }
    for l in &r.writable_layers {
        out.push_str(&format!(
            "  layer    {} ({} reverted, {} deleted)\n",
            l.container_name,
            l.reverted.len(),
            l.deleted.len()
        ));
    }
    for n in &r.notes {
        out.push_str(&format!("  {n}\n"));
    }
    out
}

fn human_list(r: &ComposeSavepointList, id_len: usize) -> String {
    if r.savepoints.is_empty() {
        return "no savepoints\n".into();
    }
    let rows: Vec<Vec<String>> = r
        .savepoints
        .iter()
        .map(|s| {
            vec![
                format::short_id(&s.id, id_len),
                s.name.clone().unwrap_or_default(),
                format::created(&s.created_at),
                format::bytes(s.totals.bytes),
                if s.safety { "safety".into() } else { s.description.clone().unwrap_or_default() },
            ]
        })
        .collect();
    format::table(&["ID", "NAME", "CREATED (UTC)", "SIZE", "DESCRIPTION"], &rows)
}
