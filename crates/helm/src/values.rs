use std::fmt;

use serde::Deserialize;
use serde_json::Value;

/// The user-supplied values of a release (`.config`), which often hold passwords and tokens.
///
/// `Debug` and `Display` never show a value, and there is deliberately no `Serialize`: the only
/// ways to the contents are [`Values::expose`] (say why at the call site) and
/// [`Values::redacted`].
#[derive(Clone, PartialEq, Default, Deserialize)]
#[serde(transparent)]
pub struct Values(Value);

/// What replaces every scalar in redacted values.
pub const REDACTED: &str = "<redacted>";

impl Values {
    pub fn new(value: Value) -> Self {
        Self(value)
    }

    /// The real values. Only for `--show-values` and for checks that compare without printing.
    pub fn expose(&self) -> &Value {
        &self.0
    }

    /// The same shape with every scalar replaced by `"<redacted>"`: keys are kept at every depth
    /// and arrays keep their length, so a reader can see what was set but not to what.
    pub fn redacted(&self) -> Value {
        redact(&self.0)
    }

    /// True when no values were supplied (Helm stores `{}` or omits `config`).
    pub fn is_empty(&self) -> bool {
        match &self.0 {
            Value::Null => true,
            Value::Object(map) => map.is_empty(),
            _ => false,
        }
    }
}

fn redact(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(key, value)| (key.clone(), redact(value)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(redact).collect()),
        _ => Value::String(REDACTED.to_owned()),
    }
}

impl fmt::Debug for Values {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Values({REDACTED})")
    }
}

impl fmt::Display for Values {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTED)
    }
}

impl From<Value> for Values {
    fn from(value: Value) -> Self {
        Self(value)
    }
}
