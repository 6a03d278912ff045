//! Jobs a watcher runs in its own process: the job's outcome goes back to the asker as it is,
//! the job asks the watcher's journal, the socket keeps answering while a job runs, a stop lets
//! the job under way answer first (its journal gone), a job whose asker left before it
//! started is not run, and a long job's asker hears that it is under way until its answer.

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
        let answered: Outcome = client::changes(&self.socket, &self.root, since).unwrap().map(|changes| {
            let dirs = match changes.answer {
                Answer::Walk { .. } => Vec::new(),
                Answer::Dirs(dirs) => dirs.into_iter().map(|d| d.path).collect(),
            };
            (changes.token, dirs)
        });
        Performed { outcome: postcard::to_stdvec(&answered).unwrap(), ran: true }
    }
}

/// The journal's token and the directories it named; none once the watcher stopped.
type Outcome = Option<(cairn_watch::Token, Vec<Vec<u8>>)>;

#[test]
fn a_job_runs_in_the_watcher_and_asks_its_journal() {
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
    let (token, dirs) = postcard::from_bytes::<Outcome>(&outcome).unwrap().expect("the journal answered");
    assert!(dirs.is_empty());

    // A change, then a job asking since the first answer: the journal names the directory.
    std::fs::write(root.join("sub/new.txt"), b"x").unwrap();
    let job = postcard::to_stdvec(&token).unwrap();
    let ask = |job: Vec<u8>| {
        let socket = socket.clone();
        std::thread::spawn(move || client::perform(&socket, job).unwrap())
    };
    let asker = ask(job.clone());
    job_started.recv_timeout(Duration::from_secs(20)).unwrap();
    go.send(()).unwrap();
    let Some(Response::Performed { outcome }) = asker.join().unwrap() else { panic!("no outcome") };
    let (_, dirs) = postcard::from_bytes::<Outcome>(&outcome).unwrap().expect("the journal answered");
    assert_eq!(dirs, [b"sub".to_vec()]);

    // Stopped while a job runs: the job still answers before the watcher returns, and finds no
    // journal to ask (a save then walks).
    let asker = ask(job);
    job_started.recv_timeout(Duration::from_secs(20)).unwrap();
    assert!(matches!(client::request(&socket, &Request::Stop).unwrap(), Some(Response::Stopped)));
    go.send(()).unwrap();
    let Some(Response::Performed { outcome }) = asker.join().unwrap() else { panic!("no outcome") };
    assert_eq!(postcard::from_bytes::<Outcome>(&outcome).unwrap(), None);
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

/// Sleeps as many milliseconds as its job says, then answers with the job.
struct Sleeper;

impl Performer for Sleeper {
    fn perform(&mut self, job: &[u8]) -> Performed {
        let millis = u64::from_le_bytes(job.try_into().unwrap());
        std::thread::sleep(Duration::from_millis(millis));
        Performed { outcome: job.to_vec(), ran: true }
    }
}

/// Every answer a raw asker of `job` hears, up to the watcher closing the connection.
fn heard(socket: &std::path::Path, millis: u64) -> Vec<Response> {
    let stream = std::os::unix::net::UnixStream::connect(socket).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let request = Request::Perform { job: millis.to_le_bytes().to_vec() };
    cairn_watch::protocol::send(&mut std::io::BufWriter::new(&stream), &request).unwrap();
    let mut answers = std::io::BufReader::new(stream);
    let mut heard = Vec::new();
    while let Ok(Some(response)) = cairn_watch::protocol::receive::<Response>(&mut answers) {
        heard.push(response);
    }
    heard
}

#[test]
fn a_long_job_is_said_to_be_under_way_until_its_answer_which_comes_last() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let socket = dir.path().join("watch.sock");
    let server = Server::start(ServeOptions::new(socket.clone(), vec![root])).unwrap();
    let serving = std::thread::spawn(move || server.run_performing(Sleeper));
    // Said at once, and every half second while the job runs: past the asker's silence limit.
    for millis in [1_300, 0] {
        let answers = heard(&socket, millis);
        let (last, before) = answers.split_last().unwrap();
        assert!(
            matches!(last, Response::Performed { outcome } if *outcome == millis.to_le_bytes()),
            "{answers:?}"
        );
        assert!(before.iter().all(|r| matches!(r, Response::Working)), "{answers:?}");
        let expected = 1 + millis as usize / 500;
        assert!((expected - 1..=expected + 1).contains(&before.len()), "{millis} ms: {answers:?}");
    }
    // The asker of a job longer than its silence limit waits through it.
    let answer = client::perform(&socket, 3_200u64.to_le_bytes().to_vec()).unwrap();
    assert!(matches!(answer, Some(Response::Performed { .. })), "{answer:?}");
    client::request(&socket, &Request::Stop).unwrap();
    serving.join().unwrap().unwrap();
}
