//! Which local user is on the other end of a loopback TCP connection.
//!
//! The control API decides held calls, so it answers only the user who runs the gateway. The
//! token in `gateway.json` (mode 0600) is the first check; this is the second, for a token that
//! leaked (a copied file, a world-readable backup, a process listing): on Linux the kernel
//! records the owner of every TCP socket, and `/proc/net/tcp{,6}` shows it in the `uid` column
//! of the client's end of the connection (local address = the client's, remote = ours).
//!
//! Other systems: no such table is read; [`peer_uid`] answers "the gateway's own user", so the
//! token alone guards the control API there (documented in SECURITY.md).

use std::net::SocketAddr;

/// The uid owning the client socket of the connection `peer` → `local`; `None` when it cannot
/// be found (the caller refuses then).
#[cfg(target_os = "linux")]
pub(crate) fn peer_uid(local: SocketAddr, peer: SocketAddr) -> Option<u32> {
    let (local, peer) = (canonical(local), canonical(peer));
    let file = if peer.is_ipv4() {
        "/proc/net/tcp"
    } else {
        "/proc/net/tcp6"
    };
    let table = std::fs::read_to_string(file).ok()?;
    find_uid(&table, &proc_hex(peer), &proc_hex(local))
}

/// [`peer_uid`] for many connections at once (`(local, peer)` pairs), reading each socket table
/// once: the accept loop classifies every new connection, and under a connection flood one read
/// of a table with thousands of rows must answer all of them, not each pay for it.
#[cfg(target_os = "linux")]
pub(crate) fn peer_uids(pairs: &[(SocketAddr, SocketAddr)]) -> Vec<Option<u32>> {
    use std::collections::HashMap;
    let mut found = vec![None; pairs.len()];
    for (file, v4) in [("/proc/net/tcp", true), ("/proc/net/tcp6", false)] {
        // The client end's row: local = the client's address, remote = ours.
        let wanted: HashMap<String, usize> = pairs
            .iter()
            .enumerate()
            .map(|(i, &(local, peer))| (i, canonical(local), canonical(peer)))
            .filter(|(_, _, peer)| peer.is_ipv4() == v4)
            .map(|(i, local, peer)| (format!("{} {}", proc_hex(peer), proc_hex(local)), i))
            .collect();
        if wanted.is_empty() {
            continue;
        }
        let Ok(table) = std::fs::read_to_string(file) else {
            continue;
        };
        for line in table.lines().skip(1) {
            let mut fields = line.split_ascii_whitespace().skip(1);
            let (Some(local), Some(remote)) = (fields.next(), fields.next()) else {
                continue;
            };
            let key = format!("{} {}", local.to_ascii_uppercase(), remote.to_ascii_uppercase());
            if let Some(&i) = wanted.get(&key) {
                found[i] = fields.nth(4).and_then(|uid| uid.parse().ok());
            }
        }
    }
    found
}

/// Non-Linux: every connection counts as the gateway's own user (see [`peer_uid`]).
#[cfg(not(target_os = "linux"))]
pub(crate) fn peer_uids(pairs: &[(SocketAddr, SocketAddr)]) -> Vec<Option<u32>> {
    vec![Some(own_uid()); pairs.len()]
}

/// Non-Linux: no per-socket owner is looked up; the token is the only check.
#[cfg(not(target_os = "linux"))]
pub(crate) fn peer_uid(_local: SocketAddr, _peer: SocketAddr) -> Option<u32> {
    Some(own_uid())
}

/// The user the gateway runs as.
pub(crate) fn own_uid() -> u32 {
    #[cfg(unix)]
    {
        nix::unistd::geteuid().as_raw()
    }
    #[cfg(not(unix))]
    {
        0
    }
}

/// An IPv4 client of a dual-stack listener shows up as `::ffff:a.b.c.d` but its socket is in
/// `/proc/net/tcp`.
#[cfg(any(target_os = "linux", test))]
fn canonical(addr: SocketAddr) -> SocketAddr {
    match addr {
        SocketAddr::V6(v6) => match v6.ip().to_ipv4_mapped() {
            Some(v4) => SocketAddr::new(v4.into(), v6.port()),
            None => addr,
        },
        SocketAddr::V4(_) => addr,
    }
}

/// An address as the kernel prints it: the address bytes as native-endian 32-bit words in
/// upper-case hex, a colon, the port in hex.
#[cfg(any(target_os = "linux", test))]
fn proc_hex(addr: SocketAddr) -> String {
    let words: Vec<[u8; 4]> = match addr {
        SocketAddr::V4(v4) => vec![v4.ip().octets()],
        SocketAddr::V6(v6) => v6
            .ip()
            .octets()
            .chunks_exact(4)
            .map(|c| [c[0], c[1], c[2], c[3]])
            .collect(),
    };
    let mut out = String::new();
    for word in words {
        out.push_str(&format!("{:08X}", u32::from_ne_bytes(word)));
    }
    out.push_str(&format!(":{:04X}", addr.port()));
    out
}

/// The `uid` of the row whose local address is `local_hex` and remote address `remote_hex`.
/// Every loopback connection is in the table twice and thousands may be open, so the scan stops
/// looking at a row as soon as its addresses differ.
#[cfg(any(target_os = "linux", test))]
fn find_uid(table: &str, local_hex: &str, remote_hex: &str) -> Option<u32> {
    table.lines().skip(1).find_map(|line| {
        // sl local_address rem_address st tx:rx tr:when retrnsmt uid ...
        let mut fields = line.split_ascii_whitespace().skip(1);
        if !fields.next()?.eq_ignore_ascii_case(local_hex) || !fields.next()?.eq_ignore_ascii_case(remote_hex) {
            return None;
        }
        fields.nth(4)?.parse().ok()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_are_written_as_the_kernel_writes_them() {
        let v4: SocketAddr = "127.0.0.1:7470".parse().unwrap();
        let expected = if cfg!(target_endian = "little") {
            "0100007F:1D2E"
        } else {
            "7F000001:1D2E"
        };
        assert_eq!(proc_hex(v4), expected);
        let v6: SocketAddr = "[::1]:80".parse().unwrap();
        let one = if cfg!(target_endian = "little") {
            "01000000"
        } else {
            "00000001"
        };
        assert_eq!(proc_hex(v6), format!("000000000000000000000000{one}:0050"));
        let mapped: SocketAddr = "[::ffff:127.0.0.1]:9".parse().unwrap();
        assert_eq!(canonical(mapped), "127.0.0.1:9".parse::<SocketAddr>().unwrap());
    }

    #[test]
    fn the_row_of_the_client_end_gives_the_uid() {
        let table =
            "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n\
   0: 0100007F:1D2E 0100007F:A000 01 00000000:00000000 00:00000000 00000000  1000        0 11 1\n\
   1: 0100007F:A000 0100007F:1D2E 01 00000000:00000000 00:00000000 00000000 65534        0 12 1\n";
        assert_eq!(find_uid(table, "0100007F:A000", "0100007F:1D2E"), Some(65534));
        assert_eq!(find_uid(table, "0100007f:1d2e", "0100007F:A000"), Some(1000));
        assert_eq!(find_uid(table, "0100007F:B000", "0100007F:1D2E"), None);
    }

    /// A real connection on this machine: the client end is ours.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_real_loopback_connection_belongs_to_this_user() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (server_side, peer) = listener.accept().unwrap();
        let local = server_side.local_addr().unwrap();
        assert_eq!(peer, client.local_addr().unwrap());
        assert_eq!(peer_uid(local, peer), Some(own_uid()));
        let elsewhere: SocketAddr = "127.0.0.1:1".parse().unwrap();
        assert_eq!(peer_uid(local, elsewhere), None);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_batch_answers_each_connection() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let _a = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let _b = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (sa, pa) = listener.accept().unwrap();
        let (sb, pb) = listener.accept().unwrap();
        let elsewhere: SocketAddr = "127.0.0.1:1".parse().unwrap();
        let got = peer_uids(&[
            (sa.local_addr().unwrap(), pa),
            (sa.local_addr().unwrap(), elsewhere),
            (sb.local_addr().unwrap(), pb),
        ]);
        assert_eq!(got, [Some(own_uid()), None, Some(own_uid())]);
    }

    /// The same over IPv6 loopback (`/proc/net/tcp6`), where the machine has it.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_real_ipv6_loopback_connection_belongs_to_this_user() {
        let listener = match std::net::TcpListener::bind("[::1]:0") {
            Ok(listener) => listener,
            Err(err) => return crate::test_env::unmet(&format!("no IPv6 loopback here ({err})")),
        };
        let _client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (server_side, peer) = listener.accept().unwrap();
        assert!(peer.is_ipv6());
        assert_eq!(peer_uid(server_side.local_addr().unwrap(), peer), Some(own_uid()));
    }
}
