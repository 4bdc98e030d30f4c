//! The host ↔ den page protocol, as the host sees it: the version, the message kinds, and the
//! bounds the host applies to everything a den page sends.
//!
//! A den page runs user code (through Python's `js` module the worker can post anything), so
//! every message from it is treated as hostile: the browser glue reads a message field by field
//! with strict type checks, bounded before anything is copied (see [`ReplyLimits`]), into the
//! types below; a reply that breaks a rule is refused as a whole with a [`ReplyError`], the run
//! ends as `crashed`, and the den page is replaced. [`schema`] describes every message of the three
//! hops (host ↔ den page ↔ worker); `den-page/protocol.d.ts` and the message table of
//! docs/architecture.md are generated from it.

use std::fmt;

/// The protocol version a den page announces in `hello`; the host refuses any other.
pub const PROTOCOL_VERSION: u32 = 13;

/// Longest path a den page may name (the path rules' own limit).
pub const MAX_PATH_BYTES: usize = crate::paths::MAX_PATH_BYTES;
/// Most parts (runs of one stream's text, in print order) in one `out` message. Output that
/// switches between stdout and stderr at every character still goes in few messages: the
/// worker flushes at this many parts, as at 8 KiB or 15 ms.
pub const MAX_OUT_PARTS: usize = 1024;
/// Longest error type name (`ZeroDivisionError`, …) a den page may send.
pub const MAX_ERROR_TYPE_BYTES: usize = 256;

pub mod schema;

/// Messages the host sends to the den page on its port (`t` field). Their fields are in
/// [`schema::HOST_TO_DEN`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostToDen {
    /// The Pyodide assets and the den's settings, once, after `hello` (as soon as the assets
    /// are fetched: the den page compiles the wasm while the host reads its warm cache).
    Boot,
    /// The warm cache's answer, once, after `boot`: `{snapshot, wantSnapshot}`; the den page's
    /// first worker boots then.
    Warm,
    /// A run: code, limits and the files the worker lacks; the den page forwards it to its
    /// worker and times it.
    Run,
    /// A new interpreter: `{id}`.
    Reset,
    /// The answer to a run's `input` request: `{id, text | null | error}`.
    InputReply,
    /// The answer to a den's `fetch`: `{id, req, status, headers, body, refused, message}`.
    FetchReply,
    /// Stop run `{id}`: interrupt Python when the den is isolated, else restart the worker.
    Stop,
    /// pyodide.asm.wasm as a stream, once, right after `hello` (before `boot`, whose `wasm` is
    /// then null): `{wasm}`; the den page compiles it while it downloads.
    Wasm,
}

impl HostToDen {
    /// Every kind, in declaration order.
    pub const ALL: &'static [HostToDen] = &[
        Self::Boot,
        Self::Warm,
        Self::Run,
        Self::Reset,
        Self::InputReply,
        Self::FetchReply,
        Self::Stop,
        Self::Wasm,
    ];

    /// The `t` field.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Boot => "boot",
            Self::Warm => "warm",
            Self::Run => "run",
            Self::Reset => "reset",
            Self::InputReply => "input-reply",
            Self::FetchReply => "fetch-reply",
            Self::Stop => "stop",
            Self::Wasm => "wasm",
        }
    }
}

/// Messages a den page sends to the host (`t` field). Their fields are in
/// [`schema::DEN_TO_HOST`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DenToHost {
    /// The den page checked its isolation: `{protocol}`.
    Hello,
    /// Pyodide booted: `{bootMs, denMs, interruptible, warm}`.
    Ready,
    /// The den could not start: `{stage, message}`.
    LoadError,
    /// A run cannot start at once (the worker is booting, or another run is in flight): `{id}`,
    /// sent when the run arrives. The host's watchdog then gives it `loadTimeoutMs` + 3 s from
    /// posting, until `started`. A run that is not `queued` started when it was posted.
    Queued,
    /// A `queued` run was handed to the worker: `{id}`; its watchdog clock starts here.
    Started,
    /// Streamed output of a run: `{id, stream, text}`.
    Out,
    /// A rich display of a run (MIME bundle): `{id, bundle}`.
    Display,
    /// A run's Python called `input()` on a cross-origin isolated den: `{id, prompt}`; the
    /// worker waits for the host's `input-reply`, and the run's timeout is paused meanwhile.
    Input,
    /// A run ended: `{id, result, error, truncated, changed, deleted, tooManyFiles, restarted,
    /// durationMs}`.
    Done,
    /// A reset ended: `{id, from, bootMs}` or `{id, error}`.
    ResetDone,
    /// The memory snapshot of a fresh interpreter, for the host's warm cache: `{snapshot}`,
    /// offered once when the host asked for it (`warm.wantSnapshot`).
    Snapshot,
    /// A run asks the host to make an HTTP request (`foxden.fetch`):
    /// `{id, req, url, method, headers, body}`.
    Fetch,
}

impl DenToHost {
    /// Every kind, in declaration order.
    pub const ALL: &'static [DenToHost] = &[
        Self::Hello,
        Self::Ready,
        Self::LoadError,
        Self::Queued,
        Self::Started,
        Self::Out,
        Self::Display,
        Self::Input,
        Self::Done,
        Self::ResetDone,
        Self::Snapshot,
        Self::Fetch,
    ];

    /// The `t` field.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Hello => "hello",
            Self::Ready => "ready",
            Self::LoadError => "load-error",
            Self::Queued => "queued",
            Self::Started => "started",
            Self::Out => "out",
            Self::Display => "display",
            Self::Input => "input",
            Self::Done => "done",
            Self::ResetDone => "reset-done",
            Self::Snapshot => "snapshot",
            Self::Fetch => "fetch",
        }
    }

    /// Parses the `t` field; `None` for anything else (ignored by the host).
    pub fn parse(t: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|k| k.as_str() == t)
    }
}

/// A run id as sent in a message: a whole number in `u32` range, or `None`.
pub fn run_id(v: f64) -> Option<u32> {
    (v.is_finite() && v.fract() == 0.0 && (0.0..=u32::MAX as f64).contains(&v)).then_some(v as u32)
}

/// The stream of an `out` message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    /// Standard output.
    Stdout,
    /// Standard error.
    Stderr,
}

impl Stream {
    /// Both streams.
    pub const ALL: &'static [Stream] = &[Self::Stdout, Self::Stderr];

    /// Parses `"stdout"` / `"stderr"`.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "stdout" => Some(Self::Stdout),
            "stderr" => Some(Self::Stderr),
            _ => None,
        }
    }
    /// The name used in messages and events.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Stdout => "stdout",
            Self::Stderr => "stderr",
        }
    }
}

/// `error.kind` of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The code raised.
    Python,
    /// JavaScript code threw (or did not parse).
    Javascript,
    /// The run passed its timeout.
    Timeout,
    /// The worker or den page failed, or was closed or reset during the run.
    Crashed,
    /// The run's file changes were refused.
    Storage,
}

impl ErrorKind {
    /// Every kind, in declaration order.
    pub const ALL: &'static [ErrorKind] = &[
        Self::Python,
        Self::Timeout,
        Self::Crashed,
        Self::Storage,
        Self::Javascript,
    ];

    /// Parses a kind; `None` for anything else.
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "python" => Self::Python,
            "javascript" => Self::Javascript,
            "timeout" => Self::Timeout,
            "crashed" => Self::Crashed,
            "storage" => Self::Storage,
            _ => return None,
        })
    }
    /// The name used in `run.error.kind`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Python => "python",
            Self::Javascript => "javascript",
            Self::Timeout => "timeout",
            Self::Crashed => "crashed",
            Self::Storage => "storage",
        }
    }
}

/// `run.error`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunError {
    /// What kind of failure.
    pub kind: ErrorKind,
    /// The exception or error type name.
    pub ty: String,
    /// The message.
    pub message: String,
    /// The Python traceback, or empty.
    pub traceback: String,
}

impl RunError {
    /// An error made by foxden itself (no traceback).
    pub fn new(kind: ErrorKind, ty: &str, message: impl Into<String>) -> Self {
        RunError {
            kind,
            ty: ty.into(),
            message: message.into(),
            traceback: String::new(),
        }
    }
}

/// A file a run created or changed, as the den page reported it (path not yet normalized).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangedFile {
    /// The path the den page named.
    pub path: String,
    /// The content (shared: it becomes the den's file without another copy); `None`: not
    /// copied (over `maxFileBytes`, at a path not kept anyway: invalid or read-only).
    pub data: Option<std::sync::Arc<[u8]>>,
}

/// A den page's `done`, read and bounded.
#[derive(Debug, Clone, PartialEq)]
pub struct Done {
    /// The run id.
    pub id: u32,
    /// `repr()` of the last expression, or `None`.
    pub result: Option<String>,
    /// The error, if the run failed.
    pub error: Option<RunError>,
    /// The output was cut at the cap.
    pub truncated: bool,
    /// Files created or changed.
    pub changed: Vec<ChangedFile>,
    /// Files deleted.
    pub deleted: Vec<String>,
    /// The worker was restarted after the run (Python variables lost).
    pub restarted: bool,
    /// Time the run took in the worker.
    pub duration_ms: f64,
    /// The changed files held more bytes than the den's cap (the count so far): their contents
    /// were not copied (`changed` has paths with empty data), and the run's changes cannot be
    /// kept. A legitimate run can do this; it ends with a `storage` error.
    pub over_cap: Option<u64>,
    /// The changed files (this many bytes) did not fit in the page's memory: their contents
    /// were not copied, as for `over_cap`.
    pub no_room: Option<u64>,
    /// The run changed this many files, more than a den can hold: none was sent, and the
    /// run's changes cannot be kept (it ends with a `storage` error).
    pub too_many_files: Option<u64>,
    /// A changed file that would be kept (its normalized path, and its size) is larger than the
    /// den's `maxFileBytes`: no content was copied, as for `over_cap`. (One at an invalid or
    /// read-only path is not kept anyway: its content is not copied, and it does not count.)
    pub too_big: Option<(String, u64)>,
}

impl Done {
    /// The one shape of a run that failed before or without a reply from the worker.
    pub fn failed(id: u32, error: RunError, restarted: bool) -> Self {
        Done {
            id,
            result: None,
            error: Some(error),
            truncated: false,
            changed: Vec::new(),
            deleted: Vec::new(),
            restarted,
            duration_ms: 0.0,
            over_cap: None,
            no_room: None,
            too_many_files: None,
            too_big: None,
        }
    }

    /// Clips `result` and the error texts to the limits; true if something was cut.
    pub fn clip_texts(&mut self, limits: &ReplyLimits) -> bool {
        let mut cut = false;
        if let Some(r) = &mut self.result {
            cut |= clip(r, limits.max_text_bytes);
        }
        if let Some(e) = &mut self.error {
            clip(&mut e.ty, MAX_ERROR_TYPE_BYTES);
            cut |= clip(&mut e.message, limits.max_text_bytes);
            cut |= clip(&mut e.traceback, limits.max_text_bytes);
        }
        cut
    }
}

/// Bounds on one reply from a den page, checked before anything is copied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplyLimits {
    /// Most entries in `changed` plus `deleted`.
    pub max_files: usize,
    /// Most bytes in all of `changed` together.
    pub max_bytes: u64,
    /// Most bytes of one file of `changed` (the den's `maxFileBytes`).
    pub max_file_bytes: u64,
    /// The den's read-only paths: a file there is not kept, whatever its size.
    pub read_only: crate::readonly::ReadOnlyPaths,
    /// Most UTF-8 bytes kept of `result`, `error.message` and `error.traceback` each.
    pub max_text_bytes: usize,
}

impl ReplyLimits {
    /// Limits for a run with this output cap in a den with this byte cap.
    pub fn for_run(
        max_output_bytes: usize,
        max_den_bytes: u64,
        max_file_bytes: u64,
        read_only: crate::readonly::ReadOnlyPaths,
    ) -> Self {
        ReplyLimits {
            // A run may delete every file of a full den and create as many anew (the den page
            // allows that many in each list); the den's own maxFiles is checked at the commit,
            // which refuses the changes cleanly instead of treating the reply as broken.
            max_files: 2 * crate::limits::DEFAULT_MAX_FILES,
            max_bytes: max_den_bytes,
            max_file_bytes,
            read_only,
            max_text_bytes: max_output_bytes,
        }
    }

    /// Checks the two list lengths, before they are read.
    /// The sum is taken in 64 bits: in wasm32 a `usize` sum of two lengths near 2^32 (a hostile
    /// den page's sparse arrays) would wrap to a small count and pass.
    pub fn check_counts(&self, changed: u32, deleted: u32) -> Result<(), ReplyError> {
        let count = u64::from(changed) + u64::from(deleted);
        if count > self.max_files as u64 {
            return Err(ReplyError::TooManyFiles {
                count,
                max: self.max_files,
            });
        }
        Ok(())
    }

    /// Adds one file's size to a running total; fails once the total passes the cap.
    pub fn add_bytes(&self, total: &mut u64, len: u64) -> Result<(), ReplyError> {
        *total = total.saturating_add(len);
        if *total > self.max_bytes {
            return Err(ReplyError::TooManyBytes {
                bytes: *total,
                max: self.max_bytes,
            });
        }
        Ok(())
    }

    /// Checks the length of a path field (in UTF-16 units) before it is copied, and adds it
    /// to `total`, the units of the reply's paths so far: at most [`MAX_PATH_UNITS_IN_ALL`]
    /// (a reply of 20 000 paths of 4 096 units each would copy 240 MB into the host's memory).
    pub fn check_path_len(
        &self,
        field: &'static str,
        len: u32,
        total: &mut u64,
    ) -> Result<(), ReplyError> {
        if len as usize > MAX_PATH_BYTES * 4 {
            return Err(ReplyError::Field {
                field,
                expected: "a path of at most 4096 UTF-16 units",
            });
        }
        *total += u64::from(len);
        if *total > MAX_PATH_UNITS_IN_ALL {
            return Err(ReplyError::Field {
                field,
                expected: "paths of at most 24 Mi UTF-16 units in all",
            });
        }
        Ok(())
    }
}

/// The most UTF-16 units of all the paths of one reply together: every path of the most files a
/// reply may name (twice a den's, created and deleted) at the longest valid length, and more.
pub const MAX_PATH_UNITS_IN_ALL: u64 = 24 << 20;

/// Why the host refused a den page's reply. The run ends as `crashed` (`ProtocolError`) and
/// nothing of the reply is kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReplyError {
    /// A field is missing or has the wrong type.
    Field {
        /// The field, e.g. `changed[3].data`.
        field: &'static str,
        /// What it must be.
        expected: &'static str,
    },
    /// More files than the cap.
    TooManyFiles {
        /// Entries in the reply.
        count: u64,
        /// The cap.
        max: usize,
    },
    /// More bytes than the den's cap.
    TooManyBytes {
        /// Bytes counted so far.
        bytes: u64,
        /// The cap.
        max: u64,
    },
}

impl fmt::Display for ReplyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReplyError::Field { field, expected } => {
                write!(f, "`{field}` is not {expected}")
            }
            ReplyError::TooManyFiles { count, max } => {
                write!(f, "it names {count} files, over the cap of {max}")
            }
            ReplyError::TooManyBytes { bytes, max } => write!(
                f,
                "its files hold more than {max} bytes (maxDenBytes); {bytes} counted so far"
            ),
        }
    }
}

impl std::error::Error for ReplyError {}

/// Cuts `s` to at most `cap` UTF-8 bytes, at a character boundary. True if it was cut.
pub fn clip(s: &mut String, cap: usize) -> bool {
    if s.len() <= cap {
        return false;
    }
    let mut end = cap;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s.truncate(end);
    true
}

/// A run's stdout and stderr as the host keeps them: never more than `cap` bytes together,
/// whatever a den page sends.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OutputBuffer {
    /// Standard output so far.
    pub stdout: String,
    /// Standard error so far.
    pub stderr: String,
    used: usize,
    cap: usize,
    /// Output was dropped at the cap.
    pub truncated: bool,
}

impl OutputBuffer {
    /// An empty buffer with a cap in bytes.
    pub fn new(cap: usize) -> Self {
        OutputBuffer {
            cap,
            ..Default::default()
        }
    }

    /// Appends a chunk; returns the part kept (empty once the cap is reached).
    pub fn push(&mut self, stream: Stream, text: &str) -> String {
        if self.truncated {
            return String::new();
        }
        let mut kept = text.to_owned();
        if clip(&mut kept, self.cap - self.used) {
            self.truncated = true;
        }
        self.used += kept.len();
        match stream {
            Stream::Stdout => self.stdout.push_str(&kept),
            Stream::Stderr => self.stderr.push_str(&kept),
        }
        kept
    }

    /// Bytes kept so far.
    pub fn used(&self) -> usize {
        self.used
    }

    /// Bytes that may still be kept.
    pub fn room(&self) -> usize {
        if self.truncated {
            0
        } else {
            self.cap - self.used
        }
    }
}

/// How long the host waits for a den page. A run's clock starts when it is posted; a run the den
/// page says is `queued` (its worker is booting after a restart) gets `start_ms` from posting to
/// say `started`, and its clock starts then. Either way the den page must answer `done` within
/// `run_ms` of the clock's start.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Watchdog {
    /// From posting a run the den page said is `queued` to its `started` (ms).
    pub start_ms: f64,
    /// From posting the run (or from `started`, for a `queued` one) to `done` (ms).
    pub run_ms: f64,
}

impl Watchdog {
    /// Deadlines for a run with this timeout, in a den whose worker may need up to
    /// `boot_ms` to start.
    pub fn for_run(timeout_ms: f64, boot_ms: f64) -> Self {
        Watchdog {
            start_ms: boot_ms + crate::limits::HOST_WATCHDOG_GRACE_MS as f64,
            run_ms: timeout_ms + crate::limits::HOST_WATCHDOG_GRACE_MS as f64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_and_ids() {
        assert_eq!(DenToHost::parse("done"), Some(DenToHost::Done));
        assert_eq!(DenToHost::parse("booted"), None);
        assert_eq!(run_id(7.0), Some(7));
        assert_eq!(run_id(-1.0), None);
        assert_eq!(run_id(1.5), None);
        assert_eq!(run_id(f64::NAN), None);
        assert_eq!(run_id(4294967296.0), None);
        for k in ["python", "timeout", "crashed", "storage"] {
            assert_eq!(ErrorKind::parse(k).map(ErrorKind::as_str), Some(k));
        }
        assert_eq!(ErrorKind::parse("pwned"), None);
        assert_eq!(Stream::parse("stdin"), None);
    }

    #[test]
    fn clip_keeps_characters_whole() {
        let mut s = "aé✓".to_owned(); // 1 + 2 + 3 bytes
        assert!(clip(&mut s, 4));
        assert_eq!(s, "aé");
        let mut s = "aé✓".to_owned();
        assert!(!clip(&mut s, 6));
        let mut s = "✓".to_owned();
        assert!(clip(&mut s, 2));
        assert_eq!(s, "");
    }

    #[test]
    fn output_buffer_is_bounded() {
        let mut b = OutputBuffer::new(10);
        assert_eq!(b.push(Stream::Stdout, "hello"), "hello");
        assert_eq!(b.push(Stream::Stderr, "oops"), "oops");
        assert_eq!(b.push(Stream::Stdout, "✓✓"), "");
        assert!(b.truncated);
        assert_eq!(b.push(Stream::Stdout, "x"), "");
        assert_eq!(
            (b.stdout.as_str(), b.stderr.as_str(), b.used()),
            ("hello", "oops", 9)
        );
        let mut big = OutputBuffer::new(1 << 20);
        for _ in 0..100 {
            big.push(Stream::Stdout, &"x".repeat(100_000));
        }
        assert_eq!(big.stdout.len(), 1 << 20);
        assert!(big.truncated);
    }

    #[test]
    fn reply_limits() {
        let l = ReplyLimits::for_run(1000, 100, 50, Default::default());
        assert!(l.check_counts(5000, 5000).is_ok());
        assert!(l.check_counts(10_000, 10_000).is_ok());
        assert!(l.check_counts(10_001, 10_000).is_err());
        // Sums that wrap in a 32-bit usize (wasm32) are refused too.
        for (c, d) in [
            (u32::MAX, 1),
            (1, u32::MAX),
            (u32::MAX, u32::MAX),
            (1 << 31, 1 << 31),
        ] {
            assert!(matches!(
                l.check_counts(c, d),
                Err(ReplyError::TooManyFiles { count, .. }) if count == u64::from(c) + u64::from(d)
            ));
        }
        let mut total = 0;
        assert!(l.add_bytes(&mut total, 60).is_ok());
        let e = l.add_bytes(&mut total, 60).unwrap_err();
        assert!(e.to_string().contains("more than 100 bytes"), "{e}");
        let mut total = 0;
        assert!(l.add_bytes(&mut total, u64::MAX).is_err());
        let mut units = 0;
        assert!(l
            .check_path_len("changed[].path", 5000, &mut units)
            .is_err());
        for _ in 0..6 * 1024 {
            assert!(l.check_path_len("deleted[]", 4096, &mut units).is_ok());
        }
        let e = l.check_path_len("deleted[]", 1, &mut units).unwrap_err();
        assert!(e.to_string().contains("24 Mi UTF-16 units in all"), "{e}");
        let mut d = Done::failed(
            1,
            RunError::new(ErrorKind::Python, "E", "m".repeat(5000)),
            false,
        );
        d.result = Some("r".repeat(2000));
        assert!(d.clip_texts(&l));
        assert_eq!(d.result.as_deref().map(str::len), Some(1000));
        assert_eq!(d.error.as_ref().map(|e| e.message.len()), Some(1000));
    }

    #[test]
    fn watchdog_phases() {
        let w = Watchdog::for_run(500.0, 60_000.0);
        assert_eq!(w.run_ms, 3_500.0);
        assert_eq!(w.start_ms, 63_000.0);
    }
}
