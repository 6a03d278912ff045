//! The cairn engine: a content-addressed snapshot store, and the targets it captures and
//! restores (directories first; Compose environments, transcripts and debugger state build on
//! the same repository).
//!
//! The library never touches the terminal, reads no environment variable and no user config:
//! the CLI and the MCP server resolve those and pass options in. Every operation is a method
//! on [`Repository`] taking an options struct and returning a serialisable result.

#![warn(missing_docs)]

#[macro_use]
extern crate cairn_store;

// The store's modules under the names the engine always used for them: `crate::store::pack`,
// `crate::tree`, `crate::error`. They are the lower crate's, and nothing here can reach into
// their private parts.
use cairn_store as store;
use cairn_store::model::{session, snapshot};
use cairn_store::{config, duration, error, id, name, time, tree};

pub mod agents;
#[cfg(feature = "fuzz")]
#[doc(hidden)]
pub mod fuzz;
pub mod ops;
mod repository;
mod secrets;
mod targets;

pub use config::{Config, Setting};
pub use duration::{BARE_NUMBER, parse_duration};
pub use error::{ECHO_LIMIT, Error, ErrorKind, Hint, NO_STORE, NeutralWords, Operation, Result, Words, echo};
pub use id::{MomentId, ObjectId, SessionId, SnapshotId};
pub use name::{NAME_RULE, validate_name};
pub use repository::Repository;
pub use session::{Session, SessionOrigin, SessionRef};
pub use snapshot::{JournalReport, NotCovered, SecretEntry, SkippedEntry, Snapshot, SnapshotStats};
pub use store::address::{
    CACHE_HOME_UNKNOWN, EnvLookup, STORE_UNKNOWN, StoreAddress, StoreOpener, store_path,
};
pub use store::layout::FORMAT_VERSION;
pub use store::s3::{S3Backend, S3Settings, Traffic};
#[doc(hidden)]
pub use store::sealed::sealed_for_contract;
pub use store::{
    Backend, LocalBackend, MemoryBackend, OpenMode, Prompt, Secret, SecretUse, Store, Unlock,
    secret_from_env, secret_from_key_file,
};
pub use targets::dir::restore::PlanEntry;
pub use targets::{Target, TargetKind};
pub use time::{now_rfc3339, parse_timestamp};
