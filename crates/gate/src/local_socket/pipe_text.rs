//! The text the Windows named pipe is made from: its name and its security descriptor. Plain
//! strings, so they are built and tested on every platform (the pipe itself only on Windows).

use std::path::Path;

use sha2::{Digest, Sha256};

/// `\\.\pipe\portcullis-<24 hex digits>`: one pipe per data dir. The socket path gateway.json
/// names stays the key, so `serve` and `connect` map it to the same pipe. Pipe names are one
/// namespace for the whole machine and anyone can compute this one: the name is not a secret,
/// the descriptor below and the peer checks in windows.rs are the boundary.
pub(super) fn pipe_name(path: &Path) -> String {
    let digest = Sha256::digest(path.to_string_lossy().as_bytes());
    format!(r"\\.\pipe\portcullis-{}", hex::encode(&digest[..12]))
}

/// The pipe's security descriptor in SDDL: a protected DACL (`P`: nothing inherited) with one
/// entry, generic all (`GA`) for `sid` alone — no Everyone, no anonymous logon, no other user;
/// since only that user may create further instances of the pipe (`FILE_CREATE_PIPE_INSTANCE`
/// is part of GA), nobody else can serve instances under our name either. `None` unless `sid`
/// has the form of a SID string (`S-1-…`, digits and dashes), so nothing else can end up in the
/// descriptor.
pub(super) fn dacl_for(sid: &str) -> Option<String> {
    let parts: Vec<&str> = sid.split('-').collect();
    let well_formed = parts.len() >= 3
        && parts[..2] == ["S", "1"]
        && parts[2..]
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    well_formed.then(|| format!("D:P(A;;GA;;;{sid})"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pipe_name_is_stable_per_path_and_differs_between_paths() {
        let a = pipe_name(Path::new(r"C:\Users\ada\AppData\Roaming\portcullis\connect.sock"));
        let b = pipe_name(Path::new(r"C:\Users\bob\AppData\Roaming\portcullis\connect.sock"));
        assert_eq!(
            a,
            pipe_name(Path::new(r"C:\Users\ada\AppData\Roaming\portcullis\connect.sock"))
        );
        assert_ne!(a, b);
        let digits = a.strip_prefix(r"\\.\pipe\portcullis-").expect("the pipe prefix");
        assert_eq!(digits.len(), 24);
        assert!(digits.bytes().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
        assert!(a.len() < 256, "pipe names are at most 256 characters");
    }

    #[test]
    fn the_dacl_grants_one_user_only() {
        assert_eq!(
            dacl_for("S-1-5-21-3623811015-3361044348-30300820-1013").as_deref(),
            Some("D:P(A;;GA;;;S-1-5-21-3623811015-3361044348-30300820-1013)")
        );
    }

    #[test]
    fn anything_but_a_sid_string_is_refused() {
        for bad in [
            "",
            "S-1",
            "S-1-",
            "S-2-5-21",
            "s-1-5-21",
            "WD",
            "S-1-5-21)(A;;GA;;;WD",
            "S-1-5--21",
            "S-1-5-21 ",
        ] {
            assert_eq!(dacl_for(bad), None, "{bad:?}");
        }
    }
}
