//! `cairn watch`: the change journal's watcher for a store's trees, and what a save asks it.
//! The watcher itself (inotify, the journal, the socket) is the `cairn-watch` crate; this module
//! places its socket in the store and speaks the engine's errors; `perform.rs` runs the jobs
//! commands hand it: the saves of the trees it watches (`save.rs`) and in-place restores
//! (`restore.rs`).

mod perform;
mod restore;
mod save;

use std::path::{Path, PathBuf};

use cairn_watch::protocol::{Request, Response};
pub use cairn_watch::protocol::{RootStatus, Status};
use cairn_watch::server::{ServeOptions, Server};

pub use self::perform::Done;
pub use self::restore::{WatcherRestore, restore_by_watcher};
pub use self::save::{WatcherSave, save_by_watcher};
use crate::Repository;
use crate::error::{Error, ErrorKind, Result};

/// Which trees to watch.
#[derive(Debug, Clone, Default, serde::Deserialize, schemars::JsonSchema)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct WatchOptions {
    /// The directories to watch (default: the current one).
    #[schemars(description = "The directories whose changes the watcher records.")]
    #[cfg_attr(feature = "clap", arg(value_name = "DIR"))]
    pub dirs: Vec<PathBuf>,
}

/// Who would start a watcher on its own after a save: each has its own setting to turn that off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AutoWatch {
    /// An agent hook's checkpoint (`hooks.watch`).
    Hooks,
    /// A save through the MCP server (`mcp.watch`).
    Mcp,
}

/// True when `config` asks `front` to start a watcher for a tree of `entries` entries (files,
/// directories, links) it just saved: its setting is on and the tree holds `hooks.watch_from`
/// entries or more.
pub fn wants_watcher(config: &crate::Config, front: AutoWatch, entries: u64) -> bool {
    let on = match front {
        AutoWatch::Hooks => config.hooks_watch(),
        AutoWatch::Mcp => config.mcp_watch(),
    };
    on && entries > 0 && entries >= config.hooks_watch_from()
}

/// True when `config` asks `front` to start a watcher for the tree `snapshot` saved: a
/// directory snapshot, not a restore's safety snapshot, that [`wants_watcher`] finds large
/// enough.
pub fn snapshot_wants_watcher(config: &crate::Config, front: AutoWatch, snapshot: &crate::Snapshot) -> bool {
    snapshot.kind == crate::TargetKind::Dir
        && !snapshot.safety
        && wants_watcher(config, front, snapshot.stats.entries())
}

/// What starting a watcher did.
pub enum WatchStart {
    /// A new watcher is set up; [`Watcher::run`] serves until it is stopped.
    Started {
        /// The watcher, to run.
        watcher: Watcher,
        /// Each tree, and how many directories it watches there.
        watching: Vec<(PathBuf, u64)>,
    },
    /// A watcher already served the store; it now watches these trees too.
    Joined {
        /// That watcher's process id.
        pid: u32,
        /// Each tree, and how many directories it watches there.
        watching: Vec<(PathBuf, u64)>,
    },
}

/// A watcher that watches its trees and answers on the store's socket.
pub struct Watcher(Server);

impl Watcher {
    /// Reads events, answers saves and does the jobs handed to it ([`save_by_watcher`],
    /// [`restore_by_watcher`]) in `store`, until it is asked to stop.
    pub fn run(self, store: Repository) -> Result<()> {
        self.0.run_performing(perform::JobPerformer::new(store)).map_err(from_watch)
    }
}

impl Repository {
    /// The socket the store's watcher answers on.
    pub fn watch_socket(&self) -> PathBuf {
        cairn_watch::server::socket_path(self.root())
    }

    /// Sets up a watcher for `options.dirs`, or hands them to the one already running.
    pub fn watch_start(&self, options: &WatchOptions) -> Result<WatchStart> {
        if options.dirs.is_empty() {
            return Err(Error::invalid("name at least one directory to watch"));
        }
        let dirs: Vec<PathBuf> = options.dirs.iter().map(|d| canonical_dir(d)).collect::<Result<_>>()?;
        let socket = self.watch_socket();
        if let Some(Response::Status(status)) = ask(&socket, &Request::Status)? {
            let mut watching = Vec::new();
            for dir in dirs {
                match ask(&socket, &Request::Watch { root: dir.clone() })? {
                    Some(Response::Watching { dirs: n }) => watching.push((dir, n)),
                    Some(Response::Refused { message }) => return Err(Error::invalid(message)),
                    _ => return Err(Error::new(ErrorKind::Io, "the watcher stopped while being asked")),
                }
            }
            return Ok(WatchStart::Joined { pid: status.pid, watching });
        }
        let server = Server::start(ServeOptions::new(socket, dirs)).map_err(from_watch)?;
        let watching = server.roots().into_iter().map(|r| (r.root, r.dirs)).collect();
        let watcher = Watcher(server);
        Ok(WatchStart::Started { watcher, watching })
    }

    /// What the running watcher watches; `None` when none runs for this store.
    pub fn watch_status(&self) -> Result<Option<Status>> {
        match ask(&self.watch_socket(), &Request::Status)? {
            Some(Response::Status(s)) => Ok(Some(s)),
            Some(_) => Err(Error::new(ErrorKind::Io, "the watcher gave an unexpected answer")),
            None => Ok(None),
        }
    }

    /// Stops the running watcher; false when none was running.
    pub fn watch_stop(&self) -> Result<bool> {
        Ok(ask(&self.watch_socket(), &Request::Stop)?.is_some())
    }
}

fn ask(socket: &Path, request: &Request) -> Result<Option<Response>> {
    cairn_watch::client::request(socket, request).map_err(from_watch)
}

fn canonical_dir(dir: &Path) -> Result<PathBuf> {
    let path = dir.canonicalize().map_err(|e| Error::io("watch", dir, e))?;
    if !path.is_dir() {
        return Err(Error::invalid(format!("{} is not a directory", dir.display())));
    }
    Ok(path)
}

fn from_watch(err: cairn_watch::Error) -> Error {
    match err {
        cairn_watch::Error::Running { .. } => Error::conflict(err.to_string()),
        cairn_watch::Error::Root { .. } | cairn_watch::Error::Refused(_) => Error::invalid(err.to_string()),
        _ => Error::new(ErrorKind::Io, err.to_string()),
    }
}
