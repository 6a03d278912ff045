//! Codex CLI rollout files: reading one (told from its content), its active path after a
//! rollback, ids that stay put, and writing a cut path as a new rollout `codex resume` opens.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use cairn_transcript::{
    ActivePath, AgentDirs, Format, LoadOptions, Transcript, TranscriptError, list_sessions, load_session,
    newest_session, user_prompt_text,
};
use serde_json::Value;

const SESSION: &str = "0199a213-81c0-7800-8aa1-bbab2a035a53";

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/codex_rollout.jsonl")
}

fn saved() -> ActivePath {
    Transcript::read(&fixture()).unwrap().active_path()
}

fn ids(path: &ActivePath) -> Vec<Option<String>> {
    path.entries.iter().map(|e| e.id.clone()).collect()
}

fn lines(path: &ActivePath) -> Vec<usize> {
    path.entries.iter().map(|e| e.line).collect()
}

/// The indices of the path's prompts, as the turn ledger finds them.
fn prompts(path: &ActivePath) -> Vec<usize> {
    let texts = path.entries.iter().map(|e| user_prompt_text(path.format, &e.text));
    texts.enumerate().filter(|(_, t)| t.is_some()).map(|(i, _)| i).collect()
}

/// What a rewind does with the ledger's record: keep the entries up to the last one before
/// the prompt.
fn cut_before(path: &ActivePath, prompt: usize) -> ActivePath {
    let mut cut = path.clone();
    cut.entries.truncate(prompts(path)[prompt - 1]);
    cut
}

fn options(cwd: &str) -> LoadOptions {
    LoadOptions {
        cwd: cwd.to_owned(),
        parent_session: None,
        rewrite_cwd: false,
        note: None,
        attached: Vec::new(),
    }
}

fn payload_type(text: &str) -> String {
    let value: Value = serde_json::from_str(text).unwrap();
    let kind = value["type"].as_str().unwrap().to_owned();
    match value["payload"]["type"].as_str() {
        Some(inner) => format!("{kind}:{inner}"),
        None => kind,
    }
}

#[test]
fn a_rollout_is_told_from_its_session_meta_and_a_rollback_drops_the_last_turn() {
    let t = Transcript::read(&fixture()).unwrap();
    assert_eq!(t.format(), Format::Codex);
    assert_eq!(t.session_id(), Some(SESSION));
    assert_eq!(t.cwd(), Some("/home/u/proj"));
    let path = t.active_path();
    // Line 1 is the header; turn 4 (lines 39-46) and the rollback marker (47) are taken out.
    assert_eq!(lines(&path), (2..=38).collect::<Vec<_>>());
    assert_eq!(payload_type(&path.entries.last().unwrap().text), "event_msg:task_complete");
    let summary = path.summary();
    assert_eq!(summary.format, Format::Codex);
    assert_eq!(summary.session_id.as_deref(), Some(SESSION));
    assert_eq!(summary.cwd.as_deref(), Some("/home/u/proj"));
    assert_eq!(summary.first_user_message.as_deref(), Some("fix the failing test in parser.rs"));
    assert_eq!(summary.entry_count, 37);
    assert_eq!(t.entries_off_path(), 0);
}

#[test]
fn the_prompt_is_the_user_message_event_not_the_injected_context() {
    let path = saved();
    let texts: Vec<String> =
        path.entries.iter().filter_map(|e| user_prompt_text(Format::Codex, &e.text)).collect();
    assert_eq!(texts, ["fix the failing test in parser.rs", "now run clippy", "now run clippy"]);
    // The other formats' readers do not take Codex lines for prompts, nor the reverse.
    assert!(path.entries.iter().all(|e| user_prompt_text(Format::Claude, &e.text).is_none()));
}

#[test]
fn ids_stay_put_when_the_agent_appends_and_in_the_saved_document() {
    let path = saved();
    let mut text = std::fs::read_to_string(fixture()).unwrap();
    text.push_str(r#"{"timestamp":"2026-04-24T08:01:00.000Z","type":"event_msg","payload":{"type":"task_started","turn_id":"5","model_context_window":272000}}"#);
    text.push('\n');
    let appended = Transcript::parse("appended", &text).unwrap().active_path();
    assert_eq!(ids(&appended)[..path.entries.len()], ids(&path)[..]);
    let again = Transcript::parse_saved("doc", &path.document()).unwrap();
    assert_eq!(again.format(), Format::Codex);
    assert_eq!(ids(&again.active_path()), ids(&path));
    let unique: std::collections::HashSet<_> = ids(&path).into_iter().collect();
    assert_eq!(unique.len(), path.entries.len());
}

#[test]
fn an_exact_repeat_of_a_line_gets_its_own_id() {
    let path = saved();
    let meta = std::fs::read_to_string(fixture()).unwrap().lines().next().unwrap().to_owned();
    let line = path.entries[0].text.clone();
    let text = format!("{meta}\n{line}\n{line}\n");
    let t = Transcript::parse("repeat", &text).unwrap();
    let got = ids(&t.active_path());
    assert_ne!(got[0], got[1]);
    assert_eq!(got[1].as_deref(), Some(format!("{}-2", got[0].as_deref().unwrap()).as_str()));
}

fn written_after_cut(prompt: usize) -> (tempfile::TempDir, cairn_transcript::WrittenSession, ActivePath) {
    let home = tempfile::tempdir().unwrap();
    let dirs = AgentDirs::from_home(home.path());
    let written = load_session(&cut_before(&saved(), prompt), &dirs, &options("/home/u/proj")).unwrap();
    let reread = Transcript::read(&written.path).unwrap().active_path();
    (home, written, reread)
}

#[test]
fn a_path_cut_before_prompt_two_is_written_as_a_new_rollout_of_today() {
    let (home, written, reread) = written_after_cut(2);
    let original = saved();
    assert_eq!(written.format, Format::Codex);
    assert_eq!(
        written.resume_command.as_deref(),
        Some(format!("codex resume {}", written.session_id).as_str())
    );
    assert_ne!(written.session_id, SESSION);
    // sessions/YYYY/MM/DD/rollout-YYYY-MM-DDThh-mm-ss-<id>.jsonl, today's local date.
    let today = jiff::Zoned::now().date();
    let day = home.path().join(".codex/sessions").join(today.strftime("%Y/%m/%d").to_string());
    assert_eq!(written.path.parent(), Some(day.as_path()));
    let name = written.path.file_name().unwrap().to_str().unwrap();
    assert!(name.starts_with(&format!("rollout-{}T", today.strftime("%Y-%m-%d"))), "{name}");
    assert!(name.ends_with(&format!("-{}.jsonl", written.session_id)), "{name}");
    // The new session_meta: new id, the parent named, the saved fields kept.
    let meta: Value = serde_json::from_str(reread.header.as_deref().unwrap()).unwrap();
    assert_eq!(meta["type"], "session_meta");
    assert_eq!(meta["payload"]["id"], written.session_id.as_str());
    assert_eq!(meta["payload"]["forked_from_id"], SESSION);
    assert_eq!(meta["payload"]["cli_version"], "0.125.0");
    assert_eq!(meta["payload"]["originator"], "codex_cli_rs");
    assert_eq!(meta["payload"]["source"], "cli");
    // It parses again with the same rules and ends where turn 1 ended, just before prompt 2's
    // turn (its task_started, turn_context and input are not kept).
    assert_eq!(reread.format, Format::Codex);
    assert_eq!(reread.summary().session_id.as_deref(), Some(written.session_id.as_str()));
    assert_eq!(ids(&reread), ids(&original)[..16]);
    assert_eq!(payload_type(&reread.entries.last().unwrap().text), "event_msg:task_complete");
    assert_eq!(prompts(&reread).len(), 1);
    let kinds: Vec<String> = reread.entries.iter().map(|e| payload_type(&e.text)).collect();
    assert!(kinds.iter().any(|k| k == "turn_context"), "{kinds:?}");
    for (call, output) in
        [("function_call", "function_call_output"), ("custom_tool_call", "custom_tool_call_output")]
    {
        assert_eq!(kinds.iter().filter(|k| k.ends_with(&format!(":{call}"))).count(), 1);
        assert_eq!(kinds.iter().filter(|k| k.ends_with(&format!(":{output}"))).count(), 1);
    }
    assert_eq!(std::fs::metadata(&written.path).unwrap().permissions().mode() & 0o777, 0o600);
}

#[test]
fn a_cut_recorded_before_codex_wrote_the_prompt_ends_at_the_same_place() {
    // The prompt hook runs before Codex records the prompt: the ledger's record is then the
    // turn's turn_context, the last line written so far.
    let original = saved();
    let mut cut = original.clone();
    let at = original.entries.iter().position(|e| e.line == 19).unwrap();
    assert_eq!(payload_type(&original.entries[at].text), "turn_context");
    cut.entries.truncate(at + 1);
    let home = tempfile::tempdir().unwrap();
    let written = load_session(&cut, &AgentDirs::from_home(home.path()), &options("/home/u/proj")).unwrap();
    let reread = Transcript::read(&written.path).unwrap().active_path();
    assert_eq!(ids(&reread), ids(&original)[..16]);
}

#[test]
fn a_repeated_prompt_cuts_before_the_turn_asked_for() {
    let (_home, _written, reread) = written_after_cut(3);
    let original = saved();
    // Prompt 3 repeats prompt 2's text; the cut keeps turn 2 whole and nothing of turn 3.
    assert_eq!(ids(&reread), ids(&original)[..26]);
    assert_eq!(reread.entries.last().unwrap().line, 27);
    let texts: Vec<String> =
        reread.entries.iter().filter_map(|e| user_prompt_text(Format::Codex, &e.text)).collect();
    assert_eq!(texts, ["fix the failing test in parser.rs", "now run clippy"]);
}

#[test]
fn a_cut_before_the_first_prompt_is_refused_and_writes_nothing() {
    let home = tempfile::tempdir().unwrap();
    let dirs = AgentDirs::from_home(home.path());
    let err = load_session(&cut_before(&saved(), 1), &dirs, &options("/home/u/proj")).unwrap_err();
    assert!(matches!(err, TranscriptError::NothingToResume { .. }), "{err}");
    assert!(err.to_string().contains("nothing to resume"), "{err}");
    assert!(!home.path().join(".codex").exists());
}

#[test]
fn a_tool_call_without_its_output_is_not_written() {
    let original = saved();
    let mut cut = original.clone();
    // Cut between turn 2's function_call (line 22) and its output (line 23).
    cut.entries.truncate(original.entries.iter().position(|e| e.line == 23).unwrap());
    let home = tempfile::tempdir().unwrap();
    let written = load_session(&cut, &AgentDirs::from_home(home.path()), &options("/home/u/proj")).unwrap();
    let reread = Transcript::read(&written.path).unwrap().active_path();
    // The call goes; turn 2's prompt stays, unanswered, as Codex shows an interrupted turn.
    assert_eq!(reread.entries.last().unwrap().line, 21);
    assert_eq!(payload_type(&reread.entries.last().unwrap().text), "event_msg:user_message");
}

#[test]
fn without_codex_home_a_load_is_refused() {
    let home = tempfile::tempdir().unwrap();
    let dirs = AgentDirs { codex: None, ..AgentDirs::from_home(home.path()) };
    let err = load_session(&saved(), &dirs, &options("/home/u/proj")).unwrap_err();
    assert!(matches!(err, TranscriptError::CodexDirNeeded), "{err}");
}

#[test]
fn a_directory_s_rollouts_are_found_under_codex_home() {
    let home = tempfile::tempdir().unwrap();
    let dirs = AgentDirs::from_home(home.path());
    let day = home.path().join(".codex/sessions/2026/04/24");
    std::fs::create_dir_all(&day).unwrap();
    let ours = day.join(format!("rollout-2026-04-24T10-00-00-{SESSION}.jsonl"));
    std::fs::copy(fixture(), &ours).unwrap();
    let text = std::fs::read_to_string(fixture()).unwrap().replace("/home/u/proj", "/home/u/other");
    std::fs::write(day.join("rollout-2026-04-24T11-00-00-0199a213-0000-7000-8000-000000000001.jsonl"), text)
        .unwrap();
    let found = list_sessions(&dirs, "/home/u/proj").unwrap();
    let paths: Vec<PathBuf> = found.iter().map(|f| f.path.clone()).collect();
    assert_eq!(paths, std::slice::from_ref(&ours));
    assert_eq!(found[0].format, Format::Codex);
    assert_eq!(newest_session(&dirs, "/home/u/proj").unwrap().map(|f| f.path), Some(ours));
}
