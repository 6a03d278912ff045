//! Profiles: which tools (and resources) one server offers. The default is cairn's own tool
//! set; the others serve exactly the tool names, arguments and result shapes of an existing
//! system, so agents prompted for that system work unchanged. A new profile is one module
//! here plus one entry in [`PROFILES`].

pub mod arcave;
pub mod cairn;
pub mod codecalc;
pub mod debug;
pub mod pi;

use crate::error::ServeError;
use crate::registry::ToolSpec;
use crate::resources::ResourceSet;

/// One profile: its name, its tools, and the resources it serves.
#[derive(Debug, Clone, Copy)]
pub struct Profile {
    /// The name `--profile` takes.
    pub name: &'static str,
    /// One line on what the profile is for (shown in `cairn mcp --help` and errors).
    pub about: &'static str,
    /// Builds the profile's tools.
    pub tools: fn() -> Result<Vec<ToolSpec>, ServeError>,
    /// True when the profile serves `cairn://snapshots` and its template.
    pub resources: ResourceSet,
    /// What the server tells an agent when it connects.
    pub instructions: &'static str,
    /// How its refusals name arguments and tools.
    pub words: &'static (dyn cairn_lib::Words + Sync),
}

/// Every profile; the first is the default.
pub const PROFILES: &[Profile] = &[
    Profile {
        name: "cairn",
        about: "cairn's own tools: snapshots and sessions",
        tools: cairn::tools,
        resources: ResourceSet::Snapshots,
        instructions: cairn::INSTRUCTIONS,
        words: &crate::words::ToolWords,
    },
    Profile {
        name: "codecalc",
        about: "codecalc's session_snapshot tool over workspace folders",
        tools: codecalc::tools,
        resources: ResourceSet::None,
        instructions: codecalc::INSTRUCTIONS,
        words: &codecalc::WORDS,
    },
    Profile {
        name: "arcave",
        about: "arcave's savepoint and session tools over Docker Compose projects",
        tools: arcave::tools,
        resources: ResourceSet::None,
        instructions: arcave::INSTRUCTIONS,
        words: &arcave::WORDS,
    },
    Profile {
        name: "pi",
        about: "the Pi session snapshot extension's snapshot_save and snapshot_restore over transcripts",
        tools: pi::tools,
        resources: ResourceSet::None,
        instructions: pi::INSTRUCTIONS,
        words: &pi::WORDS,
    },
    Profile {
        name: "debug",
        about: "the debugger snapshot tools (snapshot_create, snapshot_diff, snapshot_delete) and debug session tools",
        tools: debug::tools,
        resources: ResourceSet::DebugSnapshots,
        instructions: debug::INSTRUCTIONS,
        words: &debug::WORDS,
    },
];

/// Other names `--profile` takes: the name the original tool goes by.
const ALIASES: &[(&str, &str)] = &[("debugger", "debug")];

/// The profile named `name` (or one of its [`ALIASES`]), or an error listing the profiles.
pub fn find(name: &str) -> Result<&'static Profile, ServeError> {
    let name = ALIASES.iter().find(|(alias, _)| *alias == name).map_or(name, |(_, profile)| profile);
    PROFILES.iter().find(|p| p.name == name).ok_or_else(|| ServeError::UnknownProfile {
        name: name.to_owned(),
        known: PROFILES.iter().map(|p| p.name).collect::<Vec<_>>().join(", "),
    })
}
