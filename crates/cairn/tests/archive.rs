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

/// Whether `tool` runs; a test that needs it says so and skips when it does not.
fn have(tool: &str) -> bool {
    let found = Command::new(tool).arg("--version").output().is_ok_and(|o| o.status.success());
    if !found {
        #[allow(clippy::print_stdout)] // the suite prints why this test did nothing
        {
            println!("skipped: {tool} is not installed (scripts/deps/archive-tools.sh installs it)");
        }
    }
    found
}

/// A file of 1 MiB with six data islands (more than an old GNU header's table of four holds)
/// and a hole at its end.
fn sparse_file(path: &Path) -> Vec<u8> {
    use std::os::unix::fs::FileExt;
    let file = std::fs::File::create(path).unwrap();
    file.set_len(1 << 20).unwrap();
    let mut want = vec![0u8; 1 << 20];
    for i in 0..6u64 {
        let data = format!("island {i}\n").repeat(100);
        let at = i * 150_000 + 7;
        file.write_all_at(data.as_bytes(), at).unwrap();
        want[at as usize..at as usize + data.len()].copy_from_slice(data.as_bytes());
    }
    want
}

fn is_sparse(path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path).unwrap();
    meta.blocks() * 512 < meta.size()
}

#[test]
fn gnu_sparse_files_of_every_format_import_with_their_bytes_and_holes() {
    if !have("tar") {
        return;
    }
    let env = TestEnv::new();
    let src = env.root().join("src");
    std::fs::create_dir(&src).unwrap();
    let want = sparse_file(&src.join("disk.img"));
    write(&src, "after.txt", "the entry after the sparse one\n");
    if !is_sparse(&src.join("disk.img")) {
        #[allow(clippy::print_stdout)] // the suite prints why this test did nothing
        {
            println!("skipped: this file system keeps no holes, so tar writes no sparse entry");
        }
        return;
    }
    let mut transcript = String::new();
    let bsdtar = have("bsdtar");
    for (name, tool, flags) in [
        ("pax-0.0", "tar", "--format=posix --sparse --sparse-version=0.0"),
        ("pax-0.1", "tar", "--format=posix --sparse --sparse-version=0.1"),
        ("pax-1.0", "tar", "--format=posix --sparse --sparse-version=1.0"),
        ("old-gnu", "tar", "--format=gnu --sparse"),
        ("bsdtar-pax", "bsdtar", "--format=pax"),
    ] {
        if tool == "bsdtar" && !bsdtar {
            continue;
        }
        let file = env.root().join(format!("{name}.tar"));
        let mut tar = Command::new(tool);
        tar.args(flags.split(' ')).arg("-cf").arg(&file).arg("-C").arg(&src).args(["disk.img", "after.txt"]);
        run(&mut tar);
        let target = env.root().join(name);
        let out =
            env.ok(&["import", file.to_str().unwrap(), "--target", target.to_str().unwrap(), "--name", name]);
        transcript.push_str(&env.normalize(&out));
        env.ok(&["restore", name]);
        assert!(std::fs::read(target.join("disk.img")).unwrap() == want, "{name}: the bytes differ");
        assert!(is_sparse(&target.join("disk.img")), "{name}: the holes were filled");
        let after = std::fs::read_to_string(target.join("after.txt")).unwrap();
        assert_eq!(after, "the entry after the sparse one\n", "{name}");
    }
    insta::assert_snapshot!(transcript);
}

#[test]
fn pax_uid_and_gid_records_give_the_owner() {
    if !have("tar") {
        return;
    }
    let env = TestEnv::new();
    let src = env.root().join("src");
    write(&src, "owned.txt", "owned\n");
    // Ids past the ustar header's seven octal digits: GNU tar writes them as pax records.
    std::os::unix::fs::chown(src.join("owned.txt"), Some(3_000_000), Some(3_000_001)).unwrap();
    let file = env.root().join("owned.tar");
    run(Command::new("tar").args(["--format=posix", "-cf"]).arg(&file).arg("-C").arg(&src).arg("owned.txt"));
    let target = env.root().join("owned");
    env.ok(&["import", file.to_str().unwrap(), "--target", target.to_str().unwrap(), "--name", "imported"]);
    env.ok(&["restore", "imported"]);
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(target.join("owned.txt")).unwrap();
    assert_eq!((meta.uid(), meta.gid()), (3_000_000, 3_000_001));
}

#[test]
fn a_v7_directory_entry_stays_a_directory() {
    let env = TestEnv::new();
    let mut bytes = Vec::new();
    for (name, size, data) in [(&b"old/"[..], 0, &b""[..]), (b"old/f.txt", 3, b"v7\n"), (b"empty/", 0, b"")] {
        // A pre-POSIX header: no magic, type byte NUL, a directory told by its trailing slash.
        let mut header = tar::Header::new_old();
        header.as_old_mut().name[..name.len()].copy_from_slice(name);
        header.set_mode(if name.ends_with(b"/") { 0o750 } else { 0o640 });
        header.set_uid(0);
        header.set_gid(0);
        header.set_mtime(1_000_000_000);
        header.set_size(size);
        header.as_old_mut().linkflag = [0];
        header.set_cksum();
        bytes.extend_from_slice(header.as_bytes());
        bytes.extend_from_slice(data);
        bytes.resize(bytes.len().div_ceil(512) * 512, 0);
    }
    bytes.extend_from_slice(&[0; 1024]);
    let file = env.root().join("v7.tar");
    std::fs::write(&file, bytes).unwrap();
    let target = env.root().join("v7");
    env.ok(&["import", file.to_str().unwrap(), "--target", target.to_str().unwrap(), "--name", "imported"]);
    env.ok(&["restore", "imported"]);
    let got: Vec<String> =
        describe(&target).into_iter().map(|(p, e)| format!("{} {e:?}", p.display())).collect();
    insta::assert_snapshot!(got.join("\n"), @r#"
    empty Dir { mode: 488 }
    old Dir { mode: 488 }
    old/f.txt File { mode: 416, mtime_ns: 1000000000000000000, content_hash: "687540194e57e8f0-3", links: 1 }
    "#);
}

/// An archive of one file entry of `data` whose pax records are `records`.
fn with_pax(records: &[(&str, &str)], data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut b = tar::Builder::new(&mut out);
    b.append_pax_extensions(records.iter().map(|(k, v)| (*k, v.as_bytes()))).unwrap();
    let mut h = tar::Header::new_ustar();
    h.set_path("GNUSparseFile.1/disk.img").unwrap();
    h.set_size(data.len() as u64);
    h.set_mode(0o644);
    h.set_uid(0);
    h.set_gid(0);
    h.set_mtime(0);
    h.set_cksum();
    b.append(&h, data).unwrap();
    b.finish().unwrap();
    drop(b);
    out
}

#[test]
fn a_sparse_map_in_another_format_or_that_does_not_add_up_is_refused_in_one_line() {
    let env = TestEnv::new();
    write(&env.work(), "a.txt", "a\n");
    env.json(&["save"]);
    let cases = [
        ("format-2.0", with_pax(&[("GNU.sparse.major", "2"), ("GNU.sparse.minor", "0")], b"")),
        ("overlap", with_pax(&[("GNU.sparse.size", "100"), ("GNU.sparse.map", "0,10,5,10")], &[b'x'; 20])),
        ("past-the-end", with_pax(&[("GNU.sparse.size", "10"), ("GNU.sparse.map", "5,10")], &[b'x'; 10])),
        (
            "short-data",
            with_pax(&[("GNU.sparse.size", "100"), ("GNU.sparse.map", "0,10,50,10")], &[b'x'; 15]),
        ),
        (
            "map-cut",
            with_pax(
                &[("GNU.sparse.major", "1"), ("GNU.sparse.minor", "0"), ("GNU.sparse.realsize", "9")],
                b"2\n0\n",
            ),
        ),
    ];
    let before = store_state(&env);
    let mut lines = String::new();
    for (name, bytes) in cases {
        let file = env.root().join(format!("{name}.tar"));
        std::fs::write(&file, bytes).unwrap();
        let err = env.fails(&["import", file.to_str().unwrap(), "--target", "t"], 2);
        lines.push_str(&format!("{name}: {err}"));
    }
    assert_eq!(store_state(&env), before);
    insta::assert_snapshot!(env.normalize(&lines), @r#"
    format-2.0: error: archive entry "GNUSparseFile.1/disk.img" is a GNU sparse file in format 2.0, which cairn does not read; refusing the archive (cairn reads GNU sparse formats 0.0, 0.1 and 1.0)
    overlap: error: archive entry "GNUSparseFile.1/disk.img" is a GNU sparse file (format 0.1) whose map has extents that overlap, are out of order or run past the file's end; refusing the archive (it is damaged or made to mislead)
    past-the-end: error: archive entry "GNUSparseFile.1/disk.img" is a GNU sparse file (format 0.1) whose map has extents that overlap, are out of order or run past the file's end; refusing the archive (it is damaged or made to mislead)
    short-data: error: archive entry "GNUSparseFile.1/disk.img" is a GNU sparse file (format 0.1) whose map lists 20 bytes of data but the entry holds 15; refusing the archive (it is damaged or made to mislead)
    map-cut: error: archive entry "GNUSparseFile.1/disk.img" is a GNU sparse file (format 1.0) whose map is cut short or longer than cairn reads; refusing the archive (it is damaged or made to mislead)
    "#);
}

/// Issue 39: exported archives were 0600 whatever the umask. They now get the mode any new
/// file of the user's gets, except an archive holding a file cairn counts as a secret, which
/// stays readable by its owner only.
#[test]
fn an_export_gets_the_umask_mode_unless_it_holds_a_secret() {
    let env = TestEnv::new();
    write(&env.work(), "notes.txt", "plain\n");
    env.json(&["save", "--name", "plain"]);
    let mode = |file: &Path| std::fs::metadata(file).unwrap().permissions().mode() & 0o777;
    for (umask, want) in [("022", 0o644), ("027", 0o640), ("002", 0o664)] {
        let file = env.root().join(format!("plain-{umask}.tar"));
        let out = env.json_under_umask(umask, &["--json", "export", "plain", "--to", file.to_str().unwrap()]);
        assert_eq!(mode(&file), want, "umask {umask}");
        assert!(out.get("secret").is_none(), "{out}");
    }

    write(&env.work(), ".env", "API_TOKEN=hunter2\n");
    env.json(&["save", "--name", "without"]);
    let file = env.root().join("without.tar.gz");
    env.json_under_umask("022", &["--json", "export", "without", "--to", file.to_str().unwrap()]);
    assert_eq!(mode(&file), 0o644, "a save leaves .env out, so the archive holds no secret");

    env.json(&["save", "--name", "with", "--include-secrets"]);
    let file = env.root().join("with.tar.zst");
    let out = env.json_under_umask("022", &["--json", "export", "with", "--to", file.to_str().unwrap()]);
    assert_eq!(mode(&file), 0o600);
    assert_eq!(out["secret"], serde_json::json!({"path": ".env", "rule": "dotenv"}));

    // A content rule, on a file whose name says nothing.
    std::fs::remove_file(env.work().join(".env")).unwrap();
    write(&env.work(), "deploy.sh", "export GH=ghp_0123456789abcdefghijABCDEFGHIJ012345\n");
    env.json(&["save", "--name", "token", "--include-secrets"]);
    let file = env.root().join("token.tar");
    let out = env.json_under_umask("022", &["--json", "export", "token", "--to", file.to_str().unwrap()]);
    assert_eq!(mode(&file), 0o600);
    assert_eq!(out["secret"]["rule"], "github-token", "{out}");
}
