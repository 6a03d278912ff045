//! The command error is the engine's error as it is: its kind sets the exit code (2 for bad
//! input, 1 for everything else) and its hints are rendered with the CLI's flag and command
//! names ([`cairn_mcp::words::CliWords`]).

use cairn_lib::ErrorKind;

/// A failed command.
pub type CommandError = cairn_lib::Error;

/// A usage error (exit code 2).
pub fn usage(message: impl Into<String>) -> CommandError {
    CommandError::invalid(message)
}

/// 2 for bad input, 1 for everything else.
pub fn exit_code(err: &CommandError) -> u8 {
    match err.kind() {
        ErrorKind::InvalidInput => 2,
        _ => 1,
    }
}

/// The error's sentence in the CLI's words.
pub fn render(err: &CommandError) -> String {
    err.render(&cairn_mcp::words::CliWords)
}

/// The result of a command.
pub type CommandResult<T = ()> = Result<T, CommandError>;
