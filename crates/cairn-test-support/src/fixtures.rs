//! Trees the tests write, save and compare after a restore: a few files of different sizes
//! (one small, one that chunks, one incompressible) and a symlink, and a reader that turns a
//! directory into a list that compares byte for byte.

use std::path::{Path, PathBuf};

/// Writes below `root` a small text file, a repetitive file of 50 kB, 300 kB of noise in a
/// nested directory, and a symlink to the small file.
pub fn write_tree(root: &Path) {
    std::fs::create_dir_all(root.join("sub/deeper")).unwrap();
    std::fs::write(root.join("a.txt"), "alpha\n").unwrap();
    std::fs::write(root.join("sub/b.txt"), "beta ".repeat(10_000)).unwrap();
    let noise: Vec<u8> = (0..300_000u32).map(|i| (i.wrapping_mul(2654435761) >> 13) as u8).collect();
    std::fs::write(root.join("sub/deeper/c.bin"), noise).unwrap();
    std::os::unix::fs::symlink("a.txt", root.join("link")).unwrap();
}

/// Every entry below `root`, sorted: relative path → file bytes or link target.
pub fn read_tree(root: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let rel = path.strip_prefix(root).unwrap().to_path_buf();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.file_type().is_symlink() {
                out.push((rel, std::fs::read_link(&path).unwrap().into_os_string().into_encoded_bytes()));
            } else if meta.is_dir() {
                stack.push(path);
            } else {
                out.push((rel, std::fs::read(&path).unwrap()));
            }
        }
    }
    out.sort();
    out
}
