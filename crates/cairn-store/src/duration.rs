//! Unit-bearing durations (`90s`, `2m`, `1h30m`, `7d`), as every cairn option and tool argument takes them.

use std::time::Duration;

use crate::error::{Error, Result};

/// Parses a unit-bearing duration; `option` is the options field it came from (`retain_for`,
/// `wait_timeout`), which each front names its way in the error.
///
/// A bare number is refused: "120" could be seconds or minutes, and a wrong guess on a retention
/// rule deletes snapshots.
pub fn parse_duration(option: &'static str, text: &str) -> Result<Duration> {
    duration_of(text).map_err(|why| Error::invalid_value(option, text, why))
}

/// Parses a unit-bearing duration, or says why it is not one.
pub fn duration_of(text: &str) -> std::result::Result<Duration, String> {
    let trimmed = text.trim();
    if !trimmed.is_empty() && trimmed.chars().all(|c| c.is_ascii_digit() || c == '.') {
        return Err(BARE_NUMBER.to_owned());
    }
    humantime::parse_duration(trimmed).map_err(|e| format!("{e}; use a value like 2m, 90s, 1h30m or 7d"))
}

/// Why a bare number is refused (arcave's wording, which its profile matches on).
pub const BARE_NUMBER: &str = "want a unit-bearing value like 2m, 90s or 1h30m";

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
        let err = parse_duration("retain_for", "120").unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid retain_for \"120\": want a unit-bearing value like 2m, 90s or 1h30m"
        );
    }

    #[test]
    fn names_the_option_on_garbage() {
        let err = parse_duration("retain_for", "soon").unwrap_err();
        assert!(err.to_string().starts_with("invalid retain_for \"soon\""), "{err}");
    }
}
