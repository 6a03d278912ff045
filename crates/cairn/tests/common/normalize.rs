//! Stable tokens for what differs from run to run in an output, so whole outputs can be
//! snapshots: shared by the CLI harness and the MCP server's tests (which include this file).

use std::cell::RefCell;
use std::path::{Path, PathBuf};

use regex::Regex;

/// Rewrites outputs of one test: its temp root, and the ids it has seen so far.
pub struct Normalizer {
    root: PathBuf,
    /// Every id seen in an output so far, in order: the snapshot tokens `[ID1]`, `[ID2]`… are
    /// their positions, so one snapshot shows which id is which across commands.
    ids: RefCell<Vec<String>>,
}

impl Normalizer {
    /// A normalizer for outputs that mention paths below `root`.
    pub fn new(root: &Path) -> Self {
        Self { root: root.to_path_buf(), ids: RefCell::default() }
    }

    /// Replaces what differs from run to run with stable tokens: the temp root `[TMP]` (`[TMP-AS-NAME]` where it
    /// is spelled as a directory name), each
    /// UUID `[IDn]` (numbered by first appearance in this environment; the fixed baseline
    /// session id stays), a short id `[IDn]` too, for the newest id seen that it is a prefix of,
    /// object hashes `[HASH]`, times `[TIME]`, durations `[DURATION]`, pids `[PID]`.
    pub fn normalize(&self, text: &str) -> String {
        let root = self.root.display().to_string();
        // The agents name a project's directory after its path with `/` as `-`.
        let text = text.replace(&root, "[TMP]").replace(&root.replace('/', "-"), "[TMP-AS-NAME]");
        // UUIDs, hyphenated or as 32 hex digits (codecalc's session folders); no word boundary
        // before the hyphenated form, as Pi names files `TIME_UUID.jsonl`.
        let uuid =
            Regex::new(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b|\b[0-9a-f]{32}\b")
                .unwrap();
        let mut ids = self.ids.borrow_mut();
        let text = uuid.replace_all(&text, |c: &regex::Captures| {
            let id = &c[0];
            if id.starts_with("00000000-0000-0000-0000-") {
                return id.to_owned();
            }
            let n = match ids.iter().position(|known| known == id) {
                Some(n) => n,
                None => {
                    ids.push(id.to_owned());
                    ids.len() - 1
                }
            };
            format!("[ID{}]", n + 1)
        });
        let short = Regex::new(r"\b[0-9a-f]{8}(-[0-9a-f]{1,4}){0,4}\b").unwrap();
        let text = short.replace_all(&text, |c: &regex::Captures| {
            let found: Vec<usize> =
                ids.iter().enumerate().filter(|(_, id)| id.starts_with(&c[0])).map(|(n, _)| n).collect();
            // Lists show the newest snapshots, so an ambiguous prefix (one shared with ids removed
            // since) names the newest id seen with it.
            match found.last() {
                Some(n) => format!("[ID{}]", n + 1),
                None => c[0].to_owned(),
            }
        });
        let mut text = text.into_owned();
        for (pattern, token) in [
            (r"\b[0-9a-f]{64}\b", "[HASH]"),
            // The ID column is as wide as the short ids, whose length depends on the times.
            (r"(?m)^ID +NAME", "ID  NAME"),
            // A pack's fan-out directory is the first byte of its hash.
            (r"/[0-9a-f]{2}/\[HASH\]", "/[..]/[HASH]"),
            (r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})?", "[TIME]"),
            // Pi's file names: 2025-01-10T09-00-00-000Z.
            (r"\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z", "[TIME]"),
            (r#"("\w*(duration|elapsed)\w*": )\d+(\.\d+)?"#, "${1}[DURATION]"),
            (r#"("pid": )\d+"#, "${1}[PID]"),
            // The debug profile's capture diffs: the time between the two captures.
            (r#"("timeDelta": )"[^"]*""#, "${1}\"[DURATION]\""),
            (r"\bpid \d+", "pid [PID]"),
            (r"\b\d+(\.\d+)? ?(B|KiB|MiB|GiB)/s\b", "[RATE]"),
            (r"\bin \d+(\.\d+)?(ms|s)\b", "in [DURATION]"),
            (r"\(\d+(\.\d+)?(ms|s)\)", "([DURATION])"),
        ] {
            text = Regex::new(pattern).unwrap().replace_all(&text, token).into_owned();
        }
        text
    }
}
