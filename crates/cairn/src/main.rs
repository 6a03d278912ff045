//! The `cairn` command: parses arguments, opens the store, runs one command, prints its result.
//! All logic lives in `cairn-lib`; this crate only resolves settings and formats output.

mod aws;
mod commands;
mod context;
mod error;
mod format;
mod password;
mod printer;

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches};

// jemalloc: decoding and copying a large directory's tree is thousands of small allocations,
// which it serves faster than the system allocator, and a first save peaks at about 40% less
// memory with it (both measured on the benchmark's source tree).
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() -> ExitCode {
    let cli = match parse() {
        Ok(cli) => cli,
        Err(err) => {
            if matches!(
                err.kind(),
                clap::error::ErrorKind::DisplayHelp
                    | clap::error::ErrorKind::DisplayVersion
                    | clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
            ) {
                err.exit();
            }
            // A refused argument is quoted back: escaped, as every error line is on a terminal.
            let line = error::fit_line(&error::usage_sentence(&err, &command_path()));
            let line = format::text(&line);
            #[allow(clippy::print_stderr)] // before the printer exists: the only way to say it
            {
                eprintln!("error: {line}");
            }
            return ExitCode::from(2);
        }
    };
    let printer = printer::Printer::new(cli.global.json);
    match commands::run(cli, &printer) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            printer.error(&err);
            ExitCode::from(error::exit_code(&err))
        }
    }
}

/// Parses the command line (see `commands::negatives` for the rule every option follows).
fn parse() -> Result<commands::Cli, clap::Error> {
    let matches = commands::negatives(commands::Cli::command()).try_get_matches()?;
    commands::Cli::from_arg_matches(&matches)
}

/// The (sub)command the command line names, as `cairn remove`, for a refusal's pointer to help.
fn command_path() -> String {
    let root = commands::whole_tree();
    let mut current = &root;
    let mut path = vec![root.get_name().to_owned()];
    for arg in std::env::args().skip(1) {
        if let Some(sub) = current.find_subcommand(&arg) {
            path.push(sub.get_name().to_owned());
            current = sub;
        }
    }
    path.join(" ")
}
