//! linuxdeploy's command line, the part Tauri's bundler and its plugins use. Options take their
//! value as the next argument or after `=` (the bundler writes `--appdir DIR`, the GTK plugin
//! `--appdir=DIR --library=FILE`). Anything else is an error, not ignored: a call this tool does
//! not understand would otherwise make an AppImage that lacks what was asked for.

use std::ffi::OsString;
use std::path::PathBuf;

use anyhow::{bail, Context, Result};

use crate::log::Level;

/// What one run is asked to do.
#[derive(Debug, PartialEq, Eq)]
pub struct Args {
    pub appdir: PathBuf,
    pub libraries: Vec<PathBuf>,
    pub plugins: Vec<String>,
    /// The output plugins to run at the end; only `appimage` exists here.
    pub outputs: Vec<String>,
    pub verbosity: Level,
}

pub const USAGE: &str = "\
usage: linuxdeploy --appdir DIR [--library FILE]... [--plugin NAME]... [--output appimage] [--verbosity 0-3]
  (Portcullis's linuxdeploy for Tauri's AppImage bundler: packaging/linuxdeploy)";

/// Parses the arguments after the program name. `Ok(None)` is `--help`.
pub fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Option<Args>> {
    let mut appdir = None;
    let mut parsed = Args {
        appdir: PathBuf::new(),
        libraries: Vec::new(),
        plugins: Vec::new(),
        outputs: Vec::new(),
        verbosity: Level::Info,
    };
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let arg = arg
            .into_string()
            .map_err(|a| anyhow::anyhow!("argument {a:?} is not UTF-8"))?;
        let (name, inline) = match arg.split_once('=') {
            Some((name, value)) if name.starts_with("--") => (name.to_owned(), Some(value.to_owned())),
            _ => (arg.clone(), None),
        };
        let mut value = || -> Result<String> {
            match inline.clone() {
                Some(v) => Ok(v),
                None => args
                    .next()
                    .with_context(|| format!("{name} needs a value"))?
                    .into_string()
                    .map_err(|a| anyhow::anyhow!("the value of {name}, {a:?}, is not UTF-8")),
            }
        };
        match name.as_str() {
            "--help" | "-h" => return Ok(None),
            // The upstream AppImage's own option (run without FUSE): this tool is no AppImage.
            "--appimage-extract-and-run" if inline.is_none() => {}
            "--appdir" => appdir = Some(PathBuf::from(value()?)),
            "--library" | "-l" => parsed.libraries.push(PathBuf::from(value()?)),
            "--plugin" | "-p" => parsed.plugins.push(value()?),
            "--output" | "-o" => {
                let output = value()?;
                if output != "appimage" {
                    bail!("--output {output}: only --output appimage is supported");
                }
                parsed.outputs.push(output);
            }
            "--verbosity" | "-v" => parsed.verbosity = Level::parse(&value()?)?,
            _ => bail!("unsupported argument {arg:?}\n{USAGE}"),
        }
    }
    parsed.appdir = appdir.with_context(|| format!("--appdir is required\n{USAGE}"))?;
    Ok(Some(parsed))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_strs(args: &[&str]) -> Result<Option<Args>> {
        parse(args.iter().map(OsString::from))
    }

    #[test]
    fn the_bundlers_call_parses() {
        let args = parse_strs(&[
            "--appimage-extract-and-run",
            "--verbosity",
            "1",
            "--appdir",
            "/t/Portcullis.AppDir",
            "--plugin",
            "gtk",
            "--output",
            "appimage",
        ])
        .unwrap()
        .unwrap();
        assert_eq!(
            args,
            Args {
                appdir: "/t/Portcullis.AppDir".into(),
                libraries: vec![],
                plugins: vec!["gtk".into()],
                outputs: vec!["appimage".into()],
                verbosity: Level::Info,
            }
        );
    }

    #[test]
    fn the_gtk_plugins_callback_parses() {
        let args = parse_strs(&[
            "--appdir=/a",
            "--library=/usr/lib/x/libgio-2.0.so.0",
            "--library=/l/libpango-1.0.so",
        ])
        .unwrap()
        .unwrap();
        assert_eq!(args.appdir, PathBuf::from("/a"));
        assert_eq!(
            args.libraries,
            vec![
                PathBuf::from("/usr/lib/x/libgio-2.0.so.0"),
                PathBuf::from("/l/libpango-1.0.so")
            ]
        );
        assert!(args.plugins.is_empty() && args.outputs.is_empty());
    }

    #[test]
    fn anything_else_is_refused_with_the_reason() {
        let err = |args: &[&str]| parse_strs(args).unwrap_err().to_string();
        assert!(err(&["--plugin", "gtk"]).contains("--appdir is required"));
        assert!(err(&["--appdir", "/a", "--output", "tarball"]).contains("only --output appimage"));
        assert!(err(&["--appdir", "/a", "--executable", "/bin/x"]).contains("unsupported argument \"--executable\""));
        assert!(err(&["--appdir", "/a", "--verbosity", "9"]).contains("verbosity"));
        assert!(err(&["--appdir"]).contains("--appdir needs a value"));
        assert!(err(&["--appdir", "/a", "--appimage-extract-and-run=1"]).contains("unsupported"));
        assert!(parse_strs(&["--help"]).unwrap().is_none());
    }
}
