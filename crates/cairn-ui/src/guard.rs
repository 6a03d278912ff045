//! Who may use the UI. The `Host` check and the token are `cairn mcp --http`'s
//! (`cairn_http`); a browser cannot add an `Authorization` header to a page load, so the token
//! may also come once as `/?token=SECRET` (the URL the server prints), which sets an
//! HttpOnly, SameSite=Strict cookie and redirects to `/` so the secret leaves the address bar.
//! Requests that change anything must be same-origin JSON: a page elsewhere can neither send
//! one without a CORS preflight this server never answers, nor forge its `Origin`.

use std::sync::Arc;

use axum::body::Body;
use axum::http::{Method, Request, Response, StatusCode, header};
use axum::middleware::Next;

/// The token rule of one server.
#[derive(Debug, Clone)]
pub(crate) struct TokenGuard {
    /// The secret.
    pub token: Arc<str>,
    /// The cookie it is kept in: named after the port, so two servers on one host keep two.
    pub cookie: Arc<str>,
}

/// Lets a request through when it carries the token (bearer header or cookie); a page load
/// with the right `?token=` gets the cookie and a redirect; anything else gets 401.
pub(crate) async fn require_token(guard: TokenGuard, request: Request<Body>, next: Next) -> Response<Body> {
    let headers = request.headers();
    let bearer = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(cairn_http::bearer_token)
        .is_some_and(|t| cairn_http::token_matches(t, &guard.token));
    let cookie = headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|c| c.trim().split_once('='))
        .any(|(k, v)| k == &*guard.cookie && cairn_http::token_matches(v, &guard.token));
    if bearer || cookie {
        return next.run(request).await;
    }
    let query_token = request
        .uri()
        .query()
        .into_iter()
        .flat_map(|q| q.split('&'))
        .filter_map(|kv| kv.split_once('='))
        .find(|(k, _)| *k == "token")
        .map(|(_, v)| v.to_owned());
    if request.method() == Method::GET
        && request.uri().path() == "/"
        && query_token.is_some_and(|t| cairn_http::token_matches(&t, &guard.token))
    {
        let mut response = Response::new(Body::empty());
        *response.status_mut() = StatusCode::SEE_OTHER;
        let cookie = format!("{}={}; Path=/; HttpOnly; SameSite=Strict", guard.cookie, guard.token);
        if let Ok(value) = header::HeaderValue::from_str(&cookie) {
            response.headers_mut().insert(header::SET_COOKIE, value);
        }
        response.headers_mut().insert(header::LOCATION, header::HeaderValue::from_static("/"));
        return response;
    }
    refuse(
        StatusCode::UNAUTHORIZED,
        "this cairn ui needs its token: open the URL it printed (with ?token=...), or send `Authorization: Bearer SECRET` with the --token value\n",
    )
}

/// Requests other than GET and HEAD must be JSON, and from this server's own pages when they
/// say where they come from.
pub(crate) async fn same_origin(request: Request<Body>, next: Next) -> Response<Body> {
    if matches!(*request.method(), Method::GET | Method::HEAD) {
        return next.run(request).await;
    }
    let headers = request.headers();
    let json = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).is_some_and(|v| {
        v.split(';').next().is_some_and(|t| t.trim().eq_ignore_ascii_case("application/json"))
    });
    let host = headers.get(header::HOST).and_then(|v| v.to_str().ok()).unwrap_or("");
    let origin_ok = match headers.get(header::ORIGIN).and_then(|v| v.to_str().ok()) {
        None => true,
        Some(origin) => origin.strip_prefix("http://").is_some_and(|o| o.eq_ignore_ascii_case(host)),
    };
    if json && origin_ok {
        return next.run(request).await;
    }
    refuse(StatusCode::FORBIDDEN, "this cairn ui takes changes only as JSON from its own page\n")
}

fn refuse(status: StatusCode, sentence: &'static str) -> Response<Body> {
    let mut response = Response::new(Body::from(sentence));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, header::HeaderValue::from_static("text/plain; charset=utf-8"));
    response
}
