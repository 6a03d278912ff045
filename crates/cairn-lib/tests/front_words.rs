//! The library speaks no front's language: no string in `src/` outside test code names a CLI
//! flag (`--force`), a `cairn …` command in backticks, or an environment variable. What to do
//! is a structured hint each front renders (see `src/error/hint.rs`).
//!
//! Strings that are code for another program rather than words for a reader (the command line
//! cairn installs in an agent's settings, the source of a plugin it writes, the name of a
//! variable a front is told to read) are marked with a `// front words: …` comment on the line
//! before or on their own line, saying what they are; the scan passes them over.

use std::path::{Path, PathBuf};

/// Environment variables the fronts (or the agents cairn works with) read.
fn is_env_name(word: &str) -> bool {
    const PREFIXES: [&str; 5] = ["CAIRN_", "XDG_", "PI_", "CLAUDE_", "ARCAVE_"];
    word == "HOME" || PREFIXES.iter().any(|p| word.len() > p.len() && word.starts_with(p))
}

/// What is wrong with one string literal, if anything.
fn offences(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let bytes = text.as_bytes();
    for (i, _) in text.match_indices("--") {
        let before_is_dash = i > 0 && bytes[i - 1] == b'-';
        if !before_is_dash && bytes.get(i + 2).is_some_and(u8::is_ascii_lowercase) {
            let flag: String =
                text[i..].chars().take_while(|c| c.is_ascii_lowercase() || *c == '-').collect();
            found.push(format!("names the flag {flag}"));
        }
    }
    if text.contains("`cairn ") {
        found.push("names a `cairn …` command".to_owned());
    }
    let words = without_placeholders(text);
    for word in words.split(|c: char| !(c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')) {
        if is_env_name(word) {
            found.push(format!("names the environment variable {word}"));
        }
    }
    found
}

/// `text` without its format placeholders (`{NAME}`, `{0:?}`): a constant named in one is
/// code, not words a reader sees.
fn without_placeholders(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut inside = false;
    for c in text.chars() {
        match c {
            '{' => inside = true,
            '}' if inside => inside = false,
            _ if inside => {}
            c => out.push(c),
        }
    }
    out
}

/// The string literals of `source` outside comments and `#[cfg(test)]` items, each with its
/// line, except those that are the argument of an `env::var` call (a test hook reads one).
fn literals(source: &str) -> Vec<(usize, String)> {
    let chars: Vec<char> = source.chars().collect();
    let (mut i, mut line, mut depth) = (0, 1, 0usize);
    let mut test_item_pending = false;
    let mut skip_until_depth: Option<usize> = None;
    let mut out = Vec::new();
    let at = |i: usize, s: &str| chars[i..].iter().take(s.len()).copied().eq(s.chars());
    while i < chars.len() {
        let c = chars[i];
        if c == '\n' {
            line += 1;
        }
        if at(i, "//") {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
            continue;
        }
        if at(i, "/*") {
            while i < chars.len() && !at(i, "*/") {
                line += usize::from(chars[i] == '\n');
                i += 1;
            }
            i += 2;
            continue;
        }
        if at(i, "#[cfg(test)]") {
            test_item_pending = true;
            i += "#[cfg(test)]".len();
            continue;
        }
        let raw = c == 'r' && (chars.get(i + 1) == Some(&'"') || chars.get(i + 1) == Some(&'#'));
        if c == '"' || (raw && (i == 0 || !chars[i - 1].is_alphanumeric())) {
            let (start_line, start) = (line, i);
            let mut text = String::new();
            if raw {
                let mut hashes = 0;
                i += 1;
                while chars[i] == '#' {
                    hashes += 1;
                    i += 1;
                }
                i += 1;
                let close: String = std::iter::once('"').chain(std::iter::repeat_n('#', hashes)).collect();
                while i < chars.len() && !at(i, &close) {
                    line += usize::from(chars[i] == '\n');
                    text.push(chars[i]);
                    i += 1;
                }
                i += close.len();
            } else {
                i += 1;
                while i < chars.len() && chars[i] != '"' {
                    if chars[i] == '\\' {
                        text.push(chars[i]);
                        i += 1;
                    }
                    line += usize::from(chars[i] == '\n');
                    text.push(chars[i]);
                    i += 1;
                }
                i += 1;
            }
            let prefix: String = chars[start.saturating_sub(20)..start].iter().collect();
            let env_read = prefix.ends_with("env::var(") || prefix.ends_with("env::var_os(");
            if skip_until_depth.is_none() && !env_read {
                out.push((start_line, text));
            }
            continue;
        }
        if c == '\'' {
            // A char literal ('"', '\'', 'x'); anything else is a lifetime.
            if chars.get(i + 1) == Some(&'\\') {
                i += 2;
                while i < chars.len() && chars[i] != '\'' {
                    i += 1;
                }
                i += 1;
                continue;
            }
            if chars.get(i + 2) == Some(&'\'') {
                i += 3;
                continue;
            }
        }
        match c {
            '{' => {
                if test_item_pending {
                    skip_until_depth.get_or_insert(depth);
                    test_item_pending = false;
                }
                depth += 1;
            }
            '}' => {
                depth = depth.saturating_sub(1);
                if skip_until_depth == Some(depth) {
                    skip_until_depth = None;
                }
            }
            ';' => test_item_pending = false,
            _ => {}
        }
        i += 1;
    }
    out
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("src is readable") {
        let path = entry.expect("src entry").path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            if name != "tests.rs" && !name.ends_with("_tests.rs") {
                out.push(path);
            }
        }
    }
}

#[test]
fn no_library_string_names_a_flag_a_cli_command_or_an_environment_variable() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    files.sort();
    let mut problems = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).expect("source is readable");
        let lines: Vec<&str> = text.lines().collect();
        let marked = |line: usize| {
            [line.checked_sub(1), line.checked_sub(2)]
                .into_iter()
                .flatten()
                .any(|i| lines.get(i).is_some_and(|l| l.contains("// front words:")))
        };
        for (line, literal) in literals(&text) {
            if marked(line) {
                continue;
            }
            for offence in offences(&literal) {
                let shown = file.strip_prefix(&src).unwrap_or(file).display();
                problems.push(format!("src/{shown}:{line}: {offence}: {literal:?}"));
            }
        }
    }
    assert!(problems.is_empty(), "library strings in a front's words:\n{}", problems.join("\n"));
}

#[test]
fn the_scan_finds_each_kind_of_offence_and_skips_test_code() {
    let source = r##"
        fn f() { let a = "pass --force"; let b = "run `cairn list`"; let c = r#"set CAIRN_STORE"#; }
        // "a comment --with-flags"
        fn g() { let ok = "--- a/file"; let code = "SNAPSHOT_NOT_FOUND"; let q = '"'; }
        fn h() { std::env::var("CAIRN_FAULT_KILL_AT"); }
        #[cfg(test)]
        mod tests { fn t() { let x = "--in-tests"; } }
        fn after() { let y = "--after"; }
    "##;
    let found: Vec<(usize, Vec<String>)> = literals(source)
        .into_iter()
        .map(|(line, text)| (line, offences(&text)))
        .filter(|(_, o)| !o.is_empty())
        .collect();
    assert_eq!(
        found,
        vec![
            (2, vec!["names the flag --force".to_owned()]),
            (2, vec!["names a `cairn …` command".to_owned()]),
            (2, vec!["names the environment variable CAIRN_STORE".to_owned()]),
            (8, vec!["names the flag --after".to_owned()]),
        ]
    );
}
