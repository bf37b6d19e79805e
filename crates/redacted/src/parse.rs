//! Parse errors told without the values they quote: serde's data errors quote the offending
//! value (`invalid type: string "DB_PASSWORD=hunter2", expected i32`), and a value in a file,
//! a stored release or an API response may be a secret. What is kept: the kind of problem,
//! what was expected (the type's own words) and where (the caller's field path, the position).

/// What a serde data error says is wrong, as a predicate for the field it is about
/// (`` `spec.replicas` has the wrong type (expected i32) ``), quoting none of the input.
/// `message` is the error's text; a trailing position (` at line L column C`) is ignored.
pub fn data_problem(message: &str) -> String {
    let message = without_position(message);
    let expected = message
        .rfind(", expected ")
        .map(|i| format!(" (expected {})", &message[i + ", expected ".len()..]))
        .unwrap_or_default();
    if message.starts_with("invalid type") {
        format!("has the wrong type{expected}")
    } else if message.starts_with("invalid value") {
        format!("has an invalid value{expected}")
    } else if message.starts_with("invalid length") {
        format!("has the wrong length{expected}")
    } else if message.starts_with("unknown variant") {
        format!("is none of the values it may take{expected}")
    } else if let Some(field) = message.strip_prefix("missing field ") {
        // A field name of the type being read, never input.
        format!("lacks the field {field}")
    } else if let Some(rest) = message.strip_prefix("unknown field ") {
        // A key, not a value: naming it is how the writer finds the typo.
        let field = rest.split(", expected").next().unwrap_or(rest);
        format!("has the unknown field {field}{expected}")
    } else if let Some(field) = message.strip_prefix("duplicate field ") {
        format!("has the field {field} twice")
    } else {
        "could not be read".to_owned()
    }
}

/// A serde_json error in words that quote nothing it read: a syntax error's fixed text
/// (`expected value`, `trailing comma`) and position, or a data error as [`data_problem`]
/// says it.
pub fn json_problem(err: &serde_json::Error) -> String {
    let at = if err.line() > 0 {
        format!(" at line {} column {}", err.line(), err.column())
    } else {
        String::new()
    };
    let message = err.to_string();
    match err.classify() {
        serde_json::error::Category::Syntax => format!("{}{at}", without_position(&message)),
        serde_json::error::Category::Eof => format!("it ends early{at} (truncated?)"),
        serde_json::error::Category::Io => "it could not be read".to_owned(),
        serde_json::error::Category::Data => format!("a value {}{at}", data_problem(&message)),
    }
}

/// `message` without the ` at line L column C` serde appends.
pub fn without_position(message: &str) -> &str {
    match message.rfind(" at line ") {
        Some(i)
            if message[i + " at line ".len()..]
                .split(" column ")
                .all(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())) =>
        {
            &message[..i]
        }
        _ => message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[expect(dead_code, reason = "only read to fail")]
    struct Spec {
        replicas: i32,
        mode: Mode,
    }

    #[derive(Debug, serde::Deserialize)]
    enum Mode {
        Fast,
    }

    fn problem(json: &str) -> String {
        json_problem(&serde_json::from_str::<Spec>(json).expect_err("invalid"))
    }

    #[test]
    fn no_value_read_is_ever_quoted() {
        let got = problem(r#"{"replicas": "DB_PASSWORD=hunter2", "mode": "Fast"}"#);
        assert_eq!(
            got,
            "a value has the wrong type (expected i32) at line 1 column 34"
        );
        let got = problem(r#"{"replicas": 1, "mode": "hunter2"}"#);
        assert!(!got.contains("hunter2"), "{got}");
        assert!(
            got.starts_with("a value is none of the values it may take"),
            "{got}"
        );
        let got = problem(r#"{"replicas": 1, "mode": "Fast", "hunter": 2}"#);
        assert!(got.contains("has the unknown field `hunter`"), "{got}");
        assert_eq!(
            problem(r#"{"replicas": 1}"#),
            "a value lacks the field `mode` at line 1 column 15"
        );
        assert_eq!(
            problem("{\"replicas\": 1,"),
            "it ends early at line 1 column 15 (truncated?)"
        );
        assert_eq!(problem("<html>"), "expected value at line 1 column 1");
    }

    #[test]
    fn the_position_is_cut_only_when_it_is_one() {
        assert_eq!(without_position("bad at line 3 column 5"), "bad");
        assert_eq!(without_position("look at line ten"), "look at line ten");
    }
}
