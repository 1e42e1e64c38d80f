//! `portcullis serve --install-autostart` / `--uninstall-autostart`: start the headless gateway
//! at login, with this binary and the config and data dir in force now
//! ([`portcullis_config::autostart`] has the platform part).

use std::path::Path;

use portcullis_config::autostart::{self, Kind, Launch};
use portcullis_config::paths::{self, ProcessEnv};

use crate::exit::{Failure, Outcome};
use crate::text::write_stdout;

pub(super) fn install(config: &Path, data_dir: &Path) -> Outcome {
    let absolute = |p: &Path| std::path::absolute(p).map_err(|e| Failure::user(format!("{}: {e}", p.display())));
    let program = paths::launchable(std::env::current_exe(), &ProcessEnv)
        .map_err(|e| Failure::user(format!("cannot find this program: {e}")))?;
    let args = ["serve", "--config"]
        .into_iter()
        .map(str::to_owned)
        .chain([absolute(config)?.display().to_string(), "--data-dir".into()])
        .chain([absolute(data_dir)?.display().to_string()])
        .collect();
    let launch = Launch {
        program,
        args,
        kind: Kind::Serve,
    };
    let path = autostart::install(&launch, &ProcessEnv).map_err(Failure::user)?;
    write_stdout(&format!(
        "portcullis serve starts at login: {}\n(undo with `portcullis serve --uninstall-autostart`)",
        path.display()
    ));
    Ok(())
}

pub(super) fn uninstall() -> Outcome {
    if autostart::uninstall(&ProcessEnv).map_err(Failure::user)? {
        write_stdout("portcullis no longer starts at login");
    } else {
        write_stdout("portcullis was not set to start at login; nothing to undo");
    }
    Ok(())
}
