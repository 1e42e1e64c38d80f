//! The one change the gateway makes to a server's answer: hidden tools are removed from a
//! `tools/list` page, and what the page says about each tool is learnt on the way (the tool
//! catalog the approval prompt shows, and the pins that notice a changed tool).
//!
//! The cost follows the work: the page is read borrowed from its bytes
//! ([`portcullis_wire::tools_page`]) for the tools' names, a tool is read as a JSON value only
//! when its text differs from what was last learnt of it, a page with nothing hidden goes on as
//! the bytes that came, and one with hidden tools is spliced once.

use std::borrow::Cow;

use portcullis_policy::{Door, Policy};
use portcullis_wire::tools_page::ToolsPage;
use portcullis_wire::{error_code, Message};

use crate::listed_tool::Listed;
use crate::pins::PinStore;
use crate::tool_catalog::ToolCatalog;

/// Where a page's tools are learnt.
pub struct Learn<'a> {
    pub server: &'a str,
    /// The agent session the page was listed to (the catalog keeps each session's own list).
    pub session: &'a str,
    pub catalog: &'a ToolCatalog,
    pub pins: &'a PinStore,
}

impl Learn<'_> {
    /// Learns every tool; false when a tool to learn cannot be read.
    fn tools(&self, tools: &[Listed<'_>]) -> bool {
        self.catalog.learn_listed(self.server, self.session, tools).is_some()
            && self.pins.observe_listed(self.server, tools).is_some()
    }
}

/// Removes the tools `policy` hides from a `tools/list` page (none without a policy) and learns
/// every tool listed. Untouched bytes when nothing is hidden. A page whose tools cannot be read
/// (nested beyond serde_json's limit) cannot be checked or pinned, so it is not passed on: an
/// error is safer than showing a hidden or changed tool.
pub fn filter(response: Message, policy: Option<&Policy>, learn: &Learn<'_>) -> Message {
    let page = match ToolsPage::read(response.bytes()) {
        Ok(Some(page)) => page,
        Ok(None) => return response,
        Err(_) => return unreadable_tools_list(&response),
    };
    let names: Vec<Vec<(bool, Cow<'_, str>)>> = page
        .tools()
        .iter()
        .map(portcullis_wire::tools_page::ListedTool::names)
        .collect();
    let listed: Vec<Listed<'_>> = page
        .tools()
        .iter()
        .zip(&names)
        .filter_map(|(tool, names)| {
            let (_, name) = names.iter().find(|(exact, _)| *exact)?;
            Some(Listed::new(name.clone(), tool.raw()))
        })
        .collect();
    if !learn.tools(&listed) {
        return unreadable_tools_list(&response);
    }
    let Some(policy) = policy else {
        return response;
    };
    let hidden: Vec<bool> = names
        .iter()
        .map(|names| names.iter().any(|(_, name)| policy.is_hidden(name)))
        .collect();
    if !hidden.contains(&true) {
        return response;
    }
    let kept = page.keeping(|i| !hidden[i]);
    Message::parse(kept).unwrap_or_else(|_| unreadable_tools_list(&response))
}

/// A list of another door ([`filter_entries`]): its section, its array's member in `result`,
/// and the member that names each entry.
pub struct ListKind {
    pub door: Door,
    pub member: &'static str,
    pub key: &'static str,
}

/// `resources/list`: each resource by its `uri`.
pub const RESOURCES: ListKind = ListKind {
    door: Door::Resources,
    member: "resources",
    key: "uri",
};
/// `resources/templates/list`: each template by its `uriTemplate`, matched as a URI.
pub const TEMPLATES: ListKind = ListKind {
    door: Door::Resources,
    member: "resourceTemplates",
    key: "uriTemplate",
};
/// `prompts/list`: each prompt by its `name`.
pub const PROMPTS: ListKind = ListKind {
    door: Door::Prompts,
    member: "prompts",
    key: "name",
};

/// Removes from a resource, template or prompt list page the entries `policy` hides (an entry
/// whose action is `hide`, a URI that cannot be normalized), read as a folding reader would
/// ([`ToolsPage::read_list`]). Untouched bytes when nothing is hidden; an unreadable page is
/// not passed on.
pub fn filter_entries(response: Message, policy: Option<&Policy>, kind: &ListKind) -> Message {
    let Some(policy) = policy else {
        return response;
    };
    let page = match ToolsPage::read_list(response.bytes(), kind.member) {
        Ok(Some(page)) => page,
        Ok(None) => return response,
        Err(_) => return unreadable_list(&response, kind.member),
    };
    let hidden: Vec<bool> = page
        .tools()
        .iter()
        .map(|entry| {
            let names = entry.names_of(kind.key);
            names.iter().any(|(_, name)| policy.is_hidden_in(kind.door, name))
        })
        .collect();
    if !hidden.contains(&true) {
        return response;
    }
    let kept = page.keeping(|i| !hidden[i]);
    Message::parse(kept).unwrap_or_else(|_| unreadable_list(&response, kind.member))
}

fn unreadable_list(response: &Message, member: &str) -> Message {
    let text = format!(
        "[portcullis] the server's list of {member} could not be read, so it cannot be checked for \
         hidden entries and is not passed on"
    );
    Message::error_response(response.id(), error_code::INTERNAL_ERROR, &text)
}

fn unreadable_tools_list(response: &Message) -> Message {
    Message::error_response(
        response.id(),
        error_code::INTERNAL_ERROR,
        "[portcullis] the server's tools/list answer could not be read (nested too deeply), so it \
         cannot be checked for hidden tools and is not passed on",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Fixture {
        _dir: tempfile::TempDir,
        catalog: ToolCatalog,
        pins: PinStore,
    }

    impl Fixture {
        fn new() -> Self {
            let dir = tempfile::tempdir().unwrap();
            let pins = PinStore::open(dir.path()).unwrap();
            Self {
                _dir: dir,
                catalog: ToolCatalog::default(),
                pins,
            }
        }
        fn filter(&self, page: &str, policy: Option<&Policy>) -> Message {
            let learn = Learn {
                server: "srv",
                session: "s1",
                catalog: &self.catalog,
                pins: &self.pins,
            };
            filter(Message::parse(page.to_owned()).unwrap(), policy, &learn)
        }
    }

    fn hiding(pattern: &str) -> Policy {
        let text = format!(r#"{{"version":"1","default":"allow","hide":["{pattern}"]}}"#);
        Policy::from_json_str(&text, "test").unwrap()
    }

    fn page(tools: &str) -> String {
        format!(r#"{{"jsonrpc":"2.0","id":3,"result":{{"tools":[{tools}],"nextCursor":"n"}}}}"#)
    }

    #[test]
    fn hidden_tools_go_under_every_name_a_reader_sees_and_the_rest_stays_as_it_came() {
        let f = Fixture::new();
        let text =
            page(r#"{"name":"ok", "x" : 1.50},{"name":"secret_a"},{"Name":"secret_b"},{"name":"secre\u0074_c"}"#);
        let out = f.filter(&text, Some(&hiding("secret_*")));
        assert_eq!(
            std::str::from_utf8(out.bytes()).unwrap(),
            page(r#"{"name":"ok", "x" : 1.50}"#)
        );
        assert_eq!(out.id(), Message::parse(text).unwrap().id());
    }

    #[test]
    fn nothing_hidden_passes_the_very_bytes() {
        let f = Fixture::new();
        let text = page(r#"{"name":"a","description":"d"}, {"name":"b"}"#);
        let msg = Message::parse(text.clone()).unwrap();
        for policy in [Some(hiding("zzz")), None] {
            let learn = Learn {
                server: "srv",
                session: "s1",
                catalog: &f.catalog,
                pins: &f.pins,
            };
            let out = filter(msg.clone(), policy.as_ref(), &learn);
            assert_eq!(out.bytes().as_ptr(), msg.bytes().as_ptr(), "not copied");
        }
        assert_eq!(f.catalog.get("srv", "s1", "a").info.description.as_deref(), Some("d"));
    }

    #[test]
    fn a_repeated_page_is_not_learnt_again_but_a_change_still_is() {
        let f = Fixture::new();
        let v1 = page(r#"{"name":"a","description":"v1"}"#);
        let v2 = page(r#"{"name":"a","description":"v2"}"#);
        f.filter(&v1, None);
        f.filter(&v1, None);
        assert!(f.pins.changed().is_empty());
        f.filter(&v2, None);
        assert_eq!(f.pins.changed().len(), 1, "the changed definition is seen");
        assert_eq!(f.catalog.get("srv", "s1", "a").info.description.as_deref(), Some("v2"));
        // Another session still shows v1: the change stays (sticky), and v1 is the text last seen.
        f.filter(&v1, None);
        assert_eq!(f.pins.changed().len(), 1);
        f.pins.accept("srv", "a", None).unwrap();
        assert!(f.pins.changed().is_empty());
        // v2 is the pin now, so the very text last seen (v1) is a change, not a repeat.
        f.filter(&v1, None);
        assert_eq!(f.pins.changed().len(), 1, "v1 after accepting v2 is a change");
        f.filter(&v1, None);
        assert_eq!(f.pins.changed().len(), 1);
    }

    #[test]
    fn a_tool_too_deep_to_read_stops_the_page() {
        let f = Fixture::new();
        let deep = format!(
            r#"{{"name":"d","inputSchema":{{"default":{}{}}}}}"#,
            "[".repeat(200),
            "]".repeat(200)
        );
        let out = f.filter(&page(&deep), None);
        assert!(out.is_response() && std::str::from_utf8(out.bytes()).unwrap().contains("could not be read"));
    }

    fn sections(text: &str) -> Policy {
        Policy::from_json_str(text, "t.json").unwrap()
    }

    #[test]
    fn hidden_resources_templates_and_prompts_leave_their_lists() {
        let policy = sections(
            r#"{"version":"1","default":"allow",
                "resources":{"file:///home/u/.ssh/*":{"action":"hide"},"file:///tmp/a":{}},
                "prompts":{"secret_*":{"action":"hide"}}}"#,
        );
        let list = |member: &str, entries: &str| {
            Message::parse(format!(
                r#"{{"jsonrpc":"2.0","id":3,"result":{{"{member}":[{entries}],"nextCursor":"c"}}}}"#
            ))
            .unwrap()
        };
        // `URI` is `uri` to Go's encoding/json: the entry is read under it too, and the dot
        // segments and case that a server reads alike are normalized first.
        let resources = list(
            "resources",
            r#"{"uri":"file:///tmp/a","name":"a"},{"URI":"FILE:///home/u/x/../.ssh/id_ed25519","name":"k"},{"uri":"file:///home/u/.ssh/config"}"#,
        );
        let out = filter_entries(resources, Some(&policy), &RESOURCES);
        let value: serde_json::Value = serde_json::from_slice(out.bytes()).unwrap();
        assert_eq!(
            value["result"]["resources"],
            serde_json::json!([{"uri":"file:///tmp/a","name":"a"}])
        );
        assert_eq!(value["result"]["nextCursor"], "c");
        let templates = list(
            "resourceTemplates",
            r#"{"uriTemplate":"file:///home/u/.ssh/{name}"},{"uriTemplate":"file:///tmp/{n}"}"#,
        );
        let out = filter_entries(templates, Some(&policy), &TEMPLATES);
        let value: serde_json::Value = serde_json::from_slice(out.bytes()).unwrap();
        assert_eq!(
            value["result"]["resourceTemplates"],
            serde_json::json!([{"uriTemplate":"file:///tmp/{n}"}])
        );
        let prompts = list("prompts", r#"{"name":"secret_plan"},{"name":"simple"}"#);
        let out = filter_entries(prompts, Some(&policy), &PROMPTS);
        let value: serde_json::Value = serde_json::from_slice(out.bytes()).unwrap();
        assert_eq!(value["result"]["prompts"], serde_json::json!([{"name":"simple"}]));
    }

    #[test]
    fn a_list_with_nothing_hidden_goes_on_as_its_bytes() {
        let policy = sections(r#"{"version":"1","default":"allow","prompts":{"x":{"action":"hide"}}}"#);
        let text = r#"{"jsonrpc":"2.0","id":3,"result":{"prompts":[ {"name" : "simple"} ]}}"#;
        let out = filter_entries(Message::parse(text.to_owned()).unwrap(), Some(&policy), &PROMPTS);
        assert_eq!(out.bytes(), text.as_bytes());
    }
}
