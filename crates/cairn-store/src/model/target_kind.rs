//! The kinds of target, as snapshot records, the catalog and JSON name them.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// What a snapshot is of. Serialised as `dir`, `compose`, `transcript` or `debug`, the same
/// words the catalog stores and the `kind:` prefixes of target keys use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TargetKind {
    /// A directory tree.
    Dir,
    /// A running Docker Compose project.
    Compose,
    /// An agent transcript file.
    Transcript,
    /// A debug session's captures.
    Debug,
}

impl TargetKind {
    /// Every kind, in the order help texts list them.
    pub const ALL: [TargetKind; 4] =
        [TargetKind::Dir, TargetKind::Compose, TargetKind::Transcript, TargetKind::Debug];

    /// The kind's word: `dir`, `compose`, `transcript` or `debug`.
    pub const fn as_str(self) -> &'static str {
        match self {
            TargetKind::Dir => "dir",
            TargetKind::Compose => "compose",
            TargetKind::Transcript => "transcript",
            TargetKind::Debug => "debug",
        }
    }
}

impl std::fmt::Display for TargetKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

impl std::str::FromStr for TargetKind {
    type Err = Error;

    fn from_str(text: &str) -> Result<Self> {
        TargetKind::ALL
            .into_iter()
            .find(|k| k.as_str() == text)
            .ok_or_else(|| Error::corrupt(format!("unknown target kind {text:?}")))
    }
}

// Compared with the words older code and other modules still hold.
impl PartialEq<&str> for TargetKind {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

// The catalog stores the word, so rows read and written by the store need no conversion.
impl rusqlite::types::ToSql for TargetKind {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        Ok(rusqlite::types::ToSqlOutput::from(self.as_str()))
    }
}

impl rusqlite::types::FromSql for TargetKind {
    fn column_result(value: rusqlite::types::ValueRef<'_>) -> rusqlite::types::FromSqlResult<Self> {
        let text = value.as_str()?;
        text.parse().map_err(|e: Error| rusqlite::types::FromSqlError::Other(Box::new(e)))
    }
}

// A plain string in every schema, as it was before it was an enum.
word_schema!(TargetKind);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_reads_back_from_its_word_and_serialises_as_it() {
        for kind in TargetKind::ALL {
            assert_eq!(kind.as_str().parse::<TargetKind>().unwrap(), kind);
            assert_eq!(serde_json::to_value(kind).unwrap(), serde_json::json!(kind.as_str()));
        }
        assert!("tape".parse::<TargetKind>().is_err());
    }
}
