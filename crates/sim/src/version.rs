//! The Kubernetes release the simulator answers as: `/version`'s `gitVersion` and the OpenAPI
//! documents' `info.version`. A leaf, so the server and the OpenAPI documents read it without
//! importing each other.

/// The `gitVersion` `/version` reports.
pub const SERVER_VERSION: &str = "v1.33.0";
