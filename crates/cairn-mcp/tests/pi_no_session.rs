//! Issue 40: the pi profile's refusal when there is no conversation to save is one sentence
//! that asks of the agent only what it can do (ask the user), and a deep working directory,
//! echoed into it, is cut so the advice survives. The test runs in a process of its own
//! (nextest): it sets the Pi directory and the working directory of the process.

mod common;

use common::Harness;
use serde_json::json;

const ADVICE: &str = "; ask the user to start the server in the directory the agent works in, or with CAIRN_TRANSCRIPT naming the session file";

#[tokio::test]
async fn a_save_with_no_session_asks_the_user_in_one_sentence_whatever_the_directory() {
    let h = Harness::start_with(|o| {
        o.profile = "pi".into();
        o.allow = vec!["transcript-save".into()];
    })
    .await;
    let root = h.dir.path().canonicalize().unwrap();
    let work = root.join("work");
    std::fs::create_dir_all(&work).unwrap();
    // SAFETY: nextest runs this test alone in its process; the server reads these at call time.
    #[allow(unsafe_code)]
    unsafe {
        std::env::set_var("PI_CODING_AGENT_DIR", root.join("pi-agent"));
        std::env::set_var("CLAUDE_CONFIG_DIR", root.join("claude"));
        std::env::remove_var("CAIRN_TRANSCRIPT");
    }
    std::env::set_current_dir(&work).unwrap();

    let reply = h.err("snapshot_save", json!({"name": "x"})).await;
    let places = cairn_lib::ops::transcript::AgentPlaces {
        pi_dir: root.join("pi-agent/sessions"),
        claude_dir: root.join("claude/projects"),
        cwd: work.to_string_lossy().into_owned(),
        ..Default::default()
    };
    let (pi, claude) = places.session_dirs();
    assert!(pi.starts_with(&places.pi_dir) && claude.starts_with(&places.claude_dir));
    let expected = format!(
        "found no Pi or Claude Code session of {} to save (looked in {} and {}){ADVICE}",
        work.display(),
        pi.display(),
        claude.display(),
    );
    assert_eq!(reply, expected);
    assert!(!reply.contains("pass"), "the agent has no argument to pass: {reply}");

    // A working directory of 1,300 characters: each echoed path is cut to 200, and the advice
    // is whole at the end.
    let mut deep = work.clone();
    for n in 0..5 {
        deep = deep.join(format!("{n}{}", "d".repeat(250)));
    }
    std::fs::create_dir_all(&deep).unwrap();
    std::env::set_current_dir(&deep).unwrap();
    let reply = h.err("snapshot_save", json!({"name": "x"})).await;
    assert!(reply.ends_with(ADVICE), "{reply}");
    assert!(reply.chars().count() < 1000, "{} characters", reply.chars().count());
    assert_eq!(reply.matches('…').count(), 3, "{reply}");
}
