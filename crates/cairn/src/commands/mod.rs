//! The command line: global flags, one enum of commands, and the dispatch. Each command lives
//! in its own file with its arguments and a `run` function.

mod agent;
mod check;
mod completions;
mod compose;
mod config;
mod copy;
mod debug;
mod deferred;
mod diff;
mod export;
mod gc;
mod hook;
mod hooks;
mod import;
mod init;
mod key;
mod list;
mod man;
mod mcp;
mod moment;
mod remove;
mod repair;
mod restore;
mod resume;
mod rewind;
mod save;
mod session;
mod show;
mod transcript;
mod ui;
mod watch;

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use self::deferred::Deferred;
pub use self::deferred::{negatives, whole_tree};

use crate::error::CommandResult;
use crate::printer::Printer;

/// Checkpoints of everything an AI coding agent touches, put back exactly.
#[derive(Debug, Parser)]
#[command(name = "cairn", version, about, propagate_version = true)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

/// Flags every command takes.
#[derive(Debug, Args)]
pub struct GlobalArgs {
    /// The store: a directory, or s3://BUCKET/PREFIX (default: $CAIRN_STORE, else
    /// $XDG_DATA_HOME/cairn, else ~/.local/share/cairn).
    #[arg(long, global = true, value_name = "PATH", value_parser = crate::context::store_flag)]
    pub store: Option<PathBuf>,
    /// Print the result as JSON.
    #[arg(long, global = true)]
    pub json: bool,
    /// Whether the command may create the store: commands that only read refuse a store that
    /// does not exist. Set from the command, not a flag.
    #[arg(skip)]
    pub open_mode: cairn_lib::OpenMode,
}

impl Command {
    /// Commands that only read the store, or change what it already holds: on a store that
    /// does not exist they have nothing to do, and say so rather than create one.
    fn needs_existing_store(&self) -> bool {
        matches!(
            self,
            Command::List(_)
                | Command::Show(_)
                | Command::Restore(_)
                | Command::Diff(_)
                | Command::Remove(_)
                | Command::Export(_)
                | Command::Gc(_)
                | Command::Check(_)
                | Command::Key(_)
                | Command::Rewind(_)
                | Command::Resume(_)
                | Command::Ui(_)
                | Command::Session(Deferred(
                    session::SessionCommand::List(_)
                        | session::SessionCommand::Current
                        | session::SessionCommand::Delete(_)
                        | session::SessionCommand::Unset
                ))
                | Command::Config(Deferred(
                    config::ConfigCommand::Get { .. } | config::ConfigCommand::Unset { .. }
                ))
                | Command::Moment(Deferred(
                    moment::MomentCommand::List(_)
                        | moment::MomentCommand::Show(_)
                        | moment::MomentCommand::Diff(_)
                        | moment::MomentCommand::Restore(_)
                        | moment::MomentCommand::Remove(_)
                ))
                | Command::Transcript(Deferred(
                    transcript::TranscriptCommand::Load(_)
                        | transcript::TranscriptCommand::Export(_)
                        | transcript::TranscriptCommand::Delete(_)
                ))
                | Command::Compose(Deferred(
                    compose::ComposeCommand::Rollback(_) | compose::ComposeCommand::List(_)
                ))
                | Command::Debug(Deferred(
                    debug::DebugCommand::List(_)
                        | debug::DebugCommand::Diff(_)
                        | debug::DebugCommand::Delete(_)
                ))
        ) || matches!(self, Command::Watch(Deferred(args)) if args.asks_only())
    }
}

/// The commands. Each one's arguments are built only once the parse reaches it (`deferred.rs`).
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Capture a target (a directory by default: the current one) as a new snapshot.
    Save(Deferred<save::SaveArgs>),
    /// List snapshots, newest first.
    #[command(alias = "ls")]
    List(Deferred<list::ListArgs>),
    /// Show one snapshot's record.
    Show(Deferred<show::ShowArgs>),
    /// Put a snapshot back, in place or into a new directory.
    #[command(alias = "rollback")]
    Restore(Deferred<restore::RestoreArgs>),
    /// Show what changed between two snapshots, or a snapshot and the live tree.
    Diff(Deferred<diff::DiffArgs>),
    /// Delete snapshots by reference, or by retention rules.
    #[command(alias = "rm")]
    Remove(Deferred<remove::RemoveArgs>),
    /// Work with sessions: named lines of snapshots.
    #[command(subcommand)]
    Session(Deferred<session::SessionCommand>),
    /// Write a directory snapshot as a tar archive (.tar, .tar.gz or .tar.zst).
    Export(Deferred<export::ExportArgs>),
    /// Read a tar archive (.tar, .tar.gz or .tar.zst) as a new directory snapshot.
    Import(Deferred<import::ImportArgs>),
    /// Copy snapshots, moments or a whole session to another store (local or s3://).
    Copy(Deferred<copy::CopyArgs>),
    /// Reclaim the space of data no snapshot references.
    Gc(Deferred<gc::GcArgs>),
    /// Make a store (remote stores are encrypted; --encrypt for a local directory).
    Init(Deferred<init::InitArgs>),
    /// Add, list or remove the passwords and key files that unlock an encrypted store.
    #[command(subcommand)]
    Key(Deferred<key::KeyCommand>),
    /// Verify that every snapshot's data is in the store.
    Check(Deferred<check::CheckArgs>),
    /// Rebuild the catalog from the packs and records, drop damaged data, list what was lost.
    Repair(Deferred<repair::RepairArgs>),
    /// Read or change the store's settings.
    #[command(subcommand)]
    Config(Deferred<config::ConfigCommand>),
    /// Savepoints and rollback of a running Docker Compose project.
    #[command(subcommand)]
    Compose(Deferred<compose::ComposeCommand>),
    /// Snapshots of agent conversations: Pi sessions and Claude Code transcripts.
    #[command(subcommand)]
    Transcript(Deferred<transcript::TranscriptCommand>),
    /// Capture the variables of a paused program through its debug adapter, and diff captures.
    #[command(subcommand)]
    Debug(Deferred<debug::DebugCommand>),
    /// Decide what MCP agents may do: save, restore, remove, and the transcript tools.
    #[command(subcommand)]
    Agent(Deferred<agent::AgentCommand>),
    /// Run the MCP server agents use (stdio by default, or --http ADDR).
    Mcp(Deferred<mcp::McpArgs>),
    /// Print the shell completion script for bash, zsh, fish, elvish or powershell.
    Completions(Deferred<completions::CompletionsArgs>),
    /// Write the man pages, one per command, into a directory.
    Man(Deferred<man::ManArgs>),
    /// Install cairn's hooks into Claude Code or Gemini CLI, remove them, or show where they are.
    #[command(subcommand)]
    Hooks(Deferred<hooks::HooksCommand>),
    /// Run by an agent's hooks: read its event on stdin and checkpoint (always exits 0).
    Hook(Deferred<hook::HookArgs>),
    /// Record which directories change, so saves look only at those (runs until stopped).
    Watch(Deferred<watch::WatchArgs>),
    /// Moments: several targets saved, restored, compared and removed together.
    #[command(subcommand)]
    Moment(Deferred<moment::MomentCommand>),
    /// Go back to an agent turn of the current directory: its files and its conversation.
    Rewind(Deferred<rewind::RewindArgs>),
    /// Hand an agent turn to this machine: its files, Compose projects and conversation.
    Resume(Deferred<resume::ResumeArgs>),
    /// Serve a local web app to look at sessions, moments and diffs, and put things back.
    Ui(Deferred<ui::UiArgs>),
}

/// Runs the parsed command.
pub fn run(cli: Cli, printer: &Printer) -> CommandResult {
    let Cli { mut global, command } = cli;
    if command.needs_existing_store() {
        global.open_mode = cairn_lib::OpenMode::Existing;
    }
    let global = &global;
    match command {
        Command::Save(Deferred(args)) => save::run(global, args, printer),
        Command::List(Deferred(args)) => list::run(global, args, printer),
        Command::Show(Deferred(args)) => show::run(global, args, printer),
        Command::Restore(Deferred(args)) => restore::run(global, args, printer),
        Command::Diff(Deferred(args)) => diff::run(global, args, printer),
        Command::Remove(Deferred(args)) => remove::run(global, args, printer),
        Command::Session(Deferred(cmd)) => session::run(global, cmd, printer),
        Command::Export(Deferred(args)) => export::run(global, args, printer),
        Command::Import(Deferred(args)) => import::run(global, args, printer),
        Command::Copy(Deferred(args)) => copy::run(global, args, printer),
        Command::Gc(Deferred(args)) => gc::run(global, args, printer),
        Command::Check(Deferred(args)) => check::run(global, args, printer),
        Command::Init(Deferred(args)) => init::run(global, args, printer),
        Command::Key(Deferred(cmd)) => key::run(global, cmd, printer),
        Command::Repair(Deferred(args)) => repair::run(global, args, printer),
        Command::Config(Deferred(cmd)) => config::run(global, cmd, printer),
        Command::Agent(Deferred(cmd)) => agent::run(global, cmd, printer),
        Command::Mcp(Deferred(args)) => mcp::run(global, args, printer),
        Command::Compose(Deferred(cmd)) => compose::run(global, cmd, printer),
        Command::Transcript(Deferred(cmd)) => transcript::run(global, cmd, printer),
        Command::Debug(Deferred(cmd)) => debug::run(global, cmd, printer),
        Command::Completions(Deferred(args)) => completions::run(global, args, printer),
        Command::Man(Deferred(args)) => man::run(global, args, printer),
        Command::Hooks(Deferred(cmd)) => hooks::run(global, cmd, printer),
        Command::Hook(Deferred(args)) => hook::run(global, args),
        Command::Watch(Deferred(args)) => watch::run(global, args, printer),
        Command::Moment(Deferred(cmd)) => moment::run(global, cmd, printer),
        Command::Rewind(Deferred(args)) => rewind::run(global, args, printer),
        Command::Resume(Deferred(args)) => resume::run(global, args, printer),
        Command::Ui(Deferred(args)) => ui::run(global, args, printer),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_command_line_is_well_formed() {
        use clap::CommandFactory;
        super::Cli::command().debug_assert();
        super::whole_tree().debug_assert();
    }

    /// Each command's arguments are built when the parse reaches it (`deferred.rs`): its help
    /// must read as that of the tree built whole, description included.
    #[test]
    fn every_command_built_on_demand_has_the_help_of_the_whole_tree() {
        use clap::CommandFactory;
        let help = |cmd: clap::Command, path: &[&str]| {
            let argv = std::iter::once("cairn").chain(path.iter().copied()).chain(["--help"]);
            cmd.try_get_matches_from(argv).unwrap_err().render().to_string()
        };
        let whole = super::whole_tree();
        let mut paths: Vec<Vec<&str>> = Vec::new();
        for sub in whole.get_subcommands() {
            paths.push(vec![sub.get_name()]);
            for inner in sub.get_subcommands().filter(|s| s.get_name() != "help") {
                paths.push(vec![sub.get_name(), inner.get_name()]);
            }
        }
        assert!(paths.len() > 60, "{paths:?}");
        for path in &paths {
            let on_demand = help(super::negatives(super::Cli::command()), path);
            assert_eq!(on_demand, help(whole.clone(), path), "cairn {}", path.join(" "));
        }
    }
}
