//! Running another program under bounds: a docker credential helper (`liveproof-registry`), a
//! kubeconfig's exec plugin and git (`liveproof-gather`, `liveproof-lint`). A program that hangs, or prints without end, or exits
//! while a child it started still holds its stdout, must not hold liveproof past its own
//! bound: each run has a deadline, its output a cap, and it runs in a process group of its own
//! that is killed whole when either is passed. A process that left that group (`setsid`, a
//! daemon's double fork) is killed with it, and its own group and session too: each run gives
//! the program a variable ([`RUN_MARK`]) valued for that run alone, which every process it
//! starts inherits, and `/proc` is searched for it when the run is killed. (Without unsafe
//! code there is no `setsid` before `exec` to put the program in a session of its own, and a
//! child subreaper would adopt every orphan of the process, not only this run's.)
//!
//! Nothing a program prints, nor its arguments or environment, ever appears in an error here:
//! any of them can be a credential.

use std::io::Write as _;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use std::os::unix::process::CommandExt as _;

/// After the program itself exited, how long a child it left holding its stdout may keep it
/// before the program's process group is killed.
const EXIT_GRACE: Duration = Duration::from_millis(500);

/// What a credential program may print: far more than any real credential (a kubeconfig's
/// exec plugin returns a token or a certificate and key; a docker helper a user and secret).
pub const MAX_OUTPUT: usize = 1 << 20;

/// Why a credential program gave no answer. The messages name no argument, environment
/// variable or output of the program.
#[derive(Debug, thiserror::Error)]
pub enum ProgramError {
    #[error("it could not be started: {0}")]
    Start(#[source] std::io::Error),
    #[error("it did not finish within {}; its process group was killed", seconds(*.0))]
    TimedOut(Duration),
    #[error("it printed more than {0} bytes; its process group was killed")]
    TooMuchOutput(usize),
    #[error("reading its output failed: {0}")]
    Io(#[source] std::io::Error),
}

/// `0.3s`, `8s`: a bound as a person reads it (a deadline's remainder is rarely whole).
fn seconds(d: Duration) -> String {
    let tenths = (d.as_millis() + 50) / 100;
    if tenths % 10 == 0 {
        format!("{}s", tenths / 10)
    } else {
        format!("{}.{}s", tenths / 10, tenths % 10)
    }
}

/// A program that ran to its end.
#[derive(Debug)]
pub struct Finished {
    pub status: ExitStatus,
    /// At most `max_output` bytes.
    pub stdout: Vec<u8>,
    /// Captured only when asked for; at most `max_output` bytes.
    pub stderr: Vec<u8>,
}

/// How a program is run: its stdin (`None`: as `command` set it up), whether its stderr is
/// captured (else as `command` set it up), its deadline and its output cap.
#[derive(Debug, Clone, Copy)]
pub struct Bounds<'a> {
    pub stdin: Option<&'a [u8]>,
    pub capture_stderr: bool,
    pub timeout: Duration,
    pub max_output: usize,
}

/// How long one git command may take. Every one liveproof runs reads a local repository
/// (nothing is fetched) and takes milliseconds; one that hangs (a stalled network file
/// system, a lock, a prompt) ends here instead of holding the command forever.
pub const GIT_TIMEOUT: Duration = Duration::from_secs(60);

/// The most of git's output kept: past any file or diff liveproof reads through it (manifests
/// as of a commit are at most 64 MiB each).
pub const MAX_GIT_OUTPUT: usize = 256 << 20;

/// `program` (git) `-C repo args…` within `timeout` and [`MAX_GIT_OUTPUT`]: its messages in
/// English (callers match them), no prompt, no stdin, its stderr captured. Blocking.
pub fn git(
    program: &std::path::Path,
    timeout: Duration,
    repo: &std::path::Path,
    args: &[&str],
) -> Result<std::process::Output, ProgramError> {
    git_with_input(program, timeout, repo, args, None)
}

/// [`git`] with `input` on its stdin (`git cat-file --batch` reads the objects it is asked
/// for there).
pub fn git_with_input(
    program: &std::path::Path,
    timeout: Duration,
    repo: &std::path::Path,
    args: &[&str],
    input: Option<&[u8]>,
) -> Result<std::process::Output, ProgramError> {
    let mut command = Command::new(program);
    command
        .arg("-C")
        .arg(repo)
        .args(args)
        .env("LC_ALL", "C")
        .env("LANGUAGE", "C")
        // Never wait on a person: there is none.
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(Stdio::null());
    let bounds = Bounds {
        stdin: input,
        capture_stderr: true,
        timeout,
        max_output: MAX_GIT_OUTPUT,
    };
    run(command, bounds).map(|done| std::process::Output {
        status: done.status,
        stdout: done.stdout,
        stderr: done.stderr,
    })
}

/// The environment variable each program run here is given, valued for that run alone
/// (`PID.N.RANDOM`): whatever it starts inherits it, so a process that left the run's process
/// group is still known to be the run's. Not a credential, and not read by anything else.
pub const RUN_MARK: &str = "LIVEPROOF_PROCESS_RUN";

/// A value of [`RUN_MARK`] no other run of this process, or of an earlier process that had
/// the same PID, has had.
fn run_mark() -> String {
    use std::hash::{BuildHasher as _, Hasher as _};
    static RUNS: AtomicU64 = AtomicU64::new(0);
    let n = RUNS.fetch_add(1, Ordering::Relaxed);
    let mut random = std::collections::hash_map::RandomState::new().build_hasher();
    random.write_u64(n);
    format!("{}.{n}.{:016x}", std::process::id(), random.finish())
}

/// Kills a run: its process group, then every process carrying its mark (one that left the
/// group with `setsid`, or a daemon's double fork) with that process's own group and, when it
/// leads a session, everything in that session. Never liveproof's own group or session.
fn kill_run(group: rustix::process::Pid, mark: &str) {
    use rustix::process::{kill_process, kill_process_group, Pid, Signal};
    // ESRCH (gone already) is what we wanted anyway.
    let _ = kill_process_group(group, Signal::KILL);
    // Our own group and session as `/proc` numbers them: 0 when they lie outside this PID
    // namespace (a container's runner), which rustix's `getpgrp`/`getsid` cannot return.
    let own = own_stat();
    // Again while any is found: one may have forked while the last sweep ran.
    for _ in 0..5 {
        let marked = processes_marked(mark);
        if marked.is_empty() {
            return;
        }
        for p in &marked {
            if let Some(pid) = Pid::from_raw(p.pid) {
                let _ = kill_process(pid, Signal::KILL);
            }
            if own.as_ref().is_some_and(|own| p.group != own.group) {
                if let Some(group) = Pid::from_raw(p.group) {
                    let _ = kill_process_group(group, Signal::KILL);
                }
            }
            if p.session == p.pid && own.as_ref().is_some_and(|own| p.session != own.session) {
                for member in processes_in_session(p.session) {
                    if let Some(member) = Pid::from_raw(member) {
                        let _ = kill_process(member, Signal::KILL);
                    }
                }
            }
        }
    }
}

/// A process as `/proc/PID/stat` tells it, in raw numbers: a group or session led from outside
/// this PID namespace reads 0 there.
struct Proc {
    pid: i32,
    group: i32,
    session: i32,
}

/// This process's own `/proc` entry, or `None` when it cannot be read (then no group or
/// session but the run's own is killed).
fn own_stat() -> Option<Proc> {
    stat_of("self", i32::try_from(std::process::id()).ok()?)
}

/// Every process but this one whose environment holds `RUN_MARK=mark`, alive (a zombie's
/// environment is empty).
fn processes_marked(mark: &str) -> Vec<Proc> {
    let needle = format!("{RUN_MARK}={mark}\0").into_bytes();
    all_processes()
        .filter(|p| {
            std::fs::read(format!("/proc/{}/environ", p.pid))
                .is_ok_and(|env| env.windows(needle.len()).any(|w| w == needle.as_slice()))
        })
        .collect()
}

/// Every process of the session `session`.
fn processes_in_session(session: i32) -> impl Iterator<Item = i32> {
    all_processes()
        .filter(move |p| p.session == session)
        .map(|p| p.pid)
}

/// Every process `/proc` shows, but this one.
fn all_processes() -> impl Iterator<Item = Proc> {
    let own = std::process::id();
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .filter_map(|entry| entry.file_name().to_str()?.parse::<i32>().ok())
        .filter(move |&pid| pid > 0 && u32::try_from(pid).is_ok_and(|p| p != own))
        .filter_map(|pid| stat_of(&pid.to_string(), pid))
}

/// `/proc/ENTRY/stat`: `PID (COMM) STATE PPID PGRP SESSION …`; COMM may hold spaces and
/// parentheses.
fn stat_of(entry: &str, pid: i32) -> Option<Proc> {
    let stat = std::fs::read_to_string(format!("/proc/{entry}/stat")).ok()?;
    let mut after = stat.rsplit_once(')')?.1.split_whitespace().skip(2);
    let group = after.next()?.parse().ok()?;
    let session = after.next()?.parse().ok()?;
    Some(Proc {
        pid,
        group,
        session,
    })
}

/// Runs `command` within `bounds` (blocking: call it from a blocking thread in async code).
/// It runs in a process group of its own; the run is killed ([`kill_run`]: the group and every
/// process that left it) when the deadline passes, when it prints more than the cap, and when
/// it exited but a child it left keeps its stdout open (the output it had printed is kept
/// then). A program that answered and exited is left its other children (a credential agent
/// it started, as `gpg` starts `gpg-agent`).
pub fn run(mut command: Command, bounds: Bounds<'_>) -> Result<Finished, ProgramError> {
    let deadline = Instant::now() + bounds.timeout;
    let mark = run_mark();
    command
        .env(RUN_MARK, &mark)
        .process_group(0)
        .stdout(Stdio::piped());
    if bounds.stdin.is_some() {
        command.stdin(Stdio::piped());
    }
    if bounds.capture_stderr {
        command.stderr(Stdio::piped());
    }
    let mut child = command.spawn().map_err(ProgramError::Start)?;
    let group = rustix::process::Pid::from_child(&child);
    let kill_group = || kill_run(group, &mark);
    if let (Some(input), Some(mut pipe)) = (bounds.stdin, child.stdin.take()) {
        // A thread: a program that never reads its stdin must not block us on a full pipe.
        let input = input.to_vec();
        std::thread::spawn(move || {
            let _ = pipe.write_all(&input);
        });
    }
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let stdout = Captured::spawn(child.stdout.take(), bounds.max_output, done_tx.clone());
    let stderr = Captured::spawn(child.stderr.take(), bounds.max_output, done_tx);
    let mut readers_left = usize::from(stdout.is_some()) + usize::from(stderr.is_some());
    let mut exited: Option<(ExitStatus, Instant)> = None;
    loop {
        let over = |c: &Option<Captured>| c.as_ref().is_some_and(Captured::over);
        if over(&stdout) || over(&stderr) {
            kill_group();
            let _ = child.wait();
            return Err(ProgramError::TooMuchOutput(bounds.max_output));
        }
        if exited.is_none() {
            if let Some(status) = child.try_wait().map_err(ProgramError::Io)? {
                exited = Some((status, Instant::now()));
            }
        }
        match exited {
            Some((status, _)) if readers_left == 0 => return status_with(status, stdout, stderr),
            Some((status, at)) if at.elapsed() >= EXIT_GRACE || Instant::now() >= deadline => {
                // A child it left holds the pipe open: what it printed by now is the answer.
                kill_group();
                return status_with(status, stdout, stderr);
            }
            None if Instant::now() >= deadline => {
                kill_group();
                let _ = child.wait();
                return Err(ProgramError::TimedOut(bounds.timeout));
            }
            _ => {}
        }
        // Woken by a reader finishing, or every few milliseconds to look at the process.
        match done_rx.recv_timeout(Duration::from_millis(10)) {
            Ok(()) => readers_left = readers_left.saturating_sub(1),
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => readers_left = 0,
        }
    }
}

fn status_with(
    status: ExitStatus,
    stdout: Option<Captured>,
    stderr: Option<Captured>,
) -> Result<Finished, ProgramError> {
    let take = |c: Option<Captured>| c.map(Captured::take).transpose();
    Ok(Finished {
        status,
        stdout: take(stdout)?.unwrap_or_default(),
        stderr: take(stderr)?.unwrap_or_default(),
    })
}

/// One of a program's output pipes, read on a thread of its own into a shared buffer (so what
/// was read is there even when the pipe never closes), up to one byte past the cap.
struct Captured {
    buffer: Arc<Mutex<(Vec<u8>, Option<std::io::Error>)>>,
    max: usize,
}

impl Captured {
    fn spawn(
        pipe: Option<impl std::io::Read + Send + 'static>,
        max: usize,
        done: mpsc::Sender<()>,
    ) -> Option<Captured> {
        let mut pipe = pipe?;
        let buffer = Arc::new(Mutex::new((Vec::new(), None)));
        let shared = Arc::clone(&buffer);
        std::thread::spawn(move || {
            let mut chunk = [0u8; 8192];
            loop {
                match pipe.read(&mut chunk) {
                    Ok(0) => break,
                    Ok(n) => {
                        let Ok(mut guard) = shared.lock() else { break };
                        guard.0.extend_from_slice(&chunk[..n]);
                        if guard.0.len() > max {
                            break;
                        }
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => {
                        if let Ok(mut guard) = shared.lock() {
                            guard.1 = Some(e);
                        }
                        break;
                    }
                }
            }
            let _ = done.send(());
        });
        Some(Captured { buffer, max })
    }

    fn over(&self) -> bool {
        self.buffer.lock().map_or(true, |g| g.0.len() > self.max)
    }

    fn take(self) -> Result<Vec<u8>, ProgramError> {
        let mut guard = self
            .buffer
            .lock()
            .map_err(|_| ProgramError::Io(std::io::Error::other("output reader failed")))?;
        if let Some(e) = guard.1.take() {
            return Err(ProgramError::Io(e));
        }
        Ok(std::mem::take(&mut guard.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Command {
        let mut c = Command::new("/bin/sh");
        c.arg("-c").arg(script);
        c
    }

    fn bounds(timeout: Duration) -> Bounds<'static> {
        Bounds {
            stdin: None,
            capture_stderr: true,
            timeout,
            max_output: 1024,
        }
    }

    #[test]
    fn a_program_that_answers_is_read_whole() {
        let out = run(
            sh("read line; echo \"got $line\"; echo err >&2"),
            Bounds {
                stdin: Some(b"x\n"),
                ..bounds(Duration::from_secs(10))
            },
        )
        .expect("runs");
        assert!(out.status.success());
        assert_eq!(out.stdout, b"got x\n");
        assert_eq!(out.stderr, b"err\n");
    }

    #[test]
    fn a_hung_program_is_killed_at_its_deadline_with_its_children() {
        let dir = tempfile::tempdir().expect("tempdir");
        let pid_file = dir.path().join("child.pid");
        let script = format!("sleep 1000 & echo $! > {}; wait", pid_file.display());
        let err = run(sh(&script), bounds(Duration::from_millis(500))).expect_err("times out");
        assert!(matches!(err, ProgramError::TimedOut(_)), "{err}");
        let child: u32 = std::fs::read_to_string(&pid_file)
            .expect("pid")
            .trim()
            .parse()
            .expect("a pid");
        assert!(
            gone(child),
            "the child {child} of the hung program still runs"
        );
    }

    #[test]
    fn a_child_left_holding_stdout_does_not_hold_the_answer() {
        let dir = tempfile::tempdir().expect("tempdir");
        let pid_file = dir.path().join("child.pid");
        let script = format!(
            "echo token; sleep 1000 & echo $! > {}; exit 0",
            pid_file.display()
        );
        let out = run(sh(&script), bounds(Duration::from_secs(20))).expect("answers");
        assert_eq!(out.stdout, b"token\n");
        let child: u32 = std::fs::read_to_string(&pid_file)
            .expect("pid")
            .trim()
            .parse()
            .expect("a pid");
        assert!(gone(child), "the child {child} holding stdout still runs");
    }

    /// A process a hung program started in a session of its own (`setsid`), orphaned by a
    /// subshell that exited, left the program's process group: killing the group missed it,
    /// and it outlived the run. It is killed with the run.
    #[test]
    fn a_setsid_grandchild_is_killed_with_the_run() {
        let dir = tempfile::tempdir().expect("tempdir");
        let pid_file = dir.path().join("grandchild.pid");
        let pid_path = pid_file.display();
        let script = format!(
            "( setsid sh -c 'echo $$ > {pid_path}.tmp; mv {pid_path}.tmp {pid_path}; exec sleep 1000' & )\n\
             while [ ! -s {pid_path} ]; do sleep 0.01; done\n\
             sleep 1000"
        );
        let err = run(sh(&script), bounds(Duration::from_secs(5))).expect_err("times out");
        assert!(matches!(err, ProgramError::TimedOut(_)), "{err}");
        let grandchild: i32 = std::fs::read_to_string(&pid_file)
            .expect("pid")
            .trim()
            .parse()
            .expect("a pid");
        let _killed = Kill(grandchild);
        assert!(
            gone(grandchild.unsigned_abs()),
            "the setsid grandchild {grandchild} of the hung program still runs"
        );
    }

    /// Kills the process when dropped, so a failed test leaves nothing running.
    struct Kill(i32);

    impl Drop for Kill {
        fn drop(&mut self) {
            if let Some(pid) = rustix::process::Pid::from_raw(self.0) {
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
            }
        }
    }

    #[test]
    fn endless_output_is_cut_at_the_cap() {
        let err = run(sh("cat /dev/zero"), bounds(Duration::from_secs(20))).expect_err("capped");
        assert!(matches!(err, ProgramError::TooMuchOutput(1024)), "{err}");
    }

    #[test]
    fn a_program_that_does_not_exist_is_a_start_error() {
        let err = run(
            Command::new("/nonexistent/credential-program"),
            bounds(Duration::from_secs(5)),
        )
        .expect_err("no such program");
        assert!(matches!(err, ProgramError::Start(_)), "{err}");
    }

    /// In a container whose runner leads the session from outside its PID namespace, `/proc`
    /// numbers liveproof's own group and session 0; reading them once panicked (rustix's
    /// `getpgrp` asserts a positive number) and killing a run took liveproof down with exit
    /// 101 (CI ran this way). This crate's kill tests are run again in such a namespace where
    /// `unshare` can make one (root, or user namespaces); elsewhere there is nothing to run.
    #[test]
    fn a_run_is_killed_in_a_pid_namespace_entered_from_outside() {
        const INSIDE: &str = "LIVEPROOF_PROCESS_TEST_IN_NAMESPACE";
        if std::env::var_os(INSIDE).is_some() {
            return;
        }
        let can = Command::new("unshare")
            .args(["-pf", "--mount-proc", "true"])
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !can {
            return;
        }
        let me = std::env::current_exe().expect("the test executable");
        let out = Command::new("unshare")
            .args(["-pf", "--mount-proc"])
            .arg(me)
            .args(["--exact", "--test-threads=1"])
            .args([
                "tests::a_hung_program_is_killed_at_its_deadline_with_its_children",
                "tests::a_setsid_grandchild_is_killed_with_the_run",
                "tests::endless_output_is_cut_at_the_cap",
            ])
            .env(INSIDE, "1")
            .output()
            .expect("unshare runs");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && text.contains("3 passed"),
            "the kill tests in a PID namespace: {}\n{}",
            text,
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Whether `pid` no longer runs (a zombie, reaped by init soon, counts as gone).
    fn gone(pid: u32) -> bool {
        for _ in 0..100 {
            match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
                Err(_) => return true,
                Ok(stat)
                    if stat
                        .rsplit(')')
                        .next()
                        .is_some_and(|s| s.trim_start().starts_with('Z')) =>
                {
                    return true
                }
                Ok(_) => std::thread::sleep(Duration::from_millis(20)),
            }
        }
        false
    }
}
