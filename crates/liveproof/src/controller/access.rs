//! What the controller writes, asked of the API server before it starts
//! (`SelfSubjectAccessReview`, `kubectl auth can-i`'s request): a write RBAC denies is said at
//! once, naming the permission, instead of a controller that waits for a Lease it may not renew
//! or judges without ever writing a status. The review is `liveproof auth`'s
//! ([`crate::auth::review`]).

use kube::Client;

/// One permission the controller needs: `VERB RESOURCE[/SUBRESOURCE].GROUP` in a namespace
/// (`None`: every namespace).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Permission {
    pub verb: &'static str,
    pub group: &'static str,
    pub resource: &'static str,
    pub subresource: Option<&'static str>,
    pub namespace: Option<String>,
}

impl Permission {
    /// As `kubectl auth can-i` takes it: `patch verifications.liveproof.dev --subresource=status -n apps`.
    pub fn can_i(&self) -> String {
        let mut s = format!("{} {}", self.verb, self.resource);
        if !self.group.is_empty() {
            s.push('.');
            s.push_str(self.group);
        }
        if let Some(sub) = self.subresource {
            s.push_str(&format!(" --subresource={sub}"));
        }
        match &self.namespace {
            Some(ns) => s.push_str(&format!(" -n {ns}")),
            None => s.push_str(" -A"),
        }
        s
    }
}

/// What the controller writes: Verification statuses and Events where it judges (`scope`:
/// its `-n`, else every namespace), and with `--leader-elect` its Lease in `lease_namespace`
/// (kube-lease-manager reads, creates, and takes and renews it with a PATCH).
pub fn needed(scope: Option<&str>, lease_namespace: Option<&str>) -> Vec<Permission> {
    let at = |verb, group, resource, subresource, namespace: Option<&str>| Permission {
        verb,
        group,
        resource,
        subresource,
        namespace: namespace.map(str::to_string),
    };
    let mut all = vec![
        at(
            "patch",
            "liveproof.dev",
            "verifications",
            Some("status"),
            scope,
        ),
        at("create", "events.k8s.io", "events", None, scope),
    ];
    if let Some(ns) = lease_namespace {
        for verb in ["get", "create", "patch"] {
            all.push(at(verb, "coordination.k8s.io", "leases", None, Some(ns)));
        }
    }
    all
}

/// The permissions of `needed` the API server says this identity lacks. `None` when it
/// cannot say (an API server without the authorization API, or one that refuses the review
/// itself): the controller then starts, and a denied write is reported where it happens.
pub async fn missing(client: &Client, needed: &[Permission]) -> Option<Vec<Permission>> {
    let mut missing = Vec::new();
    for p in needed {
        let ask = crate::auth::Ask {
            verb: p.verb.to_string(),
            group: p.group.to_string(),
            resource: p.resource.to_string(),
            subresource: p.subresource.map(str::to_string),
            namespace: p.namespace.clone(),
        };
        match crate::auth::review(client, &ask).await {
            Ok(answer) => {
                if !answer.allowed {
                    missing.push(p.clone());
                }
            }
            Err(e) => {
                tracing::debug!("cannot ask whether the controller may {}: {e}", p.can_i());
                return None;
            }
        }
    }
    Some(missing)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lease_is_asked_for_only_with_leader_election() {
        let plain = needed(None, None);
        assert!(plain.iter().all(|p| p.resource != "leases"));
        assert_eq!(
            plain[0].can_i(),
            "patch verifications.liveproof.dev --subresource=status -A"
        );
        let led = needed(Some("apps"), Some("liveproof"));
        let lease: Vec<String> = led
            .iter()
            .filter(|p| p.resource == "leases")
            .map(Permission::can_i)
            .collect();
        assert_eq!(
            lease,
            [
                "get leases.coordination.k8s.io -n liveproof",
                "create leases.coordination.k8s.io -n liveproof",
                "patch leases.coordination.k8s.io -n liveproof"
            ]
        );
        assert_eq!(led[1].can_i(), "create events.events.k8s.io -n apps");
    }
}
