//! How the fronts say the library's hints: the CLI's flags and commands ([`CliWords`]), the
//! default profile's arguments and tools ([`ToolWords`]). Each compatibility profile has its
//! own words beside its tools.
//!
//! The CLI's words live here, not in the `cairn` crate, because the server names CLI commands
//! too: what only the user may do (allow a capability, check the store) an agent is asked to
//! have the user run. The CLI renders its errors with these same words.

use std::path::Path;

use cairn_lib::ops::permissions::shell_word;
use cairn_lib::{Hint, NeutralWords, Operation, Words};

/// The command line's words: `--force`, `cairn list`.
#[derive(Debug, Clone, Copy, Default)]
pub struct CliWords;

impl CliWords {
    /// The command that runs `op`, without backticks.
    pub fn command(op: &Operation) -> String {
        match op {
            Operation::Save => "cairn save".to_owned(),
            Operation::ListSnapshots => "cairn list".to_owned(),
            Operation::ListSessions => "cairn session list".to_owned(),
            Operation::SetSession => "cairn session set SESSION".to_owned(),
            Operation::UnsetSession => "cairn session unset".to_owned(),
            Operation::Check => "cairn check".to_owned(),
            Operation::Repair => "cairn repair".to_owned(),
            Operation::Gc => "cairn gc".to_owned(),
            Operation::ListTranscripts => "cairn transcript list".to_owned(),
            Operation::LoadTranscript { snapshot } => format!("cairn transcript load {snapshot}"),
            Operation::Restore { snapshot } => format!("cairn restore {snapshot}"),
            Operation::ListSavepoints { project } => format!("cairn compose list {project}"),
            Operation::Rollback { project, snapshot } => {
                format!("cairn compose rollback {project} {snapshot}")
            }
            Operation::ListDebugCaptures => "cairn debug list".to_owned(),
            Operation::DiffDebugCaptures => "cairn debug diff".to_owned(),
            Operation::ContinueRestore => "cairn restore --continue".to_owned(),
            Operation::AbortRestore => "cairn restore --abort".to_owned(),
            Operation::ResetAgentSetting { word, store } => {
                format!("cairn --store {} agent reset {word}", store_word(store))
            }
            other => NeutralWords::operation(other),
        }
    }

    /// The command that allows `capability` on the store at `store`.
    pub fn allow_command(capability: impl std::fmt::Display, store: &Path) -> String {
        format!("cairn --store {} agent allow {capability}", store_word(store))
    }
}

fn store_word(store: &Path) -> String {
    shell_word(&store.to_string_lossy())
}

/// Joins option names as "a, b or c".
pub fn one_of(names: Vec<String>) -> String {
    match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => names.join(""),
    }
}

impl Words for CliWords {
    fn option(&self, name: &str) -> String {
        format!("--{}", name.replace('_', "-"))
    }

    fn hint(&self, hint: &Hint) -> String {
        match hint {
            Hint::SetOption(o) | Hint::GiveOption(o) => format!("pass {}", self.option(o)),
            Hint::GiveOneOf(options) => {
                format!("pass {}", one_of(options.iter().map(|o| self.option(o)).collect()))
            }
            Hint::DropOption(o) => format!("leave out {}", self.option(o)),
            Hint::Run(op) => format!("run `{}`", Self::command(op)),
            Hint::Allow { capability, store } => format!("run `{}`", Self::allow_command(capability, store)),
            Hint::ChooseStore => "choose another store with --store or CAIRN_STORE".to_owned(),
            Hint::Unpin => "unset CAIRN_SESSION".to_owned(),
            Hint::GiveSecret => {
                "set CAIRN_PASSWORD, CAIRN_PASSWORD_FILE or CAIRN_KEY_FILE, or run it on a terminal to be asked"
                    .to_owned()
            }
            other => NeutralWords.hint(other),
        }
    }
}

/// Asks the agent to have the user run a command only the user may run.
pub fn ask_user(op: &Operation) -> String {
    format!("ask the user to run `{}`", CliWords::command(op))
}

/// What an agent is asked to have the user do to allow `capability`.
pub fn ask_allow(capability: impl std::fmt::Display + Copy, store: &Path) -> String {
    format!(
        "ask the user to run `{}` (or to start the server with `cairn mcp --allow {capability}`)",
        CliWords::allow_command(capability, store)
    )
}

/// The words of the default profile's tools: `force: true`, `snapshot_list`.
#[derive(Debug, Clone, Copy, Default)]
pub struct ToolWords;

impl Words for ToolWords {
    fn hint(&self, hint: &Hint) -> String {
        tool_hint(hint, |op| match op {
            Operation::Save => Some("call snapshot_save".to_owned()),
            Operation::ListSnapshots | Operation::ListTranscripts => Some("call snapshot_list".to_owned()),
            Operation::ListSessions => Some("call session_list".to_owned()),
            Operation::SetSession => Some("call session_set".to_owned()),
            Operation::UnsetSession => Some("call session_unset".to_owned()),
            Operation::Restore { snapshot } => Some(format!("call snapshot_restore with ref {snapshot:?}")),
            _ => None,
        })
    }
}

/// A hint in a tool profile's words: option and permission hints as every profile says them,
/// operations through `tool` (which names the profile's tool for one, if it has one), and
/// the rest as a command the user runs.
pub fn tool_hint(hint: &Hint, tool: impl Fn(&Operation) -> Option<String>) -> String {
    match hint {
        Hint::SetOption(o) => format!("set {o}: true"),
        Hint::GiveOption(o) => format!("pass {o}"),
        Hint::GiveOneOf(options) => {
            format!("pass {}", one_of(options.iter().map(|o| o.to_string()).collect()))
        }
        Hint::DropOption(o) => format!("leave out the {o} argument"),
        Hint::Run(op) => tool(op).unwrap_or_else(|| ask_user(op)),
        Hint::Allow { capability, store } => ask_allow(*capability, store),
        Hint::ChooseStore => "ask the user to start the server with another --store".to_owned(),
        Hint::Unpin => "restart the server without the pin".to_owned(),
        Hint::GiveSecret => {
            "ask the user to start the server with CAIRN_PASSWORD or CAIRN_PASSWORD_FILE set".to_owned()
        }
        other => NeutralWords.hint(other),
    }
}
