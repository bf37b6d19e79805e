//! Values redacted in their type (uv's `uv-redacted`): whatever formats one — an error, a log
//! line, a report — shows it masked, so no message can leak it by accident.
//!
//! - [`DisplaySafeUrl`]: a URL (the API server's, a `--version-url`, a proxy's, a registry's
//!   token realm) whose `Display` and `Debug` mask the userinfo, every query value and the
//!   fragment. The URL itself is reached only through [`DisplaySafeUrl::expose`], to send a
//!   request.
//! - [`mask_urls`]: the same masking over free text, for what other libraries print (a log
//!   line of the HTTP stack quoting the URL it requests).
//! - [`parse`]: parse errors told without the values they quote.
//! - [`credential`]: what looks like a credential outside a Secret (URL userinfo, `password=`,
//!   keys named like secrets), the one classifier every shown manifest goes through.
//! - [`mask_credentials`]: credentials masked in text a server sent back (an error page that
//!   echoes the `Authorization` header it was sent).

pub mod credential;
pub mod parse;

use std::borrow::Cow;
use std::fmt;

/// A URL that formats redacted: `https://u:p@h/v?token=t#f` shows as
/// `https://u:***@h/v?token=***#***`. A userinfo with no password (usually a token) is masked
/// whole (`https://***@h/`). Scheme, host, port, path and query keys stay readable: they say
/// where, and hold no credential.
///
/// Hold this, not the string, wherever a URL may end up in front of a person.
#[derive(Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DisplaySafeUrl {
    raw: String,
}

impl DisplaySafeUrl {
    pub fn new(url: impl Into<String>) -> DisplaySafeUrl {
        DisplaySafeUrl { raw: url.into() }
    }

    /// The URL as given, credentials and all: to send a request to, never to format.
    pub fn expose(&self) -> &str {
        &self.raw
    }

    /// The same URL without its query and fragment: for a URL whose query is never sent (the
    /// API server's: kube requests paths under it), which then has no business being shown.
    pub fn without_query(&self) -> DisplaySafeUrl {
        let end = self.raw.find(['?', '#']).unwrap_or(self.raw.len());
        DisplaySafeUrl::new(&self.raw[..end])
    }
}

impl From<&str> for DisplaySafeUrl {
    fn from(url: &str) -> DisplaySafeUrl {
        DisplaySafeUrl::new(url)
    }
}

impl From<String> for DisplaySafeUrl {
    fn from(url: String) -> DisplaySafeUrl {
        DisplaySafeUrl::new(url)
    }
}

impl fmt::Display for DisplaySafeUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_masked(&self.raw, f)
    }
}

impl fmt::Debug for DisplaySafeUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("DisplaySafeUrl(")?;
        write_masked(&self.raw, f)?;
        f.write_str(")")
    }
}

/// `url` masked, written to `out`.
fn write_masked(url: &str, out: &mut dyn fmt::Write) -> fmt::Result {
    let Some(scheme_end) = url.find("://") else {
        // Not `scheme://…`: there is no authority to find the userinfo of
        // (`mailto:bob:s3cret@x`). Show only what comes before anything that could start one.
        let end = url.find([':', '@', '?', '#']).unwrap_or(url.len());
        out.write_str(&url[..end])?;
        return if end < url.len() {
            out.write_str("…")
        } else {
            Ok(())
        };
    };
    let (before_fragment, fragment) = match url.split_once('#') {
        Some((before, _)) => (before, true),
        None => (url, false),
    };
    let (before_query, query) = match before_fragment.split_once('?') {
        Some((before, query)) => (before, Some(query)),
        None => (before_fragment, None),
    };
    out.write_str(&before_query[..scheme_end + 3])?;
    let rest = &before_query[scheme_end + 3..];
    let authority_end = rest.find('/').unwrap_or(rest.len());
    let (authority, path) = rest.split_at(authority_end);
    match authority.rsplit_once('@') {
        Some((userinfo, host)) => match userinfo.split_once(':') {
            Some((user, _)) => write!(out, "{user}:***@{host}")?,
            None => write!(out, "***@{host}")?,
        },
        None => out.write_str(authority)?,
    }
    out.write_str(path)?;
    if let Some(query) = query {
        out.write_char('?')?;
        for (i, pair) in query.split('&').enumerate() {
            if i > 0 {
                out.write_char('&')?;
            }
            match pair.split_once('=') {
                Some((key, _)) => write!(out, "{key}=***")?,
                None if pair.is_empty() => {}
                // A bare word can be a token itself (`?abc123`).
                None => out.write_str("***")?,
            }
        }
    }
    if fragment {
        out.write_str("#***")?;
    }
    Ok(())
}

/// Every `scheme://…` URL in `text` masked as [`DisplaySafeUrl`] shows it; the rest as it is.
/// A URL ends at whitespace, a quote, or a closing bracket (`(http://…)`, `"http://…"`).
pub fn mask_urls(text: &str) -> Cow<'_, str> {
    if !text.contains("://") {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        let start = rest[..at]
            .char_indices()
            .rev()
            .take_while(|(_, c)| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
            .last()
            .map_or(at, |(i, _)| i);
        let end = rest[at..]
            .find(|c: char| {
                c.is_whitespace()
                    || matches!(
                        c,
                        '"' | '\'' | '`' | '<' | '>' | '(' | ')' | '[' | ']' | '{' | '}' | '\\'
                    )
            })
            .map_or(rest.len(), |i| at + i);
        out.push_str(&rest[..start]);
        // Writing to a String cannot fail.
        let _ = write_masked(&rest[start..end], &mut out);
        rest = &rest[end..];
    }
    out.push_str(rest);
    Cow::Owned(out)
}

/// What a masked credential shows as.
pub const MASK: &str = "***";

/// Credentials shorter than this are not looked for: masking every `ab` in a page would
/// garble it, and a credential that short is no secret anyway.
const MIN_SECRET: usize = 4;

/// `text` with every one of `secrets` masked (as it is, and as it looks inside a JSON string),
/// and, whatever is known, the credential after an HTTP auth scheme (`Bearer …`, `Basic …`):
/// what a server sent back (an error page echoing the request's `Authorization` header) is
/// shown only so.
pub fn mask_credentials<'a>(text: &'a str, secrets: &[&str]) -> Cow<'a, str> {
    let mut out = Cow::Borrowed(text);
    for secret in secrets.iter().filter(|s| s.len() >= MIN_SECRET) {
        let escaped = serde_json::to_string(secret).unwrap_or_default();
        let escaped = escaped.trim_matches('"');
        for form in [*secret, escaped] {
            if !form.is_empty() && out.contains(form) {
                out = Cow::Owned(out.replace(form, MASK));
            }
        }
    }
    match mask_auth_schemes(&out) {
        Cow::Borrowed(_) => out,
        Cow::Owned(masked) => Cow::Owned(masked),
    }
}

/// The least a credential after an auth scheme is, to be masked whatever is known: a token is
/// longer than a word.
const MIN_SCHEME_CREDENTIAL: usize = 8;

/// The credential after `Bearer` or `Basic` (any case, then spaces) masked: RFC 7235's
/// token68 characters, from [`MIN_SCHEME_CREDENTIAL`] of them, not all lowercase letters.
fn mask_auth_schemes(text: &str) -> Cow<'_, str> {
    let lower = text.to_ascii_lowercase();
    let mut cuts: Vec<(usize, usize)> = Vec::new();
    for scheme in ["bearer", "basic"] {
        let mut from = 0;
        while let Some(at) = lower[from..].find(scheme) {
            let after = from + at + scheme.len();
            from = after;
            // A word of its own: `Bearer`, not `unbearerish`.
            let starts_word = lower[..after - scheme.len()]
                .chars()
                .next_back()
                .is_none_or(|c| !c.is_ascii_alphanumeric());
            let spaces = text[after..]
                .bytes()
                .take_while(|b| *b == b' ' || *b == b'\t')
                .count();
            if !starts_word || spaces == 0 {
                continue;
            }
            let start = after + spaces;
            let len = text[start..]
                .bytes()
                .take_while(|b| b.is_ascii_alphanumeric() || b"-._~+/=".contains(b))
                .count();
            // A credential, not a word: `Basic authentication failed` is left as it is.
            let credential = &text[start..start + len];
            let is_word = credential.bytes().all(|b| b.is_ascii_lowercase());
            if len >= MIN_SCHEME_CREDENTIAL && !is_word {
                cuts.push((start, start + len));
            }
        }
    }
    if cuts.is_empty() {
        return Cow::Borrowed(text);
    }
    cuts.sort_unstable();
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (start, end) in cuts {
        if start < at {
            continue;
        }
        out.push_str(&text[at..start]);
        out.push_str(MASK);
        at = end;
    }
    out.push_str(&text[at..]);
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(url: &str) -> String {
        DisplaySafeUrl::new(url).to_string()
    }

    #[test]
    fn passwords_tokens_and_query_values_are_never_shown() {
        assert_eq!(
            shown("https://bob:s3cret@h.example/v"),
            "https://bob:***@h.example/v"
        );
        assert_eq!(
            shown("https://tok3n@h.example/v?x=a@b"),
            "https://***@h.example/v?x=***"
        );
        assert_eq!(shown("http://h:8080/v?a=b@c"), "http://h:8080/v?a=***");
        assert_eq!(
            shown("https://h.example/version?token=s3cret&v=2#access_token=s3cret"),
            "https://h.example/version?token=***&v=***#***"
        );
        assert_eq!(
            shown("https://h.example/v?s3cret"),
            "https://h.example/v?***"
        );
        assert_eq!(shown("https://h.example:6443"), "https://h.example:6443");
        assert_eq!(shown("mailto:bob:s3cret@x"), "mailto…");
        assert_eq!(shown("not a url"), "not a url");
    }

    #[test]
    fn debug_is_as_safe_as_display() {
        let url = DisplaySafeUrl::new("http://u:s3cret@h/?t=s3cret");
        assert_eq!(format!("{url:?}"), "DisplaySafeUrl(http://u:***@h/?t=***)");
        assert_eq!(url.expose(), "http://u:s3cret@h/?t=s3cret");
        assert_eq!(url.without_query().to_string(), "http://u:***@h/");
    }

    #[test]
    fn urls_in_text_are_masked_and_the_rest_kept() {
        let line = "DEBUG HTTP{http.method=GET http.url=http://user:canarypass@127.0.0.1:1/apis?token=q otel.name=\"get\"}: requesting";
        assert_eq!(
            mask_urls(line),
            "DEBUG HTTP{http.method=GET http.url=http://user:***@127.0.0.1:1/apis?token=*** otel.name=\"get\"}: requesting"
        );
        assert_eq!(
            mask_urls("error sending request for url (https://a:b@h/x?k=v): refused"),
            "error sending request for url (https://a:***@h/x?k=***): refused"
        );
        assert_eq!(
            mask_urls("url=\"socks5h://p:w@proxy:1080\" and http://plain/"),
            "url=\"socks5h://p:***@proxy:1080\" and http://plain/"
        );
        assert!(matches!(mask_urls("no url here"), Cow::Borrowed(_)));
    }

    #[test]
    fn credentials_a_server_echoes_are_masked() {
        let page = "<html><pre>Authorization: Bearer eyJhbGciOi.canary-token_7d3e</pre>\n\
                    <p>basic   dXNlcjpwYXNz and hunter2-pass and \"quo\\\"te\"</p></html>";
        let shown = mask_credentials(page, &["hunter2-pass", "quo\"te", "ab"]);
        assert_eq!(
            shown,
            "<html><pre>Authorization: Bearer ***</pre>\n\
             <p>basic   *** and *** and \"***\"</p></html>"
        );
        // Words that only contain a scheme, a word after one, and text with nothing to mask,
        // are left alone.
        assert_eq!(
            mask_credentials("unbearable basically; Basic authentication failed", &[]),
            "unbearable basically; Basic authentication failed"
        );
        assert!(matches!(
            mask_credentials("nothing", &["secret"]),
            Cow::Borrowed(_)
        ));
    }
}
