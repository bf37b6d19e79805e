//! The user's expectations (`--image`, `--expect-env`, `--expect-secret-ref`) held against a
//! pod spec: the workload's template (`spec_readback`) or a running pod (`pod_spec`).
//! Presence only: values are never read, so they can never be printed. And `--expect` held
//! against text shown with what looks like a credential redacted ([`text_match`]).

use crate::pod::{Pod, PodSpec};

use crate::change::{ImageRef, ManifestExpectation, SecretRefExpectation};
use crate::digest::{image_id_digest, DigestMatch};
use crate::{Change, Observed, Status};

/// What a pod spec is read from: a workload's template, or a running pod (whose container
/// statuses say which digest each container actually runs).
#[derive(Clone, Copy)]
pub enum Subject<'a> {
    Template {
        observed: &'a Observed,
    },
    Pod {
        pod: &'a Pod,
        observed: &'a Observed,
    },
}

/// One expectation's outcome against one pod spec.
pub struct Outcome {
    pub status: Status,
    pub expected: String,
    pub observed: String,
}

pub fn evaluate(spec: &PodSpec, change: &Change, subject: Subject) -> Vec<Outcome> {
    let mut findings = Vec::new();
    // `--image` is matched per container by repository: with several targets, an image for
    // another workload's repository says nothing about this one. Only when no container runs
    // any of the given repositories is that itself the failure.
    let runs_repository = |want: &ImageRef| {
        spec.containers.iter().any(|c| {
            c.image
                .as_deref()
                .and_then(ImageRef::parse)
                .is_some_and(|r| r.repository == want.repository)
        })
    };
    let applicable: Vec<_> = change
        .images
        .iter()
        .filter(|w| runs_repository(&w.image))
        .collect();
    if applicable.is_empty() {
        if let Some(first) = change.images.first() {
            let mut missing = image(spec, &first.image, &first.given, subject);
            if change.images.len() > 1 {
                let all: Vec<&str> = change.images.iter().map(|w| w.given.as_str()).collect();
                missing.expected = format!("one of the images {}", all.join(", "));
            }
            findings.push(missing);
        }
    }
    for want in applicable {
        findings.push(image(spec, &want.image, &want.given, subject));
    }
    for name in &change.env {
        findings.push(env(spec, name));
    }
    for want in &change.secret_refs {
        findings.push(secret_ref(spec, want));
    }
    findings
}

fn image(spec: &PodSpec, want: &ImageRef, given: &str, subject: Subject) -> Outcome {
    let same_repo: Vec<(&str, &str)> = spec
        .containers
        .iter()
        .filter_map(|c| {
            let image = c.image.as_deref()?;
            let parsed = ImageRef::parse(image)?;
            (parsed.repository == want.repository).then_some((c.name.as_str(), image))
        })
        .collect();
    let expected = format!("image {given}");
    // An image that is no reference (one the parser does not read) may still be the
    // repository: whether the template runs it cannot be told, which is unknown, not a fail.
    let unreadable: Vec<String> = spec
        .containers
        .iter()
        .filter_map(|c| {
            let image = c.image.as_deref()?;
            ImageRef::parse(image)
                .is_none()
                .then(|| format!("{}={image}", c.name))
        })
        .collect();
    if same_repo.is_empty() && !unreadable.is_empty() {
        return Outcome {
            status: Status::Unknown,
            expected,
            observed: format!(
                "no container runs {} readably ({} is no image reference liveproof reads)",
                want.repository,
                unreadable.join(", ")
            ),
        };
    }
    if same_repo.is_empty() {
        let all: Vec<String> = spec
            .containers
            .iter()
            .map(|c| format!("{}={}", c.name, c.image.as_deref().unwrap_or("<none>")))
            .collect();
        return Outcome {
            status: Status::Fail,
            expected,
            observed: format!("no container runs {} ({})", want.repository, all.join(", ")),
        };
    }
    let judged: Vec<(Status, String)> = same_repo
        .iter()
        .map(|(name, image)| container_image(name, image, want, subject))
        .collect();
    let status = worst_of(judged.iter().map(|(s, _)| *s));
    Outcome {
        status,
        expected,
        observed: judged
            .into_iter()
            .map(|(_, o)| o)
            .collect::<Vec<_>>()
            .join(", "),
    }
}

/// One container of the expected repository against `--image`: by tag, or by digest (the
/// template's own digest; with only a tag there, the digest each running pod records).
fn container_image(name: &str, image: &str, want: &ImageRef, subject: Subject) -> (Status, String) {
    let runs = format!("{name} runs {image}");
    let Some(parsed) = ImageRef::parse(image) else {
        return (Status::Fail, runs);
    };
    let Some(digest) = &want.digest else {
        let status = if want.satisfied_by(&parsed) {
            Status::Pass
        } else {
            Status::Fail
        };
        return (status, runs);
    };
    if let (Some(w), Some(t)) = (&want.tag, &parsed.tag) {
        if w != t {
            return (Status::Fail, runs);
        }
    }
    let observed = match subject {
        Subject::Template { observed } | Subject::Pod { observed, .. } => observed,
    };
    let resolved = want.digest_key().and_then(|k| observed.tags.get(&k));
    if let Some(named) = &parsed.digest {
        // Pinned to the index given, or to one of its platform entries: the same build. Which
        // entries an index has is the registry's to say: unasked, another digest is unknown.
        if named == digest {
            return (Status::Pass, runs);
        }
        return match resolved {
            Some(Ok(index)) if index.platforms.iter().any(|(_, d)| d == named) => {
                (Status::Pass, runs)
            }
            Some(Ok(_)) => (Status::Fail, runs),
            Some(Err(why)) => (
                Status::Unknown,
                format!("{runs}; whether that is an entry of {} is unknown: the registry said {why}", super::digest::short(digest)),
            ),
            None => (
                Status::Unknown,
                format!("{runs}; whether that is an entry of {} is unknown: the registry was not asked (--no-registry?)", super::digest::short(digest)),
            ),
        };
    }
    let Subject::Pod { pod, .. } = subject else {
        // A tag in the template says nothing about the digest: neither proof nor doubt here;
        // the digests the running pods record decide (pod_spec).
        return (
            Status::Skip,
            format!(
                "{runs}: a tag, which says nothing of digest {} (pod_spec compares the digests the running pods record)",
                super::digest::short(digest)
            ),
        );
    };
    let Some(status) = super::pods::container_statuses(pod)
        .iter()
        .find(|s| s.name == name)
    else {
        return (Status::Unknown, format!("{runs}; no container status yet"));
    };
    let Some(running) = image_id_digest(&status.image_id) else {
        return (
            Status::Unknown,
            format!(
                "{runs}; its imageID `{}` holds no repo digest",
                status.image_id
            ),
        );
    };
    let short = super::digest::short(&running);
    if &running == digest {
        return (Status::Pass, format!("{runs} at {short}"));
    }
    // Runtimes record the index digest or the platform entry's: either is the expected image.
    match resolved {
        Some(Ok(index)) => match index.judge(&running, super::digest::node_platform(observed, pod).as_ref()) {
            DigestMatch::Current { via } => (Status::Pass, format!("{runs} at {short} ({via} of {})", super::digest::short(digest))),
            DigestMatch::Stale { .. } => (Status::Fail, format!("{runs} at {short}")),
            DigestMatch::Unknown { why } => (Status::Unknown, format!("{runs} at {short}: {why}")),
        },
        Some(Err(why)) => (
            Status::Unknown,
            format!("{runs} at {short}; whether that is an entry of {} is unknown: the registry said {why}", super::digest::short(digest)),
        ),
        None => (
            Status::Unknown,
            format!("{runs} at {short}; whether that is an entry of {} is unknown: the registry was not asked (--no-registry?)", super::digest::short(digest)),
        ),
    }
}

fn env(spec: &PodSpec, name: &str) -> Outcome {
    let setters: Vec<&str> = spec
        .containers
        .iter()
        .filter(|c| c.env.iter().flatten().any(|e| e.name == name))
        .map(|c| c.name.as_str())
        .collect();
    let imports: Vec<String> = spec
        .containers
        .iter()
        .flat_map(|c| c.env_from.iter().flatten())
        .filter_map(|from| {
            from.secret_ref
                .as_ref()
                .map(|s| format!("secret {}", s.name))
                .or_else(|| {
                    from.config_map_ref
                        .as_ref()
                        .map(|c| format!("configmap {}", c.name))
                })
        })
        .collect();
    let expected = format!("env {name} defined");
    if !setters.is_empty() {
        return Outcome {
            status: Status::Pass,
            expected,
            observed: format!("{name} set in {}", setters.join(", ")),
        };
    }
    if !imports.is_empty() {
        // envFrom imports every key of its source; whether it holds NAME needs that source read.
        return Outcome {
            status: Status::Unknown,
            expected,
            observed: format!(
                "{name} not in env; may come from envFrom {}",
                imports.join(", ")
            ),
        };
    }
    Outcome {
        status: Status::Fail,
        expected,
        observed: format!("{name} not set in any container"),
    }
}

fn secret_ref(spec: &PodSpec, want: &SecretRefExpectation) -> Outcome {
    let key_matches = |key: &str| want.key.as_deref().is_none_or(|k| k == key);
    let mut exact: Vec<String> = Vec::new();
    let mut whole_secret: Vec<String> = Vec::new();
    for c in &spec.containers {
        for e in c.env.iter().flatten() {
            let Some(r) = e
                .value_from
                .as_ref()
                .and_then(|v| v.secret_key_ref.as_ref())
            else {
                continue;
            };
            if r.name == want.secret && key_matches(&r.key) {
                exact.push(format!(
                    "{} env {} ← secretKeyRef {}/{}",
                    c.name, e.name, r.name, r.key
                ));
            }
        }
        for from in c.env_from.iter().flatten() {
            if from
                .secret_ref
                .as_ref()
                .is_some_and(|s| s.name == want.secret)
            {
                whole_secret.push(format!("{} envFrom secret {}", c.name, want.secret));
            }
        }
    }
    for v in spec.volumes.iter().flatten() {
        let mut sources: Vec<(
            Option<&String>,
            Option<&Vec<k8s_openapi::api::core::v1::KeyToPath>>,
        )> = Vec::new();
        if let Some(s) = &v.secret {
            sources.push((s.secret_name.as_ref(), s.items.as_ref()));
        }
        for p in v.projected.iter().flat_map(|p| p.sources.iter().flatten()) {
            if let Some(s) = &p.secret {
                sources.push((Some(&s.name), s.items.as_ref()));
            }
        }
        for (name, items) in sources {
            if name.map(String::as_str) != Some(want.secret.as_str()) {
                continue;
            }
            match items {
                Some(items) if items.iter().any(|i| key_matches(&i.key)) => {
                    exact.push(format!("volume {} mounts secret {}", v.name, want.secret));
                }
                Some(_) => {}
                None => {
                    whole_secret.push(format!("volume {} mounts secret {}", v.name, want.secret))
                }
            }
        }
    }
    let expected = format!("reference to secret {want}");
    if !exact.is_empty() || (want.key.is_none() && !whole_secret.is_empty()) {
        exact.extend(whole_secret);
        return Outcome {
            status: Status::Pass,
            expected,
            observed: exact.join(", "),
        };
    }
    if !whole_secret.is_empty() {
        // The whole Secret is imported; whether it holds KEY needs the Secret read, which we don't.
        return Outcome {
            status: Status::Unknown,
            expected,
            observed: format!("{}; key not named", whole_secret.join(", ")),
        };
    }
    Outcome {
        status: Status::Fail,
        expected,
        observed: format!("no container or volume references secret {want}"),
    }
}

/// Where an `--expect` stands against a text as liveproof shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextMatch {
    /// In the text as shown.
    Found,
    /// Not in the text, and nothing in it is hidden that it could be in.
    Missing,
    /// Not in the text as shown, which has values that look like credentials redacted: it
    /// may be in one of them, which no expectation is matched against.
    Hidden,
}

/// Whether `expectation` is in `shown`, a text whose values that look like credentials were
/// redacted (`credentials`: where, never what). Decided on the shown text alone, so no answer
/// depends on a hidden value: a regex or text that would match only inside one is [`Hidden`],
/// as is every other that is not found, the same answer whether the value holds it or not (an
/// answer that differed would be a yes/no oracle over the value, and a prefix or character
/// class probe would read it out a character at a time).
///
/// [`Hidden`]: TextMatch::Hidden
pub fn text_match(expectation: &ManifestExpectation, shown: &str, credentials: bool) -> TextMatch {
    if expectation.is_match(shown) {
        TextMatch::Found
    } else if credentials {
        TextMatch::Hidden
    } else {
        TextMatch::Missing
    }
}

/// Up to four of `fields`, and how many more: where credentials were redacted, for a detail.
pub fn some_fields<T: std::fmt::Display>(fields: &[T]) -> String {
    const SHOWN: usize = 4;
    let mut named: Vec<String> = fields.iter().take(SHOWN).map(ToString::to_string).collect();
    if fields.len() > SHOWN {
        named.push(format!("{} more", fields.len() - SHOWN));
    }
    named.join(", ")
}

/// Folds several findings into one status: any fail fails, else any unknown is unknown.
pub fn worst(findings: &[Outcome]) -> Status {
    worst_of(findings.iter().map(|f| f.status))
}

/// Fail over unknown over pass; skip only when every part was skipped (a part that could not
/// be judged here, and nothing else was asked).
fn worst_of(statuses: impl Iterator<Item = Status>) -> Status {
    let statuses: Vec<Status> = statuses.collect();
    if statuses.contains(&Status::Fail) {
        Status::Fail
    } else if statuses.contains(&Status::Unknown) {
        Status::Unknown
    } else if !statuses.is_empty() && statuses.iter().all(|s| *s == Status::Skip) {
        Status::Skip
    } else {
        Status::Pass
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pod::Container;

    fn spec(images: &[&str]) -> PodSpec {
        PodSpec {
            containers: images
                .iter()
                .enumerate()
                .map(|(i, image)| Container {
                    name: format!("c{i}"),
                    image: Some((*image).to_string()),
                    ..Container::default()
                })
                .collect(),
            ..PodSpec::default()
        }
    }

    /// A container whose image the parser does not read may be the repository asked about:
    /// unknown, never a fail (a false not_live is a rollback of what may be live).
    #[test]
    fn an_image_the_parser_does_not_read_is_unknown_not_another_repository() {
        let observed = Observed::default();
        let subject = Subject::Template {
            observed: &observed,
        };
        let want = ImageRef::parse("ghcr.io/acme/inventory:1.4.0").expect("a reference");
        let sha512 = format!("ghcr.io/acme/inventory:1.4.0@sha512:{}", "a".repeat(128));
        let found = image(&spec(&["sidecar:1", &sha512]), &want, "inv", subject);
        assert_eq!(found.status, Status::Unknown, "{}", found.observed);
        // With every image read, another repository is a fail, as before.
        let found = image(&spec(&["sidecar:1"]), &want, "inv", subject);
        assert_eq!(found.status, Status::Fail, "{}", found.observed);
    }
}
