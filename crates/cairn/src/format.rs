//! Human-readable formatting: sizes, counts, snapshot lines and tables.

use std::borrow::Cow;

use cairn_lib::{NotCovered, Snapshot};

/// `1.5 MiB`-style sizes.
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = n as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 { format!("{n} B") } else { format!("{value:.1} {}", UNITS[unit]) }
}

/// `0.35s` / `12ms`.
pub fn millis(ms: u64) -> String {
    if ms < 1000 { format!("{ms}ms") } else { format!("{:.2}s", ms as f64 / 1000.0) }
}

/// How many hex digits of an id human lists show: the fewest (at least 8) at which each id of
/// `shown` differs from every other id of `all`, the ids a prefix is resolved among. One length
/// for the whole list keeps its column aligned, as `git log --abbrev` does.
pub fn short_id_len(shown: &[String], all: &[String]) -> usize {
    let hex = |id: &str| id.replace('-', "");
    let mut sorted: Vec<String> = all.iter().map(|id| hex(id)).collect();
    sorted.sort();
    sorted.dedup();
    let common = |a: &str, b: &str| a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
    let mut len = 8;
    for id in shown.iter().map(|id| hex(id)) {
        // Only the neighbours in sorted order can share the longest prefix with it.
        let at = sorted.partition_point(|other| *other < id);
        let before = at.checked_sub(1).and_then(|i| sorted.get(i));
        let after = sorted[at..].iter().find(|other| **other != id);
        for other in before.into_iter().chain(after) {
            len = len.max(common(&id, other) + 1);
        }
    }
    len
}

/// The first `hex_digits` hex digits of `id`, with its hyphens, so that it is a prefix of the
/// id as written in full (and accepted back as a reference).
pub fn short_id(id: &str, hex_digits: usize) -> String {
    let mut out = String::new();
    let mut seen = 0;
    for c in id.chars() {
        if seen == hex_digits {
            break;
        }
        if c != '-' {
            seen += 1;
        }
        out.push(c);
    }
    out
}

/// A record's creation time in a table: `2026-06-01 12:34:56`, whole seconds in UTC, so every
/// row is as wide (the stored RFC 3339 times drop trailing zeros of the fraction).
pub fn created(rfc3339: &str) -> String {
    rfc3339.chars().take(19).collect::<String>().replace('T', " ")
}

/// A capture's stats on one indented line: what it holds, then (with `read`, for a capture
/// that walked the tree) the bytes read, and what it stored and how long it took.
pub fn capture_stats(s: &Snapshot, read: bool) -> String {
    let t = &s.stats;
    let read = if read { format!("read {}, ", bytes(t.read_bytes)) } else { String::new() };
    format!(
        "  {} files, {} dirs, {} links, {}; {read}stored {} new ({} after compression) in {}\n",
        t.files,
        t.dirs,
        t.symlinks,
        bytes(t.bytes),
        bytes(t.new_bytes),
        bytes(t.stored_bytes),
        millis(t.duration_ms),
    )
}

/// The id, with the name in brackets when there is one.
pub fn label(s: &Snapshot) -> String {
    match &s.name {
        Some(n) => format!("{} ({n})", s.id),
        None => s.id.to_string(),
    }
}

/// What a snapshot leaves out, one line per reason; empty when it holds everything.
pub fn not_covered(nc: &NotCovered) -> String {
    let mut out = String::new();
    if nc.ignored > 0 {
        out.push_str(&format!(
            "not covered: {} ignored path(s) (.gitignore/.cairnignore; --no-ignore captures them)\n",
            nc.ignored
        ));
    }
    for s in &nc.skipped {
        out.push_str(&format!("not covered: {} ({})\n", path(&s.path), text(&s.reason)));
    }
    for s in &nc.secrets {
        out.push_str(&format!(
            "not covered: {} (secret: {}; --include-secrets captures it)\n",
            path(&s.path),
            s.rule
        ));
    }
    out
}

/// A left-aligned table with a header row.
pub fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.len()).collect();
    for row in rows {
        for (i, cell) in row.iter().enumerate() {
            widths[i] = widths[i].max(cell.chars().count());
        }
    }
    let line = |cells: Vec<String>| {
        let padded: Vec<String> = cells
            .iter()
            .enumerate()
            .map(|(i, c)| if i + 1 == cells.len() { c.clone() } else { format!("{c:<w$}", w = widths[i]) })
            .collect();
        padded.join("  ").trim_end().to_owned()
    };
    let mut out = line(header.iter().map(|h| (*h).to_owned()).collect());
    out.push('\n');
    for row in rows {
        out.push_str(&line(row.clone()));
        out.push('\n');
    }
    out
}

/// One line on an interrupted restore found and resolved before the command ran.
pub fn recovered(r: &cairn_lib::ops::interrupted::Recovered) -> String {
    let done = match r.outcome.as_str() {
        "finished" => format!("finished restoring snapshot {}", r.found.restoring),
        _ => format!("put back snapshot {} (the state before the restore)", r.found.safety),
    };
    format!(
        "interrupted restore of {}: the tree as found is saved as snapshot {}; {done}\n",
        path(&r.found.target),
        r.recovery_snapshot
    )
}

/// A name for one line of output (a path, a target, a link target, an archive): every
/// control character is escaped as [`text`] does, and a backslash is doubled, so the line
/// reads back as exactly one name, as `ls -b` and git's quoted paths do.
pub fn path(p: &str) -> Cow<'_, str> {
    escape(p, true)
}

/// Free text from a user or an archive (a description, an error, a notice) made safe for a
/// terminal: a control character is written as its C escape (`\n`, `\t`, `\a`, …) or in
/// octal (`\033` for ESC; a C1 control as its two UTF-8 bytes, `\302\233`), so no byte of
/// it can move the cursor, clear the screen, ring the bell or start a new line. Backslashes
/// stay as they are: an error quotes names with Rust's `{:?}`, which escaped them already.
pub fn text(t: &str) -> Cow<'_, str> {
    escape(t, false)
}

fn escape(s: &str, backslash: bool) -> Cow<'_, str> {
    let special = |c: char| c.is_control() || (backslash && c == '\\');
    if !s.contains(special) {
        return s.into();
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\\' if backslash => out.push_str("\\\\"),
            '\x07' => out.push_str("\\a"),
            '\x08' => out.push_str("\\b"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\x0b' => out.push_str("\\v"),
            '\x0c' => out.push_str("\\f"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => {
                for byte in c.encode_utf8(&mut [0; 4]).bytes() {
                    out.push_str(&format!("\\{byte:03o}"));
                }
            }
            c => out.push(c),
        }
    }
    out.into()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(all: &[&str]) -> Vec<String> {
        all.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn short_ids_are_eight_digits_unless_a_longer_prefix_is_shared() {
        let all = ids(&[
            "019a0c2f-4a6d-7e4b-9a2c-1d5e8b7a4c31",
            "019a0c2f-4a6e-7000-8000-000000000000",
            "02000000-0000-7000-8000-000000000000",
        ]);
        assert_eq!(short_id_len(&all[2..], &all), 8);
        // The first two share 11 hex digits, so 12 tell them apart, for every row.
        assert_eq!(short_id_len(&all, &all), 12);
        assert_eq!(short_id(&all[0], 12), "019a0c2f-4a6d");
        assert_eq!(short_id(&all[0], 8), "019a0c2f");
        assert_eq!(short_id(&all[0], 9), "019a0c2f-4");
    }

    #[test]
    fn control_characters_are_escaped_as_ls_b_and_git_do() {
        assert_eq!(path("plain/été.txt"), "plain/été.txt");
        assert!(matches!(path("plain"), Cow::Borrowed(_)));
        assert_eq!(path("a\x1b[2Jb\x07"), "a\\033[2Jb\\a");
        assert_eq!(path("tab\there\nnew\\back\x7f"), "tab\\there\\nnew\\\\back\\177");
        assert_eq!(path("c1\u{9b}31m"), "c1\\302\\23331m");
        assert_eq!(text("entry \"a\\u{1b}\" \x1b]0;x\x07"), "entry \"a\\u{1b}\" \\033]0;x\\a");
    }

    #[test]
    fn an_id_that_is_not_listed_still_lengthens_the_prefix() {
        let all = ids(&["019a0c2f-4a6d-7e4b-9a2c-1d5e8b7a4c31", "019a0c2f-4a6d-7e4b-9a2c-1d5e8b7a4c32"]);
        assert_eq!(short_id_len(&all[..1], &all), 32);
    }
}
