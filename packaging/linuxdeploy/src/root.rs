//! The AppDir's top, as the AppImage format asks for it: an executable `AppRun`, one desktop
//! entry, and the icon that entry names (`Icon=NAME` → `NAME.png` or `NAME.svg`). Tauri's bundler
//! puts the AppRun and a link to the entry there, and the largest icon under the product's name;
//! as upstream linuxdeploy does, the icon under the entry's name is added from
//! `usr/share/icons/hicolor` when it is missing. Nothing the bundler wrote is replaced.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use crate::log;

/// Sizes of the hicolor icons to take the top's icon from, largest first.
const ICON_SIZES: &[&str] = &[
    "512x512",
    "256x256@2",
    "256x256",
    "128x128@2",
    "128x128",
    "64x64",
    "48x48",
    "32x32",
];

/// Checks the AppDir's top and adds the entry's icon; returns the desktop entry's path.
pub fn complete(appdir: &Path) -> Result<PathBuf> {
    let apprun = appdir.join("AppRun");
    let executable = fs::metadata(&apprun).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0);
    if !executable {
        bail!(
            "{} is missing or not executable (the bundler copies it from AppRun-x86_64)",
            apprun.display()
        );
    }
    let entry = desktop_entry(appdir)?;
    let text = fs::read_to_string(&entry).with_context(|| format!("cannot read {}", entry.display()))?;
    let icon = text
        .lines()
        .find_map(|l| l.strip_prefix("Icon="))
        .map(str::trim)
        .filter(|i| !i.is_empty() && !i.contains('/'))
        .with_context(|| format!("{} names no Icon (a name, not a path)", entry.display()))?;
    if ["png", "svg"]
        .iter()
        .any(|ext| appdir.join(format!("{icon}.{ext}")).is_file())
    {
        return Ok(entry);
    }
    let source = ICON_SIZES
        .iter()
        .map(|size| appdir.join(format!("usr/share/icons/hicolor/{size}/apps/{icon}.png")))
        .find(|p| p.is_file())
        .with_context(|| format!("no icon {icon}.png under {}/usr/share/icons/hicolor", appdir.display()))?;
    log::info(format_args!("deploying the icon {icon}.png from {}", source.display()));
    fs::copy(&source, appdir.join(format!("{icon}.png")))?;
    Ok(entry)
}

/// The one `*.desktop` file at the AppDir's top.
fn desktop_entry(appdir: &Path) -> Result<PathBuf> {
    let mut entries = Vec::new();
    for e in fs::read_dir(appdir).with_context(|| format!("cannot read {}", appdir.display()))? {
        let path = e?.path();
        if path.extension().is_some_and(|x| x == "desktop") {
            entries.push(path);
        }
    }
    match entries.as_slice() {
        [one] if one.is_file() => Ok(one.clone()),
        [one] => bail!("{} does not lead to a file", one.display()),
        [] => bail!("no desktop entry at the top of {}", appdir.display()),
        _ => bail!(
            "more than one desktop entry at the top of {}: {entries:?}",
            appdir.display()
        ),
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::symlink;

    use super::*;

    /// An AppDir as the bundler leaves it: AppRun, the entry linked at the top, a 128 px icon.
    fn bundlers_appdir() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        fs::create_dir_all(d.join("usr/share/applications")).unwrap();
        fs::create_dir_all(d.join("usr/share/icons/hicolor/128x128/apps")).unwrap();
        fs::create_dir_all(d.join("usr/share/icons/hicolor/32x32/apps")).unwrap();
        fs::write(
            d.join("usr/share/applications/App.desktop"),
            "[Desktop Entry]\nName=App\nIcon=app-bin\n",
        )
        .unwrap();
        fs::write(d.join("usr/share/icons/hicolor/128x128/apps/app-bin.png"), "big").unwrap();
        fs::write(d.join("usr/share/icons/hicolor/32x32/apps/app-bin.png"), "small").unwrap();
        symlink("usr/share/applications/App.desktop", d.join("App.desktop")).unwrap();
        fs::write(d.join("AppRun"), "#!/bin/sh\n").unwrap();
        fs::set_permissions(d.join("AppRun"), fs::Permissions::from_mode(0o755)).unwrap();
        dir
    }

    #[test]
    fn the_entrys_icon_is_added_from_the_largest_hicolor_one() {
        let dir = bundlers_appdir();
        let entry = complete(dir.path()).unwrap();
        assert_eq!(entry, dir.path().join("App.desktop"));
        assert_eq!(fs::read_to_string(dir.path().join("app-bin.png")).unwrap(), "big");
        fs::write(dir.path().join("app-bin.png"), "kept").unwrap();
        complete(dir.path()).unwrap();
        assert_eq!(fs::read_to_string(dir.path().join("app-bin.png")).unwrap(), "kept");
    }

    #[test]
    fn a_top_without_apprun_entry_or_icon_is_refused() {
        let dir = bundlers_appdir();
        fs::set_permissions(dir.path().join("AppRun"), fs::Permissions::from_mode(0o644)).unwrap();
        assert!(complete(dir.path()).unwrap_err().to_string().contains("not executable"));
        fs::set_permissions(dir.path().join("AppRun"), fs::Permissions::from_mode(0o755)).unwrap();
        fs::write(dir.path().join("Other.desktop"), "").unwrap();
        assert!(complete(dir.path())
            .unwrap_err()
            .to_string()
            .contains("more than one desktop entry"));
        fs::remove_file(dir.path().join("Other.desktop")).unwrap();
        fs::remove_dir_all(dir.path().join("usr/share/icons")).unwrap();
        assert!(complete(dir.path())
            .unwrap_err()
            .to_string()
            .contains("no icon app-bin.png"));
        fs::remove_file(dir.path().join("App.desktop")).unwrap();
        assert!(complete(dir.path())
            .unwrap_err()
            .to_string()
            .contains("no desktop entry"));
    }
}
