//! The engine's error type.
//!
//! Rules every error in cairn follows:
//! - The message is one sentence a person (or an agent) can act on: what is wrong, then what to do.
//! - Every I/O error names the path it happened on.
//! - No error carries a Rust debug dump; `Display` is the whole message.
//! - [`ErrorKind`] decides how a front end reports it: the CLI's exit code, the MCP `isError` text.
//! - The message speaks no front's language: no CLI flag, no `cairn …` command, no environment
//!   variable, no MCP tool name. What to do next is a structured [`Hint`], and an option the
//!   message is about is named through [`Error::invalid_value`]; each front renders both in its
//!   own words through [`Words`] (the CLI `--force`, the MCP server `force: true`).
//! - Input echoed into a message is cut to [`ECHO_LIMIT`] characters here, once, so a 10 MB
//!   argument never comes back as a 10 MB reply.

mod hint;

use std::borrow::Cow;
use std::path::Path;

pub use hint::{Hint, NeutralWords, Operation, Words};

/// The result type of every fallible engine call.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The code of the refusal a reader gets on a store that does not exist: a front that can
/// answer without a store (defaults, say) tells it from other failures by this.
pub const NO_STORE: &str = "NO_STORE";

/// How many characters of a message are kept; the rest is cut (it can only be echoed input).
pub const ECHO_LIMIT: usize = 1000;

/// What class of failure an [`Error`] is; front ends map it to exit codes and hints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The caller passed something invalid (a bad name, a malformed duration, conflicting options).
    InvalidInput,
    /// A snapshot, session or target that was asked for does not exist.
    NotFound,
    /// The operation would overwrite or break something that exists (a taken name, a non-empty dir).
    Conflict,
    /// Another cairn process holds the lock this operation needs.
    Locked,
    /// The agent asked for an operation the user has not allowed.
    PermissionDenied,
    /// The store is damaged, of another format version, or an object failed its hash check.
    Corrupt,
    /// The operating system refused an operation (I/O, permissions, disk full).
    Io,
    /// An external component (Docker, a debug adapter) failed.
    External,
}

/// How the hints follow the message: as the next clause, or as an alternative to what the
/// message already suggests ("pick another name, or …").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lead {
    Clause,
    Or,
}

/// An engine error: a kind, a one-sentence message and what to do about it.
#[derive(Debug, Clone)]
pub struct Error {
    kind: ErrorKind,
    /// The option the message is about, named by each front (`invalid --retain-for "x": …`).
    option: Option<&'static str>,
    message: String,
    hints: Vec<Hint>,
    /// What following the hints achieves ("to move the name to the new snapshot").
    purpose: Option<Cow<'static, str>>,
    lead: Lead,
    /// A machine-readable code some compatibility profiles expose (e.g. `SNAPSHOT_NOT_FOUND`).
    code: Option<&'static str>,
}

impl std::error::Error for Error {}

/// Neutral words: what a log line or a test reads.
impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.render(&NeutralWords))
    }
}

impl Error {
    /// Builds an error of `kind` with `message`.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            option: None,
            message: cut(message.into()),
            hints: Vec::new(),
            purpose: None,
            lead: Lead::Clause,
            code: None,
        }
    }

    /// An [`ErrorKind::InvalidInput`] error.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidInput, message)
    }

    /// An [`ErrorKind::InvalidInput`] error about the value of `option` (an options field
    /// name, such as `retain_for`): each front names the option its way and the message follows,
    /// as `invalid --retain-for "120": want …`.
    pub fn invalid_value(option: &'static str, value: &str, why: impl std::fmt::Display) -> Self {
        let mut err = Self::invalid(format!("{:?}: {why}", echo(value)));
        err.option = Some(option);
        err
    }

    /// An [`ErrorKind::NotFound`] error.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::NotFound, message)
    }

    /// An [`ErrorKind::Conflict`] error.
    pub fn conflict(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Conflict, message)
    }

    /// An [`ErrorKind::Corrupt`] error.
    pub fn corrupt(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Corrupt, message)
    }

    /// An I/O error that names the path it happened on and what was being done.
    pub fn io(action: &str, path: &Path, err: std::io::Error) -> Self {
        let hint = match err.kind() {
            std::io::ErrorKind::PermissionDenied => ": check its permissions or run as its owner",
            std::io::ErrorKind::StorageFull => ": free some disk space and retry",
            _ => "",
        };
        Self::new(ErrorKind::Io, format!("could not {action} {}: {err}{hint}", path.display()))
    }

    /// Adds what to do about it; several hints read as alternatives ("… or …").
    pub fn hint(mut self, hint: Hint) -> Self {
        self.hints.push(hint);
        self
    }

    /// Adds a hint offered as an alternative to what the message already suggests: the message
    /// "pick another name" reads "pick another name, or pass --force".
    pub fn or_hint(mut self, hint: Hint) -> Self {
        self.lead = Lead::Or;
        self.hint(hint)
    }

    /// Adds several hints at once (those of another error this one wraps).
    pub fn with_hints(mut self, hints: &[Hint]) -> Self {
        self.hints.extend_from_slice(hints);
        self
    }

    /// Says what following the hints achieves, as a phrase that starts with "to" (or with a
    /// comma, to follow the hint directly: ", then retry").
    pub fn purpose(mut self, purpose: impl Into<Cow<'static, str>>) -> Self {
        self.purpose = Some(purpose.into());
        self
    }

    /// Attaches a machine-readable code (used by compatibility profiles).
    pub fn with_code(mut self, code: &'static str) -> Self {
        self.code = Some(code);
        self
    }

    /// Prefixes the message with context, keeping the kind and the hints.
    pub fn context(mut self, context: impl std::fmt::Display) -> Self {
        let inner = self.render_message(&NeutralWords);
        self.option = None;
        self.message = cut(format!("{context}: {inner}"));
        self
    }

    /// The class of this failure.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The machine-readable code, if one was attached.
    pub fn code(&self) -> Option<&'static str> {
        self.code
    }

    /// What to do about it, for a front to render.
    pub fn hints(&self) -> &[Hint] {
        &self.hints
    }

    /// The whole sentence in neutral words.
    pub fn message(&self) -> String {
        self.to_string()
    }

    /// The whole sentence in a front's words: the message, then its hints.
    pub fn render(&self, words: &dyn Words) -> String {
        let mut out = self.render_message(words);
        if self.hints.is_empty() {
            return out;
        }
        out.push_str(match self.lead {
            Lead::Clause => "; ",
            Lead::Or => ", or ",
        });
        let rendered: Vec<String> = self.hints.iter().map(|h| words.hint(h)).collect();
        out.push_str(&rendered.join(" or "));
        if let Some(purpose) = &self.purpose {
            if !purpose.starts_with(',') {
                out.push(' ');
            }
            out.push_str(purpose);
        }
        out
    }

    /// The message without its hints.
    pub fn render_message(&self, words: &dyn Words) -> String {
        match self.option {
            Some(option) => words.invalid_value(option, &self.message),
            None => self.message.clone(),
        }
    }
}

/// Cuts text to [`ECHO_LIMIT`] characters, saying how much was left out.
fn cut(text: String) -> String {
    match text.char_indices().nth(ECHO_LIMIT) {
        Some((at, _)) => format!("{}… ({} more bytes cut)", &text[..at], text.len() - at),
        None => text,
    }
}

/// A piece of the caller's input, cut for echoing in a message (200 characters: enough to
/// recognise it).
pub fn echo(input: &str) -> Cow<'_, str> {
    const ECHO: usize = 200;
    match input.char_indices().nth(ECHO) {
        Some((at, _)) => Cow::Owned(format!("{}…", &input[..at])),
        None => Cow::Borrowed(input),
    }
}

impl From<rusqlite::Error> for Error {
    fn from(err: rusqlite::Error) -> Self {
        use rusqlite::ErrorCode::{DatabaseCorrupt, NotADatabase};
        match err.sqlite_error_code() {
            // The catalog can be rebuilt from the record objects and pack headers.
            Some(DatabaseCorrupt | NotADatabase) => {
                Self::new(ErrorKind::Corrupt, format!("the store's catalog is damaged ({err})"))
                    .with_code("catalog_damaged")
                    .hint(Hint::Run(Operation::Repair))
            }
            _ => Self::new(ErrorKind::Io, format!("the store's catalog failed: {err}"))
                .hint(Hint::Run(Operation::Check)),
        }
    }
}

/// Extension for attaching a path to `std::io::Result`s.
pub trait IoContext<T> {
    /// Converts an I/O error into an [`Error`] naming `path` and the `action` that failed.
    fn at(self, action: &str, path: &Path) -> Result<T>;
}

impl<T> IoContext<T> for std::io::Result<T> {
    fn at(self, action: &str, path: &Path) -> Result<T> {
        self.map_err(|e| Error::io(action, path, e))
    }
}

impl<T> IoContext<T> for rustix::io::Result<T> {
    fn at(self, action: &str, path: &Path) -> Result<T> {
        self.map_err(|e| Error::io(action, path, e.into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_huge_echoed_input_is_cut() {
        let huge = "x".repeat(10 << 20);
        let err = Error::not_found(format!("no snapshot {huge:?}")).hint(Hint::Run(Operation::ListSnapshots));
        let text = err.to_string();
        assert!(text.len() < 2 * ECHO_LIMIT, "{}", text.len());
        assert!(text.ends_with("; list the snapshots"), "{}", &text[text.len() - 80..]);
    }

    #[test]
    fn hints_follow_the_message_in_the_fronts_words() {
        let err = Error::conflict("a snapshot named \"a\" already exists; pick another name")
            .or_hint(Hint::SetOption("force"))
            .purpose("to move the name to the new snapshot");
        assert_eq!(
            err.to_string(),
            "a snapshot named \"a\" already exists; pick another name, or set the force option to move the name to the new snapshot"
        );
        let err = Error::invalid_value("retain_for", "120", "want a unit-bearing value");
        assert_eq!(err.to_string(), "invalid retain_for \"120\": want a unit-bearing value");
    }
}
