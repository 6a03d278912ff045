//! Entry points for the fuzz targets (`crates/cairn-fuzz`): untrusted adapter output, parsed
//! as the client parses it. Not part of the supported API.

/// Reads every framed message of `bytes` as the adapter reader does, and parses each body.
pub fn framing(bytes: &[u8]) {
    let runtime = match tokio::runtime::Builder::new_current_thread().build() {
        Ok(r) => r,
        Err(_) => return,
    };
    runtime.block_on(async {
        let mut reader = tokio::io::BufReader::new(bytes);
        while let Ok(Some(body)) = crate::transport::read_message(&mut reader, "fuzz").await {
            let _ = crate::protocol::Incoming::parse(&body);
        }
    });
}
