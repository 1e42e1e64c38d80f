use std::path::Path;

use super::*;

const PLAIN: Options = Options::new(Permissions::KeepOrShared);

/// Adds one to the number in `path` under its lock: a read-modify-write that loses counts
/// if two run interleaved.
fn increment(path: &Path) {
    let locked = lock(path).expect("lock");
    let n: u64 = locked
        .read_to_string()
        .expect("read")
        .map_or(0, |text| text.trim().parse().expect("a number"));
    // Yield between the read and the write so an unlocked version would interleave.
    std::thread::yield_now();
    locked.write(format!("{}\n", n + 1).as_bytes(), PLAIN).expect("write");
}

fn count(path: &Path) -> u64 {
    std::fs::read_to_string(path).unwrap().trim().parse().unwrap()
}

#[test]
fn write_replaces_the_file_and_leaves_no_temporary() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.json");
    write(&path, b"one", PLAIN).unwrap();
    write(&path, b"two", PLAIN).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), b"two");
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["a.json"], "only the file itself is left");
}

#[test]
fn no_clobber_refuses_an_existing_file_and_keeps_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.json");
    write(&path, b"old", PLAIN).unwrap();
    let err = write(&path, b"new", PLAIN.no_clobber()).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::AlreadyExists);
    assert_eq!(std::fs::read(&path).unwrap(), b"old");
}

#[cfg(unix)]
#[test]
fn permissions_are_private_kept_or_shared() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let private = dir.path().join("private");
    std::fs::write(&private, "x").unwrap();
    std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o644)).unwrap();
    write(&private, b"y", Options::new(Permissions::Private)).unwrap();
    assert_eq!(mode(&private), 0o600, "Private forces 0600");

    let kept = dir.path().join("kept");
    std::fs::write(&kept, "x").unwrap();
    std::fs::set_permissions(&kept, std::fs::Permissions::from_mode(0o640)).unwrap();
    write(&kept, b"y", Options::new(Permissions::KeepOrPrivate)).unwrap();
    assert_eq!(mode(&kept), 0o640, "an existing file keeps its mode");

    let new_private = dir.path().join("new_private");
    write(&new_private, b"y", Options::new(Permissions::KeepOrPrivate)).unwrap();
    assert_eq!(mode(&new_private), 0o600);
    let new_shared = dir.path().join("new_shared");
    write(&new_shared, b"y", PLAIN).unwrap();
    assert_eq!(
        mode(&new_shared) & 0o600,
        0o600,
        "the owner reads and writes a shared file"
    );
    assert_eq!(mode(&new_shared) & 0o022, 0, "nobody else writes it");
}

#[cfg(unix)]
#[test]
fn follow_symlink_replaces_the_target_and_keeps_the_link() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("real.json");
    let link = dir.path().join("link.json");
    std::fs::write(&target, "old").unwrap();
    std::os::unix::fs::symlink(&target, &link).unwrap();
    write(&link, b"new", PLAIN.follow_symlink()).unwrap();
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    assert_eq!(std::fs::read(&target).unwrap(), b"new");
}

#[test]
fn concurrent_read_modify_writes_under_the_lock_all_land() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("counter");
    let threads: Vec<_> = (0..8)
        .map(|_| {
            let path = path.clone();
            std::thread::spawn(move || (0..25).for_each(|_| increment(&path)))
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(count(&path), 200, "every increment survives: none read a stale file");
}

/// The child half of the two-process test: runs only when re-executed by it.
#[test]
fn child_process_increments() {
    if let Some(path) = std::env::var_os("PORTCULLIS_ATOMIC_FILE_CHILD") {
        (0..50).for_each(|_| increment(Path::new(&path)));
    }
}

#[test]
fn two_processes_under_the_lock_both_land() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("counter");
    let exe = std::env::current_exe().unwrap();
    let children: Vec<_> = (0..2)
        .map(|_| {
            std::process::Command::new(&exe)
                .args(["--exact", "tests::child_process_increments", "--test-threads=1"])
                .env("PORTCULLIS_ATOMIC_FILE_CHILD", &path)
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut child in children {
        assert!(child.wait().unwrap().success());
    }
    assert_eq!(count(&path), 100, "both processes' increments survive");
}

/// Readers that open the file while it is being replaced (another thread reloading it, a virus
/// scanner, an editor): on Windows a rename over a file that is being opened or read can be
/// refused with "access denied" for a moment, and the write waits that out instead of failing.
#[test]
fn writes_land_while_readers_keep_opening_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.json");
    write(&path, b"0", PLAIN).unwrap();
    // Each reader reads a bounded number of times and lets other threads run between reads:
    // readers that never pause would starve the rename on Windows for good, which no real reader
    // does (Wine's lane, on a loaded machine, once saw one rename refused for all of 2 s).
    let readers: Vec<_> = (0..3)
        .map(|_| {
            let path = path.clone();
            std::thread::spawn(move || {
                for _ in 0..300 {
                    // A read may meet the moment of the rename; only the writes must not fail.
                    let _ = std::fs::read(&path);
                    std::thread::yield_now();
                }
            })
        })
        .collect();
    let written: Vec<_> = (1..=100)
        .map(|n| write(&path, n.to_string().as_bytes(), PLAIN))
        .collect();
    for reader in readers {
        reader.join().unwrap();
    }
    let failed: Vec<_> = written.iter().filter_map(|w| w.as_ref().err()).collect();
    assert!(
        failed.is_empty(),
        "{} of 100 writes failed, the first: {:?}",
        failed.len(),
        failed.first()
    );
    assert_eq!(std::fs::read(&path).unwrap(), b"100");
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left.len(), 1, "no temporary left behind: {left:?}");
}
