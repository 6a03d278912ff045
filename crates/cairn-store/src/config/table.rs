//! The settings table: every key config.toml may hold, declared once with its type, default
//! and what it is for. From that one declaration come the typed accessor code calls
//! (`config.gc_grace()`, so a misspelt key does not compile), the rows `cairn config get` lists
//! and the check a value from the user or the file must pass.

use super::Config;
use super::kind::{Bool, Bytes, Choice, Count, Duration, Kind, Type, choice};

/// One row of the table, for listing and validating by key.
pub(super) struct Spec {
    /// Dotted key, e.g. `keep.recent`.
    pub(super) key: &'static str,
    /// What the key accepts.
    pub(super) kind: Kind,
    /// True when `text` is a value the key accepts: the accessor's own parser.
    pub(super) accepts: fn(&str) -> bool,
    /// The default as text, empty for a key that is unset unless the user sets it.
    pub(super) default: &'static str,
    /// What the setting is for: the lines of the accessor's doc comment.
    pub(super) about: &'static [&'static str],
}

impl Spec {
    /// What the setting is for, in one line.
    pub(super) fn about(&self) -> String {
        self.about.iter().map(|line| line.trim()).collect::<Vec<_>>().join(" ")
    }
}

/// Declares the settings. Each entry is `accessor "key": Type = "default";` under its doc
/// comment; without a default the accessor returns an `Option`, unset until the user sets it.
/// The accessor's name is the key with `.` and `-` as `_` (a test holds them to that).
macro_rules! settings {
    (@value Count) => { u64 };
    (@value Bytes) => { u64 };
    (@value Duration) => { std::time::Duration };
    (@value Bool) => { bool };
    (@value Choice $choice:ident) => { $choice };
    (@returns ($($kind:tt)+)) => { Option<settings!(@value $($kind)+)> };
    (@returns ($($kind:tt)+) $default:literal) => { settings!(@value $($kind)+) };
    (@read $config:ident, $key:literal, $ty:ty) => { $config.read::<$ty>($key) };
    (@read $config:ident, $key:literal, $ty:ty, $default:literal) => {
        // The table's defaults are parsed by a test, so this fallback always reads.
        $config.read::<$ty>($key).or_else(|| <$ty as Type>::read($default))
            .expect(concat!("the default of ", $key, " is a valid value"))
    };
    (@default) => { "" };
    (@default $default:literal) => { $default };
    ($(
        $(#[doc = $doc:literal])+
        $name:ident $key:literal: $kind:ident $(<$choice:ident>)? $(= $default:literal)?;
    )+) => {
        /// Every setting, in the order `cairn config get` lists them.
        pub(super) const TABLE: &[Spec] = &[$(Spec {
            key: $key,
            kind: <$kind $(<$choice>)? as Type>::KIND,
            accepts: |text| <$kind $(<$choice>)? as Type>::read(text).is_some(),
            default: settings!(@default $($default)?),
            about: &[$($doc),+],
        }),+];

        /// The typed accessors: each reads its setting as set in config.toml, else its default.
        impl Config {
            $(
                $(#[doc = $doc])+
                #[doc = ""]
                #[doc = concat!("Key `", $key, "`.")]
                pub fn $name(&self) -> settings!(@returns ($kind $($choice)?) $($default)?) {
                    settings!(@read self, $key, $kind $(<$choice>)? $(, $default)?)
                }
            )+
        }

        /// Each accessor's name and what it returns for `config`, in table order, so a test can
        /// hold every row to an accessor of the key's name.
        #[cfg(test)]
        pub(super) fn accessors(config: &Config) -> Vec<(&'static str, String)> {
            vec![$((stringify!($name), format!("{:?}", config.$name()))),+]
        }
    };
}

choice! {
    /// What `rollback.leftover_volumes` says a compose rollback of a project with no containers
    /// does with named volumes that still exist.
    pub enum LeftoverVolumes {
        /// Keep them as they are.
        Reuse = "reuse",
        /// Make them hold the savepoint's data.
        Replace = "replace",
        /// Refuse the rollback.
        Refuse = "refuse",
    }
}

settings! {
    /// after each save, the newest this many snapshots of the target are kept; an older one is removed only
    /// if every other keep.* rule set would remove it too
    keep_recent "keep.recent": Count;
    /// after each save, snapshots younger than this are kept; an older one is removed only if every other
    /// keep.* rule set would remove it too
    keep_within "keep.within": Duration;
    /// after each save, the newest snapshots of the target that together hold at most this many bytes are
    /// kept; another is removed only if every other keep.* rule set would remove it too
    keep_max_bytes "keep.max_bytes": Bytes;
    /// safety snapshots kept per target
    safety_keep_recent "safety.keep_recent": Count = "10";
    /// safety snapshots older than this are removed after each restore
    safety_keep_within "safety.keep_within": Duration = "7d";
    /// after each agent checkpoint, the newest this many turns of the workspace keep their checkpoints; an
    /// older one goes only if hooks.keep_within would remove it too
    hooks_keep_turns "hooks.keep_turns": Count = "200";
    /// after each agent checkpoint, checkpoints younger than this are kept; an older one goes only if
    /// hooks.keep_turns would remove it too
    hooks_keep_within "hooks.keep_within": Duration = "30d";
    /// how long an agent's turn waits for its checkpoint; a slower one goes on in the background
    hooks_budget "hooks.budget": Duration = "5s";
    /// an agent checkpoint of a workspace of hooks.watch_from entries or more starts a change-journal
    /// watcher for it
    hooks_watch "hooks.watch": Bool = "true";
    /// how many entries (files, directories, links) a workspace holds before an agent checkpoint starts a
    /// watcher for it (with hooks.watch)
    hooks_watch_from "hooks.watch_from": Count = "10000";
    /// a save through the MCP server of a directory of hooks.watch_from entries or more starts a
    /// change-journal watcher for it
    mcp_watch "mcp.watch": Bool = "true";
    /// gc leaves unreferenced data younger than this alone
    gc_grace "gc.grace": Duration = "1h";
    /// a remote store keeps at most this many bytes of the packs it fetched on this machine, least recently
    /// used out first (1 GiB)
    cache_max_bytes "cache.max_bytes": Bytes = "1073741824";
    /// directory saves capture files that hold credentials (.env, private keys, access tokens) instead of
    /// leaving them out
    secrets_include "secrets.include": Bool = "false";
    /// an archive import is refused once its entries declare more than this many bytes in all (8 GiB)
    import_max_bytes "import.max_bytes": Bytes = "8589934592";
    /// an archive import is refused once it holds more than this many entries
    import_max_entries "import.max_entries": Count = "500000";
    /// MCP agents may save snapshots
    agent_save "agent.save": Bool = "true";
    /// MCP agents may restore snapshots (destructive)
    agent_restore "agent.restore": Bool = "false";
    /// MCP agents may remove snapshots and delete sessions (destructive)
    agent_remove "agent.remove": Bool = "false";
    /// agents using the pi profile may save transcript snapshots
    agent_transcript_save "agent.transcript-save": Bool = "false";
    /// agents using the pi profile may restore transcript snapshots
    agent_transcript_restore "agent.transcript-restore": Bool = "false";
    /// what a compose rollback of a project with no containers does with named volumes that still exist
    rollback_leftover_volumes "rollback.leftover_volumes": Choice<LeftoverVolumes> = "replace";
}
