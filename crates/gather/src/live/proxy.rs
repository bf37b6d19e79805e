//! Which proxy a request to the API server goes through, as kubectl decides: the kubeconfig
//! cluster's `proxy-url` when it has one; otherwise the environment as Go's
//! `http.ProxyFromEnvironment` reads it — `HTTPS_PROXY` for an https server, `HTTP_PROXY` for
//! an http one, none for a host `NO_PROXY` lists, and never for localhost or a loopback
//! address (so the demo and a local simulator never depend on a CI runner's proxy).

use std::net::IpAddr;

/// The proxy for `server` given the kubeconfig's `proxy-url` and an environment lookup.
pub(crate) fn proxy_for(
    server: &http::Uri,
    kubeconfig_proxy: Option<&str>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Option<String> {
    if let Some(explicit) = kubeconfig_proxy.filter(|p| !p.is_empty()) {
        return Some(explicit.to_string());
    }
    let host = server.host()?.trim_start_matches('[').trim_end_matches(']');
    let host = host.to_ascii_lowercase();
    if host == "localhost" || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback()) {
        return None;
    }
    let var = |names: [&str; 2]| names.iter().find_map(|n| env(n).filter(|v| !v.is_empty()));
    let proxy = match server.scheme_str() {
        Some("http") => var(["HTTP_PROXY", "http_proxy"]),
        _ => var(["HTTPS_PROXY", "https_proxy"]),
    }?;
    let port = server
        .port_u16()
        .unwrap_or(if server.scheme_str() == Some("http") {
            80
        } else {
            443
        });
    let excluded = var(["NO_PROXY", "no_proxy"]).is_some_and(|list| {
        list.split(',')
            .any(|entry| no_proxy_matches(entry, &host, port))
    });
    (!excluded).then_some(proxy)
}

/// One `NO_PROXY` entry against a host, as Go reads it: `*`; an IP or a CIDR; a domain that
/// matches itself and its subdomains (a leading `.` is the same); an optional `:port`.
fn no_proxy_matches(entry: &str, host: &str, port: u16) -> bool {
    let entry = entry.trim().to_ascii_lowercase();
    if entry.is_empty() {
        return false;
    }
    if entry == "*" {
        return true;
    }
    if let Some((net, bits)) = entry.split_once('/') {
        return match (
            net.parse::<IpAddr>(),
            bits.parse::<u32>(),
            host.parse::<IpAddr>(),
        ) {
            (Ok(IpAddr::V4(n)), Ok(b), Ok(IpAddr::V4(h))) if b <= 32 => {
                let mask = if b == 0 { 0 } else { u32::MAX << (32 - b) };
                u32::from(n) & mask == u32::from(h) & mask
            }
            (Ok(IpAddr::V6(n)), Ok(b), Ok(IpAddr::V6(h))) if b <= 128 => {
                let mask = if b == 0 { 0 } else { u128::MAX << (128 - b) };
                u128::from(n) & mask == u128::from(h) & mask
            }
            _ => false,
        };
    }
    let (name, entry_port) = match entry.rsplit_once(':') {
        Some((n, p)) if !n.contains(':') || n.ends_with(']') => (n, p.parse::<u16>().ok()),
        _ => (entry.as_str(), None),
    };
    if entry_port.is_some_and(|p| p != port) {
        return false;
    }
    let name = name.trim_start_matches('[').trim_end_matches(']');
    if let (Ok(a), Ok(b)) = (name.parse::<IpAddr>(), host.parse::<IpAddr>()) {
        return a == b;
    }
    let domain = name.trim_start_matches('.');
    host == domain || host.ends_with(&format!(".{domain}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        }
    }

    fn uri(s: &str) -> http::Uri {
        s.parse().expect("uri")
    }

    #[test]
    fn the_kubeconfig_proxy_url_wins() {
        let e = env(&[("HTTPS_PROXY", "http://env:3128")]);
        assert_eq!(
            proxy_for(
                &uri("https://api.example:6443"),
                Some("socks5://k:1080"),
                &e
            )
            .as_deref(),
            Some("socks5://k:1080")
        );
    }

    #[test]
    fn loopback_and_localhost_are_never_proxied_from_the_environment() {
        let e = env(&[
            ("HTTPS_PROXY", "http://p:3128"),
            ("HTTP_PROXY", "http://p:3128"),
        ]);
        for server in [
            "http://127.0.0.1:8080",
            "https://localhost:6443",
            "https://[::1]:6443",
        ] {
            assert_eq!(proxy_for(&uri(server), None, &e), None, "{server}");
        }
    }

    #[test]
    fn the_scheme_picks_the_variable_and_no_proxy_excludes() {
        let e = env(&[
            ("HTTPS_PROXY", "http://secure:3128"),
            ("http_proxy", "http://plain:3128"),
            (
                "NO_PROXY",
                "internal.example, 10.0.0.0/8 ,.corp,api.other:8443",
            ),
        ]);
        let p = |s: &str| proxy_for(&uri(s), None, &e);
        assert_eq!(
            p("https://api.example:6443").as_deref(),
            Some("http://secure:3128")
        );
        assert_eq!(
            p("http://api.example:8080").as_deref(),
            Some("http://plain:3128")
        );
        assert_eq!(p("https://internal.example:6443"), None);
        assert_eq!(p("https://k8s.internal.example:6443"), None);
        assert_eq!(p("https://10.1.2.3:6443"), None);
        assert_eq!(p("https://a.corp:6443"), None);
        assert_eq!(p("https://api.other:8443"), None);
        assert_eq!(
            p("https://api.other:6443").as_deref(),
            Some("http://secure:3128")
        );
        assert_eq!(
            p("https://notinternal.example:6443").as_deref(),
            Some("http://secure:3128")
        );
        let star = env(&[("HTTPS_PROXY", "http://p:1"), ("no_proxy", "*")]);
        assert_eq!(proxy_for(&uri("https://x.example"), None, &star), None);
    }
}
