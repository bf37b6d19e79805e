use sha2::{Digest, Sha256};

/// Helm refuses release names longer than this; helm-controller shortens past it.
const MAX_RELEASE_NAME: usize = 53;
const SHORT_HASH: usize = 12;

/// The Helm release name Flux's helm-controller uses for a HelmRelease.
///
/// `spec.releaseName` if set, else `<spec.targetNamespace>-<metadata.name>` if a target
/// namespace is set, else `metadata.name` (api/v2 `HelmRelease.GetReleaseName`). helm-controller
/// installs and upgrades under `ShortenName` of that (fluxcd/helm-controller
/// `internal/release/name.go`, called from `internal/action/install.go` and `upgrade.go`): a name
/// over 53 characters becomes its first 40 characters, `-`, and the first 12 hex digits of the
/// SHA-256 of the whole name.
pub fn helm_controller_release_name(
    name: &str,
    target_namespace: Option<&str>,
    release_name: Option<&str>,
) -> String {
    let full = match (release_name, target_namespace) {
        (Some(release_name), _) if !release_name.is_empty() => release_name.to_owned(),
        (_, Some(namespace)) if !namespace.is_empty() => format!("{namespace}-{name}"),
        _ => name.to_owned(),
    };
    shorten(full)
}

fn shorten(name: String) -> String {
    if name.len() <= MAX_RELEASE_NAME {
        return name;
    }
    let digest = Sha256::digest(name.as_bytes());
    let hex: String = digest
        .iter()
        .take(SHORT_HASH / 2)
        .map(|byte| format!("{byte:02x}"))
        .collect();
    // Go slices bytes; Kubernetes names are ASCII, but never split a character here.
    let mut keep = MAX_RELEASE_NAME - (SHORT_HASH + 1);
    while !name.is_char_boundary(keep) {
        keep -= 1;
    }
    format!("{}-{hex}", &name[..keep])
}

#[cfg(test)]
mod tests {
    use super::*;

    // Expected values copied from fluxcd/helm-controller internal/release/name_test.go
    // (TestShortName), so our shortening is checked against theirs, not against itself.
    #[test]
    fn long_names_are_shortened_like_helm_controller() {
        assert_eq!(
            helm_controller_release_name(
                "release-name-with-very-long-name-which-is-longer-than-53-characters",
                None,
                None
            ),
            "release-name-with-very-long-name-which-i-788ca0d0d7b0"
        );
        assert_eq!(
            helm_controller_release_name(
                "x",
                None,
                Some("another-release-name-with-very-long-name-which-is-longer-than-53-characters")
            ),
            "another-release-name-with-very-long-name-7e72150d5a36"
        );
    }

    #[test]
    fn exactly_53_is_kept_and_54_is_shortened() {
        let fifty_three = "a".repeat(53);
        assert_eq!(
            helm_controller_release_name(&fifty_three, None, None),
            fifty_three
        );
        let shortened = helm_controller_release_name(&"a".repeat(54), None, None);
        assert_eq!(shortened.len(), 53);
        assert!(shortened.starts_with(&format!("{}-", "a".repeat(40))));
    }

    #[test]
    fn target_namespace_prefixes_and_release_name_wins() {
        assert_eq!(
            helm_controller_release_name("inventory", None, None),
            "inventory"
        );
        assert_eq!(
            helm_controller_release_name("inventory", Some("apps"), None),
            "apps-inventory"
        );
        assert_eq!(
            helm_controller_release_name("inventory", Some("apps"), Some("inv")),
            "inv"
        );
        // Empty strings are unset, as in Go.
        assert_eq!(
            helm_controller_release_name("inventory", Some(""), Some("")),
            "inventory"
        );
    }

    #[test]
    fn a_long_target_namespace_composition_is_shortened_as_a_whole() {
        let name = helm_controller_release_name(
            "inventory-service-with-a-long-name",
            Some("team-payments-production-eu-west"),
            None,
        );
        assert_eq!(name.len(), 53);
        assert!(name.starts_with("team-payments-production-eu-west-invento-"));
    }

    #[test]
    fn multibyte_names_do_not_panic() {
        let name = helm_controller_release_name(&"é".repeat(40), None, None);
        assert!(name.len() <= 53);
    }
}
