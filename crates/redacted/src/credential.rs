//! What looks like a credential outside a Secret: the one classifier every output that shows a
//! manifest uses (a rendered Helm manifest, a `-f` difference, a pod template matched by
//! `--expect`), so what it hides is hidden everywhere and what it shows is shown everywhere.
//!
//! Three things count:
//! - a value under a key named like a secret ([`is_secret_key`]: `password`, `DB_PASS`,
//!   `apiKey`, `STRIPE_KEY`, `credentials`, …; not `secretName`, `tokenPath`, `passwordFile`,
//!   which name where a secret is, not what it is), whole;
//! - inside any text, the spans [`credential_spans`] finds: a URL's userinfo password (or a
//!   userinfo with no password, usually a token), the value of a `KEY=VALUE`, `KEY: VALUE` or
//!   `"KEY": "VALUE"` pair whose key is named like a secret (a DSN, a query string, a config
//!   file held in a ConfigMap, a `--password=…` flag), and a PEM private key's body;
//! - an `env`-style `{name: DB_PASSWORD, value: …}` entry's value, and the argument after a
//!   `--password` flag (the tree walks apply these two; see [`redact_json`]).
//!
//! A classifier errs one way: what it misses is shown. It is a net under the rule that secrets
//! belong in Secrets, not a licence to put them elsewhere.

use std::borrow::Cow;
use std::ops::Range;

/// What replaces a whole value.
pub const REDACTED: &str = "<redacted>";
/// What replaces a credential inside a longer text (as [`crate::DisplaySafeUrl`] masks).
pub const MASK: &str = "***";

/// Words that make a key a secret's wherever they stand in it.
const SECRET_WORDS: &[&str] = &[
    "password",
    "passwords",
    "passwd",
    "pwd",
    "pass",
    "passphrase",
    "passcode",
    "secret",
    "secrets",
    "token",
    "tokens",
    "credential",
    "credentials",
    "creds",
    "apikey",
    "apikeys",
    "privatekey",
    "authorization",
    "auth",
];

/// A last word that makes a key name where a secret is, or something about it, not the secret:
/// `secretName`, `tokenPath`, `passwordFile`, `authMode`, `PASSWORD_MIN_LENGTH`.
const NOT_THE_VALUE: &[&str] = &[
    "name",
    "names",
    "ref",
    "refs",
    "reference",
    "path",
    "paths",
    "file",
    "files",
    "dir",
    "directory",
    "mount",
    "type",
    "kind",
    "mode",
    "policy",
    "url",
    "uri",
    "endpoint",
    "header",
    "field",
    "format",
    "prefix",
    "length",
    "size",
    "count",
    "ttl",
    "seconds",
    "expiration",
    "expiry",
    "enabled",
    "required",
    "provider",
    "namespace",
    "selector",
    "audience",
    "issuer",
    "scope",
    "scopes",
    "version",
    "store",
    "source",
    "template",
    "interval",
];

/// Before a last word `key`, a word that makes it no credential (`publicKey`, `cacheKey`).
const NOT_A_SECRET_KEY: &[&str] = &[
    "public",
    "cache",
    "sort",
    "partition",
    "primary",
    "foreign",
    "hash",
    "routing",
    "label",
    "match",
    "lookup",
    "idempotency",
    "object",
    "field",
    "group",
    "topology",
    "node",
    "host",
    "index",
    "config",
    "map",
    "configmap",
];

/// The words of a key, lower-case: split at anything not a letter or digit and where
/// camelCase turns (`dbPassword` → db, password; `APIKey` → api, key).
fn words(key: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let chars: Vec<char> = key.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_alphanumeric() {
            if !word.is_empty() {
                out.push(std::mem::take(&mut word));
            }
            continue;
        }
        let prev = i.checked_sub(1).and_then(|p| chars.get(p)).copied();
        let next = chars.get(i + 1).copied();
        let turn = c.is_uppercase()
            && prev.is_some_and(|p| {
                p.is_lowercase()
                    || p.is_ascii_digit()
                    || (p.is_uppercase() && next.is_some_and(char::is_lowercase))
            });
        if turn && !word.is_empty() {
            out.push(std::mem::take(&mut word));
        }
        word.extend(c.to_lowercase());
    }
    if !word.is_empty() {
        out.push(word);
    }
    out
}

/// Whether `key` (a YAML or JSON key, an env var's name, the `KEY` of a `KEY=VALUE`) names a
/// secret: one of its words is `password`, `token`, `secret`, `credentials`, … (the last word
/// not one that names where or what kind: `secretName`, `tokenPath`), or its last word is `key`
/// after another (`STRIPE_KEY`, `signingKey`, `api-key`; not `publicKey`, `cacheKey`).
pub fn is_secret_key(key: &str) -> bool {
    // Most keys hold none of the words: said without splitting them (a manifest has many).
    const STEMS: &[&[u8]] = &[
        b"pass", b"pwd", b"secret", b"token", b"cred", b"key", b"auth",
    ];
    let bytes = key.as_bytes();
    let has_stem = STEMS.iter().any(|stem| {
        bytes
            .windows(stem.len())
            .any(|w| w.eq_ignore_ascii_case(stem))
    });
    if !has_stem {
        return false;
    }
    let words = words(key);
    let Some(last) = words.last() else {
        return false;
    };
    if NOT_THE_VALUE.contains(&last.as_str()) {
        return false;
    }
    if words.iter().any(|w| SECRET_WORDS.contains(&w.as_str())) {
        return true;
    }
    // `api_key`, `private-key`, `access_key`: the pair, or a last `key` after any other word.
    if matches!(last.as_str(), "key" | "keys") && words.len() > 1 {
        let before = &words[words.len() - 2];
        return !NOT_A_SECRET_KEY.contains(&before.as_str());
    }
    false
}

/// A value that says nothing even under a secret's key: `automountServiceAccountToken: "true"`,
/// or what already replaced one.
fn says_nothing(text: &str) -> bool {
    text == REDACTED
        || text == MASK
        || matches!(
            text.trim().to_ascii_lowercase().as_str(),
            "" | "true" | "false" | "yes" | "no" | "on" | "off" | "null" | "~"
        )
}

/// The byte ranges of `text` that hold credentials, sorted and merged: URL userinfo passwords
/// (a userinfo without one whole), the values of `KEY=VALUE`, `KEY: VALUE` and `"KEY": "VALUE"`
/// pairs whose key [`is_secret_key`], and PEM private key bodies. Never empty ranges.
pub fn credential_spans(text: &str) -> Vec<Range<usize>> {
    let mut spans = Vec::new();
    url_userinfo(text, &mut spans);
    secret_pairs(text, &mut spans);
    private_keys(text, &mut spans);
    spans.retain(|s| !s.is_empty());
    spans.sort_by_key(|s| (s.start, s.end));
    let mut merged: Vec<Range<usize>> = Vec::with_capacity(spans.len());
    for span in spans {
        match merged.last_mut() {
            Some(last) if span.start <= last.end => last.end = last.end.max(span.end),
            _ => merged.push(span),
        }
    }
    merged
}

/// Whether `text` holds anything a credential could be found in, by the tree walks or in the
/// text: a word named like a secret (a key, an env var's name, a flag), a URL with a userinfo,
/// a private key. A quick look, so a document without any is not parsed to be shown.
pub fn may_hold_credential(text: &str) -> bool {
    if text.contains("PRIVATE KEY") || (text.contains("://") && text.contains('@')) {
        return true;
    }
    text.split(|c: char| !key_char(c))
        .any(|word| !word.is_empty() && is_secret_key(word.trim_start_matches('-')))
}

/// `text` with each of [`credential_spans`] replaced by `***`; borrowed when there is none.
pub fn mask_credentials(text: &str) -> Cow<'_, str> {
    let spans = credential_spans(text);
    if spans.is_empty() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for span in spans {
        out.push_str(&text[at..span.start]);
        out.push_str(MASK);
        at = span.end;
    }
    out.push_str(&text[at..]);
    Cow::Owned(out)
}

/// What is shown of one scalar value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shown {
    /// Nothing in it looks like a credential.
    AsIs,
    /// All of it is one: shown as [`REDACTED`].
    Whole,
    /// Parts of it are: this text, with `***` in their place.
    Masked(String),
}

/// What is shown of the scalar `text` found under `key` (`None`: a list item, a document).
pub fn shown(key: Option<&str>, text: &str) -> Shown {
    if key.is_some_and(is_secret_key) && !says_nothing(text) {
        return Shown::Whole;
    }
    match mask_credentials(text) {
        Cow::Borrowed(_) => Shown::AsIs,
        Cow::Owned(masked) => Shown::Masked(masked),
    }
}

/// Whether a list item is a flag whose value is the next item: `--password`, `-token` (not
/// `--password=…`, whose value [`credential_spans`] finds).
pub fn is_secret_flag(item: &str) -> bool {
    item.starts_with('-') && !item.contains('=') && is_secret_key(item.trim_start_matches('-'))
}

/// The key an entry's value stands under for [`shown`]: its own, except that in a
/// `{name: DB_PASSWORD, value: …}` entry (env, parameters) the value stands under the name.
pub fn effective_key<'a>(key: &'a str, name: Option<&'a str>) -> &'a str {
    match name {
        Some(name) if key == "value" && is_secret_key(name) => name,
        _ => key,
    }
}

/// Redacts, in place, what looks like a credential in a JSON tree (as [`shown`] says, with
/// the `{name, value}` and `--flag value` rules), and returns where: each redacted value's
/// path under `path` (`.data.DB_URL`, `.env[0].value`).
pub fn redact_json(value: &mut serde_json::Value, path: &str) -> Vec<String> {
    let mut redacted = Vec::new();
    walk_json(value, None, path, &mut redacted);
    redacted
}

fn walk_json(value: &mut serde_json::Value, key: Option<&str>, path: &str, out: &mut Vec<String>) {
    use serde_json::Value;
    match value {
        Value::String(text) => match shown(key, text) {
            Shown::AsIs => {}
            Shown::Whole => {
                *value = Value::String(REDACTED.into());
                out.push(path.to_owned());
            }
            Shown::Masked(masked) => {
                *text = masked;
                out.push(path.to_owned());
            }
        },
        Value::Number(_) => {
            if key.is_some_and(is_secret_key) {
                *value = Value::String(REDACTED.into());
                out.push(path.to_owned());
            }
        }
        Value::Array(items) => {
            let mut after_flag = false;
            for (i, item) in items.iter_mut().enumerate() {
                let at = format!("{path}[{i}]");
                let flag = item.as_str().is_some_and(is_secret_flag);
                if after_flag && item.is_string() {
                    *item = Value::String(REDACTED.into());
                    out.push(at);
                } else {
                    walk_json(item, None, &at, out);
                }
                after_flag = flag;
            }
        }
        Value::Object(fields) => {
            let name = fields
                .get("name")
                .or_else(|| fields.get("key"))
                .and_then(Value::as_str)
                .map(str::to_owned);
            for (k, v) in fields.iter_mut() {
                let under = effective_key(k, name.as_deref()).to_owned();
                walk_json(v, Some(&under), &format!("{path}{}", field(k)), out);
            }
        }
        Value::Bool(_) | Value::Null => {}
    }
}

/// `.key`, or `["key"]` when the key is not a plain word.
pub fn field(key: &str) -> String {
    let plain = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if plain {
        format!(".{key}")
    } else {
        format!("[{key:?}]")
    }
}

/// Where a URL's authority ends.
fn ends_authority(c: char) -> bool {
    c.is_whitespace()
        || matches!(
            c,
            '/' | '?'
                | '#'
                | '"'
                | '\''
                | '`'
                | '<'
                | '>'
                | '('
                | ')'
                | '['
                | ']'
                | '{'
                | '}'
                | '\\'
        )
}

fn url_userinfo(text: &str, spans: &mut Vec<Range<usize>>) {
    for (at, _) in text.match_indices("://") {
        let start = at + 3;
        let end = text[start..]
            .find(ends_authority)
            .map_or(text.len(), |i| start + i);
        let authority = &text[start..end];
        let Some(userinfo_end) = authority.rfind('@') else {
            continue;
        };
        let userinfo = &authority[..userinfo_end];
        match userinfo.find(':') {
            Some(colon) => spans.push(start + colon + 1..start + userinfo_end),
            None => spans.push(start..start + userinfo_end),
        }
    }
}

/// A character a key (`DB_PASSWORD`, `spring.datasource.password`, `--api-key`) is made of.
fn key_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '-' | '.')
}

fn secret_pairs(text: &str, spans: &mut Vec<Range<usize>>) {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < text.len() {
        let Some(c) = text[i..].chars().next() else {
            break;
        };
        if !key_char(c) || text[..i].chars().next_back().is_some_and(key_char) {
            i += c.len_utf8();
            continue;
        }
        let key_end = text[i..]
            .find(|c: char| !key_char(c))
            .map_or(text.len(), |n| i + n);
        let key = &text[i..key_end];
        let quoted = i > 0 && matches!(bytes[i - 1], b'"' | b'\'');
        let mut at = key_end;
        if quoted && bytes.get(at) == Some(&bytes[i - 1]) {
            at += 1;
        }
        if is_secret_key(key.trim_start_matches('-')) {
            if let Some(span) = pair_value(text, i, at) {
                spans.push(span);
            }
        }
        i = key_end.max(i + 1);
    }
}

/// The value after a key that ends at `at` (its line starting before `key_start`), if a
/// separator follows: `=`, or `:` then a space or a quote.
fn pair_value(text: &str, key_start: usize, at: usize) -> Option<Range<usize>> {
    let bytes = text.as_bytes();
    let mut at = at;
    while matches!(bytes.get(at), Some(b' ' | b'\t')) {
        at += 1;
    }
    let separator = *bytes.get(at)?;
    let colon = match separator {
        b'=' if bytes.get(at + 1) != Some(&b'=') => false,
        b':' if matches!(
            bytes.get(at + 1),
            Some(b' ' | b'\t' | b'"' | b'\'' | b'\n' | b'\r')
        ) =>
        {
            true
        }
        _ => return None,
    };
    at += 1;
    while matches!(bytes.get(at), Some(b' ' | b'\t')) {
        at += 1;
    }
    match bytes.get(at)? {
        quote @ (b'"' | b'\'') => {
            let open = at + 1;
            let mut j = open;
            while j < bytes.len() {
                match bytes[j] {
                    b'\\' if *quote == b'"' => j += 2,
                    b'\'' if *quote == b'\'' && bytes.get(j + 1) == Some(&b'\'') => j += 2,
                    b if b == *quote => return Some(open..j),
                    _ => j += 1,
                }
            }
            Some(open..bytes.len())
        }
        b'|' | b'>' if colon => block_scalar(text, key_start, at),
        b'\n' | b'\r' => None,
        _ => {
            let end = if colon {
                // A YAML or header value runs to the end of the line (a ` #` comment aside).
                let line_end = text[at..].find(['\n', '\r']).map_or(text.len(), |n| at + n);
                let value = &text[at..line_end];
                let value = value.split(" #").next().unwrap_or(value);
                at + value.trim_end().len()
            } else {
                text[at..]
                    .find(|c: char| {
                        c.is_whitespace()
                            || matches!(c, '&' | ';' | ',' | '"' | '\'' | ')' | '}' | ']')
                    })
                    .map_or(text.len(), |n| at + n)
            };
            Some(at..end)
        }
    }
}

/// A YAML block scalar (`password: |`) after the indicator at `at`: the lines after it that
/// are indented deeper than the key's line.
fn block_scalar(text: &str, key_start: usize, at: usize) -> Option<Range<usize>> {
    let line_start = text[..key_start].rfind('\n').map_or(0, |n| n + 1);
    let indent = text[line_start..].chars().take_while(|c| *c == ' ').count();
    let first = text[at..].find('\n').map(|n| at + n + 1)?;
    let mut end = first;
    for line in text[first..].split_inclusive('\n') {
        let content = line.trim_end_matches(['\n', '\r']);
        let deeper = content.chars().take_while(|c| *c == ' ').count() > indent;
        if !content.trim().is_empty() && !deeper {
            break;
        }
        end += line.len();
    }
    Some(first..end)
}

fn private_keys(text: &str, spans: &mut Vec<Range<usize>>) {
    let mut from = 0;
    while let Some(begin) = text[from..].find("-----BEGIN ").map(|n| from + n) {
        let Some(line_end) = text[begin..].find('\n').map(|n| begin + n) else {
            break;
        };
        let header = &text[begin..line_end];
        if !header.contains("PRIVATE KEY-----") {
            from = line_end;
            continue;
        }
        let end = text[line_end..]
            .find("-----END ")
            .map_or(text.len(), |n| line_end + n);
        spans.push(line_end + 1..end.max(line_end + 1));
        from = end;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_named_like_secrets() {
        for key in [
            "password",
            "DB_PASSWORD",
            "dbPassword",
            "db-pass",
            "PASSWD",
            "pwd",
            "apiKey",
            "api_key",
            "API-KEY",
            "APIKey",
            "STRIPE_KEY",
            "signingKey",
            "aws_secret_access_key",
            "clientSecret",
            "credentials",
            "GITHUB_TOKEN",
            "accessToken",
            "spring.datasource.password",
            "private_key",
            "Authorization",
            "secret_id",
            "BASIC_AUTH",
        ] {
            assert!(is_secret_key(key), "{key}");
        }
        for key in [
            "secretName",
            "secretKeyRef",
            "passwordFile",
            "tokenPath",
            "authMode",
            "PASSWORD_MIN_LENGTH",
            "SESSION_TOKEN_TTL",
            "publicKey",
            "cacheKey",
            "key",
            "name",
            "value",
            "DATABASE_URL",
            "image",
            "monkey",
            "accessKeyId",
            "bypass",
            "passage",
        ] {
            assert!(!is_secret_key(key), "{key}");
        }
    }

    fn masked(text: &str) -> String {
        mask_credentials(text).into_owned()
    }

    #[test]
    fn urls_pairs_and_keys_in_text_are_masked() {
        assert_eq!(
            masked("postgres://app:hunter2@db:5432/shop?sslmode=require"),
            "postgres://app:***@db:5432/shop?sslmode=require"
        );
        assert_eq!(
            masked("https://ghp_t0ken@github.com/acme/x.git"),
            "https://***@github.com/acme/x.git"
        );
        assert_eq!(
            masked("host=db user=app password=hunter2 dbname=shop"),
            "host=db user=app password=*** dbname=shop"
        );
        assert_eq!(
            masked("https://h/v?token=abc&x=1"),
            "https://h/v?token=***&x=1"
        );
        assert_eq!(
            masked("Server=db;User Id=app;Password=hunter2;"),
            "Server=db;User Id=app;Password=***;"
        );
        assert_eq!(
            masked("--db-password=hunter2 --port=80"),
            "--db-password=*** --port=80"
        );
        assert_eq!(
            masked("db:\n  host: db\n  password: hunter 2 # rotated\n  user: app\n"),
            "db:\n  host: db\n  password: *** # rotated\n  user: app\n"
        );
        assert_eq!(
            masked(r#"{"user": "app", "password": "hun\"ter2", "pin": 1234}"#),
            r#"{"user": "app", "password": "***", "pin": 1234}"#
        );
        assert_eq!(masked("api_key = 'it''s'"), "api_key = '***'");
        assert_eq!(
            masked("Authorization: Bearer abc.def\nAccept: */*"),
            "Authorization: ***\nAccept: */*"
        );
        assert_eq!(
            masked("secret: |\n  line one\n  line two\nnext: 1\n"),
            "secret: |\n***next: 1\n"
        );
        assert_eq!(
            masked("-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----\n"),
            "-----BEGIN RSA PRIVATE KEY-----\n***-----END RSA PRIVATE KEY-----\n"
        );
        // Not credentials: where a secret is, a key with no value, prose, other pairs.
        for plain in [
            "secretName: web-db",
            "password:",
            "token == other",
            "image: ghcr.io/acme/web:1.4.0",
            "https://h.example/v?page=2",
            "key: password",
            "no credential here",
        ] {
            assert_eq!(masked(plain), plain);
        }
    }

    #[test]
    fn a_quick_look_finds_what_a_walk_would() {
        for text in [
            "env:\n- name: DB_PASSWORD\n  value: x\n",
            "url: postgres://a:b@h/d",
            "args: [--api-key, x]",
            "-----BEGIN PRIVATE KEY-----",
        ] {
            assert!(may_hold_credential(text), "{text}");
        }
        assert!(!may_hold_credential(
            "kind: ConfigMap\ndata:\n  mode: fast\n  secretName: web-db\n"
        ));
    }

    #[test]
    fn a_value_under_a_secret_key_is_whole_and_elsewhere_masked() {
        assert_eq!(shown(Some("password"), REDACTED), Shown::AsIs);
        assert_eq!(shown(Some("DB_PASSWORD"), "hunter2"), Shown::Whole);
        assert_eq!(
            shown(Some("automountServiceAccountToken"), "true"),
            Shown::AsIs
        );
        assert_eq!(shown(Some("LOG_LEVEL"), "debug"), Shown::AsIs);
        assert_eq!(
            shown(Some("DATABASE_URL"), "postgres://a:b@h/d"),
            Shown::Masked("postgres://a:***@h/d".into())
        );
        assert_eq!(effective_key("value", Some("DB_PASSWORD")), "DB_PASSWORD");
        assert_eq!(effective_key("value", Some("LOG_LEVEL")), "value");
    }

    #[test]
    fn json_trees_are_redacted_with_env_entries_and_flags() {
        let mut tree = serde_json::json!({
            "env": [
                {"name": "DB_PASSWORD", "value": "hunter2"},
                {"name": "LOG_LEVEL", "value": "debug"},
                {"name": "DB_URL", "value": "postgres://app:hunter2@db"},
            ],
            "args": ["--password", "hunter2", "--port", "80"],
            "data": {"apiKey": 12345, "enabled": true},
        });
        let paths = redact_json(&mut tree, "");
        let text = tree.to_string();
        assert!(
            !text.contains("hunter2") && !text.contains("12345"),
            "{text}"
        );
        assert!(text.contains("debug") && text.contains("\"80\""), "{text}");
        assert_eq!(
            paths,
            [".args[1]", ".data.apiKey", ".env[0].value", ".env[2].value"]
        );
    }
}
