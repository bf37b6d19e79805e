//! `deploy/verification-crd.yaml`: the CustomResourceDefinition, generated from the types.
//!
//! `LIVEPROOF_BLESS=1 cargo test -p liveproof --lib controller::crd` writes it again.

use kube::CustomResourceExt as _;

use super::Verification;

/// The CRD as `kubectl apply -f` takes it: YAML, after a line saying where it comes from.
pub fn yaml() -> Result<String, serde_norway::Error> {
    let body = serde_norway::to_string(&Verification::crd())?;
    Ok(format!(
        "# Generated from crates/liveproof/src/controller/ (the Verification types): do not edit.\n\
         # LIVEPROOF_BLESS=1 cargo test -p liveproof --lib controller::crd writes it again.\n\
         {body}"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../deploy/verification-crd.yaml"
    );

    /// The CRD in deploy/ is the one the types make: a field added to the spec or the status
    /// is in the file the cluster is given.
    #[test]
    fn the_crd_file_is_the_types() {
        let made = yaml().expect("the CRD serialises");
        if std::env::var_os("LIVEPROOF_BLESS").is_some() {
            std::fs::write(FILE, &made).expect("write the CRD");
        }
        let file = std::fs::read_to_string(FILE).unwrap_or_default();
        assert!(
            file == made,
            "deploy/verification-crd.yaml is not what the Verification types make; write it \
             again with:\n  LIVEPROOF_BLESS=1 cargo test -p liveproof --lib controller::crd"
        );
    }
}
