//! Interactive `input()`: what the host accepts from a den page's `input` request, what it may
//! answer, and the run clock that stops while a person is typing.
//!
//! On a cross-origin isolated den, Python's `input()` (or a read of `sys.stdin`) blocks the
//! worker on a `SharedArrayBuffer` and asks the host through the den page. The host calls the
//! run's `onInput({ runId, prompt })` (or the element's `input` event) and sends the answer back.
//! Neither the den page's timeout nor the host's watchdog counts the time spent waiting.

use crate::protocol::Watchdog;

/// Longest prompt the host forwards (UTF-16 code units, as JS counts; longer ones are cut).
pub const MAX_PROMPT_CHARS: usize = 4096;
/// Largest answer (UTF-8 bytes) the worker's input buffer holds.
pub const MAX_ANSWER_BYTES: usize = 1 << 20;

/// What the host answers an `input` request with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// A line of text (a trailing newline is added by the worker if missing).
    Text(String),
    /// End of input: `input()` raises `EOFError`.
    Eof,
    /// The answer could not be had: `input()` raises `EOFError` with this message.
    Failed(String),
}

impl Answer {
    /// The answer for what the page's handler gave: a string, `null`/`undefined` (EOF), or
    /// something else (a failure that says what it was). Over-long text is refused, not cut:
    /// half a line would be a wrong answer.
    pub fn from_handler(text: Option<String>, what_else: Option<&str>) -> Answer {
        match (text, what_else) {
            (Some(t), _) if t.len() > MAX_ANSWER_BYTES => Answer::Failed(format!(
                "the answer to input() is {} bytes, over the cap of {MAX_ANSWER_BYTES} bytes",
                t.len()
            )),
            (Some(t), _) => Answer::Text(t),
            (None, None) => Answer::Eof,
            (None, Some(other)) => Answer::Failed(format!(
                "onInput must give a string (or null for end of input), not {other}"
            )),
        }
    }
}

/// Why the host answers an `input` request without asking anyone.
pub const NO_HANDLER: &str = "nobody answers input() for this run: pass run(code, { onInput }) \
     (or listen for the element's `input` event), or give the run its stdin";

/// The host's run clock for the watchdog: it runs while Python runs and stops while the host
/// waits for a person's answer to `input()`. Times are in ms from any fixed origin.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunClock {
    budget_ms: f64,
    /// Time counted before the current stretch.
    spent_ms: f64,
    /// Start of the current counting stretch, or `None` while paused.
    since: Option<f64>,
}

impl RunClock {
    /// A clock for a run that `started` at `now` under `watchdog`.
    pub fn start(watchdog: &Watchdog, now: f64) -> Self {
        RunClock {
            budget_ms: watchdog.run_ms,
            spent_ms: 0.0,
            since: Some(now),
        }
    }

    /// Stops counting (an `input` request was forwarded). A second pause is a no-op.
    pub fn pause(&mut self, now: f64) {
        if let Some(s) = self.since.take() {
            self.spent_ms += (now - s).max(0.0);
        }
    }

    /// Counts again (the answer was sent). Resuming a running clock is a no-op.
    pub fn resume(&mut self, now: f64) {
        if self.since.is_none() {
            self.since = Some(now);
        }
    }

    /// Whether the clock is paused.
    pub fn paused(&self) -> bool {
        self.since.is_none()
    }

    /// Milliseconds left at `now`; `None` while paused (no deadline).
    pub fn remaining(&self, now: f64) -> Option<f64> {
        let s = self.since?;
        Some((self.budget_ms - self.spent_ms - (now - s).max(0.0)).max(0.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers() {
        assert_eq!(
            Answer::from_handler(Some("42".into()), None),
            Answer::Text("42".into())
        );
        assert_eq!(Answer::from_handler(None, None), Answer::Eof);
        match Answer::from_handler(None, Some("a number")) {
            Answer::Failed(m) => assert!(m.contains("not a number"), "{m}"),
            other => panic!("{other:?}"),
        }
        match Answer::from_handler(Some("x".repeat(MAX_ANSWER_BYTES + 1)), None) {
            Answer::Failed(m) => assert!(m.contains("over the cap"), "{m}"),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            Answer::from_handler(Some("x".repeat(MAX_ANSWER_BYTES)), None),
            Answer::Text(_)
        ));
    }

    #[test]
    fn the_clock_stops_while_waiting_for_a_person() {
        let w = Watchdog {
            start_ms: 0.0,
            run_ms: 1000.0,
        };
        let mut c = RunClock::start(&w, 100.0);
        assert_eq!(c.remaining(400.0), Some(700.0));
        c.pause(400.0);
        assert!(c.paused());
        assert_eq!(c.remaining(10_000.0), None);
        c.pause(20_000.0); // no-op
        c.resume(60_000.0);
        assert_eq!(c.remaining(60_100.0), Some(600.0));
        c.resume(61_000.0); // no-op: still counting from 60 000
        assert_eq!(c.remaining(60_700.0), Some(0.0));
        assert_eq!(c.remaining(99_999.0), Some(0.0));
        // A clock that goes backwards never adds time.
        let c = RunClock::start(&w, 500.0);
        assert_eq!(c.remaining(400.0), Some(1000.0));
    }
}
