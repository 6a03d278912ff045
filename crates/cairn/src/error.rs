//! The command error: one sentence, a kind that sets the exit code (1 failure, 2 usage).

use cairn_lib::ErrorKind;

/// A failed command.
#[derive(Debug)]
pub struct CommandError {
    /// What went wrong and what to do, in one sentence.
    pub message: String,
    /// The engine's classification, when the engine reported it.
    pub kind: Option<ErrorKind>,
    /// A machine-readable code some profiles show.
    pub code: Option<&'static str>,
}

impl CommandError {
    /// A usage error (exit code 2).
    pub fn usage(message: impl Into<String>) -> Self {
        Self { message: message.into(), kind: Some(ErrorKind::InvalidInput), code: None }
    }

    /// 2 for bad input, 1 for everything else.
    pub fn exit_code(&self) -> u8 {
        match self.kind {
            Some(ErrorKind::InvalidInput) => 2,
            _ => 1,
        }
    }
}

impl From<cairn_lib::Error> for CommandError {
    fn from(err: cairn_lib::Error) -> Self {
        let mut message = err.message().to_owned();
        if err.code() == Some("catalog_damaged") {
            message.push_str(" (`cairn repair`)");
        }
        Self { message, kind: Some(err.kind()), code: err.code() }
    }
}

/// The result of a command.
pub type CommandResult<T = ()> = Result<T, CommandError>;
