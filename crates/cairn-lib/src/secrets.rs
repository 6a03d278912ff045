//! What counts as a secret: the credential shapes cairn looks for in content it reads anyway, and
//! the redaction marker that replaces them in exported text.
//!
//! The set is small on purpose, every shape anchored on a literal prefix a vendor chose to make
//! its keys recognisable (`AKIA`, `ghp_`, `glpat-`, `xoxb-`, `sk-ant-`, `-----BEGIN … PRIVATE
//! KEY-----`), so a scan is one pass of a literal prefilter over the bytes and a false alarm on
//! ordinary source is rare. File-name rules (`.env`, `id_ed25519`, …) live with the directory
//! walk in `targets/dir/secrets.rs`. The full list is documented in `docs/security.md`.

use std::sync::LazyLock;

use regex::bytes::{Regex, RegexSet};

/// One content rule: its id (what `not_covered` reports), and the pattern.
struct Shape {
    rule: &'static str,
    pattern: &'static str,
}

/// Every content rule. Keep `docs/security.md` in step with this table.
const SHAPES: &[Shape] = &[
    Shape { rule: "private-key", pattern: r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----" },
    Shape { rule: "aws-access-key-id", pattern: r"\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}\b" },
    Shape { rule: "github-token", pattern: r"\b(?:gh[pousr]_[A-Za-z0-9]{36}|github_pat_[A-Za-z0-9_]{82})\b" },
    Shape { rule: "gitlab-token", pattern: r"\bglpat-[A-Za-z0-9_-]{20,}" },
    Shape {
        rule: "slack-token",
        pattern: r"\bxox[abeoprs]-[A-Za-z0-9-]{10,}|https://hooks\.slack\.com/services/T[A-Za-z0-9]+/B[A-Za-z0-9]+/[A-Za-z0-9]+",
    },
    Shape { rule: "anthropic-key", pattern: r"\bsk-ant-(?:api|admin|oat)[0-9]{2}-[A-Za-z0-9_-]{80,}" },
    Shape {
        rule: "openai-key",
        pattern: r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{16,}T3BlbkFJ[A-Za-z0-9_-]{16,}",
    },
    Shape { rule: "google-api-key", pattern: r"\bAIza[0-9A-Za-z_-]{35}\b" },
    Shape { rule: "stripe-secret-key", pattern: r"\b[sr]k_live_[0-9A-Za-z]{24,}\b" },
];

/// What replaces a secret-shaped string in redacted output.
pub(crate) fn marker(rule: &str) -> String {
    format!("[REDACTED:{rule}]")
}

struct Compiled {
    set: RegexSet,
    each: Vec<Regex>,
}

static COMPILED: LazyLock<Compiled> = LazyLock::new(|| {
    let patterns: Vec<&str> = SHAPES.iter().map(|s| s.pattern).collect();
    // The patterns are constants of this file, checked by the tests below.
    Compiled {
        set: RegexSet::new(&patterns).expect("the secret patterns compile"),
        each: patterns.iter().map(|p| Regex::new(p).expect("the secret patterns compile")).collect(),
    }
});

/// AWS's documentation key ids (`AKIAIOSFODNN7EXAMPLE`) and others that say they are examples
/// are not credentials; tutorials and test fixtures are full of them.
fn is_example(found: &[u8]) -> bool {
    found.ends_with(b"EXAMPLE") || found.windows(7).any(|w| w.eq_ignore_ascii_case(b"example"))
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
    let c = &*COMPILED;
    if !c.set.is_match(data) {
        return None;
    }
    c.set
        .matches(data)
        .into_iter()
        .find(|&i| c.each[i].find_iter(data).any(|m| !is_example(m.as_bytes())))
        .map(|i| SHAPES[i].rule)
}

/// Every secret-shaped string in `data`, in order, not overlapping.
pub(crate) fn find_all(data: &[u8]) -> Vec<Found> {
    let c = &*COMPILED;
    if !c.set.is_match(data) {
        return Vec::new();
    }
    let mut found: Vec<Found> = c
        .set
        .matches(data)
        .into_iter()
        .flat_map(|i| {
            c.each[i].find_iter(data).filter(|m| !is_example(m.as_bytes())).map(move |m| Found {
                rule: SHAPES[i].rule,
                start: m.start(),
                end: m.end(),
            })
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
            ("private-key", format!("-----BEGIN OPENSSH {}-----", "PRIVATE KEY")),
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
    fn ordinary_source_and_documentation_examples_are_not_secrets() {
        let text = "let task-runner = disk-usage; // sk-learn\nAWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE\n\
                    -----BEGIN PUBLIC KEY-----\nghp_short\n";
        assert_eq!(first_rule(text.as_bytes()), None);
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
