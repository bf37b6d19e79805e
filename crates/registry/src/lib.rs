//! The registry client: what does an image tag resolve to now, and does a pod run it?
//!
//! Seed 001's story: manifests pin `:latest`, a rebuild leaves the pod template byte-identical,
//! and the cluster keeps serving the previous build. The only evidence is to compare the digest
//! each pod runs (its container status `imageID`, see [`image_id_digest`]) with what its tag
//! resolves to now ([`Client::resolve`]), for the node's platform ([`Resolved::judge`]).
//!
//! - [`reference`] (the `liveproof-oci` crate, shared with the evidence model) and [`manifest`]
//!   are pure: parsing, normalising, index entries, judging.
//! - [`credentials`] reads docker's config.json, credential helpers and pull Secrets; secret
//!   values are redacted in the type.
//! - credential helpers run within a deadline and an output cap (`liveproof-process`).
//! - [`Client`] speaks the OCI distribution API (HEAD/GET manifests, token and Basic auth),
//!   resolving each (registry, repository, tag) once per run with bounded concurrency.

mod auth;
mod client;
pub mod credentials;
mod error;
pub mod manifest;
pub use liveproof_oci::reference;

pub use client::{Client, ClientOptions, ResolveKey, MAX_MANIFEST_BYTES};
pub use credentials::{dockerconfigjson_secret, Credentials, DockerConfig, Secret};
pub use error::RegistryError;
pub use manifest::{ManifestKind, Platform, Resolved};
pub use reference::{image_id_digest, Digest, DigestError, Reference, ReferenceError};
