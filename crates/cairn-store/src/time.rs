//! Timestamps: RFC 3339 in UTC everywhere a record shows a time.

use crate::error::{Error, Result};

/// The current time as RFC 3339 UTC with nanoseconds (`2026-06-01T19:41:12.123456789Z`).
pub fn now_rfc3339() -> String {
    jiff::Timestamp::now().to_string()
}

/// Parses an RFC 3339 timestamp; `option` is the options field it came from (`before_date`).
/// A bare date (`2026-06-01`) is that day's start in UTC: `--before-date` says "date", and a
/// user who gives one means the day, not a refusal.
pub fn parse_timestamp(option: &'static str, text: &str) -> Result<jiff::Timestamp> {
    if let Ok(date) = text.parse::<jiff::civil::Date>()
        && !text.contains('T')
        && let Ok(zoned) = date.to_zoned(jiff::tz::TimeZone::UTC)
    {
        return Ok(zoned.timestamp());
    }
    text.parse::<jiff::Timestamp>().map_err(|e| {
        Error::invalid_value(option, text, format!("{e}; use a date such as 2026-06-01 (midnight UTC) or an RFC 3339 time such as 2026-06-01T12:00:00Z"))
    })
}

/// Parses a timestamp written by cairn itself.
pub fn parse_record_time(text: &str) -> Result<jiff::Timestamp> {
    text.parse::<jiff::Timestamp>()
        .map_err(|e| Error::corrupt(format!("a record holds an invalid time {text:?}: {e}")))
}
