//! `cairn watch [DIR…]`, `--status`, `--stop`: the change journal's watcher.

use std::time::{Duration, Instant};

use cairn_lib::Repository;
use cairn_lib::ops::watch::{Status, WatchOptions, WatchStart};
use clap::Args;
use serde::Serialize;

use crate::commands::GlobalArgs;
use crate::context::{open_store, store_path};
use crate::error::{CommandResult, usage};
use crate::format;
use crate::printer::Printer;

const NO_WATCHER: &str = "no watcher runs for this store\n";

/// Arguments of `cairn watch`.
#[derive(Debug, Args)]
pub struct WatchArgs {
    #[command(flatten)]
    options: WatchOptions,
    /// Show what the running watcher watches and what it costs.
    #[arg(long, conflicts_with_all = ["stop", "detach"])]
    status: bool,
    /// Stop the running watcher.
    #[arg(long, conflicts_with = "detach")]
    stop: bool,
    /// Run in the background, returning once the trees are watched.
    #[arg(long)]
    detach: bool,
}

/// The trees a watcher watches, as printed.
#[derive(Serialize)]
struct Watching {
    pid: u32,
    started: bool,
    dirs: Vec<WatchedDir>,
}

#[derive(Serialize)]
struct WatchedDir {
    path: std::path::PathBuf,
    dirs: u64,
}

#[derive(Serialize)]
struct StatusView {
    running: bool,
    #[serde(flatten)]
    status: Option<Status>,
}

impl WatchArgs {
    /// `--status` and `--stop` only ask a running watcher: they never create a store.
    pub fn asks_only(&self) -> bool {
        self.status || self.stop
    }
}

pub fn run(global: &GlobalArgs, args: WatchArgs, printer: &Printer) -> CommandResult {
    let store = match open_store(global) {
        Ok(store) => store,
        // No store, so no watcher for it.
        Err(e) if args.asks_only() && e.kind() == cairn_lib::ErrorKind::NotFound => {
            if args.stop {
                printer.result(&serde_json::json!({ "stopped": false }), |_| NO_WATCHER.to_owned());
            } else {
                printer.result(&StatusView { running: false, status: None }, human_status);
            }
            return Ok(());
        }
        Err(e) => return Err(e),
    };
    if args.status {
        let status = store.watch_status()?;
        printer.result(&StatusView { running: status.is_some(), status }, human_status);
        return Ok(());
    }
    if args.stop {
        let stopped = store.watch_stop()?;
        let line = if stopped { "stopped the watcher\n" } else { NO_WATCHER };
        printer.result(&serde_json::json!({ "stopped": stopped }), |_| line.to_owned());
        return Ok(());
    }
    let mut options = args.options;
    if options.dirs.is_empty() {
        options.dirs.push(".".into());
    }
    if args.detach {
        return detach(global, &store, &options, printer);
    }
    match store.watch_start(&options)? {
        WatchStart::Joined { pid, watching } => {
            printer.result(&view(pid, false, watching), human_watching);
            Ok(())
        }
        WatchStart::Started { watcher, watching } => {
            printer.result(&view(std::process::id(), true, watching), human_watching);
            Ok(watcher.run(store)?)
        }
    }
}

/// Starts `cairn watch` again as a process of its own and waits until it answers.
fn detach(
    global: &GlobalArgs,
    store: &Repository,
    options: &WatchOptions,
    printer: &Printer,
) -> CommandResult {
    let watching = start_detached(global, store, options)?;
    printer.result(&watching, human_watching);
    Ok(())
}

/// Makes sure a watcher covers `options.dirs`, starting one in the background if none runs
/// for the store (the agent hooks call this after a slow checkpoint).
pub fn ensure_detached(global: &GlobalArgs, store: &Repository, options: &WatchOptions) -> CommandResult {
    start_detached(global, store, options).map(drop)
}

fn start_detached(
    global: &GlobalArgs,
    store: &Repository,
    options: &WatchOptions,
) -> CommandResult<Watching> {
    if let Some(status) = store.watch_status()? {
        // One watcher per store: hand it the trees.
        return match store.watch_start(options)? {
            WatchStart::Joined { watching, .. } => Ok(view(status.pid, false, watching)),
            WatchStart::Started { .. } => Err(usage("the watcher stopped while being asked")),
        };
    }
    let exe = std::env::current_exe().map_err(|e| usage(format!("cannot find cairn's own binary: {e}")))?;
    let mut command = std::process::Command::new(exe);
    command.arg("--store").arg(store_path(global)?).arg("watch");
    command.args(&options.dirs);
    command
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let mut child = command.spawn().map_err(|e| usage(format!("cannot start the watcher: {e}")))?;
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        // Not answering yet is not an error until the deadline: it may still be setting up.
        if let Ok(Some(status)) = store.watch_status() {
            let watching = status.roots.iter().map(|r| (r.root.clone(), r.dirs)).collect();
            return Ok(view(status.pid, true, watching));
        }
        if let Ok(Some(exit)) = child.try_wait() {
            return Err(usage(format!("the watcher exited ({exit}); run `cairn watch` to see why")));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Err(usage("the watcher did not answer within 30 s"))
}

fn view(pid: u32, started: bool, watching: Vec<(std::path::PathBuf, u64)>) -> Watching {
    Watching {
        pid,
        started,
        dirs: watching.into_iter().map(|(path, dirs)| WatchedDir { path, dirs }).collect(),
    }
}

fn human_watching(w: &Watching) -> String {
    let mut out = String::new();
    for d in &w.dirs {
        out.push_str(&format!(
            "watching {} ({} directories)\n",
            format::path(&d.path.display().to_string()),
            d.dirs
        ));
    }
    if w.started {
        // `--detach` leaves no terminal to press Ctrl-C in: the one way that always works.
        out.push_str(&format!("watcher pid {}: stop it with `cairn watch --stop`\n", w.pid));
    } else {
        out.push_str(&format!("handed to the running watcher (pid {})\n", w.pid));
    }
    out
}

fn human_status(v: &StatusView) -> String {
    let Some(s) = &v.status else { return NO_WATCHER.to_owned() };
    let limit = |n: Option<u64>| n.map_or("unknown".to_owned(), |n| n.to_string());
    let mut out = format!(
        "watcher pid {} (kernel limits: {} watches per user, {} queued events)\n",
        s.pid,
        limit(s.max_user_watches),
        limit(s.max_queued_events)
    );
    out.push_str(&format!("saves and restores made by the watcher: {}\n", s.performed));
    for r in &s.roots {
        out.push_str(&format!(
            "{}: {} directories watched, {} changed, {} events, {} held\n",
            format::path(&r.root.display().to_string()),
            r.dirs,
            r.dirty,
            r.events,
            format::bytes(r.memory_bytes)
        ));
        if let Some(reason) = &r.walk_reason {
            out.push_str(&format!("  the next save walks the whole tree: {reason}\n"));
        }
    }
    out
}
