//! The optional bearer secret of cairn's HTTP servers.

use std::sync::Arc;

use axum::body::Body;
use axum::http::{Request, Response, StatusCode, header};
use axum::middleware::Next;

/// Lets a request through only when its `Authorization` header is `Bearer SECRET` with the
/// server's secret `expected`; anything else gets 401 with a sentence saying what to send. The
/// scheme is matched in any case, as RFC 7235 has auth schemes.
pub async fn require_bearer(expected: Arc<str>, request: Request<Body>, next: Next) -> Response<Body> {
    let presented = request.headers().get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()).unwrap_or("");
    if bearer_token(presented).is_some_and(|t| token_matches(t, &expected)) {
        return next.run(request).await;
    }
    let mut response = Response::new(Body::from(
        "this cairn server needs its token: send `Authorization: Bearer SECRET` with the --token value\n",
    ));
    *response.status_mut() = StatusCode::UNAUTHORIZED;
    response.headers_mut().insert(header::WWW_AUTHENTICATE, header::HeaderValue::from_static("Bearer"));
    response
}

/// The credentials of an `Authorization: Bearer …` value, whatever the scheme's case.
pub fn bearer_token(value: &str) -> Option<&str> {
    let (scheme, token) = value.trim().split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim_start())
}

/// Whether `presented` is the secret `expected`, compared without stopping at the first
/// difference, so timing does not reveal the secret.
pub fn token_matches(presented: &str, expected: &str) -> bool {
    let (a, b) = (presented.as_bytes(), expected.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
