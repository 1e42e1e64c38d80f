//! Test setup (feature `test-support`, for the desktop app's command tests): the state that a
//! person's answer or a server's `tools/list` would leave, made without a held call or a real
//! upstream. Not part of the gateway's API.

use serde_json::Value;

use crate::broker::standing::NewGrant;
use crate::Keeper;
use portcullis_gate::policy_store::{PolicyWrite, WriteError};

impl Keeper {
    /// As if `server` had listed `tools`: their definitions are pinned, or changes noted.
    pub fn observe_tools_for_test(&self, server: &str, tools: &[Value]) {
        self.plane.gate().observe_tools(server, tools);
    }

    /// As if an "always" decision had written `entry` for `tool` into `server`'s policy file.
    pub fn write_policy_entry_for_test(
        &self,
        server: &str,
        tool: &str,
        entry: Value,
    ) -> Result<PolicyWrite, WriteError> {
        self.plane.gate().write_policy_entry(server, tool, entry)
    }

    /// As if a person had granted `grant`; returns its id.
    pub fn add_standing_grant_for_test(&self, grant: NewGrant, now_ms: i64) -> String {
        self.person.broker().grants.standing.add(grant, now_ms)
    }
}
