//! The watcher process: the inotify watches of its trees, a thread that reads their events as
//! they come, and a Unix socket that answers saves. Both sides take the same lock, and an answer
//! first reads every queued event, so it covers every change made before the question. A
//! watcher run with a [`Performer`] also runs jobs handed to it (saves), one at a time on a
//! thread of their own, so the socket keeps answering while one runs.

use std::io::{BufReader, BufWriter};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{RecvTimeoutError, Sender, channel};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use rustix::event::{PollFd, PollFlags, poll};

use crate::error::{Error, Result};
use crate::journal::MAX_DIRTY;
use crate::protocol::{self, Answer, Changes, Request, Response, Status, Token};
use crate::watcher::{Watcher, read_limit};

/// How a watcher runs.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// The socket to answer on (in the store, so only the store's owner reaches it).
    pub socket: PathBuf,
    /// The trees to watch from the start (absolute, without symlinks).
    pub roots: Vec<PathBuf>,
    /// How many changed directories a tree's journal holds before it gives up until the next
    /// save (default [`MAX_DIRTY`]).
    pub max_dirty: usize,
}

impl ServeOptions {
    /// A watcher answering on `socket` for `roots`.
    pub fn new(socket: PathBuf, roots: Vec<PathBuf>) -> Self {
        Self { socket, roots, max_dirty: MAX_DIRTY }
    }
}

/// A watcher that is set up and answering; [`Server::run`] serves until asked to stop.
pub struct Server {
    state: Arc<Shared>,
    listener: UnixListener,
    socket: PathBuf,
    /// The socket file's inode when it was bound: another file there (or none) means the store
    /// was deleted or another watcher took its place.
    socket_inode: u64,
}

struct Shared {
    watcher: Mutex<Watcher>,
    epoch: uuid::Uuid,
    /// Jobs run to the end (not declined) since the watcher started.
    performed: AtomicU64,
}

/// Runs the jobs a watcher is handed ([`Request::Perform`]) in the watcher's process.
pub trait Performer: Send + 'static {
    /// Runs `job` (or declines it, saying so in the outcome: the asker then does it itself).
    fn perform(&mut self, job: &[u8]) -> Performed;

    /// Work that can wait until the asker has its answer (tidying after the job).
    fn after(&mut self) {}
}

/// What a [`Performer`] did with a job.
pub struct Performed {
    /// The outcome, in the performer's encoding, sent back as it is.
    pub outcome: Vec<u8>,
    /// False when the job was declined rather than run.
    pub ran: bool,
}

/// The watchers this process runs, by socket. A job a watcher runs asks its journal through
/// them ([`answer_in_process`]) rather than over its own socket.
static IN_PROCESS: Mutex<Vec<(PathBuf, Weak<Shared>)>> = Mutex::new(Vec::new());

/// The answer of the watcher this process runs on `socket`, if it runs one and was not asked
/// to stop: a save that watcher makes needs no connection to learn what its journal holds.
pub(crate) fn answer_in_process(socket: &Path, request: &Request) -> Option<Response> {
    let state = {
        let mut running = IN_PROCESS.lock().unwrap_or_else(|p| p.into_inner());
        running.retain(|(_, state)| state.strong_count() > 0);
        running.iter().find(|(path, _)| path == socket).and_then(|(_, state)| state.upgrade())
    }?;
    Some(answer(&state, request.clone()))
}

impl Server {
    /// Binds the socket (refusing when another watcher answers on it) and watches the trees.
    pub fn start(options: ServeOptions) -> Result<Self> {
        if let Ok(Some(Response::Status(status))) = crate::client::request(&options.socket, &Request::Status)
        {
            return Err(Error::Running { pid: status.pid });
        }
        // Nobody answers: a socket left by a watcher that was killed.
        let _ = std::fs::remove_file(&options.socket);
        let listener = UnixListener::bind(&options.socket).map_err(Error::Socket)?;
        std::fs::set_permissions(&options.socket, std::fs::Permissions::from_mode(0o600))
            .map_err(Error::Socket)?;
        let mut watcher = Watcher::new(options.max_dirty)?;
        for root in &options.roots {
            watcher.watch(root)?;
        }
        let state = Arc::new(Shared {
            watcher: Mutex::new(watcher),
            epoch: uuid::Uuid::now_v7(),
            performed: AtomicU64::new(0),
        });
        let socket_inode = inode(&options.socket).ok_or_else(|| {
            Error::Socket(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "the socket vanished as it was bound",
            ))
        })?;
        IN_PROCESS
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((options.socket.clone(), Arc::downgrade(&state)));
        Ok(Self { state, listener, socket: options.socket, socket_inode })
    }

    /// Each watched tree's figures, before [`Server::run`] answers anyone.
    pub fn roots(&self) -> Vec<crate::protocol::RootStatus> {
        self.state.watcher.lock().unwrap_or_else(|p| p.into_inner()).status()
    }

    /// Reads events and answers requests until a [`Request::Stop`]; removes the socket then.
    /// Jobs are refused: this watcher has nothing to run them with.
    pub fn run(self) -> Result<()> {
        let socket = self.socket.clone();
        let served = self.serve(None);
        forget(&socket);
        served
    }

    /// [`Server::run`], running the jobs handed to it with `performer`. Once stopped, it lets
    /// the job under way finish and answer before it returns.
    pub fn run_performing(self, performer: impl Performer) -> Result<()> {
        let (jobs, queue) = channel::<(Vec<u8>, UnixStream)>();
        let state = self.state.clone();
        let worker = std::thread::spawn(move || {
            let mut performer = performer;
            let ticker = Ticker::start();
            for (job, stream) in queue {
                // An asker that stopped waiting (this watcher was stopped, or busy with another
                // job) does the job itself: running it too would do it twice.
                if hung_up(&stream) {
                    continue;
                }
                let asker = Arc::new(Asker::new(stream));
                let Performed { outcome, ran } = ticker.while_working(&asker, || performer.perform(&job));
                if ran {
                    state.performed.fetch_add(1, Ordering::Relaxed);
                }
                asker.answer(&Response::Performed { outcome });
                performer.after();
            }
        });
        let socket = self.socket.clone();
        let served = self.serve(Some(&jobs));
        drop(jobs);
        let _ = worker.join();
        forget(&socket);
        served
    }

    fn serve(self, jobs: Option<&Sender<(Vec<u8>, UnixStream)>>) -> Result<()> {
        let events = self.state.watcher.lock().unwrap_or_else(|p| p.into_inner()).event_fd()?;
        let reader = self.state.clone();
        // Detached: it blocks in poll until an event comes, and ends with the process.
        std::thread::spawn(move || {
            loop {
                let mut fds = [PollFd::new(&events, PollFlags::IN)];
                match poll(&mut fds, None) {
                    Ok(_) => reader.watcher.lock().unwrap_or_else(|p| p.into_inner()).drain(),
                    Err(rustix::io::Errno::INTR) => {}
                    Err(_) => return,
                }
            }
        });
        // Wakes every few seconds to see that its store is still there: a watcher must not
        // outlive the store it answers for (deleted with `rm -rf`, or its socket replaced).
        let every = rustix::time::Timespec { tv_sec: STORE_CHECK_SECONDS, tv_nsec: 0 };
        loop {
            let mut fds = [PollFd::new(&self.listener, PollFlags::IN)];
            let ready = match poll(&mut fds, Some(&every)) {
                Ok(n) => n > 0,
                Err(rustix::io::Errno::INTR) => false,
                Err(e) => return Err(Error::Socket(e.into())),
            };
            if inode(&self.socket) != Some(self.socket_inode) {
                return Ok(());
            }
            if !ready {
                continue;
            }
            let Ok((stream, _)) = self.listener.accept() else { continue };
            if serve_connection(&self.state, stream, &self.socket, jobs) {
                return Ok(());
            }
        }
    }
}

/// How often a running job's asker hears [`Response::Working`].
const WORKING_EVERY: Duration = Duration::from_millis(500);

/// The asker of the job under way. The worker and the [`Ticker`] both tell it things; once it
/// has its answer nothing more is sent, so a late tick never follows it.
struct Asker(Mutex<(BufWriter<UnixStream>, bool)>);

impl Asker {
    fn new(stream: UnixStream) -> Self {
        Self(Mutex::new((BufWriter::new(stream), false)))
    }

    /// Tells the asker the job is under way, unless it has its answer already.
    fn working(&self) {
        let mut asker = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if !asker.1 {
            let _ = protocol::send(&mut asker.0, &Response::Working);
        }
    }

    /// Sends the job's answer, the last thing the asker hears.
    fn answer(&self, response: &Response) {
        let mut asker = self.0.lock().unwrap_or_else(|p| p.into_inner());
        asker.1 = true;
        let _ = protocol::send(&mut asker.0, response);
    }
}

/// Tells the asker of a running job that it is under way, every [`WORKING_EVERY`] until it is
/// done. One thread for the worker's life: a thread started for each job cost a save that adds
/// nothing a tenth of a millisecond (its start, stack and exit).
struct Ticker(Sender<Option<Arc<Asker>>>);

impl Ticker {
    fn start() -> Self {
        let (jobs, news) = channel::<Option<Arc<Asker>>>();
        // Ends when the worker drops its sender.
        std::thread::spawn(move || {
            let mut current: Option<Arc<Asker>> = None;
            loop {
                let next = match &current {
                    None => news.recv().map_err(|_| RecvTimeoutError::Disconnected),
                    Some(_) => news.recv_timeout(WORKING_EVERY),
                };
                match next {
                    Ok(asker) => current = asker,
                    Err(RecvTimeoutError::Timeout) => current.iter().for_each(|asker| asker.working()),
                    Err(RecvTimeoutError::Disconnected) => return,
                }
            }
        });
        Self(jobs)
    }

    /// Runs `job`, telling `asker` it is under way at once and every [`WORKING_EVERY`] after.
    fn while_working<T>(&self, asker: &Arc<Asker>, job: impl FnOnce() -> T) -> T {
        asker.working();
        let _ = self.0.send(Some(asker.clone()));
        let done = job();
        let _ = self.0.send(None);
        done
    }
}

/// True when the other end of `stream` has closed it.
fn hung_up(stream: &UnixStream) -> bool {
    let mut fds = [PollFd::new(stream, PollFlags::RDHUP)];
    let now = rustix::time::Timespec { tv_sec: 0, tv_nsec: 0 };
    matches!(poll(&mut fds, Some(&now)), Ok(n) if n > 0)
        && fds[0].revents().intersects(PollFlags::RDHUP | PollFlags::HUP | PollFlags::ERR)
}

/// Takes the watcher on `socket` out of [`IN_PROCESS`] once it stopped: it answers nobody.
fn forget(socket: &Path) {
    IN_PROCESS.lock().unwrap_or_else(|p| p.into_inner()).retain(|(path, _)| path != socket);
}

/// How often a waiting watcher checks that its store still exists.
const STORE_CHECK_SECONDS: i64 = 2;

/// The inode of the file at `path`, if there is one.
fn inode(path: &Path) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    std::fs::symlink_metadata(path).ok().map(|m| m.ino())
}

/// Answers one connection's requests; true when one of them was [`Request::Stop`], whose
/// answer goes out once the socket is gone, so nobody reaches a watcher that has stopped. A
/// job goes to `jobs` with the connection, which answers it when it is done.
fn serve_connection(
    state: &Shared,
    stream: UnixStream,
    socket: &Path,
    jobs: Option<&Sender<(Vec<u8>, UnixStream)>>,
) -> bool {
    // A client that stops talking must not hold the watcher up for long.
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let _ = stream.set_write_timeout(Some(Duration::from_secs(10)));
    let Ok(write_half) = stream.try_clone() else { return false };
    let (mut reader, mut writer) = (BufReader::new(stream), BufWriter::new(write_half));
    while let Ok(Some(request)) = protocol::receive::<Request>(&mut reader) {
        let request = match (request, jobs) {
            (Request::Perform { job }, Some(jobs)) => {
                let Ok(stream) = writer.into_inner() else { return false };
                let _ = jobs.send((job, stream));
                return false;
            }
            (request, _) => request,
        };
        let stop = matches!(request, Request::Stop);
        if stop {
            // Nobody reaches a stopped watcher, in this process either: a job still running
            // finds no journal and walks.
            let _ = std::fs::remove_file(socket);
            forget(socket);
        }
        let response = answer(state, request);
        if protocol::send(&mut writer, &response).is_err() || stop {
            return stop;
        }
    }
    false
}

fn answer(state: &Shared, request: Request) -> Response {
    let mut watcher = state.watcher.lock().unwrap_or_else(|p| p.into_inner());
    match request {
        Request::Changes { .. } => Response::Changes(Changes {
            token: Token { epoch: state.epoch, seq: 0 },
            answer: Answer::Walk {
                reason: "the watcher runs another version of cairn: restart it".to_owned(),
            },
        }),
        Request::ChangedEntries { root, since } => {
            watcher.drain();
            let restarted = since.is_some_and(|t| t.epoch != state.epoch);
            let since = since.filter(|t| t.epoch == state.epoch).map(|t| t.seq);
            match watcher.changes(&root, since) {
                Some((seq, mut answer)) => {
                    if let (true, Answer::Walk { reason }) = (restarted, &mut answer) {
                        *reason = "the watcher was restarted since the last save".to_owned();
                    }
                    Response::Changes(Changes { token: Token { epoch: state.epoch, seq }, answer })
                }
                None => {
                    Response::Refused { message: format!("the watcher does not watch {}", root.display()) }
                }
            }
        }
        Request::Watch { root } => match watcher.watch(&root) {
            Ok(dirs) => Response::Watching { dirs },
            Err(e) => Response::Refused { message: e.to_string() },
        },
        Request::Status => {
            watcher.drain();
            Response::Status(Status {
                pid: std::process::id(),
                epoch: state.epoch,
                roots: watcher.status(),
                max_user_watches: read_limit("max_user_watches"),
                max_queued_events: read_limit("max_queued_events"),
                performed: state.performed.load(Ordering::Relaxed),
            })
        }
        Request::Stop => Response::Stopped,
        Request::Perform { .. } => {
            Response::Refused { message: "this watcher runs no jobs: it was started without a store".into() }
        }
    }
}

/// The socket of the watcher serving the store at `store`.
pub fn socket_path(store: &Path) -> PathBuf {
    store.join("watch.sock")
}
