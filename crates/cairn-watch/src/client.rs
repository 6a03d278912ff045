//! Asking a running watcher. No watcher is not an error: the caller walks the tree, as it
//! would without one.

use std::io::{BufReader, BufWriter};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

use crate::error::{Error, Result};
use crate::protocol::{self, Changes, Request, Response, Token};

/// How long a save waits for an answer before it walks instead.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(5);

/// How long a job's asker waits for the watcher to say it is working on it, and between two
/// such words ([`Response::Working`]): a watcher that is stopped (`kill -STOP`, Ctrl-Z in its
/// terminal) or busy with another job falls silent, and the asker does the job itself.
const SILENCE_LIMIT: Duration = Duration::from_secs(3);

/// Sends one request to the watcher on `socket`; `None` when no watcher answers there.
pub fn request(socket: &Path, request: &Request) -> Result<Option<Response>> {
    let Some(mut answers) = ask(socket, request, ANSWER_TIMEOUT)? else { return Ok(None) };
    answer(&mut answers).map(Some)
}

/// Hands `job` to the watcher on `socket` to run in its process ([`Request::Perform`]) and
/// waits for the outcome as long as the job takes (a save of a large tree can take minutes),
/// provided the watcher keeps saying it is working on it; `None` when no watcher answers there.
pub fn perform(socket: &Path, job: Vec<u8>) -> Result<Option<Response>> {
    let Some(mut answers) = ask(socket, &Request::Perform { job }, SILENCE_LIMIT)? else { return Ok(None) };
    loop {
        match answer(&mut answers)? {
            Response::Working => {}
            outcome => return Ok(Some(outcome)),
        }
    }
}

/// Sends `request`; the stream its answers come on, each awaited at most `wait`.
fn ask(socket: &Path, request: &Request, wait: Duration) -> Result<Option<BufReader<UnixStream>>> {
    let stream = match UnixStream::connect(socket) {
        Ok(s) => s,
        Err(e)
            if matches!(e.kind(), std::io::ErrorKind::NotFound | std::io::ErrorKind::ConnectionRefused) =>
        {
            return Ok(None);
        }
        Err(e) => return Err(Error::Socket(e)),
    };
    stream.set_read_timeout(Some(wait)).map_err(Error::Socket)?;
    stream.set_write_timeout(Some(ANSWER_TIMEOUT)).map_err(Error::Socket)?;
    let mut writer = BufWriter::new(stream.try_clone().map_err(Error::Socket)?);
    protocol::send(&mut writer, request)?;
    drop(writer);
    Ok(Some(BufReader::new(stream)))
}

/// The next answer on `answers`.
fn answer(answers: &mut BufReader<UnixStream>) -> Result<Response> {
    protocol::receive::<Response>(answers)?
        .ok_or_else(|| Error::Protocol("the watcher closed the connection".into()))
}

/// What changed below `root` since `since`; `None` when no watcher runs for the store. Asked
/// by a job the watcher runs itself, its journal answers directly, without a trip over the
/// socket.
pub fn changes(socket: &Path, root: &Path, since: Option<Token>) -> Result<Option<Changes>> {
    let asked = Request::ChangedEntries { root: root.to_owned(), since };
    let answer = match crate::server::answer_in_process(socket, &asked) {
        Some(answer) => Some(answer),
        None => request(socket, &asked)?,
    };
    match answer {
        None => Ok(None),
        Some(Response::Changes(c)) => Ok(Some(c)),
        Some(Response::Refused { message }) => Err(Error::Refused(message)),
        Some(other) => Err(Error::Protocol(format!("unexpected answer {other:?}"))),
    }
}
