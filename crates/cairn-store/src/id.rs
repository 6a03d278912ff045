//! Typed identifiers: content addresses of objects, and the UUIDv7 ids of snapshots and sessions.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// The BLAKE3 hash of an object's plain bytes: a blob's, or a tree's encoding.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ObjectId(pub [u8; 32]);

impl ObjectId {
    /// The content address of `bytes`.
    pub fn of(bytes: &[u8]) -> Self {
        Self(*blake3::hash(bytes).as_bytes())
    }

    /// The hash as 64 lowercase hex digits.
    pub fn to_hex(&self) -> String {
        hex::encode(self.0)
    }

    /// Parses 64 hex digits.
    pub fn from_hex(s: &str) -> Result<Self> {
        let mut out = [0u8; 32];
        hex::decode_to_slice(s, &mut out)
            .map_err(|_| Error::invalid(format!("{s:?} is not an object id (64 hex digits)")))?;
        Ok(Self(out))
    }
}

impl fmt::Debug for ObjectId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ObjectId({})", &self.to_hex()[..12])
    }
}

impl fmt::Display for ObjectId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}

macro_rules! uuid_id {
    ($(#[$doc:meta])* $name:ident, $what:literal) => {
        $(#[$doc])*
        #[derive(
            Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
            schemars::JsonSchema,
        )]
        #[serde(transparent)]
        pub struct $name(pub uuid::Uuid);

        impl $name {
            /// A new, time-ordered (UUIDv7) id.
            pub fn new() -> Self {
                Self(uuid::Uuid::now_v7())
            }
        }

        impl Default for $name {
            fn default() -> Self {
                Self::new()
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.hyphenated().fmt(f)
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}({})", stringify!($name), self.0)
            }
        }

        impl FromStr for $name {
            type Err = Error;
            fn from_str(s: &str) -> Result<Self> {
                uuid::Uuid::parse_str(s)
                    .map(Self)
                    .map_err(|_| Error::invalid(format!("{s:?} is not a {} id (a UUID)", $what)))
            }
        }
    };
}

uuid_id!(
    /// The id of a snapshot: a UUIDv7, so ids sort by creation time.
    SnapshotId,
    "snapshot"
);
uuid_id!(
    /// The id of a session (a named line of snapshots).
    SessionId,
    "session"
);

impl SessionId {
    /// The fixed id of the `baseline` session, which always exists.
    pub const BASELINE: SessionId = SessionId(uuid::Uuid::from_u128(1));
}
uuid_id!(
    /// The id of a moment (one snapshot per target, taken together): a UUIDv7.
    MomentId,
    "moment"
);
