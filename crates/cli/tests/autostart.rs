//! `portcullis serve --install-autostart | --uninstall-autostart` (issue 14 point 5), run as the
//! real binary with a temporary XDG_CONFIG_HOME.

#![cfg(all(unix, not(target_os = "macos")))]

use std::path::Path;
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_portcullis");

fn serve(xdg: &Path, data: &Path, flag: &str) -> Output {
    Command::new(BIN)
        .args(["serve", flag, "--config"])
        .arg(data.join("portcullis.json"))
        .arg("--data-dir")
        .arg(data)
        .env("XDG_CONFIG_HOME", xdg)
        .env("HOME", "/nonexistent-home")
        .output()
        .expect("run portcullis")
}

#[test]
fn install_autostart_writes_one_xdg_entry_idempotently_and_uninstall_removes_it() {
    let tmp = tempfile::tempdir().unwrap();
    let (xdg, data) = (tmp.path().join("xdg"), tmp.path().join("data dir"));
    let entry = xdg.join("autostart/portcullis.desktop");

    let out = serve(&xdg, &data, "--install-autostart");
    assert!(
        out.status.success(),
        "install: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains(&entry.display().to_string()),
        "says where"
    );
    let text = std::fs::read_to_string(&entry).expect("the entry is written under XDG_CONFIG_HOME");
    // The entry names the binary as the running process sees itself: the real path, not the
    // one cargo gave (CI's target/ is a link into its cache).
    let bin = std::fs::canonicalize(BIN).expect("the binary exists");
    let exec = format!(
        "Exec=\"{}\" \"serve\" \"--config\" \"{}\" \"--data-dir\" \"{}\"\n",
        bin.display(),
        data.join("portcullis.json").display(),
        data.display()
    );
    assert!(text.starts_with("[Desktop Entry]\nType=Application\n"), "{text}");
    assert!(
        text.contains(&exec),
        "starts this binary with this config and data dir:\n{text}"
    );
    assert!(text.contains("X-Portcullis-Kind=serve\n"), "{text}");
    assert!(!data.exists(), "installing starts no gateway and makes no data dir");

    let again = serve(&xdg, &data, "--install-autostart");
    assert!(again.status.success());
    assert_eq!(
        std::fs::read_to_string(&entry).unwrap(),
        text,
        "installing twice leaves the same entry"
    );
    let names: Vec<_> = std::fs::read_dir(entry.parent().unwrap()).unwrap().collect();
    assert_eq!(names.len(), 1, "one file in autostart/, no temp file left");

    let out = serve(&xdg, &data, "--uninstall-autostart");
    assert!(
        out.status.success(),
        "uninstall: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!entry.exists(), "the entry is removed");
    let out = serve(&xdg, &data, "--uninstall-autostart");
    assert!(out.status.success(), "uninstalling again is not an error");
    assert!(String::from_utf8_lossy(&out.stdout).contains("nothing to undo"));
}

#[test]
fn an_entry_someone_else_wrote_is_refused_and_kept() {
    let tmp = tempfile::tempdir().unwrap();
    let xdg = tmp.path().join("xdg");
    let entry = xdg.join("autostart/portcullis.desktop");
    std::fs::create_dir_all(entry.parent().unwrap()).unwrap();
    std::fs::write(&entry, "[Desktop Entry]\nExec=my-own-thing\n").unwrap();
    for flag in ["--install-autostart", "--uninstall-autostart"] {
        let out = serve(&xdg, tmp.path(), flag);
        assert_eq!(out.status.code(), Some(1), "{flag} refuses");
        assert!(String::from_utf8_lossy(&out.stderr).contains("was not written by Portcullis"));
    }
    assert_eq!(
        std::fs::read_to_string(&entry).unwrap(),
        "[Desktop Entry]\nExec=my-own-thing\n"
    );
}
