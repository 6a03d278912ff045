//! `cairn gc`: reclaim data no snapshot references, and only data it can prove so.
//!
//! gc takes the store alone (saves and restores hold the store lock shared, so gc waits for
//! none and none races it), marks every object reachable from a snapshot the catalog holds, a
//! stat cache, or a record object the catalog lacks and no removal explains (`ops/live.rs`),
//! then deletes packs that hold only dead blobs and rewrites packs that are mostly dead. Packs
//! younger than `gc.grace` are left alone and reported as held, with the time a gc can free
//! them; `now` frees them at once in a store of this machine's own, where the exclusive lock
//! already proves no other process is writing (a shared store's other machines take no lock of
//! ours, so there the two phases and their grace stay). A new pack is indexed before the old
//! one is deleted, so a crash at any point loses nothing that is referenced.
//!
//! It deletes only what it can explain: a record object only when the catalog committed its
//! removal; a pack only when its header reads (so it is what its name says) and the walk was
//! complete; a pack file the catalog does not know only when, besides, none of the blobs its
//! header lists is live. Everything else is kept and reported, and `prune_orphans` deletes the
//! orphans explicitly once `cairn repair` has added back what they hold.

use std::collections::HashSet;
use std::time::Instant;

use serde::Deserialize;

pub use super::check::{CheckOptions, CheckResult};
use crate::Repository;
use crate::error::Result;
use crate::id::ObjectId;
use crate::store::catalog::{BlobLocation, Flush};
pub use crate::store::model::gc::GcResult;
use crate::store::pack::{EncodedBlob, PackBuilder};

/// How to collect garbage. The store-wide operations (gc, check) work in no session, so they
/// take no call context.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct GcOptions {
    /// Also delete orphans: snapshot records the catalog lacks, and pack files it does not know
    /// or whose header is damaged. Run `cairn repair` first: it adds back what they hold.
    #[schemars(
        description = "Also delete snapshot records the catalog lacks and pack files it cannot index; only after a repair has added back what they hold."
    )]
    #[serde(default)]
    #[cfg_attr(feature = "clap", arg(long))]
    pub prune_orphans: bool,
    /// Free unreferenced data at once, without waiting `gc.grace` for packs written in the last
    /// hour. Only in a store of this machine's own: gc holds it alone, so no other process is
    /// writing; a shared store keeps its two phases.
    #[schemars(
        description = "Free unreferenced data at once instead of keeping packs younger than gc.grace; refused for a shared store."
    )]
    #[serde(default)]
    #[cfg_attr(feature = "clap", arg(long))]
    pub now: bool,
}

/// A pack is rewritten when at least this share of its bytes is dead.
const REWRITE_DEAD_SHARE: f64 = 0.2;

/// The file a running gc leaves in the locks directory (holding its pid) until it finishes:
/// what a killed gc leaves behind (a pack it forgot but had not deleted yet, a rewritten pack
/// not indexed yet) is then blamed on it, not on a save.
pub(crate) const GC_MARK: &str = "gc.running";

impl Repository {
    /// Reclaims unreferenced data.
    pub fn gc(&self, options: &GcOptions) -> Result<GcResult> {
        let started = Instant::now();
        if options.now && self.is_shared() {
            // Other machines save into a shared store without this machine's lock: a pack
            // younger than the grace may be one a save elsewhere is about to refer to.
            return Err(crate::error::Error::invalid(format!(
                "a shared store's unreferenced data cannot be freed at once: other machines may be saving into it without this machine's lock, so a gc marks packs now and deletes them once the mark is older than gc.grace ({})",
                unit_bearing(self.config().gc_grace())
            ))
            .hint(crate::error::Hint::DropOption("now")));
        }
        // What a power cut took from the catalog comes back before anything is judged
        // unreferenced: the open tried, and a gc does not go on without it.
        self.catch_up_after_power_cut()?;
        let _lock = self.lock_store_exclusive("a gc")?;
        let mark = self.layout().locks().join(GC_MARK);
        crate::store::backend::replace_file(
            &self.layout().tmp(),
            std::process::id().to_string().as_bytes(),
            &mark,
            "write",
        )?;
        let mut result = self.collect(options)?;
        result.duration_ms = started.elapsed().as_millis() as u64;
        std::fs::remove_file(&mark).map_err(|e| crate::error::Error::io("remove", &mark, e))?;
        Ok(result)
    }

    fn collect(&self, options: &GcOptions) -> Result<GcResult> {
        let prune = options.prune_orphans && !self.is_shared();
        // Before the mark: a stat cache keeps every blob it names alive.
        let stat_caches_dropped = self.drop_stat_caches_of_vanished_dirs()?;
        let live = self.live(prune)?;
        if let Some(why) = live.incomplete {
            // Nothing is deleted, records included: a walk that stopped short explains nothing.
            return Ok(GcResult {
                kept: vec![format!("gc deleted nothing: {why}")],
                bytes_kept: self.catalog().stored_bytes()?,
                stat_caches_dropped,
                ..GcResult::default()
            });
        }
        let mut result = GcResult { stat_caches_dropped, ..GcResult::default() };
        // Records first: a record deleted before its data leaves nothing that names lost data.
        let doomed = if prune {
            [&live.removed_records[..], &live.orphan_records[..]].concat()
        } else {
            live.removed_records.clone()
        };
        for key in &doomed {
            self.backend().delete(key)?;
            result.records_removed += 1;
        }
        if !prune && !live.orphan_records.is_empty() {
            result.kept.push(format!(
                "kept {} snapshot record(s) the catalog lacks (first: {}) and the data they refer to; repair the store to add them back",
                live.orphan_records.len(),
                live.orphan_records[0]
            ));
        }
        if self.is_shared() {
            let shared = self.gc_shared(&live.objects)?;
            result.kept.extend(shared.kept);
            return Ok(GcResult { records_removed: result.records_removed, kept: result.kept, ..shared });
        }
        self.collect_packs(&live.objects, prune, options.now, &mut result)?;
        self.collect_unknown_packs(&live.objects, prune, &mut result)?;
        result.bytes_kept = self.catalog().stored_bytes()?;
        Ok(result)
    }

    /// Drops the stat cache of every directory target whose directory no longer exists, and
    /// says how many. A restore into a new directory leaves one for the directory it made,
    /// which is often deleted once looked at; left, it held the catalog's rows and every blob
    /// it named for good, after the snapshots that held them were removed. A directory that is
    /// there but unreadable keeps its cache; one that comes back (a drive mounted again) has
    /// its next save read every file.
    fn drop_stat_caches_of_vanished_dirs(&self) -> Result<u64> {
        let mut dropped = 0;
        for target in self.catalog().stat_cache_targets()? {
            let path = std::path::Path::new(&target);
            let gone = path.is_absolute()
                && matches!(std::fs::symlink_metadata(path), Err(e) if e.kind() == std::io::ErrorKind::NotFound);
            if gone {
                self.catalog().drop_stat_cache(&target)?;
                dropped += 1;
            }
        }
        Ok(dropped)
    }

    /// Deletes or rewrites the catalog's packs whose blobs are dead.
    /// With `at_once`, no grace period: the caller holds the store alone (see [`Repository::gc`]).
    fn collect_packs(
        &self,
        live: &HashSet<ObjectId>,
        prune: bool,
        at_once: bool,
        result: &mut GcResult,
    ) -> Result<()> {
        let grace = if at_once { 0 } else { self.config().gc_grace().as_secs() as i64 };
        let now = jiff::Timestamp::now().as_second();
        let mut held_until = None;
        for (key, size, created) in self.catalog().ready_packs()? {
            let blobs = self.catalog().pack_blobs(&key)?;
            // A pack the index no longer places any blob in (each was stored again elsewhere,
            // after the pack was found damaged) serves nothing: no grace period protects it.
            let emptied = blobs.is_empty();
            let dead: Vec<_> = blobs.iter().filter(|(id, _)| !live.contains(id)).collect();
            if dead.is_empty() && !emptied {
                continue;
            }
            // A shared frame's bytes are freed only with its last member.
            let places = places(&blobs);
            let dead_bytes: u64 = places
                .iter()
                .filter(|(_, members)| members.iter().all(|(id, _)| !live.contains(id)))
                .map(|((_, length), _)| length)
                .sum();
            if dead.len() < blobs.len() && (dead_bytes as f64) < size as f64 * REWRITE_DEAD_SHARE {
                continue;
            }
            if now - created < grace && !emptied {
                // What the grace keeps is said, with when it ends, so a gc right after a
                // remove does not look like one that found nothing.
                result.bytes_held += if dead.len() < blobs.len() { dead_bytes } else { size };
                result.packs_held += 1;
                held_until = held_until.max(Some(created + grace));
                continue;
            }
            if !prune && !self.pack_header_sound(&key, size) {
                result.kept.push(format!(
                    "kept pack {key}: its header is damaged; repair the store, then gc with the prune-orphans option deletes what it could not recover"
                ));
                continue;
            }
            if dead.len() < blobs.len() {
                let mut builder = PackBuilder::default();
                for ((offset, length), members) in &places {
                    let kept: Vec<_> = members.iter().filter(|(id, _)| live.contains(id)).collect();
                    if kept.is_empty() {
                        continue;
                    }
                    let stored = self.backend().get_range(&key, *offset, *length)?;
                    match kept[..] {
                        [(id, loc)] if loc.within.is_none() => builder.push(EncodedBlob {
                            id: *id,
                            kind: loc.kind,
                            raw_length: loc.raw_length,
                            stored,
                            compressed: loc.compressed,
                        }),
                        // A frame is copied as it is, with the members still live.
                        _ => builder.push_shared(
                            &stored,
                            kept.iter().map(|(id, loc)| (*id, loc.kind, loc.raw_length, loc.within)),
                        ),
                    }
                }
                let (new_key, bytes, entries) = builder.finish(self.sealing())?;
                self.catalog().begin_pack(&new_key, Flush::Now)?;
                self.backend().put_if_absent(&new_key, &bytes)?;
                self.catalog().reassign_blobs(&new_key, bytes.len() as u64, &entries)?;
                result.packs_rewritten += 1;
                result.bytes_freed += size.saturating_sub(bytes.len() as u64);
            } else {
                result.packs_removed += 1;
                result.bytes_freed += size;
            }
            result.blobs_removed += dead.len() as u64;
            self.catalog().forget_pack(&key)?;
            self.backend().delete(&key)?;
        }
        result.held_until = held_until
            .and_then(|t| jiff::Timestamp::from_second(t).ok())
            .map(|t| t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string());
        Ok(())
    }

    /// Deals with pack files the catalog does not know: a save's whose catalog commits a power
    /// cut took back, a pack a killed gc had forgotten, or any pack of a catalog that was lost.
    /// With the store held alone, no writer is mid-publish.
    fn collect_unknown_packs(
        &self,
        live: &HashSet<ObjectId>,
        prune: bool,
        result: &mut GcResult,
    ) -> Result<()> {
        let known: HashSet<String> = self.catalog().all_pack_keys()?.into_iter().collect();
        let (mut damaged, mut needed) = (Vec::new(), Vec::new());
        for (key, size) in self.backend().list_sizes("packs/")? {
            if known.contains(&key) {
                continue;
            }
            match crate::store::pack::read_header_ranged(self.backend(), &key, size, self.sealing()) {
                // A blob it lists that a snapshot needs, indexed elsewhere or not: never deleted.
                Ok(entries) if entries.iter().any(|e| live.contains(&e.id)) => {
                    needed.push(key);
                    continue;
                }
                Ok(_) => {}
                Err(_) if !prune => {
                    damaged.push(key);
                    continue;
                }
                Err(_) => {}
            }
            self.backend().delete(&key)?;
            result.packs_removed += 1;
            result.bytes_freed += size;
        }
        if let Some(first) = needed.first() {
            result.kept.push(format!(
                "kept {} pack file(s) the catalog does not know that hold data snapshots refer to (first: {first}); repair the store to index them",
                needed.len()
            ));
        }
        if let Some(first) = damaged.first() {
            result.kept.push(format!(
                "kept {} pack file(s) the catalog does not know whose header is damaged (first: {first}); repair the store, then gc with the prune-orphans option deletes what it could not recover",
                damaged.len()
            ));
        }
        Ok(())
    }
}

/// A duration as the settings take it: `1h`, `30m`, `90s`.
fn unit_bearing(d: std::time::Duration) -> String {
    match d.as_secs() {
        s if s >= 3600 && s % 3600 == 0 => format!("{}h", s / 3600),
        s if s >= 60 && s % 60 == 0 => format!("{}m", s / 60),
        s => format!("{s}s"),
    }
}

/// A pack's blobs by the stored bytes they are in, in pack order: one place per blob, or per
/// shared frame with all its members.
type Places<'b> = std::collections::BTreeMap<(u64, u64), Vec<(ObjectId, &'b BlobLocation)>>;

fn places(blobs: &[(ObjectId, BlobLocation)]) -> Places<'_> {
    let mut places = Places::new();
    for (id, loc) in blobs {
        places.entry((loc.offset, loc.length)).or_default().push((*id, loc));
    }
    places
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::error::ErrorKind;
    use crate::ops::remove::RemoveOptions;
    use crate::ops::restore::RestoreOptions;
    use crate::ops::save::SaveOptions;
    use crate::targets::Target;
    use crate::targets::dir::statcache::StatCache;

    fn noise(len: usize, seed: u64) -> Vec<u8> {
        let mut x = seed | 1;
        (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect()
    }

    /// A store in `dir` whose gc frees what is dead at once.
    fn store_without_grace(dir: &std::path::Path) -> Repository {
        let mut store = Repository::open(&dir.join("store")).unwrap();
        let mut config = Config::default();
        config.set("gc.grace", "0s").unwrap();
        store.save_config(config).unwrap();
        store
    }

    fn save_of(store: &Repository, work: &std::path::Path) -> Result<crate::ops::save::SaveResult> {
        store.save(
            &SaveOptions { target: work.display().to_string(), ..SaveOptions::default() },
            &Default::default(),
        )
    }

    /// Removes snapshot `gone`, then runs gc.
    fn gc_after_removing(store: &Repository, gone: &crate::ops::save::SaveResult) -> GcResult {
        let refs = vec![gone.snapshot.id.to_string()];
        store.remove(&RemoveOptions { refs, ..RemoveOptions::default() }, &Default::default()).unwrap();
        store.gc(&GcOptions::default()).unwrap()
    }

    /// Checks `checked` with `--read-data`, then restores snapshot `of` from `from` into `dest`.
    fn checked_copy(
        checked: &Repository,
        from: &Repository,
        of: &crate::ops::save::SaveResult,
        dest: &std::path::Path,
    ) -> std::path::PathBuf {
        let check = checked.check(&CheckOptions { read_data: true }).unwrap();
        assert!(check.problems.is_empty(), "{:?}", check.problems);
        let options = RestoreOptions {
            reference: Some(of.snapshot.id.to_string()),
            to: Some(dest.to_path_buf()),
            ..RestoreOptions::default()
        };
        from.restore(&options, &Default::default()).unwrap();
        dest.to_path_buf()
    }

    fn source(i: usize) -> String {
        format!("pub fn item_{i}(x: u32) -> u32 {{\n    x * {i} + 1\n}}\n").repeat(60)
    }

    #[test]
    fn gc_copies_a_shared_frame_with_the_members_still_live_and_forgets_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let work = dir.path().join("work");
        std::fs::create_dir_all(&work).unwrap();
        std::fs::write(work.join("dead.bin"), noise(400_000, 1)).unwrap();
        for i in 0..40 {
            std::fs::write(work.join(format!("f{i:02}.rs")), source(i)).unwrap();
        }
        let store = store_without_grace(dir.path());
        let save = |store: &Repository| save_of(store, &work);
        let first = save(&store).unwrap();
        let framed = |store: &Repository| -> Vec<(ObjectId, BlobLocation)> {
            let mut all = Vec::new();
            for (key, _, _) in store.catalog().ready_packs().unwrap() {
                all.extend(
                    store.catalog().pack_blobs(&key).unwrap().into_iter().filter(|(_, l)| l.within.is_some()),
                );
            }
            all
        };
        // Each writing thread fills a frame of its own, and a thread's lone member is stored
        // whole, so which files end up framed depends on the threads' timing.
        let framed_first: HashSet<ObjectId> = framed(&store).into_iter().map(|(id, _)| id).collect();
        assert!(framed_first.len() >= 30, "the small files share frames: {}", framed_first.len());

        std::fs::remove_file(work.join("dead.bin")).unwrap();
        for i in (0..40).step_by(2) {
            std::fs::remove_file(work.join(format!("f{i:02}.rs"))).unwrap();
        }
        let second = save(&store).unwrap();
        let gc = gc_after_removing(&store, &first);
        // 20 files, dead.bin, and the first snapshot's tree and root.
        assert_eq!((gc.packs_rewritten, gc.blobs_removed), (1, 23), "{gc:?}");
        // The live members moved with their frames, still framed; the dead ones are forgotten.
        let live: HashSet<ObjectId> = (1..40)
            .step_by(2)
            .map(|i| ObjectId::of(source(i).as_bytes()))
            .filter(|id| framed_first.contains(id))
            .collect();
        let kept: HashSet<ObjectId> = framed(&store).into_iter().map(|(id, _)| id).collect();
        assert_eq!(kept, live);
        let dest = checked_copy(&store, &store, &second, &dir.path().join("copy"));
        for i in (1..40).step_by(2) {
            assert_eq!(std::fs::read_to_string(dest.join(format!("f{i:02}.rs"))).unwrap(), source(i));
        }
    }

    #[test]
    fn gc_keeps_the_parts_of_a_large_directory_a_snapshot_still_needs() {
        let dir = tempfile::tempdir().unwrap();
        let work = dir.path().join("work");
        std::fs::create_dir_all(&work).unwrap();
        let content = |i: usize, version: u32| format!("file {i}, version {version}\n");
        for i in 0..3_000 {
            std::fs::write(work.join(format!("f{i:04}.txt")), content(i, 1)).unwrap();
        }
        // Enough dead bytes for gc to rewrite the first snapshot's pack.
        std::fs::write(work.join("dead.bin"), noise(400_000, 1)).unwrap();
        let store = store_without_grace(dir.path());
        let save = |store: &Repository| save_of(store, &work);
        let first = save(&store).unwrap();
        std::fs::write(work.join("f1234.txt"), content(1234, 2)).unwrap();
        std::fs::remove_file(work.join("dead.bin")).unwrap();
        let second = save(&store).unwrap();
        let gc = gc_after_removing(&store, &first);
        // dead.bin, the old content of the file, the two parts that held them (the first and
        // one in the middle), the index and the root: the pack's other parts are the second
        // snapshot's too, and are copied.
        assert_eq!((gc.packs_rewritten, gc.blobs_removed), (1, 6), "{gc:?}");
        let dest = checked_copy(&store, &store, &second, &dir.path().join("copy"));
        assert_eq!(std::fs::read_dir(&dest).unwrap().count(), 3_000);
        assert_eq!(std::fs::read_to_string(dest.join("f1234.txt")).unwrap(), content(1234, 2));
        assert_eq!(std::fs::read_to_string(dest.join("f2999.txt")).unwrap(), content(2999, 1));
    }

    #[test]
    fn gc_and_a_save_exclude_each_other_and_gc_keeps_what_snapshots_need() {
        let dir = tempfile::tempdir().unwrap();
        let work = dir.path().join("work");
        std::fs::create_dir_all(&work).unwrap();
        std::fs::write(work.join("dead.bin"), noise(400_000, 1)).unwrap();
        std::fs::write(work.join("alive.bin"), noise(400_000, 2)).unwrap();
        let saver = Repository::open(&dir.path().join("store")).unwrap();
        let mut collector = Repository::open(&dir.path().join("store")).unwrap();
        let mut config = Config::default();
        config.set("gc.grace", "0s").unwrap();
        collector.save_config(config).unwrap();
        let save = || {
            saver.save(
                &SaveOptions { target: work.display().to_string(), ..SaveOptions::default() },
                &Default::default(),
            )
        };
        let first = save().unwrap();

        // A save in progress holds the store lock shared (and its target's lock): gc refuses.
        let key = Target::parse(work.to_str().unwrap()).unwrap().key();
        let saving = saver.lock_target(&key, "a save").unwrap();
        let err = collector.gc(&GcOptions::default()).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Locked);
        let text = err.to_string();
        assert!(
            text.contains("gc needs the store alone") && text.contains("retry when it finishes"),
            "{text}"
        );
        drop(saving);

        // gc in progress holds the store alone: a save refuses and names it.
        let collecting = collector.lock_store_exclusive("a gc").unwrap();
        let err = save().unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Locked);
        let text = err.to_string();
        assert!(text.contains("garbage collection is running") && text.contains("pid "), "{text}");
        drop(collecting);

        std::fs::remove_file(work.join("dead.bin")).unwrap();
        let second = save().unwrap();
        collector
            .remove(
                &RemoveOptions { refs: vec![first.snapshot.id.to_string()], ..RemoveOptions::default() },
                &Default::default(),
            )
            .unwrap();
        let gc = collector.gc(&GcOptions::default()).unwrap();
        assert!(gc.bytes_freed >= 390_000, "{gc:?}");
        let dest = checked_copy(&collector, &saver, &second, &dir.path().join("copy"));
        assert_eq!(std::fs::read(dest.join("alive.bin")).unwrap(), noise(400_000, 2));
        assert!(!dest.join("dead.bin").exists());
    }

    /// Publishes a pack holding `data` without indexing it; returns its key.
    fn pack_the_catalog_does_not_know(store: &Repository, data: &[u8]) -> String {
        let mut builder = PackBuilder::default();
        builder.push(
            crate::store::pack::encode(ObjectId::of(data), crate::store::pack::BlobKind::Data, data).unwrap(),
        );
        let (key, bytes, _) = builder.finish(None).unwrap();
        store.backend().put_if_absent(&key, &bytes).unwrap();
        key
    }

    #[test]
    fn the_stat_cache_keeps_alive_every_file_of_a_directory_kept_in_parts() {
        let dir = tempfile::tempdir().unwrap();
        let work = dir.path().join("work");
        std::fs::create_dir_all(&work).unwrap();
        let files: Vec<Vec<u8>> = (0..1_200).map(|i| format!("file {i}").into_bytes()).collect();
        for (i, data) in files.iter().enumerate() {
            std::fs::write(work.join(format!("f{i:04}")), data).unwrap();
        }
        let store = Repository::open(&dir.path().join("store")).unwrap();
        let options = SaveOptions { target: work.display().to_string(), ..SaveOptions::default() };
        store.save(&options, &Default::default()).unwrap();
        let mut named = HashSet::new();
        let mut rows = 0;
        store
            .catalog()
            .for_each_stat_cache_files(|blob| {
                rows += 1;
                named.extend(StatCache::decode_content_ids(blob));
            })
            .unwrap();
        assert!(rows > 2, "the directory's row and its parts ({rows})");
        for data in &files {
            assert!(named.contains(&ObjectId::of(data)), "a file's content is named by the cache");
        }
    }

    /// A save takes the tree a directory's stat cache row names as stored, without a lookup,
    /// when it makes that tree again, and so the parts of a large directory's tree its index
    /// names: gc keeps every such tree, so once the snapshot that stored them is removed and
    /// collected (an older one keeps the target's stat cache), the next save still refers only
    /// to what the store holds.
    #[test]
    fn a_tree_the_stat_cache_names_outlives_the_snapshot_that_stored_it() {
        let dir = tempfile::tempdir().unwrap();
        let work = dir.path().join("work");
        // Directories of one small file each, and one of 1,100 whose tree is kept in parts:
        // their trees are most of what a save stores, so a gc that finds them dead frees them
        // rather than keep their pack whole.
        let fill = |prefix: &str| {
            for i in 0..40 {
                std::fs::create_dir_all(work.join(format!("d{i:02}/e"))).unwrap();
                std::fs::write(work.join(format!("d{i:02}/e/f")), format!("{prefix}{i}")).unwrap();
            }
            std::fs::create_dir_all(work.join("large")).unwrap();
            for i in 0..1_100 {
                std::fs::write(work.join(format!("large/{i:04}")), format!("{prefix}{}", i % 2)).unwrap();
            }
        };
        let store = store_without_grace(dir.path());
        fill("older ");
        save_of(&store, &work).unwrap();
        fill("");
        let stored = save_of(&store, &work).unwrap();
        // Only the rows hold the trees now; gc freed them when it did not mark what rows name.
        gc_after_removing(&store, &stored);
        let again = save_of(&store, &work).unwrap();
        let restored = checked_copy(&store, &store, &again, &dir.path().join("copy"));
        for i in 0..40 {
            let file = format!("d{i:02}/e/f");
            assert_eq!(std::fs::read(restored.join(&file)).unwrap(), format!("{i}").into_bytes());
        }
        for i in 0..1_100 {
            let file = format!("large/{i:04}");
            assert_eq!(std::fs::read(restored.join(&file)).unwrap(), format!("{}", i % 2).into_bytes());
        }
    }

    /// Under the old rule gc deleted every pack file the catalog did not know. Now it deletes
    /// one only when its header reads and none of the blobs it lists is live, and `check`
    /// sends it to `cairn repair`, not to gc.
    #[test]
    fn gc_removes_a_lost_pack_file_only_when_its_header_reads_and_nothing_in_it_is_live() {
        let dir = tempfile::tempdir().unwrap();
        let store = Repository::open(&dir.path().join("store")).unwrap();
        let key = pack_the_catalog_does_not_know(&store, b"published, then the catalog commit was lost");
        let problems = store.check(&CheckOptions::default()).unwrap().problems;
        assert!(
            problems.iter().any(|p| p.contains(&key)
                && p.contains("not in the catalog")
                && p.contains("repair the store")),
            "{problems:?}"
        );
        assert_eq!(store.gc(&GcOptions::default()).unwrap().packs_removed, 1);
        assert!(store.backend().list("packs/").unwrap().is_empty());
        assert!(store.check(&CheckOptions::default()).unwrap().problems.is_empty());

        // One that holds a blob a snapshot refers to is kept, whatever the index says.
        let work = dir.path().join("work");
        std::fs::create_dir_all(&work).unwrap();
        std::fs::write(work.join("kept.txt"), b"a snapshot's content").unwrap();
        save_of(&store, &work).unwrap();
        let live = pack_the_catalog_does_not_know(&store, b"a snapshot's content");
        let gc = store.gc(&GcOptions::default()).unwrap();
        assert!(gc.kept.iter().any(|k| k.contains("repair the store")), "{gc:?}");
        assert!(store.backend().size(&live).unwrap().is_some());

        // One whose header is damaged is kept by a plain gc, and pruned only when asked.
        let damaged = pack_the_catalog_does_not_know(&store, b"cut short");
        let bytes = store.backend().get(&damaged).unwrap();
        store.backend().delete(&damaged).unwrap();
        store.backend().put_if_absent(&damaged, &bytes[..bytes.len() - 1]).unwrap();
        let gc = store.gc(&GcOptions::default()).unwrap();
        assert!(gc.kept.iter().any(|k| k.contains("header is damaged")), "{gc:?}");
        assert!(store.backend().size(&damaged).unwrap().is_some());
        store.gc(&GcOptions { prune_orphans: true, ..GcOptions::default() }).unwrap();
        assert!(store.backend().size(&damaged).unwrap().is_none());
        assert!(store.backend().size(&live).unwrap().is_some(), "never one that holds live data");
    }

    #[test]
    fn after_a_killed_gc_check_blames_the_gc_not_an_interrupted_save() {
        let dir = tempfile::tempdir().unwrap();
        let store = Repository::open(&dir.path().join("store")).unwrap();
        let key =
            pack_the_catalog_does_not_know(&store, b"forgotten by a killed gc before it deleted the file");
        // What a gc killed between forgetting a pack and deleting its file leaves.
        let mut gc = std::process::Command::new("true").spawn().unwrap();
        let gc_pid = gc.id();
        gc.wait().unwrap();
        std::fs::write(store.layout().locks().join(GC_MARK), gc_pid.to_string()).unwrap();
        let problems = store.check(&CheckOptions::default()).unwrap().problems;
        let line = problems.iter().find(|p| p.contains(&key)).expect("the pack is reported");
        assert!(line.contains(&format!("left by an interrupted gc (pid {gc_pid})")), "{line}");
        assert!(!line.contains("save"), "{line}");
        // The next gc finishes the job and clears its mark.
        assert_eq!(store.gc(&GcOptions::default()).unwrap().packs_removed, 1);
        assert!(!store.layout().locks().join(GC_MARK).exists());
        assert!(store.check(&CheckOptions::default()).unwrap().problems.is_empty());
    }
}
