//! What cairn's local HTTP servers share: which addresses they may listen on, the `Host`
//! header values they accept, and the optional bearer token. `cairn mcp --http` and `cairn ui`
//! apply the same rules, so a user learns them once (docs/mcp.md, docs/ui.md).
//!
//! - Loopback only unless a token is given; an empty token is refused.
//! - The `Host` header must name loopback, the address listened on, or an `--allowed-host`;
//!   anything else gets 403. This defeats DNS rebinding from a web page.
//! - With a token, every request must carry it (`Authorization: Bearer …`); each server may
//!   accept it in other places too (the UI's browser cookie).

#![warn(missing_docs)]

mod auth;
mod host;

pub use auth::{bearer_token, require_bearer, token_matches};
pub use host::{host_allowed, require_host};

use std::net::SocketAddr;

/// Checks a server's listen address and token, and returns the `Host` header values it
/// accepts: loopback names, the address it listens on (unless that is 0.0.0.0 or ::, which
/// names no host a client can use), and `extra` (`--allowed-host`). The error is one sentence
/// naming the flag to change.
pub fn listen_policy(addr: SocketAddr, token: Option<&str>, extra: &[String]) -> Result<Vec<String>, String> {
    if token.is_some_and(|t| t.trim().is_empty()) {
        return Err(
            "--token is empty, and no client could authenticate with an empty secret; pass a secret, e.g. --token \"$(openssl rand -hex 16)\"".into(),
        );
    }
    if !addr.ip().is_loopback() && token.is_none() {
        return Err(format!(
            "{addr} is reachable from other machines; listen on 127.0.0.1, or pass --token SECRET so only clients holding it get in"
        ));
    }
    allowed_hosts(addr, extra)
}

/// The address a `--listen` value names: an IP address with a port (`127.0.0.1:8767`,
/// `[::1]:8767`), or a host name with a port (`localhost:8767`) resolved here. Of a name's
/// addresses a loopback one is taken (IPv4 first), so `localhost` stays loopback; a name that
/// resolves only beyond loopback is then held to [`listen_policy`]'s token rule like any
/// other address.
pub fn resolve_listen(value: &str) -> Result<SocketAddr, String> {
    if let Ok(addr) = value.parse::<SocketAddr>() {
        return Ok(addr);
    }
    let usage = || {
        format!("{value:?} is not HOST:PORT; pass e.g. --listen 127.0.0.1:8767 or --listen localhost:8767")
    };
    let (host, port) = value.rsplit_once(':').ok_or_else(usage)?;
    let port: u16 = port.parse().map_err(|_| usage())?;
    if host.is_empty() || host.contains(['/', '@', '[', ']']) {
        return Err(usage());
    }
    let addrs: Vec<SocketAddr> = std::net::ToSocketAddrs::to_socket_addrs(&(host, port))
        .map_err(|e| {
            format!("could not resolve {host:?} for --listen ({e}); pass an address, e.g. 127.0.0.1:{port}")
        })?
        .collect();
    let loopback = |v4: bool| addrs.iter().find(|a| a.ip().is_loopback() && a.is_ipv4() == v4);
    loopback(true)
        .or_else(|| loopback(false))
        .or(addrs.first())
        .copied()
        .ok_or_else(|| format!("{host:?} resolves to no address; pass an address, e.g. 127.0.0.1:{port}"))
}

/// The warning a server listening on every address without `--allowed-host` prints: only
/// loopback Host headers will be let in.
pub fn unspecified_warning(addr: SocketAddr, extra: &[String]) -> Option<String> {
    (addr.ip().is_unspecified() && extra.is_empty()).then(|| {
        format!(
            "listening on {addr} accepts only loopback Host headers; pass --allowed-host NAME for each name or address other machines use to reach this one"
        )
    })
}

fn allowed_hosts(addr: SocketAddr, extra: &[String]) -> Result<Vec<String>, String> {
    let mut hosts = vec!["localhost".to_owned(), "127.0.0.1".to_owned(), "::1".to_owned()];
    if !addr.ip().is_unspecified() {
        hosts.push(addr.ip().to_string());
    }
    for host in extra {
        let host = host.trim();
        // A bare IPv6 address is no authority (its colons read as a port), so it is let in as an
        // address; the Host check strips brackets before comparing.
        let valid = host.parse::<std::net::IpAddr>().is_ok()
            || (!host.is_empty()
                && !host.contains('/')
                && host.parse::<axum::http::uri::Authority>().is_ok_and(|a| {
                    !a.as_str().contains('@') && (a.port_u16().is_some() || a.host() == a.as_str())
                }));
        if !valid {
            return Err(format!(
                "--allowed-host {host:?} is not a host name or address with an optional port; pass e.g. --allowed-host myhost.lan or --allowed-host 192.0.2.7:8765"
            ));
        }
        hosts.push(host.to_owned());
    }
    Ok(hosts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allowed_hosts_add_the_bound_address_and_valid_extras_only() {
        let specific: SocketAddr = "192.0.2.7:8765".parse().unwrap();
        let hosts = listen_policy(
            specific,
            Some("s"),
            &["devbox.lan".into(), "fe80::1".into(), "[fe80::2]:80".into()],
        )
        .unwrap();
        assert_eq!(hosts[3..], ["192.0.2.7", "devbox.lan", "fe80::1", "[fe80::2]:80"]);
        let any: SocketAddr = "0.0.0.0:8765".parse().unwrap();
        assert_eq!(listen_policy(any, Some("s"), &[]).unwrap(), ["localhost", "127.0.0.1", "::1"]);
        for bad in ["", "a/b", "user@host", "host:port"] {
            let err = listen_policy(any, Some("s"), &[bad.into()]).unwrap_err();
            assert!(err.contains("is not a host name or address"), "{bad}: {err}");
        }
    }

    #[test]
    fn listen_takes_addresses_and_host_names_and_localhost_stays_loopback() {
        assert_eq!(resolve_listen("127.0.0.1:8767").unwrap(), "127.0.0.1:8767".parse().unwrap());
        assert_eq!(resolve_listen("[::1]:0").unwrap(), "[::1]:0".parse().unwrap());
        let local = resolve_listen("localhost:8767").unwrap();
        assert!(local.ip().is_loopback() && local.port() == 8767, "{local}");
        for bad in ["localhost", "localhost:http", ":8767", "user@localhost:1", "a/b:1"] {
            assert!(resolve_listen(bad).unwrap_err().contains("--listen"), "{bad}");
        }
    }

    #[test]
    fn other_addresses_need_a_token_and_a_token_is_never_empty() {
        let any: SocketAddr = "0.0.0.0:1".parse().unwrap();
        assert!(listen_policy(any, None, &[]).unwrap_err().contains("pass --token SECRET"));
        let lo: SocketAddr = "127.0.0.1:1".parse().unwrap();
        assert!(listen_policy(lo, None, &[]).is_ok());
        assert!(listen_policy(lo, Some(" "), &[]).unwrap_err().contains("--token is empty"));
    }
}
