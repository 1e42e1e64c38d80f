//! The keeper's integration tests that need no process of their own, in one test binary: each
//! file here was a binary, and each linked and optimized the whole crate graph again (about 13 s
//! of CI's build apiece after a change low in the graph). nextest still runs every test in a
//! process of its own. The resource-bound tests (`../bounds_*.rs`) stay separate binaries: under
//! `cargo test` a binary's tests share a process, and they measure the process's memory.

mod common;
mod digest_key;
mod http_upstream;
mod keeper_link;
mod mirror_headers;
mod pause;
mod refusals;
mod server_status;
mod stdio_upstream_rules;
