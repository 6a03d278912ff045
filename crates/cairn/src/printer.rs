//! All output goes through the printer: results to stdout (text, or JSON with `--json`),
//! progress and errors to stderr. Nothing else in the binary writes to a terminal.

use std::io::{IsTerminal, Write};
use std::sync::mpsc::RecvTimeoutError;
use std::time::Duration;

use cairn_lib::ops::save::Progress;
use serde::Serialize;

use crate::error::CommandError;

/// Writes results and errors in the format the user asked for.
pub struct Printer {
    json: bool,
    /// Whether a result is on stdout already: with `--json`, stdout holds one JSON document,
    /// so an error after a result (`check` that found problems) goes to stderr only.
    printed: std::cell::Cell<bool>,
}

impl Printer {
    /// A printer for `--json` (or text) output.
    pub fn new(json: bool) -> Self {
        Self { json, printed: std::cell::Cell::new(false) }
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
        self.printed.set(true);
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(text.as_bytes());
        if !text.ends_with('\n') {
            let _ = out.write_all(b"\n");
        }
    }

    /// Prints a one-line notice the engine sends while it works (`note: …` on stderr, in
    /// text and JSON modes alike, so stdout stays one result).
    pub fn notice(line: &str) {
        let _ = writeln!(std::io::stderr().lock(), "note: {}", crate::format::text(line));
    }

    /// Prints an error: `error: …` on stderr, or a JSON object on stdout with `--json`.
    pub fn error(&self, err: &CommandError) {
        if self.json && !self.printed.get() {
            let value = serde_json::json!({
                "error": crate::error::render(err),
                "kind": err.kind(),
                "code": err.code(),
            });
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{}", serde_json::to_string_pretty(&value).unwrap_or_default());
        }
        // The JSON above is exact (JSON escapes control characters); a terminal gets them
        // escaped, since an error may quote an archive's or a user's bytes.
        let line = crate::error::render(err);
        let _ = writeln!(std::io::stderr().lock(), "error: {}", crate::format::text(&line));
    }

    /// A spinner on stderr while `work` runs, shown only when stderr is a terminal.
    pub fn with_progress<T>(&self, message: &str, work: impl FnOnce() -> T) -> T {
        self.with_counts(message, None, work)
    }

    /// A spinner on stderr while `work` runs that also shows the live counts in `progress`
    /// (which `work` adds to), shown only when stderr is a terminal.
    pub fn with_counts<T>(&self, message: &str, progress: Option<&Progress>, work: impl FnOnce() -> T) -> T {
        self.with_text(message, &|| counts(message, progress), work)
    }

    /// A spinner on stderr while `work` runs, showing what `text` says (asked ten times a
    /// second, from counters `work` adds to) and what went to and from a remote store.
    pub fn with_text<T>(
        &self,
        message: &str,
        text: &(dyn Fn() -> String + Sync),
        work: impl FnOnce() -> T,
    ) -> T {
        if !std::io::stderr().is_terminal() {
            return work();
        }
        let bar = indicatif::ProgressBar::new_spinner();
        bar.set_message(message.to_owned());
        bar.enable_steady_tick(Duration::from_millis(100));
        let out = std::thread::scope(|scope| {
            // The library only bumps counters; this thread turns them into the spinner's text
            // until the work is done (the sender is dropped).
            let (done, ticks) = std::sync::mpsc::channel::<()>();
            let bar = &bar;
            scope.spawn(move || {
                while let Err(RecvTimeoutError::Timeout) = ticks.recv_timeout(Duration::from_millis(100)) {
                    bar.set_message(with_traffic(text()));
                }
            });
            let out = work();
            drop(done);
            out
        });
        bar.finish_and_clear();
        out
    }
}

/// `text`, then what this command sent to and received from a remote store, once it did.
fn with_traffic(text: String) -> String {
    let traffic = cairn_lib::Traffic::now();
    if traffic.sent == 0 && traffic.received == 0 {
        return text;
    }
    let (up, down) = (crate::format::bytes(traffic.sent), crate::format::bytes(traffic.received));
    format!("{text} [{up} sent, {down} received in {} requests]", traffic.requests)
}

/// The spinner's text for `progress`: what was scanned and what was written, once there is any.
fn counts(message: &str, progress: Option<&Progress>) -> String {
    let Some(progress) = progress else { return message.to_owned() };
    let mut parts = Vec::new();
    if progress.scanned_files() > 0 {
        let bytes = crate::format::bytes(progress.scanned_bytes());
        parts.push(format!("{} files ({bytes}) scanned", progress.scanned_files()));
    }
    if progress.written_files() > 0 {
        let bytes = crate::format::bytes(progress.written_bytes());
        parts.push(format!("{} files ({bytes}) written", progress.written_files()));
    }
    if parts.is_empty() { message.to_owned() } else { format!("{message}: {}", parts.join(", ")) }
}
