//! `portcullis-linuxdeploy-plugin-appimage`: the output plugin `portcullis-linuxdeploy --output
//! appimage` runs (installed beside it as `linuxdeploy-plugin-appimage.AppImage`, the name Tauri's
//! bundler also looks for). `--appdir DIR` packs the AppDir behind the runtime found beside this
//! program (`portcullis-appimage-runtime`) into `$OUTPUT` (set by the bundler; `$ARCH`, when set,
//! must be this machine's, the runtime's). See [`portcullis_linuxdeploy::pack`].

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use portcullis_linuxdeploy::{existing_appdir, find_beside, log, own_location, pack};

const RUNTIME: &str = "portcullis-appimage-runtime";

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            log::at(log::Level::Error, format_args!("appimage plugin: {e:#}"));
            ExitCode::FAILURE
        }
    }
}

#[allow(clippy::print_stdout)] // the plugin interface's answers are on stdout
fn run() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let appdir = match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["--plugin-api-version"] => {
            println!("0");
            return Ok(());
        }
        ["--plugin-type"] => {
            println!("output");
            return Ok(());
        }
        ["--appdir", dir] => PathBuf::from(dir),
        [arg] if arg.starts_with("--appdir=") => PathBuf::from(&arg["--appdir=".len()..]),
        _ => bail!("usage: linuxdeploy-plugin-appimage --appdir DIR (with OUTPUT=FILE), not {args:?}"),
    };
    let appdir = existing_appdir(&appdir)?;
    let output = PathBuf::from(std::env::var_os("OUTPUT").context("OUTPUT (the AppImage file to write) is not set")?);
    if let Some(arch) = std::env::var_os("ARCH").filter(|a| a != std::env::consts::ARCH) {
        bail!(
            "ARCH={} but the runtime is built for {}",
            arch.to_string_lossy(),
            std::env::consts::ARCH
        );
    }
    let (_, tools) = own_location()?;
    let runtime = find_beside(&tools, &[RUNTIME.to_owned()])
        .with_context(|| format!("no AppImage runtime {RUNTIME} in {}", tools.display()))?;
    let size = pack::pack(&appdir, &runtime, &output)?;
    log::info(format_args!("{}: {size} bytes", output.display()));
    Ok(())
}
