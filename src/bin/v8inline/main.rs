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

/// Blocks of 128 KiB or more come from and go back to the system directly.
/// glibc's default raises that threshold to the largest block freed so
/// far, after which the buffers that grow and are freed while stacks are
/// folded (chunks, line memos, stack tables being merged) stay in the heap
/// once freed (measured in docs/performance-log.md, "mallopt").
fn return_large_blocks_at_once() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets a malloc parameter; called before any
    // other thread exists.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 128 * 1024);
    }
}

/// A file size limit (`ulimit -f`) reached makes the write fail with EFBIG
/// instead of killing the process: the output being written is then
/// removed and the error named, as for a full disk.
fn fail_writes_past_the_file_size_limit() {
    // SAFETY: ignoring a signal changes no memory; called before any other
    // thread exists.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
}

/// Exit codes: 0 success, 1 input that made the job impossible, 2 usage;
/// `record` also exits with its command's status, 126 and 127 when its
/// command cannot be run.
const EXIT_INPUT_ERROR: u8 = 1;
const EXIT_USAGE: u8 = 2;

fn main() -> ExitCode {
    return_large_blocks_at_once();
    fail_writes_past_the_file_size_limit();
    let cli = Cli::parse();
    let succeeded = |result: Result<(), Failure>| result.map(|()| 0);
    let result = match cli.command {
        Some(Command::Lookup(args)) => succeeded(commands::lookup(args)),
        // 1 on a regression with --fail-on-regression.
        Some(Command::Compare(args)) => commands::compare(args),
        // The command's own status (CI sees its failure).
        Some(Command::Record(args)) => commands::record(args),
        // 1 on a regression with --fail-on-regression; the command's status when it failed.
        Some(Command::Bench(args)) => commands::bench(args),
        Some(Command::RepairJitdump(args)) => succeeded(commands::repair_jitdump(args)),
        Some(Command::Debuginfo(args)) => succeeded(commands::debuginfo(args)),
        Some(Command::History(command)) => succeeded(commands::history(command)),
        None => succeeded(fold::fold(cli.fold)),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(Failure::BrokenPipe) => ExitCode::SUCCESS,
        Err(Failure::Input(message)) => {
            eprintln!("v8inline: {message}");
            ExitCode::from(EXIT_INPUT_ERROR)
        }
        Err(Failure::Usage(message)) => {
            eprintln!("v8inline: {message}");
            ExitCode::from(EXIT_USAGE)
        }
        Err(Failure::Command { message, code }) => {
            eprintln!("v8inline: {message}");
            ExitCode::from(code)
        }
    }
}
