//! Debug Adapter Protocol messages: the envelope every message shares, and the typed bodies
//! of the requests, responses and events this client uses.
//!
//! Parsing is lenient on purpose: adapters differ in which optional fields they fill, and a
//! newer adapter may add fields. Unknown fields are ignored and missing optional fields take
//! their defaults. When sending, absent optional fields are omitted rather than sent as null,
//! because some adapters treat `null` differently from "not given".

pub(crate) mod bodies;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{Error, Result};

/// A request this client sends to the adapter.
#[derive(Debug, Serialize)]
pub(crate) struct OutgoingRequest<'a> {
    pub seq: i64,
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub command: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Value>,
}

/// This client's answer to a request the adapter sent (a "reverse request").
#[derive(Debug, Serialize)]
pub(crate) struct OutgoingResponse<'a> {
    pub seq: i64,
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub request_seq: i64,
    pub success: bool,
    pub command: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// A response from the adapter to one of our requests.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Response {
    #[serde(default)]
    pub request_seq: i64,
    #[serde(default)]
    pub success: bool,
    #[serde(default)]
    pub message: Option<String>,
    #[serde(default)]
    pub body: Option<Value>,
}

/// An event the adapter sent on its own.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Event {
    pub event: String,
    #[serde(default)]
    pub body: Option<Value>,
}

/// A request the adapter sent to us.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct ReverseRequest {
    #[serde(default)]
    pub seq: i64,
    pub command: String,
}

/// Any message that arrives from the adapter.
#[derive(Debug, Clone)]
pub(crate) enum Incoming {
    Response(Response),
    Event(Event),
    Request(ReverseRequest),
    /// A message with a `type` this client does not know; kept so the reader can skip it.
    Unknown(String),
}

impl Incoming {
    /// Parses one framed message body, dispatching on its `type` field.
    pub(crate) fn parse(bytes: &[u8]) -> Result<Self> {
        let value: Value = serde_json::from_slice(bytes)
            .map_err(|e| Error::protocol(format!("a message body is not JSON: {e}")))?;
        let kind = value.get("type").and_then(Value::as_str).unwrap_or_default().to_owned();
        let parsed = match kind.as_str() {
            "response" => serde_json::from_value(value).map(Incoming::Response),
            "event" => serde_json::from_value(value).map(Incoming::Event),
            "request" => serde_json::from_value(value).map(Incoming::Request),
            _ => return Ok(Incoming::Unknown(kind)),
        };
        parsed.map_err(|e| Error::protocol(format!("a `{kind}` message is malformed: {e}")))
    }
}

/// Decodes a response or event body into a typed struct; a missing body reads as `{}`, so
/// bodies whose fields are all optional still decode.
pub(crate) fn decode_body<T: serde::de::DeserializeOwned>(what: &str, body: Option<Value>) -> Result<T> {
    let value = body.unwrap_or_else(|| Value::Object(serde_json::Map::new()));
    serde_json::from_value(value)
        .map_err(|e| Error::protocol(format!("the body of `{what}` is malformed: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_each_message_type_and_ignores_unknown_fields() {
        let response = br#"{"seq":3,"type":"response","request_seq":1,"success":true,"command":"initialize","body":{"x":1},"extra":true}"#;
        match Incoming::parse(response) {
            Ok(Incoming::Response(r)) => {
                assert_eq!(r.request_seq, 1);
                assert!(r.success);
            }
            other => panic!("expected a response, got {other:?}"),
        }
        let event = br#"{"seq":4,"type":"event","event":"initialized"}"#;
        assert!(
            matches!(Incoming::parse(event), Ok(Incoming::Event(e)) if e.event == "initialized" && e.body.is_none())
        );
        let request = br#"{"seq":5,"type":"request","command":"runInTerminal","arguments":{}}"#;
        assert!(
            matches!(Incoming::parse(request), Ok(Incoming::Request(r)) if r.command == "runInTerminal" && r.seq == 5)
        );
        assert!(matches!(
            Incoming::parse(br#"{"type":"telepathy"}"#),
            Ok(Incoming::Unknown(k)) if k == "telepathy"
        ));
    }

    #[test]
    fn rejects_bodies_that_are_not_json() {
        assert!(matches!(Incoming::parse(b"not json"), Err(Error::Protocol { .. })));
    }

    #[test]
    fn omits_absent_arguments_when_sending() {
        let request = OutgoingRequest { seq: 1, kind: "request", command: "threads", arguments: None };
        let text = serde_json::to_string(&request).unwrap_or_default();
        assert_eq!(text, r#"{"seq":1,"type":"request","command":"threads"}"#);
    }
}
