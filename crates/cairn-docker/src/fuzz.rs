//! Entry points for the fuzz targets (`crates/cairn-fuzz`): labels as the engine reports them,
//! which any container's creator controls. Not part of the supported API.

use std::collections::HashMap;

/// Reads `key=value` lines of `bytes` as a label map and decodes compose's labels from it.
pub fn compose_labels(bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    let labels: HashMap<String, String> =
        text.lines().filter_map(|l| l.split_once('=')).map(|(k, v)| (k.to_owned(), v.to_owned())).collect();
    let _ = crate::project::fuzz_labels(&labels);
}
