//! Which debug adapters this client knows, where to find them, and the adapter-specific
//! arguments of `launch` and `attach`.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::error::{Error, Result};

const INSTALL_HINT: &str = "run scripts/deps/debug-adapters.sh";

/// The debug adapters this client drives; they differ in launch arguments and in the
/// variables they show.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AdapterKind {
    /// Python's debugpy (`python3 -m debugpy.adapter`).
    Debugpy,
    /// LLVM's lldb-dap, for C, C++, Rust and other native programs.
    LldbDap,
}

impl AdapterKind {
    /// The adapter's name as used in messages and in `initialize`'s `adapterID`.
    pub fn name(self) -> &'static str {
        match self {
            AdapterKind::Debugpy => "debugpy",
            AdapterKind::LldbDap => "lldb-dap",
        }
    }
}

/// How to start an adapter that speaks DAP on its stdin and stdout.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AdapterCommand {
    /// Which adapter this is.
    pub kind: AdapterKind,
    /// The program to run.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<String>,
}

impl AdapterCommand {
    /// debugpy's adapter, run by the `python3` found on `PATH`; fails with an install hint
    /// when that Python cannot import debugpy.
    pub fn debugpy() -> Result<Self> {
        let python = find_on_path("python3").ok_or_else(|| Error::AdapterMissing {
            adapter: "debugpy",
            hint: format!("python3 is not on PATH; install Python 3, then {INSTALL_HINT}"),
        })?;
        let importable = std::process::Command::new(&python)
            .args(["-c", "import debugpy"])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .map(|status| status.success())
            .unwrap_or(false);
        if !importable {
            return Err(Error::AdapterMissing {
                adapter: "debugpy",
                hint: format!(
                    "{} cannot import it; {INSTALL_HINT} or `python3 -m pip install debugpy`",
                    python.display()
                ),
            });
        }
        Ok(AdapterCommand {
            kind: AdapterKind::Debugpy,
            program: python,
            args: vec!["-m".to_owned(), "debugpy.adapter".to_owned()],
        })
    }

    /// lldb-dap: `lldb-dap` or a versioned `lldb-dap-NN` on `PATH`, else Debian's
    /// `/usr/lib/llvm-NN/bin/lldb-dap` (newest version first).
    pub fn lldb_dap() -> Result<Self> {
        let found = find_on_path("lldb-dap")
            .or_else(|| (14..=30).rev().find_map(|v| find_on_path(&format!("lldb-dap-{v}"))))
            .or_else(|| {
                (14..=30).rev().find_map(|v| {
                    let path = PathBuf::from(format!("/usr/lib/llvm-{v}/bin/lldb-dap"));
                    is_executable(&path).then_some(path)
                })
            });
        let program = found.ok_or_else(|| Error::AdapterMissing {
            adapter: "lldb-dap",
            hint: format!("install Debian's lldb-22 package ({INSTALL_HINT})"),
        })?;
        Ok(AdapterCommand { kind: AdapterKind::LldbDap, program, args: Vec::new() })
    }
}

/// A program to start under the debugger.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LaunchOptions {
    /// The program: a Python script for debugpy, an executable for lldb-dap.
    pub program: PathBuf,
    /// Its command-line arguments.
    pub args: Vec<String>,
    /// Its working directory; the adapter's default when absent.
    pub cwd: Option<PathBuf>,
    /// Stop at the program's first line (debugpy) or entry point (lldb-dap).
    pub stop_on_entry: bool,
}

/// Line breakpoints for one source file, set before the program starts running.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceBreakpoints {
    /// The source file.
    pub path: PathBuf,
    /// 1-based line numbers.
    pub lines: Vec<u32>,
}

/// `launch` arguments for `kind`.
pub(crate) fn launch_arguments(kind: AdapterKind, options: &LaunchOptions) -> Value {
    let mut args = json!({
        "name": "cairn",
        "request": "launch",
        "program": options.program,
        "args": options.args,
        "stopOnEntry": options.stop_on_entry,
    });
    if let Some(cwd) = &options.cwd {
        args["cwd"] = json!(cwd);
    }
    if kind == AdapterKind::Debugpy {
        args["type"] = json!("python");
        // The debuggee's output comes back as `output` events; any other console would
        // make debugpy send `runInTerminal`, which we refuse.
        args["console"] = json!("internalConsole");
        args["justMyCode"] = json!(true);
    }
    args
}

/// `attach` arguments for an lldb-dap attach to a process id. The process is left stopped
/// (`stopOnEntry`): it is stopped by the attach anyway, and letting lldb-dap resume it
/// after `configurationDone` races with a `pause` sent right after the attach.
pub(crate) fn attach_pid_arguments(pid: u32) -> Value {
    json!({ "name": "cairn", "request": "attach", "pid": pid, "stopOnEntry": true })
}

/// `attach` arguments for a debugpy server listening on `host:port`.
pub(crate) fn attach_debugpy_arguments(host: &str, port: u16) -> Value {
    json!({
        "name": "cairn",
        "type": "python",
        "request": "attach",
        "connect": { "host": host, "port": port },
        "justMyCode": true,
    })
}

fn find_on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|dir| dir.join(name)).find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0).unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debugpy_launch_keeps_output_inside_the_protocol() {
        let options = LaunchOptions { program: PathBuf::from("/tmp/p.py"), ..LaunchOptions::default() };
        let args = launch_arguments(AdapterKind::Debugpy, &options);
        assert_eq!(args["console"], "internalConsole");
        assert_eq!(args["program"], "/tmp/p.py");
        assert!(args.get("cwd").is_none());
        let native = launch_arguments(AdapterKind::LldbDap, &options);
        assert!(native.get("console").is_none());
    }
}
