//! Reaching the keeper from a data plane: started in the background when none runs, and asked
//! over its local socket about held calls (`portcullis_gate::held_calls`).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use portcullis_config::gateway_file::GatewayFile;
use portcullis_gate::held_calls::remote::{Connector, LinkStreams};
use portcullis_gate::local_conn::open_keeper_link;

use super::start::Starter;

/// How long the keeper has to answer a link's hello once it runs.
const HELLO_WITHIN: Duration = Duration::from_secs(5);

/// Starts the keeper unless one runs; nothing waits for it. (Off Unix there is no start on
/// demand yet: the desktop app is the keeper there.)
pub(super) fn start_in_background(starter: Arc<Starter>) {
    if cfg!(unix) {
        std::thread::spawn(move || {
            if let Err(why) = starter.start() {
                tracing::warn!("the keeper could not be started in the background: {why}");
            }
        });
    }
}

/// Makes the keeper link: to the keeper gateway.json names, else (none answers) to one started
/// now, bounded. Every failure says what to do.
pub(super) fn connector(data_dir: PathBuf, starter: Arc<Starter>) -> Connector {
    Box::new(move || {
        let (data_dir, starter) = (data_dir.clone(), starter.clone());
        Box::pin(async move {
            if let Ok(link) = link_to_running(&data_dir).await {
                return Ok(link);
            }
            let started = tokio::task::spawn_blocking(move || starter.start())
                .await
                .unwrap_or_else(|_| Err("the start thread failed".into()));
            if let Err(why) = started {
                return Err(std::io::Error::other(format!(
                    "no keeper runs and none could be started: {why}"
                )));
            }
            link_to_running(&data_dir).await
        })
    })
}

/// Makes the keeper link only to a keeper that runs (one that came back after a restart).
pub(super) fn finder(data_dir: PathBuf) -> Connector {
    Box::new(move || {
        let data_dir = data_dir.clone();
        Box::pin(async move { link_to_running(&data_dir).await })
    })
}

/// A link to the keeper that gateway.json names.
async fn link_to_running(data_dir: &std::path::Path) -> std::io::Result<LinkStreams> {
    let file = GatewayFile::read(data_dir).map_err(|e| std::io::Error::other(e.to_string()))?;
    let Some(socket) = file.socket else {
        return Err(std::io::Error::other(format!(
            "{} names no local socket: the keeper offers none on this platform (on Windows the named \
             pipe is off unless PORTCULLIS_EXPERIMENTAL_PIPE=1, see SECURITY.md) or is older than this connect",
            data_dir.join("gateway.json").display()
        )));
    };
    open_keeper_link(&socket, &file.token, HELLO_WITHIN).await
}
