//! Jobs a watcher runs in its own process: the job's outcome goes back to the asker as it is,
//! the job asks the journal without the socket (whose one thread may be waiting on it), the
//! socket keeps answering while a job runs, a stop lets the job under way answer first, and a
//! job whose asker left before it started is not run.

use std::sync::mpsc::{Receiver, Sender, channel};
use std::time::Duration;

use cairn_watch::client;
use cairn_watch::protocol::{Answer, Request, Response};
use cairn_watch::server::{Performed, Performer, ServeOptions, Server};

/// Answers each job with what the journal says changed below the tree since the job's token,
/// after waiting for the test's go-ahead.
struct Journaled {
    socket: std::path::PathBuf,
    root: std::path::PathBuf,
    started: Sender<()>,
    go: Receiver<()>,
}

impl Performer for Journaled {
    fn perform(&mut self, job: &[u8]) -> Performed {
        self.started.send(()).unwrap();
        self.go.recv_timeout(Duration::from_secs(20)).unwrap();
        let since = (!job.is_empty()).then(|| postcard::from_bytes(job).unwrap());
        let changes = client::changes(&self.socket, &self.root, since).unwrap().unwrap();
        let outcome = match changes.answer {
            Answer::Walk { .. } => postcard::to_stdvec(&(changes.token, Vec::<Vec<u8>>::new())).unwrap(),
            Answer::Dirs(dirs) => {
                postcard::to_stdvec(&(changes.token, dirs.into_iter().map(|d| d.path).collect::<Vec<_>>()))
                    .unwrap()
            }
        };
        Performed { outcome, ran: true }
    }
}

type Outcome = (cairn_watch::Token, Vec<Vec<u8>>);

#[test]
fn a_job_runs_in_the_watcher_and_asks_its_journal_without_the_socket() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("tree/sub")).unwrap();
    let root = dir.path().join("tree").canonicalize().unwrap();
    let socket = dir.path().join("watch.sock");
    let server = Server::start(ServeOptions::new(socket.clone(), vec![root.clone()])).unwrap();
    let (started, job_started) = channel();
    let (go, job_go) = channel();
    let performer = Journaled { socket: socket.clone(), root: root.clone(), started, go: job_go };
    let serving = std::thread::spawn(move || server.run_performing(performer));

    // The first job: the journal has no token yet, so it says walk.
    let asker = {
        let socket = socket.clone();
        std::thread::spawn(move || client::perform(&socket, Vec::new()).unwrap())
    };
    job_started.recv_timeout(Duration::from_secs(20)).unwrap();
    // While the job waits, the socket still answers.
    let Some(Response::Status(status)) = client::request(&socket, &Request::Status).unwrap() else {
        panic!("no status while a job runs")
    };
    assert_eq!(status.performed, 0, "the job is not done yet");
    go.send(()).unwrap();
    let Some(Response::Performed { outcome }) = asker.join().unwrap() else { panic!("no outcome") };
    let (token, dirs): Outcome = postcard::from_bytes(&outcome).unwrap();
    assert!(dirs.is_empty());

    // A change, then a job asking since the first answer: the journal names the directory.
    std::fs::write(root.join("sub/new.txt"), b"x").unwrap();
    let asker = {
        let socket = socket.clone();
        let job = postcard::to_stdvec(&token).unwrap();
        std::thread::spawn(move || client::perform(&socket, job).unwrap())
    };
    job_started.recv_timeout(Duration::from_secs(20)).unwrap();
    // Stopped while the job runs: the job still answers before the watcher returns.
    assert!(matches!(client::request(&socket, &Request::Stop).unwrap(), Some(Response::Stopped)));
    go.send(()).unwrap();
    let Some(Response::Performed { outcome }) = asker.join().unwrap() else { panic!("no outcome") };
    let (_, dirs): Outcome = postcard::from_bytes(&outcome).unwrap();
    assert_eq!(dirs, [b"sub".to_vec()]);
    serving.join().unwrap().unwrap();
    assert!(!socket.exists(), "a stopped watcher's socket is gone");
}

#[test]
fn a_watcher_without_a_performer_refuses_jobs() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let socket = dir.path().join("watch.sock");
    let server = Server::start(ServeOptions::new(socket.clone(), vec![root])).unwrap();
    let serving = std::thread::spawn(move || server.run());
    let answer = client::perform(&socket, b"job".to_vec()).unwrap();
    assert!(matches!(answer, Some(Response::Refused { .. })), "{answer:?}");
    client::request(&socket, &Request::Stop).unwrap();
    serving.join().unwrap().unwrap();
}

#[test]
fn a_job_whose_asker_gave_up_before_it_started_is_not_run() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let socket = dir.path().join("watch.sock");
    let server = Server::start(ServeOptions::new(socket.clone(), vec![root.clone()])).unwrap();
    let (started, job_started) = channel();
    let (go, job_go) = channel();
    let performer = Journaled { socket: socket.clone(), root, started, go: job_go };
    let serving = std::thread::spawn(move || server.run_performing(performer));

    // A first job holds the worker; a second asker hands its job over and leaves at once.
    let first = {
        let socket = socket.clone();
        std::thread::spawn(move || client::perform(&socket, Vec::new()).unwrap())
    };
    job_started.recv_timeout(Duration::from_secs(20)).unwrap();
    {
        let stream = std::os::unix::net::UnixStream::connect(&socket).unwrap();
        let request = Request::Perform { job: Vec::new() };
        cairn_watch::protocol::send(&mut std::io::BufWriter::new(&stream), &request).unwrap();
    }
    // The socket answers in order: once this status is answered, the second job is queued.
    client::request(&socket, &Request::Status).unwrap();
    go.send(()).unwrap();
    assert!(matches!(first.join().unwrap(), Some(Response::Performed { .. })));
    assert!(job_started.recv_timeout(Duration::from_millis(500)).is_err(), "the abandoned job ran");
    let Some(Response::Status(status)) = client::request(&socket, &Request::Status).unwrap() else {
        panic!("no status")
    };
    assert_eq!(status.performed, 1);
    client::request(&socket, &Request::Stop).unwrap();
    serving.join().unwrap().unwrap();
}
