//! One file of a directory diff as the page draws it: the engine's line diff of the whole
//! file (`file_diff` with every line as context), each line cut into spans that carry a
//! syntax class and whether the word changed, unchanged regions folded. The page draws the
//! same rows split (old beside new) or unified (old lines above new ones).

use std::ops::Range;

use cairn_lib::Repository;
#[cfg(test)]
use cairn_lib::ops::file_diff::DiffRow;
use cairn_lib::ops::file_diff::{FileDiff, FileDiffOptions};
use cairn_lib::ops::resolve::CallContext;
use serde::Serialize;

use super::fold::{Folded, fold};
use super::{syntax, words};

/// Context wide enough that the engine sends every line: folding is done here.
const WHOLE_FILE: usize = 1 << 30;

/// A piece of a line: its text, its syntax class, whether it is a changed word.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Span {
    pub t: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub c: Option<&'static str>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub w: bool,
}

/// One row: `equal`, `delete`, `insert` or `replace` (the old line beside the new one).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Row {
    pub tag: String,
    pub old_line: Option<usize>,
    pub new_line: Option<usize>,
    pub old: Option<Vec<Span>>,
    pub new: Option<Vec<Span>>,
}

/// The file as the page draws it.
#[derive(Debug, Serialize)]
pub(crate) struct FileView {
    pub path: String,
    pub size_before: Option<u64>,
    pub size_after: Option<u64>,
    pub binary: bool,
    pub too_large: bool,
    /// The media type, when the path names an image the page can show beside its other version.
    pub image: Option<&'static str>,
    /// The grammar the lines were coloured with.
    pub language: Option<String>,
    /// Why the lines are not coloured though a grammar fits (the file is too large).
    pub plain: Option<String>,
    pub rows: Vec<Folded<Row>>,
}

/// The view of one file, from the engine's diff. The page asks with the engine's own options;
/// their context is widened to the whole file, as folding is done here.
pub(crate) fn file_view(
    store: &Repository,
    context: &CallContext,
    options: FileDiffOptions,
) -> cairn_lib::Result<FileView> {
    let options = FileDiffOptions { context: Some(WHOLE_FILE), ..options };
    Ok(view(store.file_diff(&options, context)?))
}

fn view(diff: FileDiff) -> FileView {
    let mut out = FileView {
        image: image_type(&diff.path),
        path: diff.path,
        size_before: diff.size_before,
        size_after: diff.size_after,
        binary: diff.binary,
        too_large: diff.too_large,
        language: None,
        plain: None,
        rows: Vec::new(),
    };
    let rows = diff.rows;
    let old: Vec<&str> = rows.iter().filter_map(|r| r.old.as_deref()).collect();
    let new: Vec<&str> = rows.iter().filter_map(|r| r.new.as_deref()).collect();
    let first = new.first().or(old.first()).copied().unwrap_or("");
    let grammar = syntax::syntax_for(&out.path, first);
    let bytes = |lines: &[&str]| lines.iter().map(|l| l.len() + 1).sum::<usize>();
    let (old_tokens, new_tokens) = match grammar {
        Some(g)
            if old.len().max(new.len()) > syntax::MAX_LINES
                || bytes(&old).max(bytes(&new)) > syntax::MAX_BYTES =>
        {
            out.plain = Some(format!("{} without colour: over {} lines or 1 MiB", g.name, syntax::MAX_LINES));
            (Vec::new(), Vec::new())
        }
        Some(g) => {
            out.language = Some(g.name.clone());
            (syntax::highlight(g, &old), syntax::highlight(g, &new))
        }
        None => (Vec::new(), Vec::new()),
    };
    let (mut oi, mut ni) = (0, 0);
    let mut drawn = Vec::with_capacity(rows.len());
    for r in &rows {
        let (o, n) = match (&r.old, &r.new) {
            (Some(o), Some(n)) if r.tag == "replace" => words::changed_words(o, n),
            _ => (Vec::new(), Vec::new()),
        };
        let side =
            |text: &Option<String>, i: &mut usize, tokens: &[Vec<(Range<usize>, &'static str)>], changed| {
                let text = text.as_deref()?;
                let spans = spans(text, tokens.get(*i).map(Vec::as_slice).unwrap_or(&[]), changed);
                *i += 1;
                Some(spans)
            };
        drawn.push(Row {
            tag: r.tag.clone(),
            old_line: r.old_line,
            new_line: r.new_line,
            old: side(&r.old, &mut oi, &old_tokens, &o),
            new: side(&r.new, &mut ni, &new_tokens, &n),
        });
    }
    out.rows = fold(drawn, |r| r.tag == "equal");
    out
}

/// `line` cut where a syntax token or a changed word begins or ends.
pub(crate) fn spans(
    line: &str,
    tokens: &[(Range<usize>, &'static str)],
    changed: &[Range<usize>],
) -> Vec<Span> {
    let mut cuts: Vec<usize> = vec![0, line.len()];
    for r in tokens.iter().map(|(r, _)| r).chain(changed) {
        cuts.extend([r.start.min(line.len()), r.end.min(line.len())]);
    }
    cuts.sort_unstable();
    cuts.dedup();
    let mut out: Vec<Span> = Vec::new();
    for pair in cuts.windows(2) {
        let (start, end) = (pair[0], pair[1]);
        let Some(text) = line.get(start..end) else { continue };
        let c = tokens.iter().find(|(r, _)| r.start <= start && end <= r.end).map(|(_, c)| *c);
        let w = changed.iter().any(|r| r.start <= start && end <= r.end);
        match out.last_mut() {
            Some(last) if last.c == c && last.w == w => last.t.push_str(text),
            _ => out.push(Span { t: text.to_owned(), c, w }),
        }
    }
    if out.is_empty() {
        out.push(Span { t: String::new(), c: None, w: false });
    }
    out
}

/// The media type of an image the page shows as an image, by the path's extension.
pub(crate) fn image_type(path: &str) -> Option<&'static str> {
    let ext = path.rsplit_once('.')?.1.to_ascii_lowercase();
    Some(match ext.as_str() {
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "avif" => "image/avif",
        "bmp" => "image/bmp",
        "ico" => "image/x-icon",
        "svg" => "image/svg+xml",
        _ => return None,
    })
}

/// The rows the engine would send, for tests.
#[cfg(test)]
fn engine_rows(a: &str, b: &str) -> Vec<DiffRow> {
    let diff = similar::TextDiff::from_lines(a, b);
    let mut rows = Vec::new();
    for op in diff.ops() {
        for change in diff.iter_changes(op) {
            let text = Some(change.value().trim_end_matches('\n').to_owned());
            let (o, n) = (change.old_index().map(|i| i + 1), change.new_index().map(|i| i + 1));
            let tag = match change.tag() {
                similar::ChangeTag::Equal => "equal",
                similar::ChangeTag::Delete => "delete",
                similar::ChangeTag::Insert => "insert",
            };
            let (old, new) = match change.tag() {
                similar::ChangeTag::Equal => (text.clone(), text),
                similar::ChangeTag::Delete => (text, None),
                similar::ChangeTag::Insert => (None, text),
            };
            rows.push(DiffRow { tag: tag.into(), old_line: o, old, new_line: n, new });
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    fn diff(path: &str, rows: Vec<DiffRow>) -> FileDiff {
        FileDiff {
            path: path.into(),
            from: cairn_lib::SnapshotId::new(),
            to: cairn_lib::SnapshotId::new(),
            size_before: Some(1),
            size_after: Some(1),
            binary: false,
            too_large: false,
            rows,
        }
    }

    #[test]
    fn spans_split_at_tokens_and_changed_words_and_join_what_matches() {
        let changed = std::iter::once(11..12).collect::<Vec<_>>();
        let s = spans("fn main() {}", &[(0..2, "hl-k"), (3..7, "hl-f")], &changed);
        let got: Vec<(&str, Option<&str>, bool)> = s.iter().map(|s| (s.t.as_str(), s.c, s.w)).collect();
        assert_eq!(
            got,
            [
                ("fn", Some("hl-k"), false),
                (" ", None, false),
                ("main", Some("hl-f"), false),
                ("() {", None, false),
                ("}", None, true)
            ]
        );
        assert_eq!(spans("", &[], &[]), [Span { t: String::new(), c: None, w: false }]);
    }

    #[test]
    fn a_rust_file_is_coloured_word_marked_and_folded() {
        let a: String = (1..=20).map(|i| format!("let v{i} = {i};\n")).collect();
        let b = a.replace("let v10 = 10;", "let v10 = 11;");
        let mut rows = engine_rows(&a, &b);
        // The engine pairs a deleted and an inserted line as one replace row.
        let at = rows.iter().position(|r| r.tag == "delete").unwrap();
        let insert = rows.remove(at + 1);
        rows[at].tag = "replace".into();
        (rows[at].new, rows[at].new_line) = (insert.new, insert.new_line);
        let v = view(diff("src/lib.rs", rows));
        assert_eq!(v.language.as_deref(), Some("Rust"));
        let shape: Vec<String> = v
            .rows
            .iter()
            .map(|f| match f {
                Folded::Row(r) => r.tag.clone(),
                Folded::Fold(f) => format!("fold {}", f.count),
            })
            .collect();
        assert_eq!(
            shape,
            ["fold 6", "equal", "equal", "equal", "replace", "equal", "equal", "equal", "fold 7"]
        );
        let Folded::Row(changed) = &v.rows[4] else { panic!() };
        let new = changed.new.as_ref().unwrap();
        assert!(new.iter().any(|s| s.t == "11" && s.w && s.c == Some("hl-n")), "{new:?}");
        assert!(new.iter().any(|s| s.t == "let" && s.c == Some("hl-k") && !s.w), "{new:?}");
    }

    #[test]
    fn a_large_file_is_left_plain_and_an_image_is_named_by_its_type() {
        let a: String = (0..syntax::MAX_LINES + 1).map(|i| format!("x{i}\n")).collect();
        let v = view(diff("big.rs", engine_rows(&a, &format!("{a}y\n"))));
        assert!(v.language.is_none() && v.plain.is_some());
        assert_eq!(image_type("img/Logo.PNG"), Some("image/png"));
        assert_eq!(image_type("a.svg"), Some("image/svg+xml"));
        assert_eq!(image_type("main.rs"), None);
    }
}
