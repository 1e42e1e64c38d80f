//! A tool as a `tools/list` page lists it: what the tool catalog and the pins learn from.

use std::borrow::Cow;
use std::cell::OnceCell;

use serde_json::Value;

/// A listed tool with an exact `name`, as the catalog and the pins learn it.
pub(crate) struct Listed<'a> {
    pub name: Cow<'a, str>,
    /// The tool's JSON text as the server wrote it.
    pub raw: &'a str,
    value: OnceCell<Option<Value>>,
}

impl<'a> Listed<'a> {
    pub(crate) fn new(name: Cow<'a, str>, raw: &'a str) -> Self {
        Self {
            name,
            raw,
            value: OnceCell::new(),
        }
    }

    /// The tool as a JSON value, read once on first use; `None` when it cannot be read (nested
    /// beyond serde_json's limit).
    pub(crate) fn value(&self) -> Option<&Value> {
        self.value.get_or_init(|| serde_json::from_str(self.raw).ok()).as_ref()
    }
}
