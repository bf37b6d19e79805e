//! What can go wrong talking to a registry. Every message names the reference (or, for
//! credential loading, the registry or Secret); none ever carries a credential.

/// An error resolving a reference or loading credentials.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    #[error("{reference}: cannot reach registry {registry}: {source}")]
    Unreachable {
        reference: String,
        registry: String,
        #[source]
        source: reqwest::Error,
    },
    #[error("{reference}: registry {registry} refused access to {repository}\nhint: {hint}")]
    Unauthorized {
        reference: String,
        registry: String,
        repository: String,
        hint: String,
    },
    #[error("{reference}: no such manifest (the tag or repository does not exist)")]
    NotFound { reference: String },
    #[error("{reference}: malformed registry response: {reason}")]
    Malformed { reference: String, reason: String },
    #[error(
        "{reference}: the registry's Docker-Content-Digest {header} does not match the body it \
         served ({body}); not trusting either"
    )]
    DigestMismatch {
        reference: String,
        header: String,
        body: String,
    },
    #[error("{reference}: the manifest is larger than the {limit}-byte limit")]
    TooLarge { reference: String, limit: usize },
    #[error("{reference}: registry answered HTTP {status}")]
    Http { reference: String, status: u16 },
    #[error("registry credentials{}: {reason}", for_registry(registry))]
    Credentials { registry: String, reason: String },
    #[error("cannot set up the registry client: {reason}")]
    Setup { reason: String },
}

fn for_registry(registry: &str) -> String {
    if registry.is_empty() {
        String::new()
    } else {
        format!(" for {registry}")
    }
}

impl RegistryError {
    /// The reference this error is about, when it is about one.
    pub fn reference(&self) -> Option<&str> {
        match self {
            RegistryError::Unreachable { reference, .. }
            | RegistryError::Unauthorized { reference, .. }
            | RegistryError::NotFound { reference }
            | RegistryError::Malformed { reference, .. }
            | RegistryError::DigestMismatch { reference, .. }
            | RegistryError::TooLarge { reference, .. }
            | RegistryError::Http { reference, .. } => Some(reference),
            RegistryError::Credentials { .. } | RegistryError::Setup { .. } => None,
        }
    }
}
