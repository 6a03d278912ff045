//! The optional bearer secret of the HTTP transport.

use std::sync::Arc;

use axum::body::Body;
use axum::http::{Request, Response, StatusCode, header};
use axum::middleware::Next;

/// Lets a request through only when its `Authorization` header is exactly `expected`
/// (`Bearer SECRET`); anything else gets 401 with a sentence saying what to send.
pub async fn require_bearer(expected: Arc<str>, request: Request<Body>, next: Next) -> Response<Body> {
    let presented = request.headers().get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()).unwrap_or("");
    if constant_time_eq(presented.as_bytes(), expected.as_bytes()) {
        return next.run(request).await;
    }
    let mut response = Response::new(Body::from(
        "this cairn server needs its token: send `Authorization: Bearer SECRET` with the --token value\n",
    ));
    *response.status_mut() = StatusCode::UNAUTHORIZED;
    response.headers_mut().insert(header::WWW_AUTHENTICATE, header::HeaderValue::from_static("Bearer"));
    response
}

/// Compares without stopping at the first difference, so timing does not reveal the secret.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
