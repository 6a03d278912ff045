//! Unit-bearing durations (`90s`, `2m`, `1h30m`, `7d`), as every cairn option and tool argument takes them.

use std::time::Duration;

use crate::error::{Error, Result};

/// Parses a unit-bearing duration; `what` names the option for the error (`--retain-for`, `wait_timeout`).
///
/// A bare number is refused: "120" could be seconds or minutes, and a wrong guess on a retention
/// rule deletes snapshots. Errors follow arcave's wording: a CLI flag (`what` starting with `--`)
/// reads `invalid --retain-for "120": …`, as every flag's parse error does; a tool argument
/// reads `wait_timeout "120": …`, arcave's exact refusal of a bare number.
pub fn parse_duration(what: &str, text: &str) -> Result<Duration> {
    let trimmed = text.trim();
    if !trimmed.is_empty() && trimmed.chars().all(|c| c.is_ascii_digit() || c == '.') {
        let prefix = if what.starts_with("--") { "invalid " } else { "" };
        return Err(Error::invalid(format!(
            "{prefix}{what} {text:?}: want a unit-bearing value like 2m, 90s or 1h30m"
        )));
    }
    humantime::parse_duration(trimmed).map_err(|e| {
        Error::invalid(format!("invalid {what} {text:?}: {e}; use a value like 2m, 90s, 1h30m or 7d"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_units() {
        assert_eq!(parse_duration("x", "90s").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("x", "2m").unwrap(), Duration::from_secs(120));
        assert_eq!(parse_duration("x", "1h30m").unwrap(), Duration::from_secs(5400));
        assert_eq!(parse_duration("x", "7d").unwrap(), Duration::from_secs(7 * 86400));
    }

    #[test]
    fn refuses_bare_numbers_with_an_example() {
        let err = parse_duration("wait_timeout", "120").unwrap_err();
        assert_eq!(err.to_string(), "wait_timeout \"120\": want a unit-bearing value like 2m, 90s or 1h30m");
        let err = parse_duration("--retain-for", "120").unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid --retain-for \"120\": want a unit-bearing value like 2m, 90s or 1h30m"
        );
    }

    #[test]
    fn names_the_option_on_garbage() {
        let err = parse_duration("--retain-for", "soon").unwrap_err();
        assert!(err.to_string().starts_with("invalid --retain-for \"soon\""), "{err}");
    }
}
