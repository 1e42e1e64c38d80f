use super::*;
use serde_json::json;

fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "count": {"type": "integer", "x-mcp-header": "Count"},
            "dry": {"type": "boolean", "x-mcp-header": "Dry-Run"},
            "target": {"type": "object", "properties": {"host": {"type": "string", "x-mcp-header": "Host"}}},
            "query": {"type": "string", "default": {"x-mcp-header": "data, not an annotation"}}
        }
    })
}

fn decl() -> Result<Vec<Declared>, String> {
    declared(&schema())
}

fn got(name: &'static str, value: &'static str) -> Received<'static> {
    Received {
        name,
        value: Some(value),
    }
}

#[test]
fn declarations_follow_properties_chains_only() {
    let d = decl().unwrap();
    let pairs: Vec<(&str, String)> = d.iter().map(|d| (d.header.as_str(), d.argument())).collect();
    assert_eq!(
        pairs,
        [
            ("Region", "region".to_owned()),
            ("Count", "count".to_owned()),
            ("Dry-Run", "dry".to_owned()),
            ("Host", "target.host".to_owned())
        ]
    );
    assert_eq!(declared(&json!({"type": "object"})), Ok(vec![]));
}

#[test]
fn invalid_annotations_make_the_schema_declare_nothing() {
    let cases = [
        json!({"properties": {"a": {"type": "string", "x-mcp-header": "A"}, "b": {"type": "string", "x-mcp-header": "a"}}}),
        json!({"properties": {"a": {"type": "number", "x-mcp-header": "A"}}}),
        json!({"properties": {"a": {"x-mcp-header": "A"}}}),
        json!({"properties": {"a": {"type": "string", "x-mcp-header": "A B"}}}),
        json!({"properties": {"a": {"type": "string", "x-mcp-header": ""}}}),
        json!({"properties": {"a": {"type": "string", "x-mcp-header": "Région"}}}),
        json!({"properties": {"a": {"type": "array", "items": {"type": "string", "x-mcp-header": "A"}}}}),
        json!({"anyOf": [{"properties": {"a": {"type": "string", "x-mcp-header": "A"}}}]}),
        json!({"$defs": {"x": {"type": "string", "x-mcp-header": "A"}}}),
        json!({"type": "string", "x-mcp-header": "Root"}),
    ];
    for schema in cases {
        assert!(declared(&schema).is_err(), "{schema}");
    }
}

#[test]
fn headers_that_say_what_the_body_says_pass() {
    let args = json!({"region": "us-west1", "count": 42, "dry": false, "target": {"host": "café"}});
    let headers = [
        got("Region", "us-west1"),
        got("count", "42"),
        got("DRY-RUN", "false"),
        got("Host", "=?base64?Y2Fmw6k=?="),
    ];
    assert_eq!(check(&decl(), Some(&args), &headers), Ok(()));
    // The spec's numeric comparison: 42.0 is 42, both ways.
    assert_eq!(check(&decl(), Some(&args), &[got("Count", "42.0")]), Ok(()));
    assert_eq!(
        check(&decl(), Some(&json!({"count": 42.0})), &[got("Count", "42")]),
        Ok(())
    );
    // A declared argument sent without its header: the upstream gets it written from the body.
    assert_eq!(check(&decl(), Some(&args), &[]), Ok(()));
}

#[test]
fn headers_that_disagree_with_the_body_are_refused() {
    let args = json!({"region": "us-west1", "count": 42, "dry": false, "target": {"host": "h"}});
    let cases = [
        got("Region", "eu-west1"),
        got("Region", "US-WEST1"),
        got("Region", "=?base64?dXMtd2VzdDI=?="),
        got("Count", "43"),
        got("Count", "42.5"),
        got("Count", "4.2e1"),
        got("Count", "+42"),
        got("Dry-Run", "False"),
        got("Dry-Run", "0"),
        got("Host", "=?base64?***?="),
    ];
    for header in cases {
        let why = check(&decl(), Some(&args), &[header]).unwrap_err();
        assert!(why.contains(&format!("Mcp-Param-{}", header.name)), "{why}");
    }
    // Two numbers JavaScript reads as one stay two.
    let big = json!({"count": 9_007_199_254_740_993_u64});
    assert!(check(&decl(), Some(&big), &[got("Count", "9007199254740992")]).is_err());
    assert_eq!(check(&decl(), Some(&big), &[got("Count", "9007199254740993")]), Ok(()));
}

#[test]
fn a_header_the_body_gives_no_value_for_is_refused() {
    for args in [json!({}), json!({"region": null}), json!({"target": "not an object"})] {
        let why = check(&decl(), Some(&args), &[got("Region", "us-west1"), got("Host", "h")]).unwrap_err();
        assert!(why.contains("gives none"), "{why}");
    }
    assert!(check(&decl(), None, &[got("Region", "x")])
        .unwrap_err()
        .contains("gives none"));
    let why = check(
        &decl(),
        Some(&json!({"region": {"a": 1}})),
        &[got("Region", "{\"a\":1}")],
    )
    .unwrap_err();
    assert!(why.contains("does not match"), "an object has no header form: {why}");
}

#[test]
fn undeclared_repeated_or_unreadable_headers_are_refused() {
    let args = json!({"region": "r", "query": "q"});
    let why = check(&decl(), Some(&args), &[got("Query", "q")]).unwrap_err();
    assert!(why.contains("declares"), "{why}");
    let why = check(&decl(), Some(&args), &[got("Region", "r"), got("region", "r")]).unwrap_err();
    assert!(why.contains("more than once"), "{why}");
    let bad = Received {
        name: "Region",
        value: None,
    };
    assert!(check(&decl(), Some(&args), &[bad]).unwrap_err().contains("characters"));
    let invalid = Err("bad schema".to_owned());
    assert!(check(&invalid, Some(&args), &[got("Region", "r")])
        .unwrap_err()
        .contains("bad schema"));
}

#[test]
fn headers_on_the_way_out_are_written_from_the_body() {
    let args =
        json!({"region": " padded ", "count": 7, "dry": true, "target": {"host": "=?base64?eA==?="}, "query": "q"});
    assert_eq!(
        write(&decl().unwrap(), &args),
        [
            ("mcp-param-Region".to_owned(), "=?base64?IHBhZGRlZCA=?=".to_owned()),
            ("mcp-param-Count".to_owned(), "7".to_owned()),
            ("mcp-param-Dry-Run".to_owned(), "true".to_owned()),
            (
                "mcp-param-Host".to_owned(),
                "=?base64?PT9iYXNlNjQ/ZUE9PT89?=".to_owned()
            ),
        ]
    );
    let sparse = json!({"region": null, "count": [1], "target": {}});
    assert_eq!(
        write(&decl().unwrap(), &sparse),
        [],
        "null, missing and non-primitive values have no header"
    );
}

#[test]
fn what_is_written_passes_the_check() {
    let args = json!({"region": "日本語", "count": -3, "dry": false, "target": {"host": "line\nbreak"}});
    let written = write(&decl().unwrap(), &args);
    let received: Vec<Received<'_>> = written
        .iter()
        .map(|(name, value)| Received {
            name: &name[PARAM_PREFIX.len()..],
            value: Some(value),
        })
        .collect();
    assert_eq!(received.len(), 4);
    assert_eq!(check(&decl(), Some(&args), &received), Ok(()));
}
