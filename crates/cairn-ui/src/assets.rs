//! The page: hand-written files compiled into the binary (and the syntax colours' stylesheet,
//! generated at start), served with no network and
//! a Content-Security-Policy that allows only this server's own script and style.

use axum::http::header;
use axum::response::IntoResponse;

const INDEX: &str = include_str!("../assets/index.html");
const SCRIPT: &str = include_str!("../assets/app.js");
const DIFF_SCRIPT: &str = include_str!("../assets/diff.js");
const LAYOUT_SCRIPT: &str = include_str!("../assets/layout.js");
const TIMELINE_SCRIPT: &str = include_str!("../assets/timeline.js");
const STYLE: &str = include_str!("../assets/app.css");

/// Three stacked stones: a cairn. Served for `/favicon.ico` too, which browsers ask for on
/// their own; an SVG under that name is drawn as well as an ICO would be.
const FAVICON: &str = concat!(
    r##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">"##,
    r##"<ellipse cx="16" cy="27" rx="13" ry="4.5" fill="#6b6f76"/>"##,
    r##"<ellipse cx="16" cy="18" rx="9.5" ry="4" fill="#8a8e96"/>"##,
    r##"<ellipse cx="16" cy="10" rx="6.5" ry="3.5" fill="#2f6fdb"/>"##,
    r##"<ellipse cx="16" cy="4" rx="3.5" ry="2.5" fill="#2f6fdb"/></svg>"##
);

const CSP: &str =
    "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'";

pub(crate) async fn index() -> impl IntoResponse {
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CONTENT_SECURITY_POLICY, CSP),
            (header::X_FRAME_OPTIONS, "DENY"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        INDEX,
    )
}

pub(crate) async fn script() -> impl IntoResponse {
    javascript(SCRIPT)
}

pub(crate) async fn diff_script() -> impl IntoResponse {
    javascript(DIFF_SCRIPT)
}

pub(crate) async fn layout_script() -> impl IntoResponse {
    javascript(LAYOUT_SCRIPT)
}

pub(crate) async fn timeline_script() -> impl IntoResponse {
    javascript(TIMELINE_SCRIPT)
}

fn javascript(text: &'static str) -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "text/javascript; charset=utf-8"), (header::CACHE_CONTROL, "no-store")], text)
}

pub(crate) async fn style() -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "text/css; charset=utf-8"), (header::CACHE_CONTROL, "no-store")], STYLE)
}

/// The token classes of coloured file diffs, generated from syntect's themes.
pub(crate) async fn syntax_style() -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "text/css; charset=utf-8"), (header::CACHE_CONTROL, "no-store")],
        crate::diffs::stylesheet(),
    )
}

pub(crate) async fn favicon() -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "image/svg+xml"), (header::CACHE_CONTROL, "max-age=86400")], FAVICON)
}
