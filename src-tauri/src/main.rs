//! `portcullis-desktop`: parses the arguments and runs the desktop shell.

// No console window on Windows release builds: the app lives in the tray.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

use clap::Parser;

fn main() -> std::process::ExitCode {
    portcullis_gate::allocator::tune();
    portcullis_desktop::webkit::paint_without_compositing();
    let args = portcullis_desktop::Args::parse();
    match portcullis_desktop::run(args) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("portcullis-desktop: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
