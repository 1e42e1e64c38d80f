//! What the app reads of other processes from Linux's `/proc`, and SIGTERM: used to stop a
//! `portcullis serve` it takes over from (takeover.rs) and WebKit's idle network process
//! (webkit.rs).

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

/// The fields of `/proc/PID/stat` the app uses.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Stat {
    /// The kernel's name of the process (its first 15 bytes).
    pub(crate) comm: String,
    /// `R`, `S`, `Z` (a zombie its parent has not reaped), …
    pub(crate) state: char,
    pub(crate) ppid: u32,
}

/// `PID (COMM) STATE PPID …`, where COMM may itself hold spaces and parentheses (so it ends at
/// the last `)`).
fn parse_stat(stat: &str) -> Option<Stat> {
    let open = stat.find('(')?;
    let close = stat.rfind(')')?;
    let comm = stat.get(open + 1..close)?.to_owned();
    let mut rest = stat.get(close + 1..)?.split_ascii_whitespace();
    let state = rest.next()?.chars().next()?;
    Some(Stat {
        comm,
        state,
        ppid: rest.next()?.parse().ok()?,
    })
}

/// The process's stat, `None` when there is no such process.
pub(crate) fn stat(pid: u32) -> Option<Stat> {
    parse_stat(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

/// The pids of `parent`'s children whose `comm` is `name`.
pub(crate) fn children_named(parent: u32, name: &str) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| stat(pid).is_some_and(|s| s.ppid == parent && s.comm == name))
        .collect()
}

/// Asks the process to end, as `kill` does.
pub(crate) fn terminate(pid: u32) -> nix::Result<()> {
    let pid = i32::try_from(pid).map_err(|_| nix::errno::Errno::ESRCH)?;
    kill(Pid::from_raw(pid), Signal::SIGTERM)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_give_the_name_state_and_parent_even_with_odd_names() {
        let s = |comm: &str, state, ppid| {
            Some(Stat {
                comm: comm.to_owned(),
                state,
                ppid,
            })
        };
        assert_eq!(
            parse_stat("4242 (WebKitNetworkPr) S 4200 4200 0"),
            s("WebKitNetworkPr", 'S', 4200)
        );
        assert_eq!(parse_stat("7 (a) b (c)) Z 1 7 7"), s("a) b (c)", 'Z', 1));
        assert_eq!(parse_stat("7 (cut"), None);
    }

    #[test]
    fn only_the_named_children_of_the_parent_are_found() {
        // A child of this test's own process (under nextest, siblings of the same name run
        // beside it, so the test's parent has more than one such child).
        let me = std::process::id();
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .expect("spawn sleep");
        // Until it has exec'd, the child still has this test's name (bounded: 10 s).
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while stat(child.id()).is_none_or(|s| s.comm != "sleep") {
            assert!(std::time::Instant::now() < deadline, "sleep never started");
            std::thread::yield_now();
        }
        let found = children_named(me, "sleep");
        let not_named = children_named(me, "WebKitNetworkPr");
        let of_the_child = children_named(child.id(), "sleep");
        child.kill().expect("kill sleep");
        child.wait().expect("reap sleep");
        assert_eq!(found, vec![child.id()]);
        assert!(not_named.is_empty());
        assert!(of_the_child.is_empty());
        assert_eq!(stat(u32::MAX), None);
    }
}
