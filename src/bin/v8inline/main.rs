//! The `v8inline` command line: parses arguments and hands over to the
//! library. `args` declares the command line, `fold` runs the main job,
//! `commands` the subcommands, `failure` maps errors to exit codes.

mod args;
mod commands;
mod failure;
mod fold;

use std::process::ExitCode;

use clap::Parser;

use args::{Cli, Command};
use failure::Failure;

/// Exit codes: 0 success, 1 input that made the job impossible, 2 usage.
const EXIT_INPUT_ERROR: u8 = 1;
const EXIT_USAGE: u8 = 2;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Some(Command::Lookup(args)) => commands::lookup(args),
        Some(Command::Compare(args)) => commands::compare(args),
        Some(Command::Record(args)) => commands::record(args),
        None => fold::fold(cli.fold),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::BrokenPipe) => ExitCode::SUCCESS,
        Err(Failure::Input(message)) => {
            eprintln!("v8inline: {message}");
            ExitCode::from(EXIT_INPUT_ERROR)
        }
        Err(Failure::Usage(message)) => {
            eprintln!("v8inline: {message}");
            ExitCode::from(EXIT_USAGE)
        }
    }
}
