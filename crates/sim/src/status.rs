//! `Status` objects: the shape every real API server error has.

use serde_json::{json, Map, Value};

use crate::resource::ResourceInfo;

/// An API error as the server answers it: HTTP code, reason, message, details.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ApiError {
    pub code: u16,
    pub reason: &'static str,
    pub message: String,
    pub details: Option<Value>,
    pub retry_after: Option<u64>,
}

impl ApiError {
    pub fn new(code: u16, reason: &'static str, message: impl Into<String>) -> Self {
        Self {
            code,
            reason,
            message: message.into(),
            details: None,
            retry_after: None,
        }
    }

    fn with_details(mut self, info: &ResourceInfo, name: Option<&str>) -> Self {
        let mut d = Map::new();
        if let Some(name) = name {
            d.insert("name".into(), json!(name));
        }
        if !info.group.is_empty() {
            d.insert("group".into(), json!(info.group));
        }
        d.insert("kind".into(), json!(info.plural));
        self.details = Some(Value::Object(d));
        self
    }

    pub fn not_found(info: &ResourceInfo, name: &str) -> Self {
        Self::new(
            404,
            "NotFound",
            format!("{} \"{name}\" not found", info.group_resource()),
        )
        .with_details(info, Some(name))
    }

    pub fn already_exists(info: &ResourceInfo, name: &str) -> Self {
        Self::new(
            409,
            "AlreadyExists",
            format!("{} \"{name}\" already exists", info.group_resource()),
        )
        .with_details(info, Some(name))
    }

    pub fn conflict(info: &ResourceInfo, name: &str) -> Self {
        Self::new(
            409,
            "Conflict",
            format!(
                "Operation cannot be fulfilled on {} \"{name}\": the object has been modified; \
                 please apply your changes to the latest version and try again",
                info.group_resource()
            ),
        )
        .with_details(info, Some(name))
    }

    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, "BadRequest", message)
    }

    pub fn invalid(info: &ResourceInfo, name: &str, message: impl Into<String>) -> Self {
        Self::new(
            422,
            "Invalid",
            format!("{} \"{name}\" is invalid: {}", info.kind, message.into()),
        )
        .with_details(info, Some(name))
    }

    pub fn forbidden(
        info: &ResourceInfo,
        verb: &str,
        resource: &str,
        namespace: Option<&str>,
        name: Option<&str>,
    ) -> Self {
        let subject = match name {
            Some(n) => format!("{} \"{n}\"", info.group_resource()),
            None => info.group_resource(),
        };
        let scope = match namespace {
            Some(ns) => format!("in the namespace \"{ns}\""),
            None => "at the cluster scope".to_owned(),
        };
        Self::new(
            403,
            "Forbidden",
            format!(
                "{subject} is forbidden: User \"liveproof-sim\" cannot {verb} resource \"{resource}\" \
                 in API group \"{}\" {scope}",
                info.group
            ),
        )
        .with_details(info, name)
    }

    pub fn expired(requested: u64, oldest: u64) -> Self {
        Self::new(
            410,
            "Expired",
            format!("too old resource version: {requested} ({oldest})"),
        )
    }

    pub fn path_not_found() -> Self {
        Self::new(404, "NotFound", "the server could not find the requested resource")
            .details_raw(json!({"causes": [{"reason": "UnexpectedServerResponse", "message": "404 page not found"}]}))
    }

    pub fn unsupported_media_type(message: impl Into<String>) -> Self {
        Self::new(415, "UnsupportedMediaType", message)
    }

    pub fn method_not_allowed() -> Self {
        Self::new(
            405,
            "MethodNotAllowed",
            "the server does not allow this method on the requested resource",
        )
    }

    /// The Status a fault knob injects for an arbitrary code.
    pub fn injected(code: u16, retry_after: Option<u64>) -> Self {
        let (reason, message) = match code {
            400 => ("BadRequest", "the server rejected our request for an unknown reason"),
            401 => ("Unauthorized", "Unauthorized"),
            403 => ("Forbidden", "forbidden"),
            404 => ("NotFound", "the server could not find the requested resource"),
            409 => ("Conflict", "the server reported a conflict"),
            410 => ("Gone", "the server has indicated the requested resource is gone"),
            429 => (
                "TooManyRequests",
                "the server has received too many requests and has asked us to try again later",
            ),
            503 => ("ServiceUnavailable", "the server is currently unable to handle the request"),
            504 => ("Timeout", "the server was unable to return a response in the time allotted"),
            _ => ("InternalError", "an error on the server (\"injected fault\") has prevented the request from succeeding"),
        };
        let mut e = Self::new(code, reason, message);
        if let Some(secs) = retry_after {
            e = e.details_raw(json!({"retryAfterSeconds": secs}));
            e.retry_after = Some(secs);
        }
        e
    }

    fn details_raw(mut self, details: Value) -> Self {
        self.details = Some(details);
        self
    }

    pub fn to_status(&self) -> Value {
        let mut s = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        });
        if let Some(d) = &self.details {
            s["details"] = d.clone();
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resource::builtins;

    #[test]
    fn not_found_matches_the_real_server() {
        let deploy = builtins()
            .into_iter()
            .find(|r| r.kind == "Deployment")
            .expect("builtin");
        assert_eq!(
            ApiError::not_found(&deploy, "x").to_status(),
            json!({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
                   "message":"deployments.apps \"x\" not found","reason":"NotFound",
                   "details":{"name":"x","group":"apps","kind":"deployments"},"code":404})
        );
    }
}
