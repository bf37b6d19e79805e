//! Every credential a client to one API server holds, to mask in what the server (or whatever
//! answers in its place) sends back: a 500 page echoing the request's `Authorization` header
//! once put the kubeconfig's token in stderr and in the `-o json` error.

use std::path::PathBuf;

use base64::Engine as _;
use kube::config::AuthInfo;
use secrecy::ExposeSecret as _;

/// What [`Credentials::mask`] looks for: the kubeconfig user's token, password (and the
/// `user:password` pair as Basic auth sends it), client key and auth-provider settings, the
/// proxy URL's userinfo, and the token file's content (read again each time: the kubelet
/// rotates a pod's ServiceAccount token). What the request itself carried is added by the
/// caller ([`Credentials::mask_with`]): an exec plugin's token reaches the request only there.
#[derive(Clone, Default)]
pub(crate) struct Credentials {
    known: Vec<String>,
    token_file: Option<PathBuf>,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials")
            .field("known", &self.known.len())
            .field("token_file", &self.token_file)
            .finish()
    }
}

/// The most of a token file read to mask its content: a ServiceAccount token is a few KiB.
const MAX_TOKEN_FILE: u64 = 64 * 1024;

impl Credentials {
    /// The credentials of `config`'s user and proxy.
    pub(crate) fn of(config: &kube::Config) -> Credentials {
        let mut known = Vec::new();
        let AuthInfo {
            username,
            password,
            token,
            token_file,
            client_key_data,
            auth_provider,
            ..
        } = &config.auth_info;
        if let Some(token) = token {
            known.push(token.expose_secret().to_string());
        }
        if let Some(password) = password {
            let password = password.expose_secret();
            known.push(password.to_string());
            basic_pair(
                &mut known,
                username.as_deref().unwrap_or_default(),
                password,
            );
        }
        if let Some(key) = client_key_data {
            key_material(&mut known, key.expose_secret());
        }
        if let Some(provider) = auth_provider {
            // Its access-token, refresh-token, client-secret, id-token: all of them.
            known.extend(provider.config.values().cloned());
        }
        if let Some(userinfo) = config
            .proxy_url
            .as_ref()
            .and_then(|p| p.authority())
            .and_then(|a| a.as_str().rsplit_once('@'))
            .map(|(userinfo, _)| userinfo)
        {
            let (user, password) = userinfo.split_once(':').unwrap_or((userinfo, ""));
            known.push(userinfo.to_string());
            known.push(password.to_string());
            basic_pair(&mut known, user, password);
            if let Some(decoded) = percent_decoded(password) {
                known.push(decoded);
            }
        }
        known.retain(|k| !k.trim().is_empty());
        // Longest first: a token that contains another is masked whole.
        known.sort_by_key(|k| std::cmp::Reverse(k.len()));
        known.dedup();
        Credentials {
            known,
            token_file: token_file.as_ref().map(PathBuf::from),
        }
    }

    /// `text` with every credential held masked, and those of `sent` (the values of the
    /// request's `Authorization` and `Proxy-Authorization` headers) too.
    pub(crate) fn mask_with(&self, text: &str, sent: &[String]) -> String {
        let mut secrets: Vec<String> = self.known.clone();
        if let Some(token) = self.token_file.as_deref().and_then(read_token_file) {
            secrets.push(token);
        }
        for header in sent {
            secrets.push(header.clone());
            // `Bearer TOKEN`, `Basic BASE64`: the credential alone, too.
            if let Some((_, credential)) = header.split_once(' ') {
                secrets.push(credential.trim().to_string());
                if let Some(pair) = base64::engine::general_purpose::STANDARD
                    .decode(credential.trim())
                    .ok()
                    .and_then(|b| String::from_utf8(b).ok())
                {
                    if let Some((_, password)) = pair.split_once(':') {
                        secrets.push(password.to_string());
                    }
                    secrets.push(pair);
                }
            }
        }
        secrets.sort_by_key(|k| std::cmp::Reverse(k.len()));
        let refs: Vec<&str> = secrets.iter().map(String::as_str).collect();
        liveproof_redacted::mask_credentials(text, &refs).into_owned()
    }
}

/// `user:password` and its base64, as a Basic `Authorization` header carries them.
fn basic_pair(known: &mut Vec<String>, user: &str, password: &str) {
    let pair = format!("{user}:{password}");
    known.push(base64::engine::general_purpose::STANDARD.encode(&pair));
    known.push(pair);
}

/// A client key (`client-key-data`: base64 of a PEM): the base64 itself, and each line of the
/// key's own base64 body, so no run of it can be quoted.
fn key_material(known: &mut Vec<String>, data: &str) {
    known.push(data.to_string());
    let pem = base64::engine::general_purpose::STANDARD
        .decode(data.trim())
        .ok()
        .and_then(|b| String::from_utf8(b).ok())
        .unwrap_or_else(|| data.to_string());
    known.extend(
        pem.lines()
            .map(str::trim)
            .filter(|l| !l.starts_with("-----") && l.len() >= 16)
            .map(str::to_string),
    );
}

/// `%40` as `@`: a proxy password with reserved characters is percent-encoded in its URL.
fn percent_decoded(text: &str) -> Option<String> {
    if !text.contains('%') {
        return None;
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match (bytes[i], bytes.get(i + 1..i + 3)) {
            (b'%', Some(hex)) => {
                let value = std::str::from_utf8(hex)
                    .ok()
                    .and_then(|h| u8::from_str_radix(h, 16).ok())?;
                out.push(value);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

/// The token file's content, if it is a regular file of a token's size.
fn read_token_file(path: &std::path::Path) -> Option<String> {
    use std::io::Read as _;
    let file = crate::files::open_regular(path).ok()?;
    let mut token = String::new();
    file.take(MAX_TOKEN_FILE).read_to_string(&mut token).ok()?;
    let token = token.trim();
    (!token.is_empty()).then(|| token.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_credential_of_the_user_and_the_proxy_is_masked() {
        let dir = tempfile::tempdir().expect("tempdir");
        let token_file = dir.path().join("token");
        std::fs::write(&token_file, "sa-token-canary\n").expect("token written");
        let mut config = kube::Config::new("https://127.0.0.1:6443".parse().expect("url"));
        config.auth_info.token = Some("kc-token-canary".to_string().into());
        config.auth_info.username = Some("bob".into());
        config.auth_info.password = Some("pw-canary".to_string().into());
        config.auth_info.token_file = Some(token_file.display().to_string());
        let pem = "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIKeyMaterialCanary0123456789abcdef\n-----END EC PRIVATE KEY-----\n";
        config.auth_info.client_key_data =
            Some(base64::engine::general_purpose::STANDARD.encode(pem).into());
        config.proxy_url = Some(
            "http://proxyuser:proxy%40canary@127.0.0.1:3128"
                .parse()
                .expect("proxy url"),
        );
        let credentials = Credentials::of(&config);
        let basic = base64::engine::general_purpose::STANDARD.encode("bob:pw-canary");
        let page = format!(
            "echo: kc-token-canary sa-token-canary pw-canary {basic} \
             MHcCAQEEIKeyMaterialCanary0123456789abcdef proxy@canary proxy%40canary \
             exec-canary-token"
        );
        let shown = credentials.mask_with(&page, &["Bearer exec-canary-token".to_string()]);
        assert!(!shown.contains("canary"), "{shown}");
        assert!(shown.starts_with("echo: ***"), "{shown}");
    }
}
