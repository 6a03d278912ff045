//! What a setting holds: the kinds of value (a count, a size, a duration, a flag, one word of a
//! few), each with the one parser that both validates what the user writes and reads it back
//! as the type code gets, so the two cannot disagree.

use std::marker::PhantomData;

/// The largest number a setting holds: TOML integers are signed 64-bit, so anything larger
/// could not be written back to config.toml as it was given.
pub(super) const MAX_INTEGER: u64 = i64::MAX as u64;

/// What values a key accepts, for error messages and for how config.toml writes the value.
#[derive(Debug, Clone, Copy)]
pub(super) enum Kind {
    Count,
    Bytes,
    Duration,
    Bool,
    Choice(&'static [&'static str]),
}

impl Kind {
    /// The accepted values in words, as an error message ends with them.
    pub(super) fn accepted(self) -> String {
        match self {
            Kind::Count => format!("a whole number from 0 to {MAX_INTEGER}"),
            Kind::Bytes => format!("a size in bytes, a whole number from 0 to {MAX_INTEGER}"),
            Kind::Duration => "a unit-bearing duration like 90s, 2m, 1h30m or 7d".into(),
            Kind::Bool => "true or false".into(),
            Kind::Choice(values) => format!("one of {}", values.join(", ")),
        }
    }
}

/// A setting's type in the table: its [`Kind`], the Rust type its accessor returns, and the
/// parser from the text config.toml holds.
pub(super) trait Type {
    /// What the accessor returns.
    type Value;
    /// What the key accepts.
    const KIND: Kind;
    /// The value `text` stands for, `None` when the key does not accept it.
    fn read(text: &str) -> Option<Self::Value>;
}

/// A whole number (`keep.recent`).
pub(super) struct Count;
/// A size in bytes (`cache.max_bytes`): a count that says bytes in its error message.
pub(super) struct Bytes;
/// A unit-bearing duration (`gc.grace = "1h"`): a bare number is refused, since `10` could mean
/// seconds or days.
pub(super) struct Duration;
/// `true` or `false`.
pub(super) struct Bool;
/// One word of the choice `C`.
pub(super) struct Choice<C>(PhantomData<C>);

fn whole_number(text: &str) -> Option<u64> {
    text.parse::<u64>().ok().filter(|n| *n <= MAX_INTEGER)
}

impl Type for Count {
    type Value = u64;
    const KIND: Kind = Kind::Count;
    fn read(text: &str) -> Option<u64> {
        whole_number(text)
    }
}

impl Type for Bytes {
    type Value = u64;
    const KIND: Kind = Kind::Bytes;
    fn read(text: &str) -> Option<u64> {
        whole_number(text)
    }
}

impl Type for Duration {
    type Value = std::time::Duration;
    const KIND: Kind = Kind::Duration;
    fn read(text: &str) -> Option<std::time::Duration> {
        crate::duration::duration_of(text).ok()
    }
}

impl Type for Bool {
    type Value = bool;
    const KIND: Kind = Kind::Bool;
    fn read(text: &str) -> Option<bool> {
        match text {
            "true" => Some(true),
            "false" => Some(false),
            _ => None,
        }
    }
}

/// An enum whose values a setting names by word; [`choice!`] writes it.
pub(super) trait Words: Sized + Copy + 'static {
    /// Each value with its word, in the order error messages list them.
    const ALL: &'static [(Self, &'static str)];
    /// Just the words, for [`Kind::Choice`].
    const WORDS: &'static [&'static str];
}

impl<C: Words> Type for Choice<C> {
    type Value = C;
    const KIND: Kind = Kind::Choice(C::WORDS);
    fn read(text: &str) -> Option<C> {
        C::ALL.iter().find(|(_, word)| *word == text).map(|(value, _)| *value)
    }
}

/// Declares an enum a setting chooses from, each value once with the word config.toml holds.
macro_rules! choice {
    ($(#[$meta:meta])* pub enum $name:ident { $($(#[doc = $doc:literal])* $value:ident = $word:literal,)+ }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum $name {
            $($(#[doc = $doc])* $value,)+
        }

        impl $name {
            /// The word config.toml holds for this value.
            pub fn word(self) -> &'static str {
                match self {
                    $($name::$value => $word,)+
                }
            }
        }

        impl $crate::config::kind::Words for $name {
            const ALL: &'static [(Self, &'static str)] = &[$(($name::$value, $word)),+];
            const WORDS: &'static [&'static str] = &[$($word),+];
        }
    };
}
pub(super) use choice;
