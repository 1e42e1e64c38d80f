//! Arguments a rule reads whose type the tool's pinned `inputSchema` does not allow.
//!
//! Readings ([`crate::reading`]) cover the conversions mainstream SDKs make, but a server may
//! convert in ways no list foresees. Where the tool's own schema declares a type for an argument
//! a rule reads, a value of another type is not something the tool asked for: the call is refused
//! with a message the agent can act on (send it as the declared type), and a value that has the
//! declared type leaves a lenient server nothing to convert.

use serde_json::{Map, Value};

use crate::eval::{Compiled, Lookup};

impl Compiled {
    /// The first argument read by a rule of `tool`'s entry whose value (or a value on its path)
    /// does not have the type `input_schema` declares for it, as a message for the agent.
    pub(crate) fn argument_type_problem(&self, tool: &str, arguments: &Value, input_schema: &Value) -> Option<String> {
        let Lookup::Entry { entry, .. } = self.lookup(tool) else {
            return None;
        };
        entry
            .rules
            .iter()
            .flat_map(|rule| &rule.conditions)
            .filter_map(|condition| condition.argument_segments())
            .find_map(|segments| problem_on_path(segments, arguments, input_schema))
    }
}

/// Walks `segments` through the arguments and the schema together; the first value whose
/// declared type it lacks is the problem.
fn problem_on_path<'s>(segments: impl Iterator<Item = &'s str>, arguments: &Value, schema: &Value) -> Option<String> {
    let mut value = arguments;
    let mut schema = schema;
    let mut walked: Vec<&str> = Vec::new();
    for segment in segments {
        schema = child_schema(schema, segment)?;
        value = match value {
            Value::Object(map) => map.get(segment)?,
            Value::Array(items) => items.get(segment.parse::<usize>().ok()?)?,
            _ => return None,
        };
        walked.push(segment);
        let declared = declared_types(schema);
        if !declared.is_empty() && !declared.iter().any(|t| has_type(value, t)) {
            return Some(format!(
                "argument `{}` is {} but the tool's schema declares {}; send it as {}",
                walked.join("."),
                describe(value),
                declared.join(" or "),
                declared.join(" or "),
            ));
        }
    }
    None
}

/// The schema of member `segment`: a property of an object schema, or the items of an array
/// schema. `None` where the schema does not say (no problem can be told then).
fn child_schema<'a>(schema: &'a Value, segment: &str) -> Option<&'a Value> {
    let map = schema.as_object()?;
    if let Some(property) = map
        .get("properties")
        .and_then(Value::as_object)
        .and_then(|p| p.get(segment))
    {
        return Some(property);
    }
    let index: usize = segment.parse().ok()?;
    if let Some(item) = map
        .get("prefixItems")
        .and_then(Value::as_array)
        .and_then(|items| items.get(index))
    {
        return Some(item);
    }
    map.get("items").filter(|items| items.is_object())
}

/// The JSON Schema `type` names a schema declares (`"integer"`, or `["string", "null"]`).
fn declared_types(schema: &Value) -> Vec<&str> {
    match schema.as_object().and_then(|map: &Map<String, Value>| map.get("type")) {
        Some(Value::String(name)) => vec![name.as_str()],
        Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// Whether `value` is of JSON Schema type `name`; an unknown name is taken as satisfied.
fn has_type(value: &Value, name: &str) -> bool {
    match name {
        "string" => value.is_string(),
        "number" => value.is_number(),
        // JSON Schema: a number with a zero fractional part (`5.0` is an integer).
        "integer" => {
            value.as_i64().is_some() || value.as_u64().is_some() || value.as_f64().is_some_and(|f| f.fract() == 0.0)
        }
        "boolean" => value.is_boolean(),
        "null" => value.is_null(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        _ => true,
    }
}

fn describe(value: &Value) -> String {
    match value {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => format!("the boolean {b}"),
        Value::Number(n) => format!("the number {n}"),
        Value::String(s) => format!("the string {}", Value::String(s.clone())),
        Value::Array(_) => "an array".to_owned(),
        Value::Object(_) => "an object".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::Policy;

    fn policy() -> Policy {
        Policy::from_json_str(
            &json!({"version": "1", "tools": {
                "run": {"rules": [
                    {"when": {"arguments.count": {"gt": 100}}, "action": "deny"},
                    {"when": {"arguments.opts.force": {"eq": true}}, "action": "require_approval"},
                    {"when": {"arguments.files.0": {"path_under": "/etc"}}, "action": "deny"}
                ]},
                "other": {}
            }})
            .to_string(),
            "t.json",
        )
        .expect("valid")
    }

    fn schema() -> serde_json::Value {
        json!({"type": "object", "properties": {
            "count": {"type": "integer"},
            "opts": {"type": "object", "properties": {"force": {"type": ["boolean", "null"]}}},
            "files": {"type": "array", "items": {"type": "string"}},
            "note": {"type": "string"}
        }})
    }

    #[test]
    fn a_value_of_another_type_than_declared_is_a_problem() {
        let p = policy();
        let problem = p.argument_type_problem("run", &json!({"count": "5"}), &schema());
        assert_eq!(
            problem.as_deref(),
            Some("argument `count` is the string \"5\" but the tool's schema declares integer; send it as integer")
        );
        let problem = p.argument_type_problem("run", &json!({"opts": "{\"force\": true}"}), &schema());
        assert!(problem.is_some_and(|m| m.starts_with("argument `opts` is the string")));
        let problem = p.argument_type_problem("run", &json!({"opts": {"force": "yes"}}), &schema());
        assert!(problem.is_some_and(|m| m.contains("`opts.force`") && m.contains("boolean or null")));
        let problem = p.argument_type_problem("run", &json!({"files": [5]}), &schema());
        assert!(problem.is_some_and(|m| m.contains("`files.0` is the number 5")));
    }

    #[test]
    fn values_of_the_declared_type_and_unread_or_undeclared_arguments_are_not() {
        let p = policy();
        for arguments in [
            json!({"count": 5, "opts": {"force": null}, "files": ["/tmp/x"]}),
            json!({"count": 5.0}),
            json!({"note": 5}),
            json!({}),
        ] {
            assert_eq!(
                p.argument_type_problem("run", &arguments, &schema()),
                None,
                "{arguments}"
            );
        }
        assert_eq!(
            p.argument_type_problem("other", &json!({"count": "5"}), &schema()),
            None
        );
        assert_eq!(
            p.argument_type_problem("unlisted", &json!({"count": "5"}), &schema()),
            None
        );
        assert_eq!(p.argument_type_problem("run", &json!({"count": "5"}), &json!({})), None);
        assert_eq!(
            p.argument_type_problem("run", &json!({"count": "5"}), &json!({"properties": {"count": {}}})),
            None
        );
    }
}
