//! `gateway.json` in the data dir: how the CLI and `connect` find the running gateway.
//! Mode 0600: it holds the bearer token.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub const FILE_NAME: &str = "gateway.json";

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct GatewayFile {
    /// Base URL, e.g. `http://127.0.0.1:7470`; servers are at `{url}/mcp/{server}`.
    pub url: String,
    pub token: String,
    pub pid: u32,
    /// The local socket `portcullis connect` uses (`connect.sock`, the gateway's); absent where the
    /// platform has none or it could not be made (then `connect` relays over HTTP).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub socket: Option<PathBuf>,
    /// The config file the gateway runs with: `portcullis connect` without `--config` uses it,
    /// so a data plane decides by the same servers and policies as its keeper.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<PathBuf>,
}

#[derive(Debug, thiserror::Error)]
pub enum GatewayFileError {
    #[error("no gateway is running (no {0}); start one with `portcullis serve` or the desktop app")]
    Missing(PathBuf),
    #[error("cannot read {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{path} is not a gateway file: {source}")]
    Invalid { path: PathBuf, source: serde_json::Error },
    #[error("cannot write {path}: {source}")]
    Write { path: PathBuf, source: std::io::Error },
}

impl GatewayFile {
    pub fn path(data_dir: &Path) -> PathBuf {
        data_dir.join(FILE_NAME)
    }

    pub fn read(data_dir: &Path) -> Result<Self, GatewayFileError> {
        let path = Self::path(data_dir);
        let text = std::fs::read_to_string(&path).map_err(|source| match source.kind() {
            std::io::ErrorKind::NotFound => GatewayFileError::Missing(path.clone()),
            _ => GatewayFileError::Read {
                path: path.clone(),
                source,
            },
        })?;
        serde_json::from_str(&text).map_err(|source| GatewayFileError::Invalid { path, source })
    }

    /// Writes atomically (`portcullis-atomic-file`: temp file + rename) with mode 0600 from the
    /// start. The temp file has a random name and is created with O_EXCL: a file another user made in its
    /// place (say mode 0666, to read the token as it is written) makes this fail instead of being
    /// written into, and a random name cannot be made ahead of time.
    pub fn write(&self, data_dir: &Path) -> Result<(), GatewayFileError> {
        let path = Self::path(data_dir);
        let text = serde_json::to_string_pretty(self).unwrap_or_default();
        let private = portcullis_atomic_file::Options::new(portcullis_atomic_file::Permissions::Private);
        portcullis_atomic_file::write(&path, text.as_bytes(), private)
            .map_err(|source| GatewayFileError::Write { path, source })
    }

    /// Removes the file if it still describes this process.
    pub fn remove_if_ours(data_dir: &Path) {
        if let Ok(file) = Self::read(data_dir) {
            if file.pid == std::process::id() {
                let _ = std::fs::remove_file(Self::path(data_dir));
            }
        }
    }

    /// The MCP endpoint of `server`.
    pub fn server_url(&self, server: &str) -> String {
        format!("{}/mcp/{server}", self.url.trim_end_matches('/'))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_read_round_trip_with_private_mode() {
        let dir = tempfile::tempdir().unwrap();
        let file = GatewayFile {
            url: "http://127.0.0.1:1".into(),
            token: "t".into(),
            pid: 7,
            socket: Some(dir.path().join("connect.sock")),
            config: Some(dir.path().join("portcullis.json")),
        };
        file.write(dir.path()).unwrap();
        assert_eq!(GatewayFile::read(dir.path()).unwrap(), file);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(GatewayFile::path(dir.path()))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600, "gateway.json holds the token and must be private");
        }
    }

    /// The old temp name was `.gateway.json.<pid>`: another user could make it first, mode 0666,
    /// and read the token from it. Such a file is neither written into nor used.
    #[cfg(unix)]
    #[test]
    fn a_premade_temp_file_changes_nothing() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let trap = dir.path().join(format!(".{FILE_NAME}.{}", std::process::id()));
        std::fs::write(&trap, b"trap").unwrap();
        std::fs::set_permissions(&trap, std::fs::Permissions::from_mode(0o666)).unwrap();
        let file = GatewayFile {
            url: "http://127.0.0.1:1".into(),
            token: "secret".into(),
            pid: 7,
            socket: None,
            config: None,
        };
        file.write(dir.path()).unwrap();
        assert_eq!(
            std::fs::read(&trap).unwrap(),
            b"trap",
            "the pre-made file was not written"
        );
        let mode = std::fs::metadata(GatewayFile::path(dir.path()))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        assert_eq!(GatewayFile::read(dir.path()).unwrap(), file);
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(names.len(), 2, "no temp file left behind: {names:?}");
    }

    #[test]
    fn missing_file_says_no_gateway_is_running() {
        let dir = tempfile::tempdir().unwrap();
        let err = GatewayFile::read(dir.path()).unwrap_err();
        assert!(matches!(err, GatewayFileError::Missing(_)));
        assert!(err.to_string().contains("no gateway is running"));
    }
}
