//! The command error is the engine's error as it is: its kind sets the exit code (2 for bad
//! input, 1 for everything else) and its hints are rendered with the CLI's flag and command
//! names ([`cairn_mcp::words::CliWords`]). Messages quote names and archive bytes as they are;
//! the printer escapes control characters when it writes the line to a terminal
//! ([`crate::format::text`]), so no constructor has to, and `--json` keeps them exact.

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

/// The longest error line printed whole; a longer one keeps its start and its last clause
/// (what to do), with the middle cut.
// As long as the library lets a message grow (`cairn_lib` cuts at 1,000): an error that lists
// what it undid (a moment restore) must keep the list.
const MAX_LINE: usize = 1000;

/// One line of at most [`MAX_LINE`] characters: lines of a multi-line message (a library's
/// error text) are joined with `; `, runs of spaces collapse, and a long line loses the middle
/// of its first part, never its last clause, which says what to do.
pub fn fit_line(text: &str) -> String {
    let joined = text
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("; ");
    if joined.chars().count() <= MAX_LINE {
        return joined;
    }
    let (head, tail) = match joined.rsplit_once("; ") {
        Some((head, tail)) if tail.chars().count() < MAX_LINE / 2 => (head, Some(tail)),
        _ => (joined.as_str(), None),
    };
    let room = MAX_LINE - tail.map_or(0, |t| t.chars().count() + 2) - 1;
    let cut: String = head.chars().take(room).collect();
    // End at a word, not inside one.
    let cut = match cut.rfind(' ') {
        Some(i) if i > room / 2 => &cut[..i],
        _ => cut.as_str(),
    };
    match tail {
        Some(tail) => format!("{cut}…; {tail}"),
        None => format!("{cut}…"),
    }
}

/// A refusal of the command line in cairn's words, on one line: what is wrong and where the
/// help of `command` (`cairn remove`) is. A negative number where a count goes says that counts start at 0.
pub fn usage_sentence(err: &clap::Error, command: &str) -> String {
    use clap::error::{ContextKind, ContextValue};
    let context = |kind| match err.get(kind) {
        Some(ContextValue::String(s)) => Some(s.clone()),
        _ => None,
    };
    let rendered = err.render().to_string();
    let help = format!("see `{command} --help`");
    if let (Some(arg), Some(value)) = (context(ContextKind::InvalidArg), context(ContextKind::InvalidValue))
        && value.starts_with('-')
        && value[1..].parse::<f64>().is_ok()
    {
        let option = arg.split_whitespace().next().unwrap_or(&arg);
        return format!("{option} takes a number of 0 or more, not {value}; {help}");
    }
    let mut lines = rendered.lines();
    let first = lines.next().unwrap_or_default();
    let mut first = first.strip_prefix("error: ").unwrap_or(first).trim_end_matches('.').to_owned();
    // "the following required arguments were not provided:" lists them on the lines below.
    if first.ends_with(':') {
        let listed: Vec<&str> = lines.take_while(|l| l.starts_with(' ')).map(str::trim).collect();
        first = format!("{} {}", first, listed.join(", "));
    }
    if let Some(ContextValue::Strings(valid)) = err.get(ContextKind::ValidValue) {
        first = format!("{first} (one of {})", valid.join(", "));
    }
    // clap's tips ("to pass '-x' as a value, use '-- -x'", "a similar value exists") stay.
    for tip in rendered.lines().filter_map(|l| l.trim().strip_prefix("tip: ")) {
        first = format!("{first} ({tip})");
    }
    format!("{first}; {help}")
}

/// The error's sentence in the CLI's words.
pub fn render(err: &CommandError) -> String {
    fit_line(&err.render(&cairn_mcp::words::CliWords))
}

/// The result of a command.
pub type CommandResult<T = ()> = Result<T, CommandError>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_error_lines_are_cut_to_one_readable_sentence() {
        assert_eq!(fit_line("short; fix it"), "short; fix it");
        assert_eq!(
            fit_line("a library said:\n  line two\n\n  line three"),
            "a library said:; line two; line three"
        );
        let long = format!("could not read {}; run `cairn check`", "/very/long/path".repeat(150));
        let fitted = fit_line(&long);
        assert!(fitted.chars().count() <= MAX_LINE, "{fitted}");
        assert!(fitted.starts_with("could not read /very/long/path"));
        assert!(fitted.ends_with("…; run `cairn check`"), "{fitted}");
        assert!(!fitted.contains('\n'));
    }
}
