//! The command cairn's hook entries run, the pieces of the entries the agent modules build,
//! and how cairn recognises its own.
//!
//! Every agent reads `"hooks": {EVENT: [...]}`, each element a group of hooks (`{"matcher":
//! ..., "hooks": [{"type": "command", "command": ..., "timeout": ...}]}`) or a hook itself
//! (Cursor, GitHub Copilot CLI). cairn adds one element per event, holding one command hook
//! that runs cairn's binary by its absolute path, for the store it was installed for
//! ([`HookCommand`]), behind a guard that exits 0 when the binary is gone.
//!
//! A hook is cairn's when its command, read as a shell would split it, runs a program named
//! `cairn` (any path) with the arguments `hook AGENT`, at most an `--event` and a `--store`: the bare
//! `cairn hook AGENT` of older installs, `/usr/local/bin/cairn hook AGENT`, and the guarded
//! form cairn writes today, whatever its paths. Nothing else ever is.

use std::path::{Path, PathBuf};

use jsonc_parser::cst::CstInputValue;
use serde_json::Value;

use super::Agent;
use super::spec::{EventEntry, Layout};
use crate::error::{Error, Result};

/// What the installed command runs: cairn's binary, by its absolute path, and the store it was
/// installed for. An agent started from an IDE or a launcher often has another `PATH` and
/// another environment than the shell `hooks install` ran in, so neither is looked up there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookCommand {
    /// cairn's binary, absolute (the front passes the running executable).
    pub program: PathBuf,
    /// The store given at install time (`--store` or `CAIRN_STORE`), absolute, or an
    /// `s3://` address; `None` leaves the choice to the hook's own environment.
    pub store: Option<PathBuf>,
}

impl HookCommand {
    /// The command for `program` and `store`.
    pub fn new(program: impl Into<PathBuf>, store: Option<PathBuf>) -> Self {
        Self { program: program.into(), store }
    }

    /// The shell command the agent runs, for example
    /// `if [ -x '/opt/cairn' ]; then '/opt/cairn' hook claude-code --store '/s' || true; fi`.
    ///
    /// Why this form: both agents hand the string to a POSIX shell (`sh -c` for Claude Code on
    /// Linux and macOS, `bash -c` for Gemini CLI), and both treat some exit codes as "stop the
    /// agent": Claude Code blocks on 2, Gemini CLI (since v0.30) denies on any code but 0 and 1
    /// that comes with text, so a bare missing binary (the shell's "not found", 127) would
    /// block every prompt and tool. The `[ -x ]` test makes a binary that is gone or not
    /// executable a no-op that exits 0 and prints nothing (an `if` whose test fails exits 0);
    /// `|| true` turns a crash of cairn itself (a panic's 101, a kill) into 0 as well. cairn's
    /// own stderr is kept, unlike with `2>/dev/null`: its one-line reports reach the user.
    /// Every path is single-quoted (a `'` inside written `'\''`), the one quoting in which a
    /// POSIX shell expands nothing. The syntax is plain POSIX, so it reads the same in sh,
    /// dash, bash and zsh.
    pub fn render(&self, agent: Agent) -> Result<String> {
        self.render_for_event(agent, None)
    }

    /// [`HookCommand::render`] with `--event EVENT` after the agent, for an agent whose
    /// payloads do not name their event (GitHub Copilot CLI). `event` is one of cairn's own
    /// event names, a plain word, written as is.
    pub(crate) fn render_for_event(&self, agent: Agent, event: Option<&str>) -> Result<String> {
        let program = shell_quote(&self.program)?;
        let mut run = format!("{program} hook {}", agent.as_str());
        if let Some(event) = event {
            // front words: the command line cairn installs
            run.push_str(" --event ");
            run.push_str(event);
        }
        if let Some(store) = &self.store {
            // front words: the command line cairn installs
            run.push_str(" --store ");
            run.push_str(&shell_quote(store)?);
        }
        Ok(format!("if [ -x {program} ]; then {run} || true; fi"))
    }
}

/// `path` in single quotes for a POSIX shell; a path that is not UTF-8 cannot go into the
/// agent's JSON settings.
fn shell_quote(path: &Path) -> Result<String> {
    let text = path.to_str().ok_or_else(|| {
        Error::invalid(format!("{} is not UTF-8 and cannot be written into a hook command", path.display()))
    })?;
    Ok(format!("'{}'", text.replace('\'', "'\\''")))
}

/// A group of one command hook, keys in the order the agents' docs show them: `{"matcher"?,
/// "hooks": [{"name"?, "type": "command", "command", "timeout"}]}` (Claude Code, Gemini CLI,
/// Codex CLI).
pub(crate) fn command_group(
    entry: &EventEntry,
    name: Option<&str>,
    command: &str,
    timeout: u64,
) -> CstInputValue {
    let text = |s: &str| CstInputValue::String(s.to_owned());
    let mut hook = Vec::new();
    if let Some(name) = name {
        hook.push(("name".to_owned(), text(name)));
    }
    hook.push(("type".to_owned(), text("command")));
    hook.push(("command".to_owned(), text(command)));
    hook.push(("timeout".to_owned(), CstInputValue::Number(timeout.to_string())));
    let mut group = Vec::new();
    if let Some(matcher) = entry.matcher {
        group.push(("matcher".to_owned(), text(matcher)));
    }
    group.push(("hooks".to_owned(), CstInputValue::Array(vec![CstInputValue::Object(hook)])));
    CstInputValue::Object(group)
}

/// The shell command of a hook object: `command`, or GitHub Copilot CLI's `bash`.
pub(crate) fn hook_command(hook: &Value) -> Option<&str> {
    ["command", "bash"].iter().find_map(|key| hook.get(*key).and_then(Value::as_str))
}

/// Whether a hook object (an element of a group's `hooks`) is cairn's hook for `agent`.
pub(crate) fn is_cairn_hook(agent: Agent, hook: &Value) -> bool {
    hook_command(hook).is_some_and(|c| is_cairn_command(agent, c))
}

/// Whether a command string runs cairn's hook for `agent` (see the module documentation).
pub(crate) fn is_cairn_command(agent: Agent, command: &str) -> bool {
    let Some(tokens) = shell_words(command) else {
        return false;
    };
    let word = |t: &Token, w: &str| matches!(t, Token::Word(x) if x == w);
    match tokens.as_slice() {
        // if [ -x P ]; then RUN; fi
        [if_, open, test, Token::Word(guarded), close, semi, then, run @ .., semi2, fi]
            if word(if_, "if")
                && word(open, "[")
                && word(test, "-x")
                && word(close, "]")
                && *semi == Token::Op(";")
                && word(then, "then")
                && *semi2 == Token::Op(";")
                && word(fi, "fi") =>
        {
            runs_hook(agent, run).is_some_and(|program| program == guarded)
        }
        run => runs_hook(agent, run).is_some(),
    }
}

/// The program of `PROGRAM [--store S] hook AGENT [--event E] [--store S] [|| true]` when it
/// is named `cairn`.
fn runs_hook(agent: Agent, tokens: &[Token]) -> Option<&str> {
    let tokens = match tokens {
        [run @ .., Token::Op("||"), Token::Word(ok)] if ok == "true" || ok == ":" => run,
        run => run,
    };
    let mut words = Vec::with_capacity(tokens.len());
    for token in tokens {
        match token {
            Token::Word(w) => words.push(w.as_str()),
            Token::Op(_) => return None,
        }
    }
    let (program, args) = words.split_first()?;
    if program.rsplit('/').next() != Some("cairn") {
        return None;
    }
    let mut rest = Vec::new();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match *arg {
            // front words: the installed command line, as a shell splits it
            "--store" => {
                args.next()?;
            }
            // front words: the installed command line, as a shell splits it
            a if a.starts_with("--store=") => {}
            a => rest.push(a),
        }
    }
    let ours = match rest.as_slice() {
        ["hook", a] => *a == agent.as_str(),
        // front words: the installed command line, as a shell splits it
        ["hook", a, "--event", event] => *a == agent.as_str() && !event.is_empty(),
        _ => false,
    };
    ours.then_some(*program)
}

/// A piece of a command line: a word with its quotes taken off, or a control operator.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Word(String),
    Op(&'static str),
}

/// Splits `command` as a POSIX shell does into words and the operators `;`, `&&`, `||`, `|`
/// and `&` (enough to recognise cairn's own commands); `None` for an unclosed quote.
fn shell_words(command: &str) -> Option<Vec<Token>> {
    let mut tokens = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = command.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => tokens.extend(word.take().map(Token::Word)),
            ';' | '&' | '|' => {
                tokens.extend(word.take().map(Token::Word));
                let op = match (c, chars.peek()) {
                    ('&', Some('&')) => "&&",
                    ('|', Some('|')) => "||",
                    (';', _) => ";",
                    ('&', _) => "&",
                    _ => "|",
                };
                if op.len() == 2 {
                    chars.next();
                }
                tokens.push(Token::Op(op));
            }
            '\'' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next()? {
                        '\'' => break,
                        c => w.push(c),
                    }
                }
            }
            '"' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next()? {
                        '"' => break,
                        '\\' => match chars.next()? {
                            c @ ('"' | '\\' | '$' | '`') => w.push(c),
                            '\n' => {}
                            c => {
                                w.push('\\');
                                w.push(c);
                            }
                        },
                        c => w.push(c),
                    }
                }
            }
            '\\' => match chars.next() {
                Some('\n') | None => {}
                Some(c) => word.get_or_insert_with(String::new).push(c),
            },
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    tokens.extend(word.map(Token::Word));
    Some(tokens)
}

/// The hook objects of an event's list: each group's `hooks`, or the elements themselves.
fn hooks_of(layout: Layout, list: &Value) -> impl Iterator<Item = &Value> {
    let elements = list.as_array().into_iter().flatten();
    elements.flat_map(move |element| match layout {
        Layout::Groups => element.get("hooks").and_then(Value::as_array).map_or(&[][..], Vec::as_slice),
        Layout::Flat | Layout::OwnFile => std::slice::from_ref(element),
    })
}

/// Whether an event's list holds cairn's hook running exactly `command`.
pub(crate) fn list_has_command(agent: Agent, layout: Layout, list: &Value, command: &str) -> bool {
    hooks_of(layout, list).any(|h| is_cairn_hook(agent, h) && hook_command(h) == Some(command))
}

/// Whether an event's list holds cairn's hook.
pub(crate) fn list_has_cairn(agent: Agent, layout: Layout, list: &Value) -> bool {
    hooks_of(layout, list).any(|h| is_cairn_hook(agent, h))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn cairn_hooks_are_recognised_by_program_and_arguments_only() {
        let hook = |c: &str| json!({"type": "command", "command": c});
        assert!(is_cairn_hook(Agent::ClaudeCode, &hook("cairn hook claude-code")));
        assert!(is_cairn_hook(Agent::ClaudeCode, &hook("/opt/bin/cairn  hook claude-code")));
        assert!(!is_cairn_hook(Agent::GeminiCli, &hook("cairn hook claude-code")));
        assert!(!is_cairn_hook(Agent::ClaudeCode, &hook("cairn hook claude-code --verbose")));
        assert!(!is_cairn_hook(Agent::ClaudeCode, &hook("echo cairn hook claude-code")));
        assert!(!is_cairn_hook(Agent::ClaudeCode, &hook("mycairn hook claude-code")));
        assert!(!is_cairn_hook(Agent::ClaudeCode, &hook("cairn hook claude-code; rm -rf ~")));
        assert!(!is_cairn_hook(Agent::ClaudeCode, &hook("'/opt/cairn hook claude-code")));
    }

    #[test]
    fn the_guarded_command_is_recognised_whatever_its_paths() {
        for (program, store) in [
            ("/usr/local/bin/cairn", None),
            ("/home/o'neil/my tools/cairn", Some("/home/o'neil/the store")),
            ("/opt/cairn", Some("s3://bucket/prefix")),
        ] {
            for agent in Agent::ALL {
                let command = HookCommand::new(program, store.map(PathBuf::from)).render(agent).unwrap();
                assert!(is_cairn_command(agent, &command), "{command}");
                let other = if agent == Agent::ClaudeCode { Agent::GeminiCli } else { Agent::ClaudeCode };
                assert!(!is_cairn_command(other, &command), "{command}");
            }
        }
        assert!(is_cairn_command(Agent::ClaudeCode, "\"/opt/cairn\" --store /s hook claude-code || true"));
        // The guard must test the program it runs.
        assert!(!is_cairn_command(
            Agent::ClaudeCode,
            "if [ -x '/bin/true' ]; then '/opt/cairn' hook claude-code || true; fi"
        ));
    }

    #[test]
    fn paths_are_single_quoted() {
        let command =
            HookCommand::new("/a b/it's/cairn", Some(PathBuf::from("/s $HOME"))).render(Agent::GeminiCli);
        assert_eq!(
            command.unwrap(),
            "if [ -x '/a b/it'\\''s/cairn' ]; then '/a b/it'\\''s/cairn' hook gemini-cli --store '/s $HOME' || true; fi"
        );
    }
}
