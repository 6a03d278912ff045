//! `cairn save`: capture a target as a new snapshot, or several together as a moment.
//!
//! [`Repository::save_targets`] is the one entry point every front calls: one target makes a
//! snapshot, several make a moment (`ops/moment/save.rs`), and the options reach either whole.
//!
//! Pipeline: resolve the target and session → check the name → take the target's lock →
//! capture through the blob writer (stat cache first) → publish the last pack → write the
//! record object → commit the catalog row with the new stat cache rows (the snapshot exists
//! from here) → apply the store's keep policy. The capture and the commit live in
//! `pipeline/capture.rs`, shared with a restore's safety snapshot.

use serde::{Deserialize, Serialize};

use super::moment::{MomentSaveOptions, MomentSaveResult};
pub(crate) use super::pipeline::capture::DirCapture;
use super::resolve::CallContext;
use super::transcript::AgentPlaces;
use crate::Repository;
use crate::error::{Error, Hint, Result};
use crate::name::validate_name;
use crate::snapshot::Snapshot;
use crate::targets::Target;
pub use crate::targets::dir::Progress;

/// What to save. The CLI's help is the doc comment of each field; the MCP description,
/// written for an agent, is the `schemars` one.
#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct SaveOptions {
    /// What to capture: a directory (the default is the current one).
    #[schemars(
        description = "What to capture: an absolute directory path, compose:PROJECT for a running Compose project, or transcript:FILE for an agent session file."
    )]
    #[cfg_attr(feature = "clap", arg(default_value = "."))]
    pub target: String,
    /// More targets: with several, they are saved together as one moment
    /// (`transcript:auto` is the newest agent session of the current directory).
    #[schemars(
        description = "More targets to capture together with `target` as one moment (one id over one snapshot per target); \"transcript:auto\" is the newest Pi or Claude Code session of the server's directory."
    )]
    #[serde(default)]
    #[cfg_attr(feature = "clap", arg(value_name = "MORE"))]
    pub targets: Vec<String>,
    /// A name to refer to the snapshot by (unique per session and target).
    #[schemars(
        description = "A short name to refer to the snapshot by; letters, digits, '.', '_' and '-'. Unique per session and target."
    )]
    #[cfg_attr(feature = "clap", arg(long, short))]
    pub name: Option<String>,
    /// What this snapshot is being taken before.
    #[schemars(description = "What the snapshot is being taken before, in your words.")]
    #[cfg_attr(feature = "clap", arg(long, short))]
    pub description: Option<String>,
    /// Move an existing name to the new snapshot.
    #[schemars(description = "Move an existing name to this new snapshot instead of failing.")]
    #[serde(default)]
    #[cfg_attr(feature = "clap", arg(long, short))]
    pub force: bool,
    /// Capture paths that .gitignore and .cairnignore leave out.
    #[schemars(description = "Also capture paths that .gitignore or .cairnignore exclude.")]
    #[serde(default)]
    #[cfg_attr(feature = "clap", arg(long))]
    pub no_ignore: bool,
    /// The session to save into (name or id).
    #[schemars(description = "The session to save into, for this call only (name or id).")]
    #[cfg_attr(feature = "clap", arg(long))]
    pub session: Option<String>,
    /// Capture files that hold credentials (.env, private keys, access tokens) too.
    // Never taken from a tool call: an agent cannot opt into copying credentials; the user's
    // `secrets.include` setting can.
    #[serde(skip)]
    #[cfg_attr(feature = "clap", arg(long))]
    pub include_secrets: bool,
}

/// The new snapshot, and what the keep policy removed after it.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SaveResult {
    /// The snapshot record.
    #[serde(flatten)]
    pub snapshot: Snapshot,
    /// Snapshots the store's keep policy (`keep.*` settings) removed after this save.
    pub removed_by_policy: Vec<Snapshot>,
}

/// What a save made: one snapshot, or a moment over several.
#[derive(Debug, Clone)]
pub enum Saved {
    /// One target: its snapshot.
    Snapshot(SaveResult),
    /// Several targets: the moment over one snapshot each.
    Moment(MomentSaveResult),
}

impl Repository {
    /// Saves `options.target` and `options.targets`: one target as a snapshot, several as one
    /// moment. `places` says where the agents keep their sessions, for `transcript:auto`;
    /// `progress` counts a directory's files as one target is scanned.
    pub fn save_targets(
        &self,
        options: &SaveOptions,
        places: &AgentPlaces,
        context: &CallContext,
        progress: &Progress,
    ) -> Result<Saved> {
        if options.targets.is_empty() {
            return self.save_with_progress(options, context, progress).map(Saved::Snapshot);
        }
        // Every field is mapped, so a new option cannot be dropped on the way to the moment.
        let SaveOptions { target, targets, name, description, force, no_ignore, session, include_secrets } =
            options;
        let moment = MomentSaveOptions {
            targets: std::iter::once(target).chain(targets).cloned().collect(),
            name: name.clone(),
            description: description.clone(),
            force: *force,
            no_ignore: *no_ignore,
            include_secrets: *include_secrets,
            session: session.clone(),
            places: places.clone(),
        };
        self.moment_save(&moment, context).map(Saved::Moment)
    }

    /// Captures `options.target` as a new snapshot.
    pub fn save(&self, options: &SaveOptions, context: &CallContext) -> Result<SaveResult> {
        self.save_with_progress(options, context, &Progress::default())
    }

    /// [`Repository::save`], counting the files and bytes of a directory it scans into `progress`
    /// for a front end to show while it runs.
    pub fn save_with_progress(
        &self,
        options: &SaveOptions,
        context: &CallContext,
        progress: &Progress,
    ) -> Result<SaveResult> {
        if !options.targets.is_empty() {
            return Err(Error::invalid(
                "several targets are saved together as a moment, not as one snapshot",
            ));
        }
        let target = Target::parse(&options.target)?;
        if let Target::Transcript(file) = &target {
            return self.save_transcript_target(file, options, context);
        }
        if let Target::Compose(project) = &target {
            let compose = super::compose::ComposeSaveOptions {
                project: project.clone(),
                name: options.name.clone(),
                description: options.description.clone(),
                force: options.force,
                session: options.session.clone(),
                ..Default::default()
            };
            let saved = self.compose_save(&compose, context)?;
            return Ok(SaveResult { snapshot: saved.snapshot, removed_by_policy: saved.removed_snapshots });
        }
        let Target::Dir(path) = &target else {
            return Err(Error::invalid(format!(
                "cairn cannot save {} targets with this command yet; pass a directory",
                target.kind()
            )));
        };
        if let Some(name) = &options.name {
            validate_name("snapshot", name)?;
        }
        let session = self.call_session(options.session.as_deref(), context)?;
        self.refuse_overlap(path)?;
        let key = target.key();
        if let (Some(name), false) = (&options.name, options.force)
            && self.resolve_snapshot(&session, name, Some(&key)).is_ok()
        {
            return Err(Error::conflict(format!(
                "a snapshot named {name:?} already exists for {key}; pick another name"
            ))
            .or_hint(Hint::SetOption("force"))
            .purpose("to move the name to the new snapshot"));
        }
        let _lock = self.lock_target(&key, "a save")?;
        // A tree an interrupted restore left mixed is neither saved as it is nor rolled back
        // unasked: what was written since is the user's, and stays where they left it.
        self.refuse_interrupted(&key)?;
        let DirCapture { snapshot, .. } =
            self.publish_dir_capture(path, &key, session.id, options, false, None, progress)?.commit()?;
        let removed_by_policy = self.apply_keep_policy(&session, &key, snapshot.id)?;
        Ok(SaveResult { snapshot, removed_by_policy })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

    #[test]
    fn a_second_writer_on_one_target_is_refused_with_the_holder_and_others_proceed() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        std::fs::write(a.join("f"), "x").unwrap();
        std::fs::write(b.join("f"), "y").unwrap();
        let store = Repository::open(&dir.path().join("store")).unwrap();
        let other = Repository::open(&dir.path().join("store")).unwrap();
        let key = crate::targets::Target::parse(a.to_str().unwrap()).unwrap().key();
        let held = store.lock_target(&key, "a restore").unwrap();
        let err = other
            .save(
                &SaveOptions { target: a.display().to_string(), ..SaveOptions::default() },
                &CallContext::default(),
            )
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Locked);
        let text = err.to_string();
        assert!(text.contains("a restore (pid ") && text.contains("retry when it finishes"), "{text}");
        let context = CallContext::default();
        other
            .save(&SaveOptions { target: b.display().to_string(), ..SaveOptions::default() }, &context)
            .unwrap();
        drop(held);
        other
            .save(&SaveOptions { target: a.display().to_string(), ..SaveOptions::default() }, &context)
            .unwrap();
    }
}
