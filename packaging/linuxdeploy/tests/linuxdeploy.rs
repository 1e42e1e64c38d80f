//! The two binaries as Tauri's bundler meets them: installed under the bundler's names in a tools
//! dir, run with the bundler's arguments on an AppDir laid out as the bundler lays it out, with a
//! plugin that calls back as the GTK plugin does (`LINUXDEPLOY_PLUGIN_MODE=1 "$LINUXDEPLOY"
//! --appdir=DIR --library=FILE`) and copies a module in. Host programs stand in for the app: ls
//! (needs libselinux and libpcre2), file (libmagic, liblzma, libbz2, libz), tar (libacl); /bin/true
//! stands in for the runtime. The image is read back with unsquashfs.
#![allow(clippy::unwrap_used)] // test helpers: a failed setup should panic

use std::fs;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const LINUXDEPLOY: &str = env!("CARGO_BIN_EXE_portcullis-linuxdeploy");
const PLUGIN_APPIMAGE: &str = env!("CARGO_BIN_EXE_portcullis-linuxdeploy-plugin-appimage");

struct Scratch {
    dir: tempfile::TempDir,
}

impl Scratch {
    /// A tools dir as scripts/package.sh fills target/.tauri/, and an AppDir as the bundler
    /// leaves it before running linuxdeploy.
    fn new(plugin_script: &str) -> Scratch {
        let dir = tempfile::tempdir().unwrap();
        let tools = dir.path().join("tools");
        fs::create_dir(&tools).unwrap();
        install(
            Path::new(LINUXDEPLOY),
            &tools.join("linuxdeploy-07333c6-x86_64.AppImage"),
        );
        install(
            Path::new(PLUGIN_APPIMAGE),
            &tools.join("linuxdeploy-plugin-appimage.AppImage"),
        );
        install(Path::new("/bin/true"), &tools.join("portcullis-appimage-runtime"));
        fs::write(tools.join("linuxdeploy-plugin-fake.sh"), plugin_script).unwrap();
        fs::set_permissions(
            tools.join("linuxdeploy-plugin-fake.sh"),
            fs::Permissions::from_mode(0o755),
        )
        .unwrap();
        let appdir = dir.path().join("out/App.AppDir");
        for sub in [
            "usr/bin",
            "usr/share/applications",
            "usr/share/icons/hicolor/128x128/apps",
        ] {
            fs::create_dir_all(appdir.join(sub)).unwrap();
        }
        install(Path::new("/bin/ls"), &appdir.join("usr/bin/app"));
        fs::write(
            appdir.join("usr/share/applications/App.desktop"),
            "[Desktop Entry]\nType=Application\nName=App\nIcon=app\nExec=app\n",
        )
        .unwrap();
        fs::write(appdir.join("usr/share/icons/hicolor/128x128/apps/app.png"), b"\x89PNG").unwrap();
        symlink("usr/share/applications/App.desktop", appdir.join("App.desktop")).unwrap();
        fs::write(
            appdir.join("AppRun"),
            "#!/bin/sh\nexec \"$APPDIR/usr/bin/app\" \"$@\"\n",
        )
        .unwrap();
        fs::set_permissions(appdir.join("AppRun"), fs::Permissions::from_mode(0o755)).unwrap();
        Scratch { dir }
    }

    fn appdir(&self) -> PathBuf {
        self.dir.path().join("out/App.AppDir")
    }

    fn output(&self) -> PathBuf {
        self.dir.path().join("out/App_0.1.0_amd64.AppImage")
    }

    /// The bundler's call: `linuxdeploy --appimage-extract-and-run --verbosity 1 --appdir DIR
    /// --plugin fake --output appimage` with OUTPUT and ARCH.
    fn run_as_the_bundler(&self) -> Output {
        Command::new(self.dir.path().join("tools/linuxdeploy-07333c6-x86_64.AppImage"))
            .args(["--appimage-extract-and-run", "--verbosity", "1", "--appdir"])
            .arg(self.appdir())
            .args(["--plugin", "fake", "--output", "appimage"])
            .env("OUTPUT", self.output())
            .env("ARCH", "x86_64")
            .env("APPIMAGE_EXTRACT_AND_RUN", "1")
            .output()
            .unwrap()
    }

    fn lib(&self) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(self.appdir().join("usr/lib"))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        names
    }
}

fn install(from: &Path, to: &Path) {
    fs::copy(from, to).unwrap();
    fs::set_permissions(to, fs::Permissions::from_mode(0o755)).unwrap();
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The real file of a host library, by the name /usr/bin/file needs it under.
fn host_library(name: &str) -> PathBuf {
    let ldd = Command::new("ldd").arg("/usr/bin/file").output().unwrap();
    let text = String::from_utf8(ldd.stdout).unwrap();
    let line = text.lines().find(|l| l.trim().starts_with(name)).unwrap();
    let path = line.split(" => ").nth(1).unwrap().split(" (").next().unwrap();
    fs::canonicalize(path).unwrap()
}

#[test]
fn the_bundlers_run_deploys_the_apps_and_the_plugins_libraries_and_packs_them() {
    let magic = host_library("libmagic.so.1");
    let plugin = format!(
        r#"#!/bin/sh
set -e
[ "$1" = --appdir ] && [ -d "$2" ] || {{ echo "plugin: bad arguments $*" >&2; exit 1; }}
echo "$LINUXDEPLOY" >"$2/plugin-saw-linuxdeploy"
# as the GTK plugin: copy a module in (its needs are deployed after the plugins), then call back
mkdir -p "$2/usr/lib/modules" && cp /bin/tar "$2/usr/lib/modules/tar-module"
env LINUXDEPLOY_PLUGIN_MODE=1 "$LINUXDEPLOY" --appdir="$2" --library={}
"#,
        magic.display()
    );
    let scratch = Scratch::new(&plugin);
    let out = scratch.run_as_the_bundler();
    assert!(out.status.success(), "{}", stderr(&out));

    let lib = scratch.lib();
    for wanted in [
        "libselinux.so.1",
        "libpcre2-8.so.0",
        "libmagic.so.1",
        "liblzma.so.5",
        "libbz2.so.1.0",
        // only through the module the plugin copied in: deployed by the pass after the plugins
        "libacl.so.1",
    ] {
        assert!(lib.iter().any(|l| l == wanted), "{wanted} not deployed: {lib:?}");
    }
    for host in ["libc.so.6", "libz.so.1", "ld-linux-x86-64.so.2"] {
        assert!(!lib.iter().any(|l| l == host), "{host} deployed: {lib:?}");
    }
    let magic_name = magic.file_name().unwrap().to_str().unwrap();
    assert!(
        magic_name == "libmagic.so.1" || !lib.iter().any(|l| l == magic_name),
        "the --library file went in under its soname only: {lib:?}"
    );
    let saw = fs::read_to_string(scratch.appdir().join("plugin-saw-linuxdeploy")).unwrap();
    assert_eq!(
        saw.trim(),
        scratch
            .dir
            .path()
            .join("tools/linuxdeploy-07333c6-x86_64.AppImage")
            .to_str()
            .unwrap()
    );
    assert!(
        scratch.appdir().join("app.png").is_file(),
        "the entry's icon at the top"
    );

    let image = fs::read(scratch.output()).unwrap();
    let runtime_len = usize::try_from(fs::metadata("/bin/true").unwrap().len()).unwrap();
    assert_eq!(&image[8..11], b"AI\x02");
    assert_eq!(&image[runtime_len..runtime_len + 4], b"hsqs");
    let listing = Command::new("unsquashfs")
        .args(["-l", "-o", &runtime_len.to_string()])
        .arg(scratch.output())
        .output()
        .unwrap();
    let listing = String::from_utf8_lossy(&listing.stdout);
    for path in [
        "squashfs-root/AppRun",
        "squashfs-root/usr/bin/app",
        "squashfs-root/usr/lib/liblzma.so.5",
        "squashfs-root/usr/lib/modules/tar-module",
    ] {
        assert!(
            listing.lines().any(|l| l == path),
            "{path} not in the image:\n{listing}"
        );
    }
}

#[test]
fn a_failing_or_missing_plugin_stops_the_run_with_its_name_and_writes_no_appimage() {
    let scratch = Scratch::new("#!/bin/sh\necho broken >&2\nexit 3\n");
    let out = scratch.run_as_the_bundler();
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("the plugin linuxdeploy-plugin-fake.sh failed"),
        "{}",
        stderr(&out)
    );
    assert!(!scratch.output().exists());

    let out = Command::new(scratch.dir.path().join("tools/linuxdeploy-07333c6-x86_64.AppImage"))
        .arg("--appdir")
        .arg(scratch.appdir())
        .args(["--plugin", "qt"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("no plugin qt: none of linuxdeploy-plugin-qt.sh"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_callback_cannot_run_plugins_and_the_output_plugin_needs_its_output() {
    let scratch = Scratch::new("#!/bin/sh\n");
    let out = Command::new(LINUXDEPLOY)
        .arg("--appdir")
        .arg(scratch.appdir())
        .args(["--plugin", "fake"])
        .env("LINUXDEPLOY_PLUGIN_MODE", "1")
        .output()
        .unwrap();
    assert!(stderr(&out).contains("cannot run plugins"), "{}", stderr(&out));

    let plugin = scratch.dir.path().join("tools/linuxdeploy-plugin-appimage.AppImage");
    let out = Command::new(&plugin)
        .arg("--appdir")
        .arg(scratch.appdir())
        .env_remove("OUTPUT")
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("OUTPUT (the AppImage file to write) is not set"),
        "{}",
        stderr(&out)
    );
    let out = Command::new(&plugin)
        .arg("--appdir")
        .arg(scratch.appdir())
        .env("OUTPUT", scratch.output())
        .env("ARCH", "aarch64")
        .output()
        .unwrap();
    assert!(
        stderr(&out).contains("ARCH=aarch64 but the runtime is built for x86_64"),
        "{}",
        stderr(&out)
    );
    assert!(!scratch.output().exists());
    let version = Command::new(&plugin).arg("--plugin-api-version").output().unwrap();
    assert_eq!(String::from_utf8_lossy(&version.stdout), "0\n");
}
