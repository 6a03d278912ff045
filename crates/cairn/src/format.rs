//! Human-readable formatting: sizes, counts, snapshot lines and tables.

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
        out.push_str(&format!("not covered: {} ({})\n", s.path, s.reason));
    }
    for s in &nc.secrets {
        out.push_str(&format!(
            "not covered: {} (secret: {}; --include-secrets captures it)\n",
            s.path, s.rule
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
