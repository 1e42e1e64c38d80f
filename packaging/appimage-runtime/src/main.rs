//! The runtime at the head of Portcullis's AppImage (an AppImage type 2 file: this ELF binary,
//! then a squashfs image of the AppDir; packaging/linuxdeploy's AppImage plugin, run by Tauri's
//! bundler, writes the magic bytes "AI\x02" at offset 8 of the ELF header and appends the image).
//!
//! Started, it finds the image after its own ELF file ([`elf`]), unpacks it once into a
//! per-user cache keyed by the image ([`cache`], [`extract`]: like the standard runtime's
//! `--appimage-extract-and-run`, no FUSE needed) and execs its `AppRun` with the arguments and
//! the environment real AppImages give: `APPIMAGE` (this file), `APPDIR`, `ARGV0`, `OWD`.
//! The standard options it answers: `--appimage-extract` (into `./squashfs-root`),
//! `--appimage-offset`, `--appimage-extract-and-run` (what it always does), `--appimage-help`,
//! `--appimage-version`. Any other `--appimage-*` option fails rather than reaching the app.

mod cache;
mod elf;
mod extract;

use std::ffi::OsString;
use std::fs::File;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use anyhow::{bail, Context, Result};

const HELP: &str = "\
This is an AppImage: started, it unpacks itself once into ~/.cache/portcullis-appimage and runs.
Options the AppImage itself answers (the first argument; any other is passed to the app):
  --appimage-extract           unpack into ./squashfs-root and stop
  --appimage-extract-and-run   unpack into the cache and run (what it always does)
  --appimage-offset            print where the squashfs image starts in this file
  --appimage-help              this text
  --appimage-version           the runtime's version";

fn main() -> ExitCode {
    let mut args = std::env::args_os();
    let argv0 = args.next().unwrap_or_default();
    let args: Vec<OsString> = args.collect();
    match run(argv0, args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("AppImage runtime: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(argv0: OsString, mut args: Vec<OsString>) -> Result<()> {
    let image_path = std::fs::read_link("/proc/self/exe").context("cannot find this AppImage's own file")?;
    let mut image = File::open(&image_path).with_context(|| format!("cannot open {}", image_path.display()))?;
    let option = args
        .first()
        .and_then(|a| a.to_str())
        .filter(|a| a.starts_with("--appimage-"))
        .map(str::to_owned);
    let Some(option) = option else {
        return launch(&image_path, &mut image, argv0, args);
    };
    let rest = args.len() - 1;
    match option.as_str() {
        "--appimage-extract-and-run" => {
            args.remove(0);
            launch(&image_path, &mut image, argv0, args)
        }
        "--appimage-extract" if rest == 0 => {
            let offset = elf::payload_offset(&mut image)?;
            let target = std::env::current_dir()?.join("squashfs-root");
            if target.symlink_metadata().is_ok() {
                bail!("{} exists; remove it first", target.display());
            }
            extract::extract_atomically(image, offset, &target)?;
            say(target.display());
            Ok(())
        }
        "--appimage-offset" if rest == 0 => {
            say(elf::payload_offset(&mut image)?);
            Ok(())
        }
        "--appimage-help" if rest == 0 => {
            say(HELP);
            Ok(())
        }
        "--appimage-version" if rest == 0 => {
            say(concat!("portcullis-appimage-runtime ", env!("CARGO_PKG_VERSION")));
            Ok(())
        }
        "--appimage-extract" => bail!("--appimage-extract takes no pattern here: it unpacks the whole image"),
        "--appimage-offset" | "--appimage-help" | "--appimage-version" => {
            bail!("{option} takes no arguments")
        }
        other => bail!("{other} is not an option of this AppImage (see --appimage-help)"),
    }
}

/// An answer to one of the `--appimage-*` options, on stdout: the options' output.
#[allow(clippy::print_stdout)]
fn say(text: impl std::fmt::Display) {
    println!("{text}");
}

/// Unpacks the image into the cache unless an earlier start did, then becomes its AppRun.
fn launch(image_path: &Path, image: &mut File, argv0: OsString, args: Vec<OsString>) -> Result<()> {
    let offset = elf::payload_offset(image)?;
    let root = cache::cache_root()?;
    let appdir = root.join(cache::key(image, offset)?);
    if !appdir.is_dir() {
        cache::remove_stale_partials(&root);
        extract::extract_atomically(&*image, offset, &appdir)?;
    }
    let apprun = appdir.join("AppRun");
    let owd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
    let err = Command::new(&apprun)
        .args(args)
        .env("APPIMAGE", image_path)
        .env("APPDIR", &appdir)
        .env("ARGV0", &argv0)
        .env("OWD", owd)
        .exec();
    Err(err).with_context(|| format!("cannot run {}", apprun.display()))
}
