//! What the operations' options structs share: the serde helpers that let one struct be both
//! a command line's flags and a tool call's arguments.

use serde::{Deserialize, Deserializer};

/// Reads a field a tool call must give although the command line may leave it out (an
/// `Option` the CLI fills by its own rules): absent is "missing field", as for any required
/// field.
pub(crate) fn required<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(deserializer).map(Some)
}
