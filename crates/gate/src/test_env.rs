//! What a test needs from the machine, and what happens when the machine does not have it.
//!
//! Under CI (`CI` set, as CI services set it: `CI=true`) a test that cannot run fails, naming
//! what is missing, so a green run means every test ran its assertions. CI runs as root, with
//! `mount` and IPv6 loopback. Elsewhere the test prints `skipped: <reason>` on stderr and returns.
//!
//! The crate's unit tests have it as `crate::test_env`; integration tests include this file
//! (`#[path = "../src/test_env.rs"]`).

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
