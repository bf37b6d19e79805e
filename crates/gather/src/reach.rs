//! Which URLs a `--version-url` read may reach, and the addresses it may connect to.
//!
//! The CLI's own `--version-url` is the user's: [`Reach::typed`] reads any URL typed, at any
//! address, but a redirect (which the user did not type) may not lead to a link-local or cloud
//! metadata address (169.254.0.0/16, fe80::/10, fd00:ec2::254, metadata.google.internal, …)
//! other than a host typed: a version endpoint that redirects there would otherwise put what
//! the metadata service answers into the report (`--version-json` returns a field of it).
//!
//! The MCP server's `version_url` is an agent's: [`Reach::allow_list`] reads only what the
//! operator allowed (`liveproof mcp --allow-version-url`), none by default. Entries and URLs
//! are compared parsed — scheme, host, port, and the path by whole segments — never as
//! strings, so `https://ok.example.com.evil.net/` and `https://ok.example.com@evil/` are
//! other hosts. A link-local or metadata address is reached only when an entry names it
//! itself (`http://169.254.169.254/latest/`); a name that resolves to one is refused.
//!
//! Every redirect is held to the same rule as the first URL, and every name is resolved here
//! ([`GateResolver`]) and its addresses checked before the connection is made to them, so a
//! name that resolves elsewhere on a second lookup (DNS rebinding) gains nothing. Gated reads
//! use no proxy from the environment: a proxy would resolve names itself, past the check.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

use reqwest::Url;

/// Names of cloud metadata services (GCP's, and the short forms resolvers expand).
const METADATA_NAMES: &[&str] = &[
    "metadata.google.internal",
    "metadata.goog",
    "metadata",
    "instance-data",
    "instance-data.ec2.internal",
];

/// Why an address is one a read may not reach unless it was named: link-local (where cloud
/// metadata services answer) or a metadata service's own address.
pub fn special_address(ip: IpAddr) -> Option<&'static str> {
    let ip = match ip {
        // `::ffff:169.254.169.254` is 169.254.169.254.
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4),
        v4 => v4,
    };
    match ip {
        IpAddr::V4(v4) if v4 == Ipv4Addr::new(169, 254, 169, 254) => {
            Some("a cloud metadata address")
        }
        // Alibaba Cloud's metadata service.
        IpAddr::V4(v4) if v4 == Ipv4Addr::new(100, 100, 100, 200) => {
            Some("a cloud metadata address")
        }
        IpAddr::V4(v4) if v4.is_link_local() => Some("a link-local address"),
        // AWS's IPv6 metadata endpoint (a unique-local address, not link-local).
        IpAddr::V6(v6) if v6 == Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254) => {
            Some("a cloud metadata address")
        }
        IpAddr::V6(v6) if (v6.segments()[0] & 0xffc0) == 0xfe80 => Some("a link-local address"),
        _ => None,
    }
}

/// A host (as [`Url::host_str`] gives it: IPv6 in brackets) that is itself a link-local or
/// metadata address or a metadata service's name.
fn special_host(host: &str) -> Option<&'static str> {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    if let Ok(ip) = bare.parse::<IpAddr>() {
        return special_address(ip);
    }
    let name = host.trim_end_matches('.').to_ascii_lowercase();
    METADATA_NAMES
        .contains(&name.as_str())
        .then_some("a cloud metadata name")
}

/// The host as compared: lower-case, without a trailing dot.
fn host_key(url: &Url) -> Option<String> {
    url.host_str()
        .map(|h| h.trim_end_matches('.').to_ascii_lowercase())
}

/// One `--allow-version-url` entry: a URL prefix (`https://ok.example.com/version`) or a
/// host, with or without a port (`ok.example.com`, `ok.example.com:8443`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllowedUrl {
    /// `None`: http or https.
    scheme: Option<String>,
    host: String,
    /// `None`: any port (a host given without one); a URL's port is its scheme's default
    /// when it names none.
    port: Option<u16>,
    /// Path segments the URL's path must start with (none: any path).
    path: Vec<String>,
    /// As the operator gave it (shown in messages).
    given: String,
}

impl AllowedUrl {
    /// `given` as an entry, or why it is none.
    pub fn parse(given: &str) -> Result<AllowedUrl, String> {
        let has_scheme = given.contains("://");
        let text = if has_scheme {
            given.to_owned()
        } else {
            format!("http://{given}")
        };
        let url = Url::parse(&text).map_err(|e| format!("not a URL or host ({e})"))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(format!("`{}:` is not http or https", url.scheme()));
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err("it has a userinfo (`user@`): name the host alone".into());
        }
        if url.query().is_some() || url.fragment().is_some() {
            return Err("it has a query or a fragment: give a scheme, host, port and path".into());
        }
        let host = host_key(&url).ok_or("it names no host")?;
        if host.is_empty() {
            return Err("it names no host".into());
        }
        if !has_scheme && url.path() != "/" {
            return Err("a path needs a scheme: give it as a URL (https://HOST/PATH)".into());
        }
        Ok(AllowedUrl {
            scheme: has_scheme.then(|| url.scheme().to_owned()),
            port: if has_scheme {
                url.port_or_known_default()
            } else {
                url.port()
            },
            host,
            path: segments(&url),
            given: given.to_owned(),
        })
    }

    /// Whether `url` is under this entry.
    fn allows(&self, url: &Url) -> bool {
        let scheme_ok = match &self.scheme {
            Some(scheme) => url.scheme() == scheme,
            None => matches!(url.scheme(), "http" | "https"),
        };
        let port_ok = self
            .port
            .is_none_or(|port| url.port_or_known_default() == Some(port));
        let path = segments(url);
        scheme_ok
            && port_ok
            && host_key(url).as_deref() == Some(self.host.as_str())
            && path.len() >= self.path.len()
            && path.iter().zip(&self.path).all(|(a, b)| a == b)
    }
}

impl fmt::Display for AllowedUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.given)
    }
}

/// A URL's path as segments, empty ones dropped (`/version/` is `/version`).
fn segments(url: &Url) -> Vec<String> {
    url.path_segments()
        .map(|s| s.filter(|s| !s.is_empty()).map(str::to_owned).collect())
        .unwrap_or_default()
}

/// Which URLs a read may reach: see the module's documentation.
#[derive(Debug, Clone)]
pub struct Reach {
    rule: Rule,
}

#[derive(Debug, Clone)]
enum Rule {
    /// The CLI: any URL typed; hosts typed may be link-local or metadata ones.
    Typed { hosts: Vec<String> },
    /// The MCP server: only these.
    Allowed(Vec<AllowedUrl>),
}

impl Reach {
    /// The CLI's rule for the URLs the user typed.
    pub fn typed<'a>(urls: impl IntoIterator<Item = &'a str>) -> Reach {
        let hosts = urls
            .into_iter()
            .filter_map(|u| Url::parse(u).ok())
            .filter_map(|u| host_key(&u))
            .collect();
        Reach {
            rule: Rule::Typed { hosts },
        }
    }

    /// The MCP server's rule: only under `allowed` (nothing when it is empty).
    pub fn allow_list(allowed: Vec<AllowedUrl>) -> Reach {
        Reach {
            rule: Rule::Allowed(allowed),
        }
    }

    /// Why `url` may not be read (the first URL or a redirect), or `None` when it may. The
    /// reason never shows the URL's credentials.
    pub fn refusal(&self, url: &Url) -> Option<String> {
        if !matches!(url.scheme(), "http" | "https") {
            return Some(format!("`{}:` is not http or https", url.scheme()));
        }
        let host = host_key(url)?;
        match &self.rule {
            Rule::Typed { hosts } => {
                let special = special_host(&host)?;
                (!hosts.contains(&host))
                    .then(|| format!("{host} is {special}, and only a URL typed may lead there"))
            }
            Rule::Allowed(allowed) if allowed.is_empty() => {
                Some("this server reads no URL: it was started without --allow-version-url".into())
            }
            Rule::Allowed(allowed) => {
                if allowed.iter().any(|a| a.allows(url)) {
                    None
                } else {
                    Some(format!(
                        "it is not under a URL this server was started with (--allow-version-url {})",
                        allowed
                            .iter()
                            .map(ToString::to_string)
                            .collect::<Vec<_>>()
                            .join(", ")
                    ))
                }
            }
        }
    }

    /// Whether `host` may resolve to (or be) a link-local or metadata address.
    fn permits_special(&self, host: &str) -> bool {
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        match &self.rule {
            Rule::Typed { hosts } => hosts.contains(&host),
            Rule::Allowed(allowed) => allowed
                .iter()
                .any(|a| a.host == host && special_host(&a.host).is_some()),
        }
    }

    /// Whether environment proxies may be used: not for an allow-list, whose names must be
    /// resolved here to be checked.
    pub fn uses_proxies(&self) -> bool {
        matches!(self.rule, Rule::Typed { .. })
    }

    /// Why `addresses`, what `host` resolved to, may not be connected to.
    pub fn address_refusal(&self, host: &str, addresses: &[SocketAddr]) -> Option<String> {
        if self.permits_special(host) {
            return None;
        }
        addresses.iter().find_map(|a| {
            special_address(a.ip()).map(|what| {
                format!(
                    "{host} resolves to {} ({what}), which a read reaches only when it names that address itself",
                    a.ip()
                )
            })
        })
    }
}

/// A read refused by [`Reach`]: not worth another attempt.
#[derive(Debug)]
pub struct Refused(pub String);

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "refused: {}", self.0)
    }
}

impl std::error::Error for Refused {}

/// How a name is looked up: the system's resolver, or a stand-in in tests.
type Lookup = Arc<
    dyn Fn(String) -> futures::future::BoxFuture<'static, std::io::Result<Vec<SocketAddr>>>
        + Send
        + Sync,
>;

/// Resolves each name the client connects to and refuses addresses [`Reach`] does not allow:
/// the client then connects to the addresses checked, never to a second lookup's.
#[derive(Clone)]
pub struct GateResolver {
    reach: Arc<Reach>,
    lookup: Lookup,
}

impl GateResolver {
    pub fn new(reach: Arc<Reach>) -> GateResolver {
        GateResolver::with_lookup(
            reach,
            Arc::new(|host: String| {
                Box::pin(
                    async move { Ok(tokio::net::lookup_host((host.as_str(), 0)).await?.collect()) },
                )
            }),
        )
    }

    fn with_lookup(reach: Arc<Reach>, lookup: Lookup) -> GateResolver {
        GateResolver { reach, lookup }
    }
}

impl reqwest::dns::Resolve for GateResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let host = name.as_str().to_owned();
        let reach = self.reach.clone();
        let lookup = (self.lookup)(host.clone());
        Box::pin(async move {
            let addresses = lookup.await?;
            if let Some(why) = reach.address_refusal(&host, &addresses) {
                return Err(Box::new(Refused(why)) as Box<dyn std::error::Error + Send + Sync>);
            }
            Ok(Box::new(addresses.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

/// The redirect policy for `reach`: at most `max` redirects, each held to `reach`.
pub fn redirect_policy(reach: Arc<Reach>, max: usize) -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(move |attempt| {
        // The first of `previous` is the URL requested, not a redirect.
        if attempt.previous().len() > max {
            return attempt.error(format!("too many redirects (more than {max})"));
        }
        match reach.refusal(attempt.url()) {
            Some(why) => attempt.error(Refused(format!("a redirect: {why}"))),
            None => attempt.follow(),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::dns::Resolve as _;

    fn url(text: &str) -> Url {
        Url::parse(text).expect("a URL")
    }

    fn allow(entries: &[&str]) -> Reach {
        Reach::allow_list(
            entries
                .iter()
                .map(|e| AllowedUrl::parse(e).expect("an entry"))
                .collect(),
        )
    }

    #[test]
    fn link_local_and_metadata_addresses_are_special() {
        for ip in [
            "169.254.169.254",
            "169.254.170.2",
            "100.100.100.200",
            "fe80::1",
            "febf::1",
            "fd00:ec2::254",
            "::ffff:169.254.169.254",
        ] {
            assert!(
                special_address(ip.parse().expect("an address")).is_some(),
                "{ip}"
            );
        }
        for ip in ["127.0.0.1", "10.0.0.1", "::1", "fec0::1", "8.8.8.8"] {
            assert!(
                special_address(ip.parse().expect("an address")).is_none(),
                "{ip}"
            );
        }
        assert!(special_host("METADATA.google.internal.").is_some());
        assert!(special_host("[fe80::1]").is_some());
    }

    #[test]
    fn an_allow_list_compares_parsed_urls_never_strings() {
        let reach = allow(&["https://ok.example.com/version", "api.example.net:8443"]);
        for allowed in [
            "https://ok.example.com/version",
            "https://ok.example.com/version/",
            "https://OK.example.com./version/json?x=1",
            "https://ok.example.com:443/version",
            "http://api.example.net:8443/anything",
            "https://api.example.net:8443/",
        ] {
            assert_eq!(reach.refusal(&url(allowed)), None, "{allowed}");
        }
        for refused in [
            "https://ok.example.com.evil.net/version",
            "https://ok.example.com@evil.net/version",
            "https://ok.example.com:8443/version",
            "http://ok.example.com/version",
            "https://ok.example.com/versions",
            "https://ok.example.com/",
            "https://evil.net/ok.example.com/version",
            "http://api.example.net/",
            "ftp://ok.example.com/version",
        ] {
            assert!(reach.refusal(&url(refused)).is_some(), "{refused}");
        }
        // `/other/../version` is normalised to `/version` by the parser: allowed, as it is
        // the URL that is requested.
        assert_eq!(
            reach.refusal(&url("https://ok.example.com/x/../version")),
            None
        );
        // None allowed: nothing is.
        let none = Reach::allow_list(Vec::new());
        let why = none
            .refusal(&url("https://ok.example.com/version"))
            .expect("refused");
        assert!(why.contains("--allow-version-url"), "{why}");
    }

    #[test]
    fn entries_are_checked_when_given() {
        for bad in [
            "ftp://h/",
            "https://u:p@h/",
            "https://h/v?x=1",
            "h/path",
            "https://",
            "",
        ] {
            assert!(AllowedUrl::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_special_address_is_reached_only_when_named() {
        let reach = allow(&["https://ok.example.com/", "http://169.254.169.254/latest/"]);
        let addrs = |ip: &str| vec![SocketAddr::new(ip.parse().expect("ip"), 0)];
        assert!(reach
            .address_refusal("ok.example.com", &addrs("169.254.169.254"))
            .is_some());
        assert!(reach
            .address_refusal("ok.example.com", &addrs("fe80::1"))
            .is_some());
        assert_eq!(
            reach.address_refusal("ok.example.com", &addrs("203.0.113.7")),
            None
        );
        assert_eq!(
            reach.address_refusal("169.254.169.254", &addrs("169.254.169.254")),
            None
        );
        assert_eq!(
            reach.refusal(&url("http://169.254.169.254/latest/meta-data")),
            None
        );
        assert!(reach
            .refusal(&url("http://169.254.169.254/computeMetadata"))
            .is_some());

        // The CLI: what was typed is reached; a redirect elsewhere to a special host is not.
        let typed = Reach::typed(["http://169.254.169.254/latest", "https://web.example/v"]);
        assert_eq!(typed.refusal(&url("http://169.254.169.254/other")), None);
        assert_eq!(typed.refusal(&url("https://anything.example/")), None);
        for redirect in [
            "http://169.254.170.2/creds",
            "http://[fe80::1]/",
            "http://metadata.google.internal/computeMetadata/v1/",
            "http://[fd00:ec2::254]/latest",
        ] {
            assert!(typed.refusal(&url(redirect)).is_some(), "{redirect}");
        }
        // A name a redirect led to, resolving to one; a typed name may.
        assert!(typed
            .address_refusal("redirected.example", &addrs("169.254.169.254"))
            .is_some());
        assert_eq!(
            typed.address_refusal("web.example", &addrs("169.254.169.254")),
            None
        );
        assert_eq!(
            Reach::typed(["http://internal.example/v"])
                .address_refusal("internal.example", &addrs("169.254.1.1")),
            None
        );
    }

    /// The resolver checks what it resolved and hands on only that: a name that resolves to
    /// a metadata address is refused before any connection.
    #[tokio::test]
    async fn the_resolver_refuses_a_name_that_resolves_to_metadata() {
        let reach = Arc::new(allow(&["https://ok.example.com/"]));
        let resolver = GateResolver::with_lookup(
            reach,
            Arc::new(|host: String| {
                Box::pin(async move {
                    let ip = if host == "ok.example.com" {
                        "169.254.169.254"
                    } else {
                        "203.0.113.7"
                    };
                    Ok(vec![SocketAddr::new(ip.parse().expect("ip"), 0)])
                })
            }),
        );
        let name = |n: &str| n.parse::<reqwest::dns::Name>().expect("a name");
        let Err(err) = resolver.resolve(name("ok.example.com")).await else {
            panic!("resolved to the metadata address");
        };
        assert!(err.to_string().contains("169.254.169.254"), "{err}");
        let addresses: Vec<SocketAddr> = resolver
            .resolve(name("other.example.com"))
            .await
            .expect("resolves")
            .collect();
        assert_eq!(addresses.len(), 1);
    }
}
