//! XDG autostart (the freedesktop Desktop Application Autostart spec): a desktop entry in
//! `$XDG_CONFIG_HOME/autostart/`, which the session (GNOME, KDE, Xfce, …) starts at login.
//! Ours carry `X-Portcullis-Kind`, so a file of the same name someone else wrote is left alone.

use std::path::{Path, PathBuf};

use super::{AutostartError, Kind, Launch, Status};
use crate::paths::Environment;

const FILE: &str = "portcullis.desktop";
const MARK: &str = "X-Portcullis-Kind=";

pub(super) fn install(launch: &Launch, env: &dyn Environment) -> Result<PathBuf, AutostartError> {
    let path = entry_path(env)?;
    refuse_if_not_ours(&path)?;
    let io = |source| AutostartError::Io {
        path: path.clone(),
        source,
    };
    let options = portcullis_atomic_file::Options::new(portcullis_atomic_file::Permissions::KeepOrShared);
    portcullis_atomic_file::write(&path, entry(launch).map_err(io)?.as_bytes(), options).map_err(io)?;
    Ok(path)
}

pub(super) fn uninstall(env: &dyn Environment) -> Result<bool, AutostartError> {
    let path = entry_path(env)?;
    if !path.exists() {
        return Ok(false);
    }
    refuse_if_not_ours(&path)?;
    std::fs::remove_file(&path).map_err(|source| AutostartError::Io {
        path: path.clone(),
        source,
    })?;
    Ok(true)
}

pub(super) fn status(env: &dyn Environment) -> Result<Status, AutostartError> {
    let path = entry_path(env)?;
    match std::fs::read_to_string(&path) {
        Ok(text) => match kind_of(&text) {
            Some(kind) => Ok(Status::Installed { path, kind }),
            None => Ok(Status::NotInstalled),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Status::NotInstalled),
        Err(source) => Err(AutostartError::Io { path, source }),
    }
}

fn entry_path(env: &dyn Environment) -> Result<PathBuf, AutostartError> {
    let config = env
        .var("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| env.var("HOME").map(|home| PathBuf::from(home).join(".config")))
        .ok_or(AutostartError::NoConfigDir)?;
    Ok(config.join("autostart").join(FILE))
}

/// `Some(kind)` for an entry of ours (`Some(None)`: ours, of a kind this build does not know).
fn kind_of(text: &str) -> Option<Option<Kind>> {
    let value = text.lines().find_map(|line| line.strip_prefix(MARK))?;
    Some(match value.trim() {
        "serve" => Some(Kind::Serve),
        "desktop" => Some(Kind::Desktop),
        _ => None,
    })
}

fn refuse_if_not_ours(path: &Path) -> Result<(), AutostartError> {
    match std::fs::read_to_string(path) {
        Ok(text) if kind_of(&text).is_none() => Err(AutostartError::NotOurs { path: path.to_owned() }),
        _ => Ok(()),
    }
}

fn entry(launch: &Launch) -> std::io::Result<String> {
    let program = launch
        .program
        .to_str()
        .ok_or_else(|| invalid("the program's path is not UTF-8"))?;
    let mut exec = quote(program)?;
    for arg in &launch.args {
        exec.push(' ');
        exec.push_str(&quote(arg)?);
    }
    let (kind, comment, hidden) = match launch.kind {
        Kind::Serve => (
            "serve",
            "The Portcullis gateway for MCP clients, without a window",
            "true",
        ),
        Kind::Desktop => ("desktop", "The Portcullis gate for MCP tool calls", "false"),
    };
    Ok(format!(
        "[Desktop Entry]\nType=Application\nName=Portcullis\nComment={comment}\nExec={exec}\n\
         Terminal=false\nNoDisplay={hidden}\nX-GNOME-Autostart-enabled=true\n{MARK}{kind}\n"
    ))
}

/// One `Exec` argument: always double-quoted; inside, `"` `` ` `` `$` `\` are backslash-escaped
/// (the quoting rule), then every `\` doubled (the string escape rule, applied first by readers),
/// and `%` doubled (field codes). A line break cannot be written in an entry, so it is refused.
fn quote(arg: &str) -> std::io::Result<String> {
    if arg.contains(['\n', '\r']) {
        return Err(invalid("an argument holds a line break"));
    }
    let mut out = String::with_capacity(arg.len() + 2);
    out.push('"');
    for c in arg.chars() {
        match c {
            '"' | '`' | '$' => {
                out.push_str("\\\\");
                out.push(c);
            }
            '\\' => out.push_str("\\\\\\\\"),
            '%' => out.push_str("%%"),
            c => out.push(c),
        }
    }
    out.push('"');
    Ok(out)
}

fn invalid(why: &str) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidInput, why)
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::ffi::OsString;

    use super::*;

    struct Env(HashMap<&'static str, OsString>);
    impl Environment for Env {
        fn var(&self, key: &str) -> Option<OsString> {
            self.0.get(key).cloned()
        }
    }

    fn serve(dir: &str) -> Launch {
        Launch {
            program: PathBuf::from("/opt/my tools/portcullis"),
            args: vec!["serve".into(), "--data-dir".into(), dir.into()],
            kind: Kind::Serve,
        }
    }

    #[test]
    fn writes_one_entry_of_ours_honours_xdg_config_home_and_removes_it() {
        let tmp = tempfile::tempdir().unwrap();
        let env = Env(HashMap::from([
            ("XDG_CONFIG_HOME", tmp.path().into()),
            ("HOME", "/nowhere".into()),
        ]));
        assert_eq!(status(&env).unwrap(), Status::NotInstalled);
        let path = install(&serve("/d"), &env).unwrap();
        assert_eq!(path, tmp.path().join("autostart/portcullis.desktop"));
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.contains("Exec=\"/opt/my tools/portcullis\" \"serve\" \"--data-dir\" \"/d\"\n"),
            "{text}"
        );
        assert_eq!(
            status(&env).unwrap(),
            Status::Installed {
                path: path.clone(),
                kind: Some(Kind::Serve)
            }
        );
        install(&serve("/d"), &env).unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            text,
            "installing twice changes nothing"
        );
        assert!(uninstall(&env).unwrap());
        assert!(!path.exists());
        assert!(!uninstall(&env).unwrap(), "nothing left to remove");
    }

    #[test]
    fn falls_back_to_home_config() {
        let tmp = tempfile::tempdir().unwrap();
        let env = Env(HashMap::from([("HOME", tmp.path().into())]));
        let path = install(&serve("/d"), &env).unwrap();
        assert_eq!(path, tmp.path().join(".config/autostart/portcullis.desktop"));
    }

    #[test]
    fn exec_arguments_are_quoted_and_escaped_for_desktop_entries() {
        assert_eq!(quote("a b").unwrap(), "\"a b\"");
        assert_eq!(quote("50%").unwrap(), "\"50%%\"");
        assert_eq!(quote("$HOME").unwrap(), "\"\\\\$HOME\"");
        assert_eq!(quote("a\\b").unwrap(), "\"a\\\\\\\\b\"");
        assert!(quote("a\nb").is_err());
    }

    #[test]
    fn a_file_someone_else_wrote_is_left_alone() {
        let tmp = tempfile::tempdir().unwrap();
        let env = Env(HashMap::from([("XDG_CONFIG_HOME", tmp.path().into())]));
        let path = tmp.path().join("autostart/portcullis.desktop");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, "[Desktop Entry]\nExec=mine\n").unwrap();
        assert!(matches!(
            install(&serve("/d"), &env),
            Err(AutostartError::NotOurs { .. })
        ));
        assert!(matches!(uninstall(&env), Err(AutostartError::NotOurs { .. })));
        assert_eq!(status(&env).unwrap(), Status::NotInstalled);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "[Desktop Entry]\nExec=mine\n");
    }
}
