//! A command's arguments built only when the command line names that command.
//!
//! clap builds every subcommand's arguments before it parses: about 30 commands and their
//! groups, 0.6 ms of every run (`cairn --version` took 2.0 ms, now 1.4 ms), where a hook or a
//! watched save takes a few milliseconds in all. Each command's arguments are handed to clap's
//! `defer`, which builds them when the parse enters that command. What shows the whole tree
//! (completions, man pages) asks for it built at once with [`whole_tree`].

use std::cell::Cell;

use clap::builder::StyledStr;
use clap::{ArgMatches, Args, Command, CommandFactory, FromArgMatches, Subcommand};

/// A command's arguments (`T: Args`) or group of commands (`T: Subcommand`), built on demand.
#[derive(Debug)]
pub struct Deferred<T>(pub T);

thread_local! {
    /// Set while [`whole_tree`] builds on this thread: nothing is deferred then. Per thread, so
    /// a command line parsed on another thread meanwhile is still built on demand.
    static WHOLE: Cell<bool> = const { Cell::new(false) };
}

/// The command line with every command built, as clap's generators need it: the help
/// subcommand lists the subcommands each command has when the tree is built.
pub fn whole_tree() -> Command {
    WHOLE.set(true);
    let cmd = super::Cli::command();
    WHOLE.set(false);
    cmd
}

/// The command line's rule for every option: a value may look like a negative number, so `-1`
/// reaches the option's own check (and its one-line refusal) instead of being taken for a flag.
/// Applied to the root, and to each command as it is built.
pub fn negatives(command: Command) -> Command {
    command
        .mut_args(|arg| if arg.get_action().takes_values() { arg.allow_negative_numbers(true) } else { arg })
        .mut_subcommands(negatives)
}

/// `cmd` built by `augment` now or, outside [`whole_tree`], when it is parsed.
fn augmented(cmd: Command, augment: fn(Command) -> Command) -> Command {
    if WHOLE.get() { augment(cmd) } else { cmd.defer(augment) }
}

/// Runs `augment` on `cmd` keeping the description `cmd` has: the command's own (from its
/// variant in the enum of commands) is set before a deferred build, which would otherwise
/// replace it with the description of its arguments' type.
fn keeping_about(cmd: Command, augment: impl FnOnce(Command) -> Command) -> Command {
    let about: Option<StyledStr> = cmd.get_about().cloned();
    let long: Option<StyledStr> = cmd.get_long_about().cloned();
    let mut cmd = negatives(augment(cmd));
    if let Some(about) = about {
        cmd = cmd.about(about);
    }
    match long {
        Some(long) => cmd.long_about(long),
        None => cmd.long_about(None),
    }
}

impl<T: FromArgMatches> FromArgMatches for Deferred<T> {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        T::from_arg_matches(matches).map(Self)
    }

    fn from_arg_matches_mut(matches: &mut ArgMatches) -> Result<Self, clap::Error> {
        T::from_arg_matches_mut(matches).map(Self)
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        self.0.update_from_arg_matches(matches)
    }

    fn update_from_arg_matches_mut(&mut self, matches: &mut ArgMatches) -> Result<(), clap::Error> {
        self.0.update_from_arg_matches_mut(matches)
    }
}

impl<T: Args> Args for Deferred<T> {
    fn augment_args(cmd: Command) -> Command {
        augmented(cmd, |cmd| keeping_about(cmd, T::augment_args))
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        augmented(cmd, |cmd| keeping_about(cmd, T::augment_args_for_update))
    }

    fn group_id() -> Option<clap::Id> {
        T::group_id()
    }
}

impl<T: Subcommand> Subcommand for Deferred<T> {
    fn augment_subcommands(cmd: Command) -> Command {
        augmented(cmd, |cmd| keeping_about(cmd, T::augment_subcommands))
    }

    fn augment_subcommands_for_update(cmd: Command) -> Command {
        augmented(cmd, |cmd| keeping_about(cmd, T::augment_subcommands_for_update))
    }

    fn has_subcommand(name: &str) -> bool {
        T::has_subcommand(name)
    }
}
