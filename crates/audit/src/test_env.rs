//! What a test needs from the machine, and what happens when the machine does not have it.
//!
//! Under CI (`CI` set, as CI services set it: `CI=true`) a test that cannot run fails, naming
//! what is missing, so a green run means every test ran its assertions. CI runs as root with
//! `mount` and python3. Elsewhere the test prints `skipped: <reason>` on stderr and returns.
//!
//! A test of a refusal by file modes needs a user the modes bind, which root is not: as root it
//! runs its body in a child process of this test binary dropped to `nobody`
//! ([`as_unprivileged_user`]), so it runs in CI's mode too.

use std::path::Path;
use std::process::Command;

/// `CI` is set to anything but empty, `0` or `false`.
pub(crate) fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !matches!(v.trim().to_ascii_lowercase().as_str(), "" | "0" | "false"))
}

/// A precondition of the calling test is missing: under CI the test fails here, naming it;
/// elsewhere this prints `skipped: <reason>` and the caller returns.
#[track_caller]
pub(crate) fn unmet(reason: &str) {
    assert!(
        !in_ci(),
        "this test cannot run here, and under CI=true it may not skip: {reason}"
    );
    eprintln!("skipped: {reason}");
}

/// Runs `body` as a user that file modes bind. Not root: here. Root: the test named `test` (its
/// path inside the crate, e.g. `tests::a_test`) runs again, alone, in a child process of this test
/// binary as `nobody` (setpriv), which runs `body` there; this fails unless that child passed
/// exactly one test.
pub(crate) fn as_unprivileged_user(test: &str, body: impl FnOnce()) {
    if !nix::unistd::geteuid().is_root() {
        return body();
    }
    let Some(nobody) = nix::unistd::User::from_name("nobody").ok().flatten() else {
        return unmet("no user `nobody` to drop to from root");
    };
    // The child's files: the test binary (the target directory may be out of `nobody`'s reach)
    // and a temporary directory of its own.
    let dir = tempfile::tempdir().unwrap();
    set_mode(dir.path(), 0o755);
    let exe = dir.path().join("test-binary");
    std::fs::copy(std::env::current_exe().unwrap(), &exe).unwrap();
    set_mode(&exe, 0o755);
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    nix::unistd::chown(&tmp, Some(nobody.uid), Some(nobody.gid)).unwrap();

    let output = match Command::new("setpriv")
        .arg(format!("--reuid={}", nobody.uid))
        .arg(format!("--regid={}", nobody.gid))
        .arg("--clear-groups")
        .arg(&exe)
        .args([test, "--exact", "--nocapture", "--test-threads=1"])
        .env("TMPDIR", &tmp)
        .output()
    {
        Ok(output) => output,
        Err(err) => return unmet(&format!("no setpriv to run the test as `nobody` ({err})")),
    };
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    eprintln!("ran as `nobody` in a child process:\n{stdout}{stderr}");
    assert!(
        output.status.success() && stdout.contains("test result: ok. 1 passed"),
        "the test as `nobody` did not pass exactly one test ({})",
        output.status
    );
}

fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}
