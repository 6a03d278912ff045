//! The one layering rule inside the engine that the crate boundaries cannot enforce: the
//! targets sit below the operations and the agents, and name neither. (The store crate below
//! and the fronts above are kept apart by the build itself.)

use std::path::{Path, PathBuf};

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn no_target_module_names_an_operation_or_an_agent() {
    let targets = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/targets");
    let mut files = Vec::new();
    sources(&targets, &mut files);
    assert!(files.len() > 10, "the targets' sources were not found under {}", targets.display());
    let mut upward = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or_default();
            if ["crate::ops", "crate::agents", "crate::Repository"].iter().any(|p| code.contains(p)) {
                upward.push(format!("{}:{}: {}", file.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(upward.is_empty(), "targets/ must not reach up into ops/ or agents/:\n{}", upward.join("\n"));
}
