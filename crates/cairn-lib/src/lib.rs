//! The cairn engine: a content-addressed snapshot store, and the targets it captures and
//! restores (directories first; Compose environments, transcripts and debugger state build on
//! the same repository).
//!
//! The library never touches the terminal, reads no environment variable and no user config:
//! the CLI and the MCP server resolve those and pass options in. Every operation is a method
//! on [`Store`] taking an options struct and returning a serialisable result.

#![warn(missing_docs)]

/// Gives an enum that serialises as one word the JSON schema of a plain string, as the field
/// had before it was an enum, so the schemas the MCP tools publish do not change.
macro_rules! word_schema {
    ($ty:ty) => {
        impl schemars::JsonSchema for $ty {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                stringify!($ty).into()
            }

            fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
                <String as schemars::JsonSchema>::json_schema(generator)
            }

            fn inline_schema() -> bool {
                true
            }
        }
    };
}

pub mod agents;
mod config;
mod duration;
mod error;
#[cfg(feature = "fuzz")]
#[doc(hidden)]
pub mod fuzz;
mod id;
mod name;
pub mod ops;
mod secrets;
mod session;
mod snapshot;
mod store;
mod targets;
mod time;
mod tree;

pub use config::{Config, Setting};
pub use duration::{BARE_NUMBER, parse_duration};
pub use error::{ECHO_LIMIT, Error, ErrorKind, Hint, NeutralWords, Operation, Result, Words, echo};
pub use id::{MomentId, ObjectId, SessionId, SnapshotId};
pub use name::{NAME_RULE, validate_name};
pub use session::{Session, SessionOrigin};
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
