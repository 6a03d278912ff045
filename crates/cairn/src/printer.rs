//! All output goes through the printer: results to stdout (text, or JSON with `--json`),
//! progress and errors to stderr. Nothing else in the binary writes to a terminal.

use std::io::{IsTerminal, Write};
use std::time::Duration;

use serde::Serialize;

use crate::error::CommandError;

/// Writes results and errors in the format the user asked for.
pub struct Printer {
    json: bool,
}

impl Printer {
    /// A printer for `--json` (or text) output.
    pub fn new(json: bool) -> Self {
        Self { json }
    }

    /// Prints `value` as JSON, or the text `human` builds from it.
    pub fn result<T: Serialize>(&self, value: &T, human: impl FnOnce(&T) -> String) {
        let text = if self.json {
            match serde_json::to_string_pretty(value) {
                Ok(t) => t,
                Err(e) => format!("{{\"error\": \"could not encode the result: {e}\"}}"),
            }
        } else {
            human(value)
        };
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(text.as_bytes());
        if !text.ends_with('\n') {
            let _ = out.write_all(b"\n");
        }
    }

    /// Prints an error: `error: …` on stderr, or a JSON object on stdout with `--json`.
    pub fn error(&self, err: &CommandError) {
        if self.json {
            let value = serde_json::json!({
                "error": err.message,
                "kind": err.kind,
                "code": err.code,
            });
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{}", serde_json::to_string_pretty(&value).unwrap_or_default());
        }
        let _ = writeln!(std::io::stderr().lock(), "error: {}", err.message);
    }

    /// A spinner on stderr while `work` runs, shown only when stderr is a terminal.
    pub fn with_progress<T>(&self, message: &str, work: impl FnOnce() -> T) -> T {
        if !std::io::stderr().is_terminal() {
            return work();
        }
        let bar = indicatif::ProgressBar::new_spinner();
        bar.set_message(message.to_owned());
        bar.enable_steady_tick(Duration::from_millis(100));
        let out = work();
        bar.finish_and_clear();
        out
    }
}
