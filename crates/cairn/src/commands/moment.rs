//! `cairn moment save|list|show|diff|restore|remove`: moments, one snapshot per target taken
//! together. `cairn save A B …` and `cairn restore MOMENT` print with [`human_save`] and
//! [`human_restore`]; `cairn diff MOMENT MOMENT` comes here too (see [`diff_if_moments`]).

use cairn_lib::Repository;
use cairn_lib::ops::list::ShowOptions;
use cairn_lib::ops::moment::{
    ComposeDiff, Moment, MomentDiffOptions, MomentDiffResult, MomentList, MomentListOptions,
    MomentRemoveOptions, MomentRemoveResult, MomentRestoreOptions, MomentRestoreResult, MomentSaveOptions,
    MomentSaveResult, MomentShowOptions, MomentView,
};
use cairn_lib::ops::remove::RemoveOptions;
use cairn_lib::ops::transcript::AgentPlaces;
use clap::Subcommand;

use crate::commands::GlobalArgs;
use crate::context::{call_context, open_store};
use crate::error::CommandResult;
use crate::format;
use crate::printer::Printer;

/// The moment subcommands.
#[derive(Debug, Subcommand)]
pub enum MomentCommand {
    /// Save several targets together as one moment (`transcript:auto` is the newest agent
    /// session of the current directory).
    Save(MomentSaveOptions),
    /// List the moments of a session, oldest first.
    #[command(alias = "ls")]
    List(MomentListOptions),
    /// Show one moment and its parts.
    Show(MomentShowOptions),
    /// Compare two moments, every layer.
    Diff(MomentDiffOptions),
    /// Put every part of a moment back (or the kinds given with --only), all or nothing.
    Restore(MomentRestoreOptions),
    /// Remove moments and their parts' snapshots.
    #[command(alias = "rm")]
    Remove(MomentRemoveOptions),
}

/// Runs a moment command.
pub fn run(global: &GlobalArgs, cmd: MomentCommand, printer: &Printer) -> CommandResult {
    let store = open_store(global)?;
    let context = call_context();
    match cmd {
        MomentCommand::Save(options) => save_with(&store, options, printer)?,
        MomentCommand::List(options) => printer.result(&store.moment_list(&options, &context)?, human_list),
        MomentCommand::Show(options) => printer.result(&store.moment_show(&options, &context)?, human_show),
        MomentCommand::Diff(options) => {
            let patch = options.patch;
            printer.result(&store.moment_diff(&options, &context)?, |r| human_diff(r, patch));
        }
        MomentCommand::Restore(mut options) => {
            options.places = transcript_places()?;
            printer.result(&store.moment_restore(&options, &context)?, human_restore);
        }
        MomentCommand::Remove(options) => {
            printer.result(&store.moment_remove(&options, &context)?, human_remove)
        }
    }
    Ok(())
}

fn save_with(store: &Repository, mut options: MomentSaveOptions, printer: &Printer) -> CommandResult {
    if options.targets.iter().any(|t| t == "transcript:auto") {
        options.places = transcript_places()?;
    }
    let result = printer.with_progress("saving", || store.moment_save(&options, &call_context()))?;
    printer.result(&result, human_save);
    Ok(())
}

/// `cairn show REF`: when REF names a moment (and no target narrows it to one of its
/// parts), shows the moment and returns true.
pub fn show_if_moment(store: &Repository, options: &ShowOptions, printer: &Printer) -> CommandResult<bool> {
    if options.target.is_some() {
        return Ok(false);
    }
    let context = call_context();
    let session = store.resolve_session(&context.choice(options.session.clone()))?;
    if store.moment_for_snapshot_ref(&session, &options.reference)?.is_none() {
        return Ok(false);
    }
    let show = MomentShowOptions { reference: options.reference.clone(), session: options.session.clone() };
    printer.result(&store.moment_show(&show, &context)?, human_show);
    Ok(true)
}

/// `cairn remove REF…`: when every REF names a moment (and no target or retention rule is
/// given), removes the moments, parts and all, and returns true.
pub fn remove_if_moments(
    store: &Repository,
    options: &RemoveOptions,
    printer: &Printer,
) -> CommandResult<bool> {
    let rules =
        options.retain_recent.is_some() || options.retain_for.is_some() || options.before_date.is_some();
    if options.refs.is_empty() || options.target.is_some() || rules {
        return Ok(false);
    }
    let context = call_context();
    let session = store.resolve_session(&context.choice(options.session.clone()))?;
    for reference in &options.refs {
        if store.moment_for_snapshot_ref(&session, reference)?.is_none() {
            return Ok(false);
        }
    }
    let remove = MomentRemoveOptions {
        refs: options.refs.clone(),
        dry_run: options.dry_run,
        session: options.session.clone(),
        ..MomentRemoveOptions::default()
    };
    printer.result(&store.moment_remove(&remove, &context)?, human_remove);
    Ok(true)
}

/// `cairn diff A B`: when both name moments, compares them layer by layer and returns true.
pub fn diff_if_moments(
    store: &Repository,
    from: &str,
    to: Option<&str>,
    session: Option<&str>,
    patch: bool,
    printer: &Printer,
) -> CommandResult<bool> {
    let Some(to) = to else { return Ok(false) };
    let context = call_context();
    let resolved = store.resolve_session(&context.choice(session.map(str::to_owned)))?;
    if store.moment_for_snapshot_ref(&resolved, from)?.is_none()
        || store.moment_for_snapshot_ref(&resolved, to)?.is_none()
    {
        return Ok(false);
    }
    let options = MomentDiffOptions {
        from: from.to_owned(),
        to: to.to_owned(),
        patch,
        session: session.map(str::to_owned),
    };
    printer.result(&store.moment_diff(&options, &context)?, |r| human_diff(r, patch));
    Ok(true)
}

/// The agents' session directories and the current directory, as the agents find them (the
/// engine reads the agents' variables from the environment handed to it).
pub fn transcript_places() -> CommandResult<AgentPlaces> {
    let cwd = std::env::current_dir()
        .map_err(|e| crate::error::usage(format!("cannot read the current directory: {e}")))?;
    AgentPlaces::from_env(&crate::context::process_env(), cwd.to_string_lossy().into_owned())
}

/// One line naming a moment: id, name, label.
pub fn moment_line(m: &Moment) -> String {
    let mut out = m.id.to_string();
    if let Some(name) = &m.name {
        out.push_str(&format!(" ({name})"));
    }
    if let Some(d) = &m.description {
        out.push_str(&format!(": {d}"));
    }
    out
}

fn parts_lines(m: &Moment) -> String {
    m.parts
        .iter()
        .map(|p| format!("  {:<10} {}  {}\n", p.kind, p.snapshot, format::path(&p.target)))
        .collect()
}

pub fn human_save(r: &MomentSaveResult) -> String {
    let mut out = format!("saved moment {} with {} parts\n", moment_line(&r.moment), r.moment.parts.len());
    out.push_str(&parts_lines(&r.moment));
    for s in &r.snapshots {
        out.push_str(&format::not_covered(&s.not_covered));
    }
    for removed in &r.removed_by_policy {
        out.push_str(&format!("removed by the keep policy: {}\n", format::label(removed)));
    }
    out
}

fn human_list(r: &MomentList) -> String {
    if r.moments.is_empty() {
        return "no moments\n".to_owned();
    }
    let rows: Vec<Vec<String>> = r
        .moments
        .iter()
        .map(|m| {
            let kinds: Vec<&str> = m.parts.iter().map(|p| p.kind.as_str()).collect();
            vec![
                m.id.to_string(),
                format::created(&m.created_at),
                m.name.clone().unwrap_or_default(),
                kinds.join("+"),
                if m.auto { "auto" } else { "" }.to_owned(),
                m.description.clone().unwrap_or_default(),
            ]
        })
        .collect();
    format::table(&["ID", "CREATED", "NAME", "PARTS", "BY", "DESCRIPTION"], &rows)
}

fn human_show(r: &MomentView) -> String {
    let mut out =
        format!("moment {}\ncreated {}\n", moment_line(&r.moment), format::created(&r.moment.created_at));
    for s in &r.snapshots {
        out.push_str(&format!("  {:<10} {}  {}\n", s.kind, s.id, format::path(&s.target)));
        out.push_str(&format!("  {}", format::capture_stats(s, false)));
    }
    out
}

fn human_diff(r: &MomentDiffResult, patch: bool) -> String {
    let mut out = format!("from moment {}\n  to moment {}\n", moment_line(&r.from), moment_line(&r.to));
    for p in &r.parts {
        out.push_str(&format!("{} {}: {}\n", p.kind, format::path(&p.target), p.change));
        if let Some(c) = &p.compose {
            out.push_str(&human_compose_diff(c));
        }
        let Some(d) = &p.diff else { continue };
        if let Some(t) = &d.transcript {
            out.push_str(&format!("  {} entries added, {} dropped\n", t.added.len(), t.removed.len()));
            continue;
        }
        for e in &d.entries {
            out.push_str(&format!("  {:<8} {}\n", e.change.as_str(), format::path(&e.path)));
            if patch && let Some(text) = &e.patch {
                out.push_str(text);
            }
        }
    }
    out
}

fn human_compose_diff(c: &ComposeDiff) -> String {
    let mut out = String::new();
    for v in &c.volumes {
        out.push_str(&format!("  volume {} {}\n", v.source, v.change));
        for f in &v.files {
            out.push_str(&format!("    {:<8} {}\n", f.change.as_str(), format::path(&f.path)));
        }
    }
    for l in &c.layers {
        let (added, dropped) = (l.paths_added.len(), l.paths_dropped.len());
        out.push_str(&format!(
            "  layer of {} {}: {added} paths newly changed, {dropped} no longer\n",
            l.container, l.change
        ));
    }
    for i in &c.images_added {
        out.push_str(&format!("  image added {i}\n"));
    }
    for i in &c.images_removed {
        out.push_str(&format!("  image dropped {i}\n"));
    }
    for f in &c.spec_files_changed {
        out.push_str(&format!("  compose file changed {}\n", format::path(f)));
    }
    out
}

pub fn human_restore(r: &MomentRestoreResult) -> String {
    let mut out = format!("restored moment {}\n", moment_line(&r.moment));
    for p in &r.parts {
        match p.kind.as_str() {
            "transcript" => {
                let file = p.file.as_ref().map(|f| f.display().to_string()).unwrap_or_default();
                out.push_str(&format!("  conversation: new session {file}\n"));
                if let Some(cmd) = &p.resume_command {
                    out.push_str(&format!("  resume it with: {cmd}\n"));
                }
            }
            kind => {
                let safety = p
                    .safety_snapshot
                    .as_deref()
                    .map(|s| format!(" (safety snapshot {s})"))
                    .unwrap_or_default();
                out.push_str(&format!("  {kind} {}{safety}\n", format::path(&p.target)));
            }
        }
    }
    out
}

fn human_remove(r: &MomentRemoveResult) -> String {
    let verb = if r.dry_run { "would remove" } else { "removed" };
    if r.removed.is_empty() {
        return "no moment to remove\n".to_owned();
    }
    r.removed.iter().map(|m| format!("{verb} moment {}\n", moment_line(m))).collect()
}
