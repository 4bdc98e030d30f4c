//! What a run resolves with, as Rust values: the den's logic builds a [`RunOutcome`]; only the
//! wasm-bindgen edge turns it into the `RunResult` object of the `.d.ts`.

use crate::files::ChangeSet;
use crate::limits::HOST_WATCHDOG_GRACE_MS;
use crate::protocol::{ErrorKind, RunError};

/// The data of one representation of a display.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DisplayData {
    /// A text type (`text/*`, `image/svg+xml`, `application/json`).
    Text(String),
    /// A binary type (`image/png`, `image/jpeg`).
    Bytes(Vec<u8>),
}

impl DisplayData {
    /// Its size in bytes.
    pub fn len(&self) -> usize {
        match self {
            DisplayData::Text(s) => s.len(),
            DisplayData::Bytes(b) => b.len(),
        }
    }
    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// One display: a MIME bundle, richest representation first, `text/plain` last.
pub type Display = Vec<(String, DisplayData)>;

/// Most representations in one display.
pub const MAX_DISPLAY_ITEMS: usize = 16;
/// Most bytes of all displays of one run; later displays are dropped (and the run is marked
/// `truncated`).
pub const MAX_DISPLAY_BYTES: usize = 16 << 20;

/// Displays of one run, at most (each may become an element of the host page, a `text/html`
/// one an iframe): more are dropped and the run is marked `truncated`.
pub const MAX_DISPLAYS_PER_RUN: usize = 1000;

/// The MIME types a display may carry; each is text or bytes.
pub const DISPLAY_MIMES: &[(&str, bool)] = &[
    ("image/png", true),
    ("image/jpeg", true),
    ("image/svg+xml", false),
    ("text/html", false),
    ("text/markdown", false),
    ("application/json", false),
    ("text/plain", false),
];

/// Whether `mime` may be displayed, and whether its data is bytes (else text).
pub fn display_mime(mime: &str) -> Option<bool> {
    DISPLAY_MIMES
        .iter()
        .find(|(m, _)| *m == mime)
        .map(|(_, bytes)| *bytes)
}

/// How far foxden's own notes (files not kept, and why) may pass a run's output cap.
pub const NOTES_OVER_CAP: usize = 1024;

/// `RunResult`: what `run()` resolves with and the `run` event's `end` carries.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RunOutcome {
    /// Everything printed to stdout (up to the output cap).
    pub stdout: String,
    /// Everything printed to stderr, then foxden's own notes.
    pub stderr: String,
    /// `repr()` of the last expression, or `None`.
    pub result: Option<String>,
    /// Why the run failed, or `None`.
    pub error: Option<RunError>,
    /// Output (or a result text) was cut at its cap.
    pub truncated: bool,
    /// The files the run created, changed and deleted, as committed to the store.
    pub files: ChangeSet,
    /// Time the run took in the worker.
    pub duration_ms: f64,
    /// The worker was restarted after the run (Python variables lost).
    pub restarted: bool,
    /// The run's displays, in order.
    pub displays: Vec<Display>,
    /// The run's `foxden.fetch` requests, allowed or refused, in order.
    pub requests: Vec<crate::net::RequestRecord>,
}

impl RunOutcome {
    /// Records that the run's file changes were not kept (`why`): that is the run's error
    /// unless it already failed, in which case it becomes a note at the end of stderr (within
    /// `cap`, see [`RunOutcome::note`]).
    pub fn changes_not_kept(&mut self, why: &str, cap: usize) {
        let msg = format!("the run's file changes were not kept: {why}");
        if self.error.is_none() {
            self.error = Some(RunError::new(ErrorKind::Storage, "StorageError", msg));
        } else {
            self.note(&format!("foxden: {msg}\n"), cap);
        }
    }

    /// Appends one of foxden's own notes to stderr, within the run's output cap (`cap` bytes of
    /// stdout and stderr together, `maxOutputBytes`) and [`NOTES_OVER_CAP`] more, so that output
    /// that filled the cap cannot hide that files were not kept: what does not fit is cut at a
    /// character boundary, and the run is then `truncated`.
    pub fn note(&mut self, text: &str, cap: usize) {
        let room = cap
            .saturating_add(NOTES_OVER_CAP)
            .saturating_sub(self.stdout.len() + self.stderr.len());
        if text.len() <= room {
            self.stderr.push_str(text);
            return;
        }
        let mut end = room;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        self.stderr.push_str(&text[..end]);
        self.truncated = true;
    }
}

/// How a den page was lost during a run (the host then replaces it; files are kept).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LostDen {
    /// The den was closed while the run was in flight.
    Closed,
    /// The den page sent a reply the host refused.
    Refused,
    /// The den page started the run but did not answer in time.
    Silent,
    /// The den page never started the run, or its port went away.
    Gone,
}

/// The one error of a run whose den page was lost (`refused`: why its reply was refused).
pub fn lost_den_error(how: LostDen, timeout_ms: f64, refused: &str) -> RunError {
    const KEPT: &str = "it was replaced (files kept, Python variables lost)";
    match how {
        LostDen::Closed => RunError::new(
            ErrorKind::Crashed,
            "DenClosed",
            "the den was closed during the run",
        ),
        LostDen::Refused => RunError::new(
            ErrorKind::Crashed,
            "ProtocolError",
            format!("the den page sent a reply the host refused ({refused}); {KEPT}"),
        ),
        LostDen::Silent => RunError::new(
            ErrorKind::Timeout,
            "TimeoutError",
            format!(
                "the den page did not answer within {} ms (timeoutMs {} + {HOST_WATCHDOG_GRACE_MS} ms); {KEPT}",
                crate::decimal::show(timeout_ms + f64::from(HOST_WATCHDOG_GRACE_MS)),
                crate::decimal::show(timeout_ms)
            ),
        ),
        LostDen::Gone => RunError::new(
            ErrorKind::Crashed,
            "DenPageError",
            format!("the den page stopped answering; {KEPT}"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_storage_failure_is_the_error_or_a_note() {
        let mut ok = RunOutcome::default();
        ok.changes_not_kept("over the cap", 1 << 20);
        let e = ok.error.as_ref().map(|e| (e.kind, e.ty.as_str()));
        assert_eq!(e, Some((ErrorKind::Storage, "StorageError")));
        assert!(ok.stderr.is_empty());

        let mut failed = RunOutcome {
            error: Some(RunError::new(ErrorKind::Python, "ValueError", "x")),
            stderr: "Traceback…\n".into(),
            ..RunOutcome::default()
        };
        failed.changes_not_kept("over the cap", 1 << 20);
        assert_eq!(
            failed.error.as_ref().map(|e| e.kind),
            Some(ErrorKind::Python)
        );
        assert_eq!(
            failed.stderr,
            "Traceback…\nfoxden: the run's file changes were not kept: over the cap\n"
        );
    }

    #[test]
    fn notes_stay_within_the_output_cap() {
        let mut out = RunOutcome {
            stdout: "12345".into(),
            stderr: "678".into(),
            ..RunOutcome::default()
        };
        // With a cap of 0, notes have NOTES_OVER_CAP bytes of stdout and stderr in all.
        let cap = 0usize;
        let room = |o: &RunOutcome| NOTES_OVER_CAP.saturating_sub(o.stdout.len() + o.stderr.len());
        assert_eq!(room(&out), NOTES_OVER_CAP - 8);
        let fill = "n".repeat(NOTES_OVER_CAP - 8 - 4);
        out.note(&fill, cap);
        out.note("ab\n", cap);
        assert!(out.stderr.ends_with("nab\n") && !out.truncated);
        // 1 byte of room left: "é" (2 bytes) is not split.
        out.note("éx", cap);
        assert!(out.stderr.ends_with("ab\n") && out.truncated);
        out.truncated = false;
        out.note("z", cap);
        assert!(out.stderr.ends_with("ab\nz") && !out.truncated);
        out.note("more", cap);
        assert!(out.stderr.ends_with("ab\nz") && out.truncated);
        assert_eq!(out.stdout.len() + out.stderr.len(), NOTES_OVER_CAP);

        // Output that filled the cap leaves room for the note that files were not kept.
        let mut failed = RunOutcome {
            stdout: "x".repeat(10),
            error: Some(RunError::new(ErrorKind::Python, "ValueError", "x")),
            ..RunOutcome::default()
        };
        failed.changes_not_kept("over the cap", 10);
        assert_eq!(
            failed.stderr,
            "foxden: the run's file changes were not kept: over the cap\n"
        );
        assert!(!failed.truncated);
    }

    #[test]
    fn display_types() {
        assert_eq!(display_mime("image/png"), Some(true));
        assert_eq!(display_mime("text/html"), Some(false));
        assert_eq!(display_mime("application/javascript"), None);
        assert_eq!(display_mime("text/plain"), Some(false));
        assert_eq!(DisplayData::Bytes(vec![1, 2]).len(), 2);
        assert!(DisplayData::Text(String::new()).is_empty());
    }

    #[test]
    fn lost_den_errors_say_what_happened() {
        assert_eq!(
            lost_den_error(LostDen::Silent, 500.0, "").kind,
            ErrorKind::Timeout
        );
        assert!(lost_den_error(LostDen::Silent, 500.0, "")
            .message
            .contains("within 3500 ms (timeoutMs 500 + 3000 ms)"));
        let refused = lost_den_error(LostDen::Refused, 1.0, "bad id");
        assert_eq!(
            (refused.kind, refused.ty.as_str()),
            (ErrorKind::Crashed, "ProtocolError")
        );
        assert!(refused.message.contains("(bad id)"));
        assert_eq!(lost_den_error(LostDen::Closed, 1.0, "").ty, "DenClosed");
        assert_eq!(lost_den_error(LostDen::Gone, 1.0, "").ty, "DenPageError");
    }
}
