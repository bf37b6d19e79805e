//! The registry's `WWW-Authenticate` challenge (distribution token auth:
//! `Bearer realm="…",service="…",scope="…"`, or `Basic realm="…"`).

use std::collections::BTreeMap;

/// How a registry asks to be authenticated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Challenge {
    Bearer {
        realm: String,
        service: Option<String>,
        scope: Option<String>,
    },
    Basic,
}

/// Parses the first challenge we can answer; `None` for anything else.
pub(crate) fn parse_challenge(header: &str) -> Option<Challenge> {
    let header = header.trim();
    let (scheme, rest) = header
        .split_once(char::is_whitespace)
        .unwrap_or((header, ""));
    if scheme.eq_ignore_ascii_case("basic") {
        return Some(Challenge::Basic);
    }
    if !scheme.eq_ignore_ascii_case("bearer") {
        return None;
    }
    let params = parse_params(rest);
    let realm = params.get("realm")?.clone();
    Some(Challenge::Bearer {
        realm,
        service: params.get("service").cloned(),
        scope: params.get("scope").cloned(),
    })
}

/// `key="quoted, value",key2=token` → map; quoted values may hold commas and `\"`.
fn parse_params(s: &str) -> BTreeMap<String, String> {
    let mut params = BTreeMap::new();
    let mut chars = s.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| *c == ',' || c.is_whitespace()) {
            chars.next();
        }
        let mut key = String::new();
        while let Some(&c) = chars.peek() {
            if c == '=' || c == ',' {
                break;
            }
            key.push(c);
            chars.next();
        }
        if key.is_empty() {
            break;
        }
        let mut value = String::new();
        if chars.peek() == Some(&'=') {
            chars.next();
            if chars.peek() == Some(&'"') {
                chars.next();
                while let Some(c) = chars.next() {
                    match c {
                        '\\' => {
                            if let Some(escaped) = chars.next() {
                                value.push(escaped);
                            }
                        }
                        '"' => break,
                        c => value.push(c),
                    }
                }
            } else {
                while let Some(&c) = chars.peek() {
                    if c == ',' {
                        break;
                    }
                    value.push(c);
                    chars.next();
                }
            }
        }
        params.insert(key.trim().to_ascii_lowercase(), value.trim().to_owned());
    }
    params
}

/// The token service's answer: `token`, or the OAuth2 `access_token`.
#[derive(Debug, serde::Deserialize)]
pub(crate) struct TokenResponse {
    pub token: Option<String>,
    pub access_token: Option<String>,
}

impl TokenResponse {
    pub fn into_token(self) -> Option<String> {
        self.token
            .or(self.access_token)
            .filter(|token| !token.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn docker_hub_style_bearer_challenge() {
        let header = r#"Bearer realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:library/nginx:pull""#;
        assert_eq!(
            parse_challenge(header),
            Some(Challenge::Bearer {
                realm: "https://auth.docker.io/token".into(),
                service: Some("registry.docker.io".into()),
                scope: Some("repository:library/nginx:pull".into()),
            })
        );
    }

    #[test]
    fn quoted_commas_and_missing_fields() {
        let header = r#"bearer realm="https://r.io/t", scope="repository:a:pull,push",error="insufficient_scope""#;
        assert_eq!(
            parse_challenge(header),
            Some(Challenge::Bearer {
                realm: "https://r.io/t".into(),
                service: None,
                scope: Some("repository:a:pull,push".into()),
            })
        );
        assert_eq!(
            parse_challenge(r#"Basic realm="liveproof""#),
            Some(Challenge::Basic)
        );
        assert_eq!(
            parse_challenge("Bearer service=x"),
            None,
            "a bearer challenge needs a realm"
        );
        assert_eq!(parse_challenge("Negotiate"), None);
        assert_eq!(parse_challenge(""), None);
    }
}
