//! Syntax colour for a file diff, in Rust: syntect's built-in Sublime grammars split each line
//! into tokens, and each token gets one of a few classes (comment, string, keyword, …) from
//! its innermost scope. The page's stylesheet for those classes is generated here from two of
//! syntect's built-in themes (a light and a dark one), with each colour darkened or lightened
//! until it reads against every background a diff line can have. Classes, not inline colours:
//! the page's Content-Security-Policy allows no inline style.

use std::fmt::Write as _;
use std::ops::Range;
use std::sync::OnceLock;

use syntect::easy::ScopeRangeIterator;
use syntect::highlighting::{Color, Highlighter, ThemeSet};
use syntect::parsing::{ParseState, Scope, ScopeStack, SyntaxReference, SyntaxSet};

/// Files larger than this are shown without colour, so the page stays fast.
pub(crate) const MAX_BYTES: usize = 1 << 20;
/// Files with more lines than this are shown without colour.
pub(crate) const MAX_LINES: usize = 20_000;

/// One token class: its CSS class, the scopes it stands for, and the scope whose colour the
/// themes give it.
struct Class {
    class: &'static str,
    scopes: &'static [&'static str],
    sample: &'static str,
}

/// Checked innermost scope first, in this order: `punctuation.definition.string` is not
/// listed, so a string's quotes take the string's class from the scope around them.
const CLASSES: &[Class] = &[
    Class { class: "hl-c", scopes: &["comment"], sample: "comment" },
    Class { class: "hl-s", scopes: &["string", "constant.character"], sample: "string" },
    Class { class: "hl-n", scopes: &["constant"], sample: "constant.numeric" },
    Class {
        class: "hl-f",
        scopes: &["entity.name.function", "support.function", "variable.function"],
        sample: "entity.name.function",
    },
    Class {
        class: "hl-t",
        scopes: &[
            "entity.name.type",
            "entity.name.class",
            "entity.name.struct",
            "entity.name.enum",
            "support.type",
            "support.class",
        ],
        sample: "entity.name.class",
    },
    Class { class: "hl-k", scopes: &["keyword", "storage"], sample: "keyword" },
    Class { class: "hl-g", scopes: &["entity.name.tag"], sample: "entity.name.tag" },
    Class { class: "hl-a", scopes: &["entity.other.attribute-name"], sample: "entity.other.attribute-name" },
    Class { class: "hl-h", scopes: &["markup.heading", "entity.name.section"], sample: "markup.heading" },
    Class {
        class: "hl-v",
        scopes: &["variable.parameter", "variable.language"],
        sample: "variable.parameter",
    },
];

/// The backgrounds a coloured token may sit on, light then dark: the pane, an added and a
/// removed line, and an added and a removed word (app.css's --pane, --add, --del; the word
/// colours are set by [`stylesheet`]).
const LIGHT_BACKGROUNDS: [u32; 5] = [0xffffff, 0xe3f5e1, 0xfbe4e4, WORD_ADD.0, WORD_DEL.0];
const DARK_BACKGROUNDS: [u32; 5] = [0x1f2023, 0x1f3a24, 0x472427, WORD_ADD.1, WORD_DEL.1];
/// A changed word's background, (light, dark).
const WORD_ADD: (u32, u32) = (0xb8e8b2, 0x2c5e35);
const WORD_DEL: (u32, u32) = (0xf6c3c3, 0x74333a);

struct Loaded {
    syntaxes: SyntaxSet,
    /// Each class's scopes, parsed once.
    scopes: Vec<(Scope, &'static str)>,
}

fn loaded() -> &'static Loaded {
    static LOADED: OnceLock<Loaded> = OnceLock::new();
    LOADED.get_or_init(|| {
        let scopes = CLASSES
            .iter()
            .flat_map(|c| c.scopes.iter().map(move |s| (Scope::new(s).expect("a valid scope"), c.class)))
            .collect();
        Loaded { syntaxes: SyntaxSet::load_defaults_newlines(), scopes }
    })
}

/// The grammar for `path`: by its extension, else its whole name (`Makefile`), else its
/// first line (`#!/bin/sh`). `None` for plain text.
pub(crate) fn syntax_for(path: &str, first_line: &str) -> Option<&'static SyntaxReference> {
    let syntaxes = &loaded().syntaxes;
    let name = path.rsplit('/').next().unwrap_or(path);
    let found = name
        .rsplit_once('.')
        .and_then(|(_, ext)| syntaxes.find_syntax_by_extension(ext))
        .or_else(|| syntaxes.find_syntax_by_extension(name))
        .or_else(|| syntaxes.find_syntax_by_first_line(first_line))?;
    (found.name != "Plain Text").then_some(found)
}

/// Every line's coloured tokens (byte ranges of the line and their class), the lines given
/// without their line ends. A line the grammar fails on, and every line after it, has none.
pub(crate) fn highlight(syntax: &SyntaxReference, lines: &[&str]) -> Vec<Vec<(Range<usize>, &'static str)>> {
    let loaded = loaded();
    let mut state = ParseState::new(syntax);
    let mut stack = ScopeStack::new();
    let mut out = Vec::with_capacity(lines.len());
    let mut text = String::new();
    let mut failed = false;
    for line in lines {
        let mut tokens: Vec<(Range<usize>, &'static str)> = Vec::new();
        text.clear();
        text.push_str(line);
        text.push('\n');
        let ops = if failed { None } else { state.parse_line(&text, &loaded.syntaxes).ok() };
        failed = ops.is_none();
        for (range, op) in ops.iter().flat_map(|ops| ScopeRangeIterator::new(ops, &text)) {
            if stack.apply(op).is_err() {
                failed = true;
                break;
            }
            let range = range.start..range.end.min(line.len());
            if range.is_empty() {
                continue;
            }
            if let Some(class) = class_of(&loaded.scopes, &stack) {
                match tokens.last_mut() {
                    Some((last, c)) if *c == class && last.end == range.start => last.end = range.end,
                    _ => tokens.push((range, class)),
                }
            }
        }
        out.push(if failed { Vec::new() } else { tokens });
    }
    out
}

/// The class of the innermost scope that has one.
fn class_of(scopes: &[(Scope, &'static str)], stack: &ScopeStack) -> Option<&'static str> {
    stack
        .as_slice()
        .iter()
        .rev()
        .find_map(|s| scopes.iter().find(|(p, _)| p.is_prefix_of(*s)).map(|(_, c)| *c))
}

/// The stylesheet for the token classes and changed words, light and dark.
pub(crate) fn stylesheet() -> &'static str {
    static CSS: OnceLock<String> = OnceLock::new();
    CSS.get_or_init(|| {
        let themes = ThemeSet::load_defaults();
        let mut css =
            String::from("/* generated by cairn ui from syntect's InspiredGitHub and base16-ocean.dark */\n");
        let word = |css: &mut String, (add, del): (u32, u32)| {
            let _ = writeln!(css, "mark.w-add {{ background: #{add:06x}; border-radius: 2px; }}");
            let _ = writeln!(css, "mark.w-del {{ background: #{del:06x}; border-radius: 2px; }}");
        };
        word(&mut css, (WORD_ADD.0, WORD_DEL.0));
        rules(&mut css, &themes.themes["InspiredGitHub"], &LIGHT_BACKGROUNDS, false);
        css.push_str("@media (prefers-color-scheme: dark) {\n");
        word(&mut css, (WORD_ADD.1, WORD_DEL.1));
        rules(&mut css, &themes.themes["base16-ocean.dark"], &DARK_BACKGROUNDS, true);
        css.push_str("}\n");
        css
    })
}

fn rules(css: &mut String, theme: &syntect::highlighting::Theme, backgrounds: &[u32], dark: bool) {
    let highlighter = Highlighter::new(theme);
    for class in CLASSES {
        let scope = Scope::new(class.sample).expect("a valid scope");
        let style = highlighter.style_for_stack(&[scope]);
        let colour = readable(rgb(style.foreground), backgrounds, dark);
        let _ = writeln!(css, ".{} {{ color: #{colour:06x}; }}", class.class);
    }
}

fn rgb(c: Color) -> u32 {
    (u32::from(c.r) << 16) | (u32::from(c.g) << 8) | u32::from(c.b)
}

/// `colour`, moved towards white (dark pages) or black (light ones) until its contrast with
/// every background is at least 4.5:1, the WCAG AA level for text.
pub(crate) fn readable(colour: u32, backgrounds: &[u32], dark: bool) -> u32 {
    let toward = if dark { 0xffffff } else { 0x000000 };
    let mut c = colour;
    for step in 1..=20 {
        if backgrounds.iter().all(|&bg| contrast(c, bg) >= 4.5) {
            break;
        }
        c = mix(colour, toward, f64::from(step) / 20.0);
    }
    c
}

fn mix(a: u32, b: u32, t: f64) -> u32 {
    let channel = |shift: u32| {
        let (x, y) = (f64::from((a >> shift) & 0xff), f64::from((b >> shift) & 0xff));
        ((x + (y - x) * t).round() as u32) << shift
    };
    channel(16) | channel(8) | channel(0)
}

/// WCAG's contrast ratio of two colours.
pub(crate) fn contrast(a: u32, b: u32) -> f64 {
    let luminance = |c: u32| {
        let lin = |v: u32| {
            let v = f64::from(v & 0xff) / 255.0;
            if v <= 0.03928 { v / 12.92 } else { ((v + 0.055) / 1.055).powf(2.4) }
        };
        0.2126 * lin(c >> 16) + 0.7152 * lin(c >> 8) + 0.0722 * lin(c)
    };
    let (x, y) = (luminance(a), luminance(b));
    (x.max(y) + 0.05) / (x.min(y) + 0.05)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_tokens_get_keyword_string_and_comment_classes() {
        let syntax = syntax_for("src/main.rs", "").expect("Rust is built in");
        let lines = ["fn main() {", "    let s = \"hi\"; // greet", "}"];
        let tokens = highlight(syntax, &lines);
        let class_at = |line: usize, text: &str| {
            let at = lines[line].find(text).unwrap();
            tokens[line].iter().find(|(r, _)| r.contains(&at)).map(|(_, c)| *c)
        };
        assert_eq!(class_at(0, "fn"), Some("hl-k"));
        assert_eq!(class_at(0, "main"), Some("hl-f"));
        assert_eq!(class_at(1, "\"hi\""), Some("hl-s"));
        assert_eq!(class_at(1, "// greet"), Some("hl-c"));
        assert!(tokens[1].iter().all(|(r, _)| r.end <= lines[1].len()));
    }

    #[test]
    fn plain_text_and_unknown_kinds_get_no_grammar() {
        assert!(syntax_for("notes.txt", "hello").is_none());
        assert!(syntax_for("data.unknownext", "hello").is_none());
        assert_eq!(
            syntax_for("run", "#!/bin/bash").map(|s| s.name.as_str()),
            Some("Bourne Again Shell (bash)")
        );
    }

    #[test]
    fn every_generated_colour_reads_against_every_background() {
        let css = stylesheet();
        let (light, dark) = css.split_once("@media").unwrap();
        let colours = |part: &str| -> Vec<u32> {
            part.lines()
                .filter(|l| l.starts_with(".hl-") || l.starts_with("  .hl-") || l.contains(".hl-"))
                .filter_map(|l| l.split("color: #").nth(1))
                .map(|hex| u32::from_str_radix(&hex[..6], 16).unwrap())
                .collect()
        };
        assert_eq!(colours(light).len(), CLASSES.len());
        assert_eq!(colours(dark).len(), CLASSES.len());
        for c in colours(light) {
            assert!(LIGHT_BACKGROUNDS.iter().all(|&bg| contrast(c, bg) >= 4.5), "{c:06x} on light");
        }
        for c in colours(dark) {
            assert!(DARK_BACKGROUNDS.iter().all(|&bg| contrast(c, bg) >= 4.5), "{c:06x} on dark");
        }
    }
}
