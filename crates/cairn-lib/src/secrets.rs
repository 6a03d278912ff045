//! What counts as a secret: the credential shapes cairn looks for in content it reads anyway, and
//! the redaction marker that replaces them in exported text.
//!
//! The set is small on purpose, every shape anchored on a literal prefix a vendor chose to make
//! its keys recognisable (`AKIA`, `ghp_`, `glpat-`, `xoxb-`, `sk-ant-`, `-----BEGIN … PRIVATE
//! KEY-----`), so a scan is one pass of a literal prefilter over the bytes and a false alarm on
//! ordinary source is rare. File-name rules (`.env`, `id_ed25519`, …) live with the directory
//! walk in `targets/dir/secrets.rs`. The full list is documented in `docs/security.md`.

use std::sync::LazyLock;

use aho_corasick::packed::{self, Searcher};
use regex::bytes::{Regex, RegexBuilder, RegexSet, RegexSetBuilder};

/// One content rule: its id (what `not_covered` reports), the pattern, and the literals one of
/// which every match of the pattern holds.
struct Shape {
    rule: &'static str,
    pattern: &'static str,
    needles: &'static [&'static str],
}

/// Every content rule. Keep `docs/security.md` in step with this table.
const SHAPES: &[Shape] = &[
    // The marker and the first line of a key body: a marker alone (in docs, in code that
    // writes keys) or with a stub body (`MIIE...`) holds no key. The lines between may be PEM
    // headers (`Proc-Type: …`), and the line breaks may be written `\n` inside a string.
    Shape {
        rule: "private-key",
        pattern: r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----(?:\s|\\[rn])+(?:[A-Za-z-]+:[^\r\n\\]*(?:\s|\\[rn])+)*[A-Za-z0-9+/=]{40}",
        needles: &["PRIVATE KEY"],
    },
    Shape {
        rule: "aws-access-key-id",
        pattern: r"\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}\b",
        needles: &["AKIA", "ASIA", "ABIA", "ACCA"],
    },
    Shape {
        rule: "github-token",
        pattern: r"\b(?:gh[pousr]_[A-Za-z0-9]{36}|github_pat_[A-Za-z0-9_]{82})\b",
        needles: &["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"],
    },
    Shape { rule: "gitlab-token", pattern: r"\bglpat-[A-Za-z0-9_-]{20,}", needles: &["glpat-"] },
    Shape {
        rule: "slack-token",
        pattern: r"\bxox[abeoprs]-[A-Za-z0-9-]{10,}|https://hooks\.slack\.com/services/T[A-Za-z0-9]+/B[A-Za-z0-9]+/[A-Za-z0-9]+",
        needles: &["xox", "hooks.slack.com/services/"],
    },
    Shape {
        rule: "anthropic-key",
        pattern: r"\bsk-ant-(?:api|admin|oat)[0-9]{2}-[A-Za-z0-9_-]{80,}",
        needles: &["sk-ant-"],
    },
    Shape {
        rule: "openai-key",
        pattern: r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{16,}T3BlbkFJ[A-Za-z0-9_-]{16,}",
        needles: &["T3BlbkFJ"],
    },
    Shape { rule: "google-api-key", pattern: r"\bAIza[0-9A-Za-z_-]{35}\b", needles: &["AIza"] },
    Shape { rule: "stripe-secret-key", pattern: r"\b[sr]k_live_[0-9A-Za-z]{24,}\b", needles: &["k_live_"] },
];

/// What replaces a secret-shaped string in redacted output.
pub(crate) fn marker(rule: &str) -> String {
    format!("[REDACTED:{rule}]")
}

/// Every shape's needles, looked for before the patterns: a text holding none of them holds
/// no secret. This SIMD searcher is built in some 0.05 ms and scans faster than the compiled
/// set, whose 2 ms of compiling every command that read a file paid; the patterns are compiled
/// only once a text holds a needle. `None` where the CPU has no such searcher: the patterns
/// then look at every text.
static NEEDLES: LazyLock<Option<Searcher>> = LazyLock::new(|| {
    let mut builder = packed::Config::new().builder();
    builder.extend(SHAPES.iter().flat_map(|s| s.needles));
    builder.build()
});

/// False when `data` holds no needle of any shape, so no secret.
fn may_hold_one(data: &[u8]) -> bool {
    NEEDLES.as_ref().is_none_or(|needles| needles.find(data).is_some())
}

/// The compiled patterns when some shape's pattern matches in `data`: the needles first, then
/// the set, so a text without a needle never compiles them.
fn matching(data: &[u8]) -> Option<&'static Compiled> {
    (may_hold_one(data) && COMPILED.set.is_match(data)).then(|| &*COMPILED)
}

struct Compiled {
    set: RegexSet,
    each: Vec<Regex>,
}

static COMPILED: LazyLock<Compiled> = LazyLock::new(|| {
    let patterns: Vec<&str> = SHAPES.iter().map(|s| s.pattern).collect();
    // The patterns are constants of this file, checked by the tests below.
    // ASCII classes and word boundaries: every shape is ASCII, and Unicode ones made compiling
    // the set a few milliseconds of every command that reads a file.
    let each = patterns.iter().map(|p| RegexBuilder::new(p).unicode(false).build());
    Compiled {
        set: RegexSetBuilder::new(&patterns).unicode(false).build().expect("the secret patterns compile"),
        each: each.map(|r| r.expect("the secret patterns compile")).collect(),
    }
});

/// AWS's documentation key ids (`AKIAIOSFODNN7EXAMPLE`) and others that say they are examples
/// are not credentials; tutorials and test fixtures are full of them.
fn is_example(found: &[u8]) -> bool {
    found.ends_with(b"EXAMPLE") || found.windows(7).any(|w| w.eq_ignore_ascii_case(b"example"))
}

/// Words that mark a token-shaped string as a stand-in (`xoxb-your-token-here`).
const PLACEHOLDER_WORDS: &[&[u8]] =
    &[b"your", b"here", b"token", b"secret", b"placeholder", b"changeme", b"replace", b"redacted", b"xxxx"];

/// True for a token-shaped string that only stands in for one: an example, a part between
/// `-`, `_` or `.` that has no digit and holds a [placeholder word](PLACEHOLDER_WORDS), or a
/// run of six of one character (`AKIAXXXXXXXXXXXXXXXX`, `ghp_000000…`). The parts of real
/// tokens are random letters and digits: one of 24 characters with no digit and holding such a
/// word is about one in ten million, a run of six one in a million. Not applied to a private
/// key, whose base64 body is full of `AAAAAA` runs; its rule asks for a body instead.
fn is_placeholder(rule: &str, found: &[u8]) -> bool {
    if is_example(found) {
        return true;
    }
    if rule == "private-key" {
        return false;
    }
    let has_word = |part: &[u8]| {
        !part.iter().any(u8::is_ascii_digit)
            && PLACEHOLDER_WORDS.iter().any(|w| part.windows(w.len()).any(|p| p.eq_ignore_ascii_case(w)))
    };
    found.split(|b| matches!(b, b'-' | b'_' | b'.')).any(has_word)
        || found.windows(6).any(|w| w.iter().all(|&b| b == w[0]))
}

/// One secret-shaped string found in a text: the rule and where it lies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Found {
    pub rule: &'static str,
    pub start: usize,
    pub end: usize,
}

/// The first rule that `data` matches, if any: one pass when nothing matches.
pub(crate) fn first_rule(data: &[u8]) -> Option<&'static str> {
    let c = matching(data)?;
    c.set
        .matches(data)
        .into_iter()
        .find(|&i| c.each[i].find_iter(data).any(|m| !is_placeholder(SHAPES[i].rule, m.as_bytes())))
        .map(|i| SHAPES[i].rule)
}

/// Every secret-shaped string in `data`, in order, not overlapping.
pub(crate) fn find_all(data: &[u8]) -> Vec<Found> {
    let Some(c) = matching(data) else { return Vec::new() };
    let mut found: Vec<Found> = c
        .set
        .matches(data)
        .into_iter()
        .flat_map(|i| {
            c.each[i]
                .find_iter(data)
                .filter(move |m| !is_placeholder(SHAPES[i].rule, m.as_bytes()))
                .map(move |m| Found { rule: SHAPES[i].rule, start: m.start(), end: m.end() })
        })
        .collect();
    found.sort_by_key(|f| (f.start, std::cmp::Reverse(f.end)));
    let mut out: Vec<Found> = Vec::with_capacity(found.len());
    for f in found {
        if out.last().is_none_or(|last| f.start >= last.end) {
            out.push(f);
        }
    }
    out
}

/// `text` with every secret-shaped string replaced by its [`marker`], and the rules replaced.
pub(crate) fn redact(text: &str) -> (String, Vec<&'static str>) {
    let found = find_all(text.as_bytes());
    if found.is_empty() {
        return (text.to_owned(), Vec::new());
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for f in &found {
        // Every pattern starts and ends on ASCII, so these are character boundaries.
        out.push_str(&text[at..f.start]);
        out.push_str(&marker(f.rule));
        at = f.end;
    }
    out.push_str(&text[at..]);
    (out, found.iter().map(|f| f.rule).collect())
}

/// Made-up credentials of every shape, assembled at run time so that no file of the repository
/// holds one whole (a scanner reading this source must not flag it).
#[cfg(test)]
pub(crate) mod samples {
    /// (rule, a string of that shape).
    pub(crate) fn all() -> Vec<(&'static str, String)> {
        let a = |s: &str, n: usize| s.repeat(n);
        vec![
            (
                "private-key",
                format!("-----BEGIN OPENSSH {}-----\n{}", "PRIVATE KEY", a("b3BlbnNzaC1rZXktdjEAAAAA", 3)),
            ),
            ("aws-access-key-id", format!("AKIA{}", a("Q3", 8))),
            ("github-token", format!("ghp_{}", a("aB3", 12))),
            ("gitlab-token", format!("glpat-{}", a("xY9_", 5))),
            ("slack-token", format!("xoxb-{}", a("12345-", 3))),
            ("anthropic-key", format!("sk-ant-api03-{}", a("Ab9_", 22))),
            ("openai-key", format!("sk-proj-{}T3BlbkFJ{}", a("ab12", 5), a("cd34", 5))),
            ("google-api-key", format!("AIza{}", a("Sy0_x", 7))),
            ("stripe-secret-key", format!("sk_live_{}", a("4eC3", 6))),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shape_is_found_by_its_own_rule() {
        for (rule, secret) in samples::all() {
            let text = format!("key = \"{secret}\"\n");
            assert_eq!(first_rule(text.as_bytes()), Some(rule), "{secret}");
        }
    }

    #[test]
    fn every_shape_holds_one_of_its_needles() {
        for (rule, secret) in samples::all() {
            let shape = SHAPES.iter().find(|s| s.rule == rule).expect("a sample of every shape");
            assert!(shape.needles.iter().any(|n| secret.contains(n)), "{secret}");
            assert!(may_hold_one(secret.as_bytes()), "{secret}");
        }
        assert!(!may_hold_one(b"fn main() { println!(\"no key here\"); }"));
    }

    #[test]
    fn ordinary_source_and_documentation_examples_are_not_secrets() {
        let text = "let task-runner = disk-usage; // sk-learn\nAWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE\n\
                    -----BEGIN PUBLIC KEY-----\nghp_short\n";
        assert_eq!(first_rule(text.as_bytes()), None);
    }

    /// Text from documentation and tests that looks like a credential and holds none.
    fn placeholders() -> Vec<String> {
        let key = "PRIVATE KEY";
        vec![
            format!("-----BEGIN {key}-----"),
            format!("-----BEGIN RSA {key}-----\n-----END RSA {key}-----\n"),
            format!("Keys start with `-----BEGIN OPENSSH {key}-----` and end with a matching line."),
            format!("-----BEGIN EC {key}-----\nMIIE...\n-----END EC {key}-----"),
            format!("pem = \"-----BEGIN {key}-----\\n\" + body"),
            format!("SLACK_BOT_TOKEN={}", "xoxb-your-token-here"),
            format!("token: {}", "xoxb-xxxxxxxxxxxx-xxxxxxxxxxxx"),
            format!("{}-REPLACE-WITH-YOUR-TOKEN", "xoxp"),
            "OPENAI_API_KEY=sk-...".to_owned(),
            "OPENAI_API_KEY=<your-key>".to_owned(),
            format!("ANTHROPIC_API_KEY=sk-ant-api03-{}", "your-key-here-".repeat(7)),
            format!("aws_access_key_id = AKIA{}", "X".repeat(16)),
            format!("GITHUB_TOKEN=ghp_{}", "0".repeat(36)),
            format!("GITLAB_TOKEN=glpat-{}", "your_token_here_123"),
            format!("STRIPE_KEY=sk_live_{}", "xxxxxxxxxxxxxxxxxxxxxxxx"),
        ]
    }

    #[test]
    fn bare_key_markers_and_placeholders_are_not_secrets() {
        for text in placeholders() {
            assert_eq!(first_rule(text.as_bytes()), None, "{text}");
            assert_eq!(find_all(text.as_bytes()), Vec::new(), "{text}");
        }
    }

    #[test]
    fn real_looking_keys_are_still_caught_in_every_form_they_are_written_in() {
        let key = "PRIVATE KEY";
        let body = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7";
        let cases = [
            ("private-key", format!("-----BEGIN {key}-----\n{body}\n-----END {key}-----\n")),
            ("private-key", format!("-----BEGIN RSA {key}-----\r\n{body}\r\n")),
            // A service account's JSON: the line breaks are `\n` inside the string.
            ("private-key", format!("{{\"private_key\": \"-----BEGIN {key}-----\\n{body}\\n\"}}")),
            (
                "private-key",
                format!(
                    "-----BEGIN RSA {key}-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,AB12\n\n{body}\n"
                ),
            ),
            ("private-key", format!("-----BEGIN PGP {key} BLOCK-----\n\n{body}\n")),
            ("slack-token", format!("xoxb-{}-{}-{}", "2417345", "1093486712", "Zk3tQ9vBw7LmR2pXa8cYdE4u")),
            ("aws-access-key-id", format!("AKIA{}", "Q3ZR7WLPM2NXK4TB")),
            ("github-token", format!("ghp_{}", "R8aZk3tQ9vBw7LmR2pXa8cYdE4u0nHs1fJ6g")),
        ];
        for (rule, text) in cases {
            assert_eq!(first_rule(text.as_bytes()), Some(rule), "{text}");
        }
        for (rule, text) in samples::all() {
            assert_eq!(first_rule(text.as_bytes()), Some(rule), "{text}");
        }
    }

    #[test]
    fn redact_replaces_each_secret_with_its_marker_and_keeps_the_rest() {
        let all = samples::all();
        let text = format!("a {} b {} c", all[1].1, all[2].1);
        let (out, rules) = redact(&text);
        assert_eq!(out, "a [REDACTED:aws-access-key-id] b [REDACTED:github-token] c");
        assert_eq!(rules, ["aws-access-key-id", "github-token"]);
    }
}
