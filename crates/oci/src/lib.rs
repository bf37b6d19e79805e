//! Image references and digests, one model for the whole workspace: the evidence checks read
//! pods' `imageID`s with it and the registry client resolves tags with it. Pure: no I/O.

pub mod platform;
pub mod reference;

pub use platform::Platform;
pub use reference::{image_id_digest, Digest, DigestError, Reference, ReferenceError};
