//! A validator for the subset of JSON Schema that [`super::schema`] writes: `type` (one name),
//! `properties`, `required`, `additionalProperties` (`false` or a schema), `items`, `enum`,
//! `const`, `minimum`, `oneOf` and local `$ref`s (`#/$defs/Name`). Anything else in a schema is
//! an error, so the validator never passes a document by ignoring a keyword it does not know.

use serde_json::Value as Json;

/// The keywords understood; `description`, `title`, `$schema`, `$id` and `$defs` carry no
/// constraint.
const KEYWORDS: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "minimum",
    "oneOf",
    "$ref",
    "description",
    "title",
    "$schema",
    "$id",
    "$defs",
];

/// Validates `doc` against `root` (a schema holding its `$defs`); the first failure is named
/// with the JSON pointer of the value that fails.
pub fn validate(root: &Json, doc: &Json) -> Result<(), String> {
    check(root, root, doc, "")
}

fn check(root: &Json, schema: &Json, doc: &Json, at: &str) -> Result<(), String> {
    let Some(s) = schema.as_object() else {
        return Err(format!("{at}: the schema is not an object"));
    };
    if let Some(k) = s.keys().find(|k| !KEYWORDS.contains(&k.as_str())) {
        return Err(format!("{at}: schema keyword `{k}` is not supported"));
    }
    if let Some(r) = s.get("$ref") {
        check(root, resolve(root, r)?, doc, at)?;
    }
    if let Some(t) = s.get("type") {
        check_type(t, doc, at)?;
    }
    if let Some(c) = s.get("const") {
        if c != doc {
            return Err(format!("{at}: expected {c}, found {doc}"));
        }
    }
    if let Some(Json::Array(options)) = s.get("enum") {
        if !options.contains(doc) {
            return Err(format!(
                "{at}: {doc} is none of {}",
                Json::from(options.clone())
            ));
        }
    }
    if let (Some(min), Some(n)) = (s.get("minimum").and_then(Json::as_f64), doc.as_f64()) {
        if n < min {
            return Err(format!("{at}: {n} is below the minimum {min}"));
        }
    }
    if let Some(Json::Array(options)) = s.get("oneOf") {
        one_of(root, options, doc, at)?;
    }
    if let (Some(items), Json::Array(values)) = (s.get("items"), doc) {
        for (i, v) in values.iter().enumerate() {
            check(root, items, v, &format!("{at}/{i}"))?;
        }
    }
    if let Json::Object(_) = doc {
        check_object(root, s, doc, at)?;
    }
    Ok(())
}

fn resolve<'a>(root: &'a Json, r: &Json) -> Result<&'a Json, String> {
    let name = r
        .as_str()
        .and_then(|r| r.strip_prefix("#/$defs/"))
        .ok_or_else(|| format!("$ref {r}: only #/$defs/Name is supported"))?;
    root.get("$defs")
        .and_then(|d| d.get(name))
        .ok_or_else(|| format!("$ref {r}: no such definition"))
}

fn check_type(t: &Json, doc: &Json, at: &str) -> Result<(), String> {
    let ok = match t.as_str() {
        Some("object") => doc.is_object(),
        Some("array") => doc.is_array(),
        Some("string") => doc.is_string(),
        Some("integer") => doc.is_i64() || doc.is_u64(),
        Some("number") => doc.is_number(),
        Some("boolean") => doc.is_boolean(),
        Some("null") => doc.is_null(),
        _ => return Err(format!("{at}: type {t} is not supported")),
    };
    if ok {
        Ok(())
    } else {
        Err(format!("{at}: expected {t}, found {doc}"))
    }
}

fn one_of(root: &Json, options: &[Json], doc: &Json, at: &str) -> Result<(), String> {
    let mut errors = Vec::new();
    let mut passed = 0;
    for o in options {
        match check(root, o, doc, at) {
            Ok(()) => passed += 1,
            Err(e) => errors.push(e),
        }
    }
    match passed {
        1 => Ok(()),
        0 => Err(format!(
            "{at}: matches no option of oneOf: {}",
            errors.join("; ")
        )),
        n => Err(format!("{at}: matches {n} options of oneOf, not one")),
    }
}

fn check_object(
    root: &Json,
    s: &serde_json::Map<String, Json>,
    doc: &Json,
    at: &str,
) -> Result<(), String> {
    let fields = doc.as_object().expect("called on objects");
    let properties = s.get("properties").and_then(Json::as_object);
    for name in s
        .get("required")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
    {
        let name = name.as_str().unwrap_or_default();
        if !fields.contains_key(name) {
            return Err(format!("{at}: required field `{name}` is missing"));
        }
    }
    for (k, v) in fields {
        let here = format!("{at}/{k}");
        match (
            properties.and_then(|p| p.get(k)),
            s.get("additionalProperties"),
        ) {
            (Some(p), _) => check(root, p, v, &here)?,
            (None, Some(Json::Bool(false))) => {
                return Err(format!("{at}: field `{k}` is not in the schema"))
            }
            (None, Some(extra)) if extra.is_object() => check(root, extra, v, &here)?,
            (None, _) => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::validate;
    use serde_json::json;

    #[test]
    fn each_keyword_rejects_what_it_should() {
        let schema = json!({
            "$defs": {"N": {"type": "integer", "minimum": 0}},
            "type": "object",
            "properties": {
                "n": {"$ref": "#/$defs/N"},
                "e": {"enum": ["a", "b"]},
                "o": {"oneOf": [{"type": "string"}, {"type": "null"}]},
                "l": {"type": "array", "items": {"const": 1}},
                "m": {"type": "object", "additionalProperties": {"type": "boolean"}}
            },
            "required": ["n"],
            "additionalProperties": false
        });
        let good = json!({"n": 3, "e": "a", "o": null, "l": [1, 1], "m": {"x": true}});
        assert_eq!(validate(&schema, &good), Ok(()));
        for (bad, says) in [
            (json!({"e": "a"}), "required field `n`"),
            (json!({"n": -1}), "/n: -1 is below the minimum"),
            (json!({"n": 1.5}), "/n: expected \"integer\""),
            (json!({"n": 1, "e": "c"}), "/e: \"c\" is none of"),
            (json!({"n": 1, "o": 4}), "/o: matches no option"),
            (json!({"n": 1, "l": [1, 2]}), "/l/1: expected 1"),
            (json!({"n": 1, "m": {"x": 0}}), "/m/x: expected \"boolean\""),
            (json!({"n": 1, "z": 0}), "field `z` is not in the schema"),
        ] {
            let e = validate(&schema, &bad).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
        let unknown = json!({"pattern": "x"});
        assert!(validate(&unknown, &json!("x"))
            .unwrap_err()
            .contains("not supported"));
    }
}
