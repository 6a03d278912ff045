//! The `Host` header check: a request must name a host the server accepts (loopback, the
//! address it listens on, an `--allowed-host`). A web page that rebinds its own name to
//! 127.0.0.1 still sends its own name as Host, so it is refused.

use std::sync::Arc;

use axum::body::Body;
use axum::http::{Request, Response, StatusCode, header};
use axum::middleware::Next;

/// Lets a request through only when its `Host` header is one of `allowed` (entries as
/// [`crate::listen_policy`] returns them); anything else gets 403 with a sentence.
pub async fn require_host(allowed: Arc<[String]>, request: Request<Body>, next: Next) -> Response<Body> {
    let host = request.headers().get(header::HOST).and_then(|v| v.to_str().ok());
    if host.is_some_and(|h| host_allowed(h, &allowed)) {
        return next.run(request).await;
    }
    let mut response = Response::new(Body::from(
        "this cairn server does not answer to that Host header; reach it as localhost or 127.0.0.1, or start it with --allowed-host NAME\n",
    ));
    *response.status_mut() = StatusCode::FORBIDDEN;
    response
}

/// Whether the Host header value `host` (`name`, `name:port`, `[v6]:port`) matches one of
/// `allowed`: the name in any case and without brackets, and the port when an entry gives one.
pub fn host_allowed(host: &str, allowed: &[String]) -> bool {
    let Some((name, port)) = split(host) else { return false };
    allowed.iter().filter_map(|a| split(a)).any(|(a, p)| a == name && p.is_none_or(|p| port == Some(p)))
}

/// A host value's lowercased name (brackets stripped) and port.
fn split(value: &str) -> Option<(String, Option<u16>)> {
    let value = value.trim();
    if value.is_empty() {
        return None;
    }
    if let Ok(ip) = value.parse::<std::net::IpAddr>() {
        return Some((ip.to_string(), None));
    }
    let authority = value.parse::<axum::http::uri::Authority>().ok()?;
    let name = authority.host().trim_start_matches('[').trim_end_matches(']').to_ascii_lowercase();
    Some((name, authority.port_u16()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_match_by_name_and_by_port_only_when_the_entry_names_one() {
        let allowed: Vec<String> =
            ["localhost", "127.0.0.1", "::1", "devbox.lan:8080"].map(String::from).into();
        for ok in ["localhost", "LOCALHOST:9", "127.0.0.1:4000", "[::1]:4000", "devbox.lan:8080"] {
            assert!(host_allowed(ok, &allowed), "{ok}");
        }
        for bad in ["", "evil.example", "evil.example:4000", "devbox.lan", "devbox.lan:80", "127.0.0.2"] {
            assert!(!host_allowed(bad, &allowed), "{bad}");
        }
    }
}
