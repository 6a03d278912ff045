//! Content-Length framing of DAP messages over any byte stream (a child's stdio or a TCP
//! socket): a header block of `Name: value` lines ended by an empty line, then exactly
//! `Content-Length` bytes of JSON.

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::error::{Error, Result};

/// Largest message body accepted; a larger length is a corrupt header, not a real message,
/// and refusing it keeps a bad peer from making us allocate without bound.
const MAX_BODY: usize = 256 * 1024 * 1024;

/// Longest header line accepted, for the same reason.
const MAX_HEADER_LINE: usize = 8 * 1024;

/// Reads one framed message body. Returns `Ok(None)` on a clean end of stream between
/// messages; an end of stream inside a message is an error.
pub(crate) async fn read_message<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    channel: &str,
) -> Result<Option<Vec<u8>>> {
    let mut content_length: Option<usize> = None;
    let mut saw_header = false;
    let mut line = Vec::new();
    loop {
        line.clear();
        let n = (&mut *reader)
            .take(MAX_HEADER_LINE as u64 + 1)
            .read_until(b'\n', &mut line)
            .await
            .map_err(|source| io_error(channel, source))?;
        if n == 0 {
            if saw_header {
                return Err(Error::protocol("the stream ended inside a message header"));
            }
            return Ok(None);
        }
        if line.len() > MAX_HEADER_LINE {
            return Err(Error::protocol("a header line is longer than 8 KiB"));
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\r', '\n']);
        if text.is_empty() {
            if !saw_header {
                // Tolerate stray blank lines between messages.
                continue;
            }
            break;
        }
        saw_header = true;
        if let Some((name, value)) = text.split_once(':')
            && name.trim().eq_ignore_ascii_case("content-length")
        {
            let length = value
                .trim()
                .parse::<usize>()
                .map_err(|_| Error::protocol(format!("Content-Length `{}` is not a number", value.trim())))?;
            content_length = Some(length);
        }
    }
    let length = content_length.ok_or_else(|| Error::protocol("a message header has no Content-Length"))?;
    if length > MAX_BODY {
        return Err(Error::protocol(format!("a message claims {length} bytes, more than the 256 MiB limit")));
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).await.map_err(|source| io_error(channel, source))?;
    Ok(Some(body))
}

/// Writes one message body with its header and flushes it.
pub(crate) async fn write_message<W: AsyncWrite + Unpin + ?Sized>(
    writer: &mut W,
    channel: &str,
    body: &[u8],
) -> Result<()> {
    let header = format!("Content-Length: {}\r\n\r\n", body.len());
    let mut frame = Vec::with_capacity(header.len() + body.len());
    frame.extend_from_slice(header.as_bytes());
    frame.extend_from_slice(body);
    writer.write_all(&frame).await.map_err(|source| io_error(channel, source))?;
    writer.flush().await.map_err(|source| io_error(channel, source))
}

fn io_error(channel: &str, source: std::io::Error) -> Error {
    Error::Io { channel: channel.to_owned(), source }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::BufReader;

    #[tokio::test]
    async fn round_trips_messages_and_ends_cleanly() {
        let mut wire = Vec::new();
        write_message(&mut wire, "test", br#"{"a":1}"#).await.expect("write");
        write_message(&mut wire, "test", "{\"é\":2}".as_bytes()).await.expect("write");
        let mut reader = BufReader::new(wire.as_slice());
        let first = read_message(&mut reader, "test").await.expect("read");
        assert_eq!(first.as_deref(), Some(&br#"{"a":1}"#[..]));
        let second = read_message(&mut reader, "test").await.expect("read");
        assert_eq!(second.as_deref(), Some("{\"é\":2}".as_bytes()));
        assert!(read_message(&mut reader, "test").await.expect("eof").is_none());
    }

    #[tokio::test]
    async fn accepts_extra_headers_in_any_case() {
        let wire = b"Content-Type: application/json\r\ncontent-length: 2\r\n\r\n{}";
        let mut reader = BufReader::new(&wire[..]);
        let body = read_message(&mut reader, "test").await.expect("read");
        assert_eq!(body.as_deref(), Some(&b"{}"[..]));
    }

    #[tokio::test]
    async fn refuses_bad_headers_and_truncated_bodies() {
        for wire in [
            &b"Content-Length: x\r\n\r\n{}"[..],
            &b"Content-Type: json\r\n\r\n{}"[..],
            &b"Content-Length: 10\r\n\r\n{}"[..],
            &b"Content-Length: 999999999999\r\n\r\n"[..],
            &b"Content-Length: 2\r\n"[..],
        ] {
            let mut reader = BufReader::new(wire);
            assert!(
                read_message(&mut reader, "test").await.is_err(),
                "accepted {:?}",
                String::from_utf8_lossy(wire)
            );
        }
    }
}
