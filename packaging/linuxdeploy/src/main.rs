//! `portcullis-linuxdeploy`: the linuxdeploy Tauri's AppImage bundler runs (see the crate docs
//! in lib.rs). One run, in upstream linuxdeploy's order: the `--library` files; the libraries the
//! AppDir's ELF files need (so libwebkit2gtk is in `usr/lib` before the GTK plugin patches it);
//! the `--plugin`s; the libraries again (for the modules the plugins copied in); the AppDir's top;
//! the `--output`. A plugin calling back with `LINUXDEPLOY_PLUGIN_MODE=1` gets its libraries only.

use std::ffi::OsStr;
use std::path::Path;
use std::process::{Command, ExitCode};

use anyhow::{bail, Context, Result};
use portcullis_linuxdeploy::deploy::Deployer;
use portcullis_linuxdeploy::{args, existing_appdir, find_beside, log, own_location, root};

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            log::at(log::Level::Error, format_args!("{e:#}"));
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<()> {
    let Some(args) = args::parse(std::env::args_os().skip(1))? else {
        eprintln!("{}", args::USAGE);
        return Ok(());
    };
    log::set_level(args.verbosity);
    let appdir = existing_appdir(&args.appdir)?;
    let deployer = Deployer::new(&appdir)?;
    for library in &args.libraries {
        deployer
            .library(library)
            .with_context(|| format!("cannot deploy {}", library.display()))?;
    }
    if std::env::var_os("LINUXDEPLOY_PLUGIN_MODE").is_some_and(|v| v == "1") {
        if !args.plugins.is_empty() || !args.outputs.is_empty() {
            bail!("a plugin's callback (LINUXDEPLOY_PLUGIN_MODE=1) cannot run plugins or outputs");
        }
        return Ok(());
    }
    let files = deployer.needs_of_appdir()?;
    log::info(format_args!(
        "the libraries of {files} ELF files in {} deployed",
        appdir.display()
    ));
    for plugin in &args.plugins {
        run_plugin(plugin, &appdir)?;
    }
    if !args.plugins.is_empty() {
        let files = deployer.needs_of_appdir()?;
        log::info(format_args!(
            "after the plugins: the libraries of {files} ELF files deployed"
        ));
    }
    root::complete(&appdir)?;
    for output in &args.outputs {
        run_plugin(output, &appdir)?;
    }
    Ok(())
}

/// Runs `linuxdeploy-plugin-NAME` (`.sh`, `.AppImage` or bare) found beside this program with
/// `--appdir DIR`, as upstream linuxdeploy does, with `LINUXDEPLOY` naming this program.
fn run_plugin(name: &str, appdir: &Path) -> Result<()> {
    let (exe, tools) = own_location()?;
    let stem = format!("linuxdeploy-plugin-{name}");
    let names = [format!("{stem}.sh"), format!("{stem}.AppImage"), stem.clone()];
    let plugin = find_beside(&tools, &names)
        .with_context(|| format!("no plugin {name}: none of {} in {}", names.join(", "), tools.display()))?;
    log::info(format_args!("running the plugin {}", plugin.display()));
    let status = Command::new(&plugin)
        .arg("--appdir")
        .arg(appdir)
        .env("LINUXDEPLOY", &exe)
        .env_remove("LINUXDEPLOY_PLUGIN_MODE")
        .status()
        .with_context(|| format!("cannot run the plugin {}", plugin.display()))?;
    if !status.success() {
        bail!(
            "the plugin {} failed ({status})",
            plugin.file_name().unwrap_or(OsStr::new(name)).to_string_lossy()
        );
    }
    Ok(())
}
