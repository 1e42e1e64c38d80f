//! The runtime as a user meets it: the built runtime binary, marked and followed by a small
//! squashfs image (tests/fixtures/appdir.squashfs, made by make-appdir-squashfs.sh from
//! tests/fixtures/appdir/ with mksquashfs), started as a process. Its AppRun prints what it was
//! handed, so the tests see the environment and the arguments the app would get.
#![allow(clippy::unwrap_used)] // test helpers: a failed setup should panic

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const RUNTIME: &str = env!("CARGO_BIN_EXE_portcullis-appimage-runtime");
const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/appdir.squashfs");

/// A scratch dir holding `Fixture.AppImage` (as packaging/linuxdeploy's AppImage plugin assembles the real one: the
/// runtime, "AI\x02" at offset 8, the image appended), a cache dir and a working dir.
struct Scratch {
    dir: tempfile::TempDir,
}

impl Scratch {
    fn new() -> Scratch {
        let dir = tempfile::tempdir().unwrap();
        let mut bytes = fs::read(RUNTIME).unwrap();
        bytes[8..11].copy_from_slice(b"AI\x02");
        bytes.extend(fs::read(FIXTURE).unwrap());
        let image = dir.path().join("Fixture.AppImage");
        fs::write(&image, bytes).unwrap();
        fs::set_permissions(&image, fs::Permissions::from_mode(0o755)).unwrap();
        fs::create_dir(dir.path().join("work")).unwrap();
        Scratch { dir }
    }

    fn image(&self) -> PathBuf {
        self.dir.path().join("Fixture.AppImage")
    }

    fn cache(&self) -> PathBuf {
        self.dir.path().join("cache/portcullis-appimage")
    }

    fn work(&self) -> PathBuf {
        self.dir.path().join("work")
    }

    fn command(&self, program: &Path, args: &[&str]) -> Command {
        let mut cmd = Command::new(program);
        cmd.args(args)
            .current_dir(self.work())
            .env("XDG_CACHE_HOME", self.dir.path().join("cache"));
        cmd
    }

    fn run(&self, args: &[&str]) -> Output {
        self.command(&self.image(), args).output().unwrap()
    }

    /// The entries of the cache dir, by name.
    fn cached(&self) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(self.cache())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }
}

impl Drop for Scratch {
    /// The image's read-only directory would keep the scratch dir from being removed.
    fn drop(&mut self) {
        fn writable(dir: &Path) {
            let _ = fs::set_permissions(dir, fs::Permissions::from_mode(0o755));
            for entry in fs::read_dir(dir).into_iter().flatten().flatten() {
                if entry.file_type().is_ok_and(|t| t.is_dir()) {
                    writable(&entry.path());
                }
            }
        }
        writable(self.dir.path());
    }
}

/// AppRun's report: its KEY=value lines (ARG lines collected in order under "ARG").
fn report(out: &Output) -> BTreeMap<String, String> {
    assert!(
        out.status.success(),
        "exit {:?}, stderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let mut map = BTreeMap::new();
    for line in String::from_utf8(out.stdout.clone()).unwrap().lines() {
        let (key, value) = line.split_once('=').unwrap();
        let entry = map.entry(key.to_owned()).or_insert_with(String::new);
        if !entry.is_empty() {
            entry.push('|');
        }
        entry.push_str(value);
    }
    map
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn the_offset_is_the_runtime_s_own_size() {
    let scratch = Scratch::new();
    let out = scratch.run(&["--appimage-offset"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let runtime_len = fs::metadata(RUNTIME).unwrap().len();
    assert_eq!(String::from_utf8(out.stdout).unwrap().trim(), runtime_len.to_string());
}

#[test]
fn extract_unpacks_the_appdir_into_squashfs_root() {
    let scratch = Scratch::new();
    let out = scratch.run(&["--appimage-extract"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let root = scratch.work().join("squashfs-root");
    let mode = |p: &str| fs::symlink_metadata(root.join(p)).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode("AppRun"), 0o755);
    assert_eq!(mode("usr/share/doc"), 0o555, "a read-only directory keeps its mode");
    assert_eq!(mode("usr/share/doc/README"), 0o644);
    assert_eq!(
        fs::read_to_string(root.join("usr/share/doc/README")).unwrap(),
        "read me\n"
    );
    assert_eq!(fs::read_link(root.join("usr/bin/hi")).unwrap(), Path::new("hello"));
    let hello = scratch.command(&root.join("usr/bin/hi"), &[]).output().unwrap();
    assert_eq!(String::from_utf8(hello.stdout).unwrap(), "hello from the image\n");
    assert!(
        fs::read_dir(scratch.work()).unwrap().count() == 1,
        "no temporary directory is left beside it"
    );

    let again = scratch.run(&["--appimage-extract"]);
    assert!(!again.status.success());
    assert!(
        stderr(&again).contains("squashfs-root exists; remove it first"),
        "{}",
        stderr(&again)
    );
}

#[test]
fn a_start_runs_apprun_with_the_appimage_environment_and_the_arguments() {
    let scratch = Scratch::new();
    let first = report(&scratch.run(&["--show", "two words", ""]));
    let appdir = PathBuf::from(&first["APPDIR"]);
    assert_eq!(appdir.parent().unwrap(), scratch.cache());
    assert_eq!(
        appdir.file_name().unwrap().len(),
        32,
        "the key names the dir: {}",
        appdir.display()
    );
    assert_eq!(first["HERE"], first["APPDIR"], "AppRun runs from the extracted dir");
    assert_eq!(first["APPIMAGE"], scratch.image().to_str().unwrap());
    assert_eq!(first["ARGV0"], scratch.image().to_str().unwrap());
    assert_eq!(first["OWD"], scratch.work().to_str().unwrap());
    assert_eq!(first["ARG"], "--show|two words|", "arguments pass through as they are");
    let mode = fs::metadata(scratch.cache()).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700, "the cache is private");

    // The second start finds the first's extraction and unpacks nothing.
    let inode = fs::metadata(appdir.join("AppRun")).unwrap().ino();
    let second = report(&scratch.run(&["--appimage-extract-and-run", "x"]));
    assert_eq!(second["APPDIR"], first["APPDIR"]);
    assert_eq!(second["ARG"], "x");
    assert_eq!(fs::metadata(appdir.join("AppRun")).unwrap().ino(), inode);
    assert_eq!(scratch.cached().len(), 1);
}

#[test]
fn starts_at_the_same_time_share_one_extraction() {
    let scratch = Scratch::new();
    let starts: Vec<_> = (0..4)
        .map(|_| {
            scratch
                .command(&scratch.image(), &[])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let appdirs: Vec<String> = starts
        .into_iter()
        .map(|c| report(&c.wait_with_output().unwrap())["APPDIR"].clone())
        .collect();
    assert!(appdirs.iter().all(|d| *d == appdirs[0]), "{appdirs:?}");
    let cached = scratch.cached();
    assert_eq!(cached.len(), 1, "one extraction and no partial copies left: {cached:?}");
}

#[test]
fn a_new_mtime_means_a_new_extraction() {
    let scratch = Scratch::new();
    let first = report(&scratch.run(&[]))["APPDIR"].clone();
    let file = fs::File::options().write(true).open(scratch.image()).unwrap();
    file.set_modified(std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(86_400))
        .unwrap();
    drop(file);
    let second = report(&scratch.run(&[]))["APPDIR"].clone();
    assert_ne!(first, second);
    assert_eq!(scratch.cached().len(), 2);
}

#[test]
fn unknown_appimage_options_fail_before_the_app_runs() {
    let scratch = Scratch::new();
    for args in [
        &["--appimage-mount"][..],
        &["--appimage-extract", "usr/bin/*"],
        &["--appimage-offset", "x"],
    ] {
        let out = scratch.run(args);
        assert!(!out.status.success(), "{args:?} succeeded");
        assert!(out.stdout.is_empty(), "{args:?} reached AppRun");
        assert!(
            stderr(&out).starts_with("AppImage runtime: "),
            "{args:?}: {}",
            stderr(&out)
        );
    }
    let help = scratch.run(&["--appimage-help"]);
    assert!(String::from_utf8(help.stdout).unwrap().contains("--appimage-extract "));
}

#[test]
fn the_runtime_alone_says_it_carries_no_image() {
    let scratch = Scratch::new();
    let out = scratch.command(Path::new(RUNTIME), &[]).output().unwrap();
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("no squashfs image after the runtime"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_shared_cache_dir_is_refused() {
    let scratch = Scratch::new();
    fs::create_dir_all(scratch.cache()).unwrap();
    fs::set_permissions(scratch.cache(), fs::Permissions::from_mode(0o777)).unwrap();
    let out = scratch.run(&[]);
    assert!(!out.status.success() && out.stdout.is_empty());
    assert!(
        stderr(&out).contains("is open to other users (mode 777); chmod 700 it"),
        "{}",
        stderr(&out)
    );
}
