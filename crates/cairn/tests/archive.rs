//! `cairn export` and `cairn import`: archives GNU tar and bsdtar read and write, and hostile
//! archives refused with the entry named and nothing changed.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use common::{TestEnv, describe, write};

fn rich_tree(env: &TestEnv) {
    write(&env.work(), "src/main.rs", "fn main() {}\n");
    write(&env.work(), "run.sh", "#!/bin/sh\necho hi\n");
    std::fs::set_permissions(env.work().join("run.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let long = format!("deep/{}/{}.txt", "d".repeat(90), "n".repeat(120));
    write(&env.work(), &long, "long name\n");
    write(&env.work(), "données/été.txt", "accents\n");
    write(&env.work(), "big.bin", common::noise(3 * 1024 * 1024, 7));
    std::os::unix::fs::symlink("src/main.rs", env.work().join("link")).unwrap();
    std::fs::hard_link(env.work().join("src/main.rs"), env.work().join("hard.rs")).unwrap();
}

fn run(cmd: &mut Command) {
    let out = cmd.output().expect("run the archiver");
    assert!(out.status.success(), "{cmd:?}: {}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn an_export_read_by_gnu_tar_and_by_bsdtar_equals_the_snapshot() {
    let env = TestEnv::new();
    rich_tree(&env);
    env.json(&["save", "--name", "s"]);
    let restored = env.root().join("restored");
    env.ok(&["restore", "s", "--to", restored.to_str().unwrap()]);
    let want = describe(&restored);
    for (archive, reader) in [("s.tar.gz", "tar"), ("s.tar", "bsdtar"), ("s.tar.zst", "bsdtar")] {
        let file = env.root().join(archive);
        let exported = env.json(&["export", "s", "--to", file.to_str().unwrap()]);
        assert_eq!(exported["entries"], want.len() + 1, "{exported}");
        let out = env.root().join(format!("{reader}-{archive}"));
        std::fs::create_dir(&out).unwrap();
        run(Command::new(reader).arg("-xpf").arg(&file).arg("-C").arg(&out));
        assert_eq!(describe(&out), want, "{reader} reading {archive}");
    }
}

#[test]
fn an_import_of_a_tar_made_by_gnu_tar_restores_exactly() {
    let env = TestEnv::new();
    rich_tree(&env);
    let want = describe(&env.work());
    for (archive, flags) in [("gnu.tgz", "--format=posix -czf"), ("plain.tar", "--format=posix -cf")] {
        let file = env.root().join(archive);
        let mut tar = Command::new("tar");
        tar.args(flags.split(' ')).arg(&file).arg("-C").arg(env.work()).arg(".");
        run(&mut tar);
        let target = env.root().join(format!("as-{archive}"));
        let imported = env.json(&["import", file.to_str().unwrap(), "--target", target.to_str().unwrap()]);
        assert_eq!(imported["kind"], "dir");
        assert_eq!(imported["target"], target.to_str().unwrap());
        let id = imported["id"].as_str().unwrap();
        env.ok(&["restore", id]);
        assert_eq!(describe(&target), want, "{archive}");
    }
}

/// One raw tar member: the header written byte for byte, so nothing normalises the name.
fn member(out: &mut Vec<u8>, name: &[u8], kind: u8, link: &[u8], size: u64, data: &[u8]) {
    let mut header = tar::Header::new_gnu();
    header.as_old_mut().name[..name.len()].copy_from_slice(name);
    header.as_old_mut().linkname[..link.len()].copy_from_slice(link);
    header.set_entry_type(tar::EntryType::new(kind));
    header.set_mode(0o644);
    header.set_uid(0);
    header.set_gid(0);
    header.set_mtime(0);
    header.set_size(size);
    header.set_cksum();
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(data);
    out.resize(out.len().div_ceil(512) * 512, 0);
}

/// A raw member: name, type byte, link name, declared size, data.
type Member<'a> = (&'a [u8], u8, &'a [u8], u64, &'a [u8]);

fn hostile(name: &str, members: &[Member<'_>]) -> (String, Vec<u8>) {
    let mut out = Vec::new();
    for (n, kind, link, size, data) in members {
        member(&mut out, n, *kind, link, *size, data);
    }
    out.extend_from_slice(&[0; 1024]);
    (name.to_owned(), out)
}

/// Everything in the store that a refused import must leave as it was: the snapshots and the
/// object files.
fn store_state(env: &TestEnv) -> (serde_json::Value, Vec<String>) {
    let mut objects: Vec<String> = common::permissions_below(&env.store().join("objects"))
        .into_iter()
        .map(|(p, _, _)| p.display().to_string())
        .collect();
    objects.sort();
    (env.json(&["list"]), objects)
}

#[test]
fn hostile_archives_are_refused_with_the_entry_named_and_change_nothing() {
    let env = TestEnv::new();
    write(&env.work(), "a.txt", "a\n");
    env.json(&["save"]);
    let mut nul = Vec::new();
    {
        let mut b = tar::Builder::new(&mut nul);
        b.append_pax_extensions([("path", &b"evil\0name"[..])]).unwrap();
        let mut h = tar::Header::new_ustar();
        h.set_path("placeholder").unwrap();
        h.set_size(0);
        h.set_cksum();
        b.append(&h, std::io::empty()).unwrap();
        b.finish().unwrap();
    }
    let cases = vec![
        hostile(
            "traversal",
            &[(b"ok.txt", b'0', b"", 3, b"ok\n"), (b"../escape.txt", b'0', b"", 5, b"evil\n")],
        ),
        hostile("absolute", &[(b"/tmp/cairn-absolute.txt", b'0', b"", 5, b"evil\n")]),
        hostile(
            "write-through",
            &[(b"link", b'2', b"/tmp", 0, b""), (b"link/evil.txt", b'0', b"", 5, b"evil\n")],
        ),
        hostile("hard-link-out", &[(b"h", b'1', b"../../etc/passwd", 0, b"")]),
        hostile("hard-link-unseen", &[(b"h", b'1', b"etc/passwd", 0, b"")]),
        hostile("device", &[(b"dev/null", b'3', b"", 0, b"")]),
        hostile("fifo", &[(b"pipe", b'6', b"", 0, b"")]),
        hostile("bomb", &[(b"bomb.bin", b'0', b"", 10_000_000_000, b"")]),
        ("nul".to_owned(), nul),
    ];
    let before = store_state(&env);
    let work_before = describe(&env.work());
    let mut lines = String::new();
    for (name, bytes) in cases {
        let file = env.root().join(format!("{name}.tar"));
        std::fs::write(&file, bytes).unwrap();
        let target = env.root().join(format!("t-{name}"));
        let err = env.fails(&["import", file.to_str().unwrap(), "--target", target.to_str().unwrap()], 2);
        lines.push_str(&format!("{name}: {err}"));
        assert!(!target.exists(), "{name}");
    }
    assert!(!env.root().join("escape.txt").exists() && !Path::new("/tmp/cairn-absolute.txt").exists());
    assert!(!Path::new("/tmp/evil.txt").exists());
    assert_eq!(store_state(&env), before);
    assert_eq!(describe(&env.work()), work_before);
    insta::assert_snapshot!(lines, @r#"
    traversal: error: archive entry "../escape.txt" has a `..` component; refusing the archive (it could land outside its directory)
    absolute: error: archive entry "/tmp/cairn-absolute.txt" has an absolute path; refusing the archive (entries must be relative)
    write-through: error: archive entry "link/evil.txt" lies under "link", which the archive made a symlink; refusing the archive (it could write through the link)
    hard-link-out: error: archive entry "h" is a hard link to "../../etc/passwd", which is not a file earlier in the archive; refusing the archive (a hard link must not reach outside it)
    hard-link-unseen: error: archive entry "h" is a hard link to "etc/passwd", which is not a file earlier in the archive; refusing the archive (a hard link must not reach outside it)
    device: error: archive entry "dev/null" is a character device; refusing the archive (cairn stores no special files)
    fifo: error: archive entry "pipe" is a fifo; refusing the archive (cairn stores no special files)
    bomb: error: archive entry "bomb.bin" declares 10000000000 bytes, past the limit of 8589934592 bytes for the whole archive; refusing the archive (raise the import.max_bytes setting or the max bytes option to import it)
    nul: error: archive entry "evil\0name" has a NUL byte in its name; refusing the archive
    "#);
}

#[test]
fn an_archive_of_a_million_empty_entries_stops_at_the_entry_limit_and_leaves_the_store_as_it_was() {
    let env = TestEnv::new();
    write(&env.work(), "a.txt", "a\n");
    env.json(&["save"]);
    let file = env.root().join("million.tar.zst");
    {
        let out = zstd::Encoder::new(std::fs::File::create(&file).unwrap(), 1).unwrap().auto_finish();
        let mut b = tar::Builder::new(std::io::BufWriter::new(out));
        let mut h = tar::Header::new_ustar();
        h.set_size(0);
        h.set_mode(0o644);
        h.set_uid(0);
        h.set_gid(0);
        h.set_mtime(0);
        for i in 0..1_000_000u32 {
            h.set_path(format!("d{}/f{i}", i % 1000)).unwrap();
            h.set_cksum();
            b.append(&h, std::io::empty()).unwrap();
        }
        b.into_inner().unwrap();
    }
    let before = store_state(&env);
    let target = env.root().join("t");
    let err = env.fails(&["import", file.to_str().unwrap(), "--target", target.to_str().unwrap()], 2);
    insta::assert_snapshot!(err, @r#"error: archive entry "d0/f500000" is past the limit of 500000 entries; refusing the archive (raise the import.max_entries setting or the max entries option to import it)"#);
    assert_eq!(store_state(&env), before);
}
