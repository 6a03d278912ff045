//! `cairn agent status|allow|deny|reset`: what MCP agents may do. The answer is kept in the
//! store's settings, so it holds for every server, including ones already running.

use cairn_lib::ops::permissions::{AgentStatus, parse_capabilities};
use clap::Subcommand;

use crate::commands::GlobalArgs;
use crate::context::open_store;
use crate::error::CommandResult;
use crate::printer::Printer;

/// The agent commands.
#[derive(Debug, Subcommand)]
pub enum AgentCommand {
    /// Show what agents may do: save, restore, remove, transcript-save, transcript-restore.
    Status,
    /// Let agents do these from now on.
    Allow {
        /// Capabilities: save, restore, remove, transcript-save, transcript-restore or all.
        #[arg(required = true, value_name = "CAPABILITY")]
        capabilities: Vec<String>,
    },
    /// Refuse these to agents from now on.
    Deny {
        /// Capabilities: save, restore, remove, transcript-save, transcript-restore or all.
        #[arg(required = true, value_name = "CAPABILITY")]
        capabilities: Vec<String>,
    },
    /// Return these to their defaults (save allowed; everything else refused).
    Reset {
        /// Capabilities: save, restore, remove, transcript-save, transcript-restore or all.
        #[arg(required = true, value_name = "CAPABILITY")]
        capabilities: Vec<String>,
    },
}

/// Runs an agent command.
pub fn run(global: &GlobalArgs, cmd: AgentCommand, printer: &Printer) -> CommandResult {
    let mut store = open_store(global)?;
    let status = match cmd {
        AgentCommand::Status => store.agent_status()?,
        AgentCommand::Allow { capabilities } => store.agent_allow(&parse_capabilities(&capabilities)?)?,
        AgentCommand::Deny { capabilities } => store.agent_deny(&parse_capabilities(&capabilities)?)?,
        AgentCommand::Reset { capabilities } => store.agent_reset(&parse_capabilities(&capabilities)?)?,
    };
    printer.result(&status.in_words(&cairn_mcp::words::CliWords), human);
    Ok(())
}

fn human(status: &AgentStatus) -> String {
    let mut out: String = status
        .capabilities
        .iter()
        .map(|c| {
            format!(
                "{:<18} {}{}\n",
                c.capability.as_str(),
                if c.allowed { "allowed" } else { "refused" },
                if c.set { "" } else { "  (default)" }
            )
        })
        .collect();
    // Part of the answer, not a side note: while a value is invalid everything reads refused.
    for warning in &status.warnings {
        out.push_str(&format!("warning: {warning}\n"));
    }
    out
}
