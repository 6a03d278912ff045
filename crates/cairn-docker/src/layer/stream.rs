//! Bridges between bollard's byte streams and the synchronous `tar` crate.

use std::io::Read;

use bytes::Bytes;
use futures_util::{Stream, TryStreamExt};
use tokio::sync::mpsc;
use tokio_util::io::{StreamReader, SyncIoBridge};

/// Turns an engine byte stream into a blocking reader; use only off the runtime threads.
pub(crate) fn blocking_reader<S>(stream: S) -> impl Read + Send
where
    S: Stream<Item = Result<Bytes, bollard::errors::Error>> + Send + Unpin + 'static,
{
    SyncIoBridge::new(StreamReader::new(stream.map_err(std::io::Error::other)))
}

/// Feeds a blocking reader into a request body, 256 KiB at a time, from a blocking thread.
pub(crate) fn body_from_reader<R: Read + Send + 'static>(
    mut reader: R,
) -> impl Stream<Item = Result<Bytes, std::io::Error>> + Send + 'static {
    let (tx, rx) = mpsc::channel::<Result<Bytes, std::io::Error>>(4);
    tokio::task::spawn_blocking(move || {
        let mut buf = vec![0u8; 256 * 1024];
        loop {
            match reader.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    if tx.blocking_send(Ok(Bytes::copy_from_slice(&buf[..n]))).is_err() {
                        break;
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    let _ = tx.blocking_send(Err(e));
                    break;
                }
            }
        }
    });
    futures_util::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|item| (item, rx)) })
}
