//! Lessons and exercises (`<foxden-den>` for teachers and docs): which script child is which,
//! the key of a shared environment (`env`), which setup code has run in an interpreter, which
//! element a run of a shared den belongs to, and the pass/fail of an exercise's check.
//!
//! The element (wasm) reads the DOM and runs the code; every decision is made here, natively
//! tested.

use crate::limits::{validate_den_name, DenNameError};
use crate::protocol::{ErrorKind, RunError};

/// What a `<script type="text/x-python">` child of the element is, by its attributes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScriptRole {
    /// The reader's code (no role attribute): shown, edited, run.
    Main,
    /// The reader's code in JavaScript (`type="text/x-foxden-javascript"`, no role attribute):
    /// runs with `lang: "javascript"`. Setup, check and solution scripts are Python only.
    JavaScript,
    /// `setup`: runs once per interpreter before the first run, hidden.
    Setup,
    /// `check`: runs after the reader's code; passes when it raises nothing. Hidden.
    Check,
    /// `solution`: revealed by a button.
    Solution,
}

impl ScriptRole {
    /// The role attributes, in the order they are looked for.
    pub const ATTRIBUTES: [&'static str; 3] = ["setup", "check", "solution"];

    /// The role of a script child: `None` when it is not Python (`type` is not
    /// `text/x-python`); the first role attribute present wins, none makes it the reader's code.
    pub fn of(ty: Option<&str>, has_attribute: impl Fn(&str) -> bool) -> Option<ScriptRole> {
        let role = Self::ATTRIBUTES.into_iter().find(|a| has_attribute(a));
        if ty.is_some_and(|t| {
            t.trim()
                .eq_ignore_ascii_case(crate::javascript::SCRIPT_TYPE)
        }) {
            return role.is_none().then_some(ScriptRole::JavaScript);
        }
        if !ty.is_some_and(|t| t.trim().eq_ignore_ascii_case("text/x-python")) {
            return None;
        }
        Some(match role {
            Some("setup") => ScriptRole::Setup,
            Some("check") => ScriptRole::Check,
            Some("solution") => ScriptRole::Solution,
            _ => ScriptRole::Main,
        })
    }
}

/// The Python script children of one element, by role (the first of each role counts).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LessonScripts {
    /// The reader's code.
    pub main: Option<String>,
    /// Setup code.
    pub setup: Option<String>,
    /// The exercise's check.
    pub check: Option<String>,
    /// The solution.
    pub solution: Option<String>,
    /// The reader's code is JavaScript.
    pub main_is_javascript: bool,
}

impl LessonScripts {
    /// Sorts `(role, code)` pairs in document order.
    pub fn collect(scripts: impl IntoIterator<Item = (ScriptRole, String)>) -> LessonScripts {
        let mut out = LessonScripts::default();
        for (role, code) in scripts {
            let slot = match role {
                ScriptRole::Main => &mut out.main,
                ScriptRole::JavaScript => {
                    if out.main.is_none() {
                        out.main_is_javascript = true;
                    }
                    &mut out.main
                }
                ScriptRole::Setup => &mut out.setup,
                ScriptRole::Check => &mut out.check,
                ScriptRole::Solution => &mut out.solution,
            };
            slot.get_or_insert(code);
        }
        out
    }
}

/// The den name of a shared environment (`env` attribute): the same rules as a den name, so
/// that the shared den can be opened under it.
pub fn env_name(env: &str) -> Result<&str, DenNameError> {
    let env = env.trim();
    validate_den_name(env).map(|_| env)
}

/// The setup code that has run in one interpreter (of one den, shared or not). A new
/// interpreter (reset, or a run that restarted it) has run none.
#[derive(Debug, Default)]
pub struct SetupLog {
    /// SHA-256 of each setup that ran (a few per page: a list is smaller than a set in wasm).
    done: Vec<[u8; 32]>,
    /// The interpreter they ran in (`SyncState::interpreter`).
    interpreter: u64,
}

impl SetupLog {
    /// Whether `code` still has to run in `interpreter`; marks it as run (a failed run is
    /// [`Self::undo`]ne). A new interpreter forgets what ran in the last one.
    pub fn claim(&mut self, code: &str, interpreter: u64) -> bool {
        if interpreter != self.interpreter {
            self.clear();
            self.interpreter = interpreter;
        }
        let h = crate::sha256(code.as_bytes());
        let new = !self.done.contains(&h);
        if new {
            self.done.push(h);
        }
        new
    }
    /// Forgets `code` (its run failed: it is tried again before the next run).
    pub fn undo(&mut self, code: &str) {
        let h = crate::sha256(code.as_bytes());
        self.done.retain(|d| *d != h);
    }
    /// A new interpreter: every setup runs again.
    pub fn clear(&mut self) {
        self.done.clear();
    }
}

/// Who a run of a den belongs to: an element (by its number in the den's [`RunRouter`]) and
/// whether it is the element's visible run (the reader's code) or a hidden one (setup, check).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RunTag {
    /// The member's number.
    pub member: u32,
    /// Setup or check: no output shown, no `run`/`output` events.
    pub hidden: bool,
}

impl RunTag {
    /// As one number (0 is "no tag": a run not started by an element).
    pub fn encode(self) -> u32 {
        (self.member << 1 | self.hidden as u32) + 1
    }
    /// The tag of [`Self::encode`]; `None` for 0.
    pub fn decode(n: u32) -> Option<RunTag> {
        let n = n.checked_sub(1)?;
        Some(RunTag {
            member: n >> 1,
            hidden: n & 1 == 1,
        })
    }
}

/// Where the events of a den's runs go: a run's events go to the member that started it (its
/// tag is read when the run starts); a run without a tag, and file changes, go to every member.
#[derive(Debug, Default)]
pub struct RunRouter {
    next_member: u32,
    members: Vec<u32>,
    /// Runs in progress (one at a time per den, so a list).
    runs: Vec<(u32, RunTag)>,
}

/// Who gets one event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// One member; `hidden` for setup and check runs.
    One(RunTag),
    /// Every member.
    All,
    /// Nobody (its member left).
    Nobody,
}

impl RunRouter {
    /// A new member: its number.
    pub fn join(&mut self) -> u32 {
        self.next_member += 1;
        self.members.push(self.next_member);
        self.next_member
    }
    /// A member left; its runs' events go nowhere.
    pub fn leave(&mut self, member: u32) {
        self.members.retain(|m| *m != member);
    }
    /// The members, in the order they joined.
    pub fn members(&self) -> &[u32] {
        &self.members
    }
    /// Run `id` started with the tag `tag` (0: none).
    pub fn start(&mut self, id: u32, tag: u32) -> Route {
        match RunTag::decode(tag) {
            Some(t) => {
                self.runs.retain(|r| r.0 != id);
                self.runs.push((id, t));
                self.route(id)
            }
            None => Route::All,
        }
    }
    /// Where an event of run `id` goes.
    pub fn route(&self, id: u32) -> Route {
        match self.runs.iter().find(|r| r.0 == id).map(|r| &r.1) {
            Some(t) if self.members.contains(&t.member) => Route::One(*t),
            Some(_) => Route::Nobody,
            None => Route::All,
        }
    }
    /// Run `id` ended: where its last event goes.
    pub fn end(&mut self, id: u32) -> Route {
        let r = self.route(id);
        self.runs.retain(|r| r.0 != id);
        r
    }
}

/// The result of an exercise's check (the element's `check` event detail).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckResult {
    /// The check raised nothing.
    pub passed: bool,
    /// What to tell the reader.
    pub message: String,
}

impl CheckResult {
    /// The reader's code failed (`code`), so the check did not run.
    pub fn code_failed(code: &RunError) -> CheckResult {
        CheckResult {
            passed: false,
            message: format!("Your code did not finish: {}", describe(code)),
        }
    }

    /// The reader's code ended but left work running (a task, a timer): the interpreter was
    /// restarted, so the check did not run (it would not see what the code made).
    pub fn code_left_work() -> CheckResult {
        CheckResult {
            passed: false,
            message: "Your code left work running when it ended (a task or a timer), so the interpreter was restarted and the check could not see what it made: end that work in your code".into(),
        }
    }

    /// The check ran: `None` is a pass. An `AssertionError`'s message is the check's own words;
    /// a bare `assert` says which line failed, from the traceback.
    pub fn of_check(error: Option<&RunError>) -> CheckResult {
        let Some(e) = error else {
            return CheckResult {
                passed: true,
                message: "Passed: well done!".into(),
            };
        };
        let message = match (e.kind, e.ty.as_str(), e.message.trim()) {
            (ErrorKind::Python, "AssertionError", "") => {
                let line = e
                    .traceback
                    .lines()
                    .rev()
                    .map(str::trim)
                    .find(|l| l.starts_with("assert "));
                match line {
                    Some(l) => format!("Not yet: {l}"),
                    None => "Not yet: the check failed".into(),
                }
            }
            (ErrorKind::Python, "AssertionError", m) => format!("Not yet: {m}"),
            // Most often a name the reader's code was meant to define.
            (ErrorKind::Python, _, _) => format!("Not yet: {}", describe(e)),
            _ => format!("The check did not finish: {}", describe(e)),
        };
        CheckResult {
            passed: false,
            message,
        }
    }
}

fn describe(e: &RunError) -> String {
    if e.message.is_empty() {
        e.ty.clone()
    } else {
        format!("{}: {}", e.ty, e.message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attrs(list: &'static [&'static str]) -> impl Fn(&str) -> bool {
        move |a| list.contains(&a)
    }

    #[test]
    fn script_roles() {
        let py = Some("text/x-python");
        assert_eq!(ScriptRole::of(py, attrs(&[])), Some(ScriptRole::Main));
        assert_eq!(
            ScriptRole::of(Some(" Text/X-Python "), attrs(&["setup"])),
            Some(ScriptRole::Setup)
        );
        assert_eq!(
            ScriptRole::of(py, attrs(&["check"])),
            Some(ScriptRole::Check)
        );
        assert_eq!(
            ScriptRole::of(py, attrs(&["solution", "check"])),
            Some(ScriptRole::Check),
            "the first role attribute in ATTRIBUTES order wins"
        );
        assert_eq!(ScriptRole::of(Some("module"), attrs(&[])), None);
        assert_eq!(ScriptRole::of(None, attrs(&["setup"])), None);
        // JavaScript is the reader's code only; setup, check and solution are Python.
        let js = Some(crate::javascript::SCRIPT_TYPE);
        assert_eq!(ScriptRole::of(js, attrs(&[])), Some(ScriptRole::JavaScript));
        assert_eq!(ScriptRole::of(js, attrs(&["check"])), None);
        assert_eq!(ScriptRole::of(Some("text/javascript"), attrs(&[])), None);
    }

    #[test]
    fn first_script_of_each_role_counts() {
        let s = LessonScripts::collect([
            (ScriptRole::Setup, "import math".to_string()),
            (ScriptRole::Main, "x = 1".to_string()),
            (ScriptRole::Main, "x = 2".to_string()),
            (ScriptRole::Check, "assert x == 1".to_string()),
        ]);
        assert_eq!(s.main.as_deref(), Some("x = 1"));
        assert_eq!(s.setup.as_deref(), Some("import math"));
        assert_eq!(s.check.as_deref(), Some("assert x == 1"));
        assert_eq!(s.solution, None);
        assert_eq!(LessonScripts::collect([]), LessonScripts::default());
        // The first reader's script decides the language.
        let js = LessonScripts::collect([
            (ScriptRole::JavaScript, "1 + 1".to_string()),
            (ScriptRole::Main, "x = 2".to_string()),
        ]);
        assert_eq!(
            (js.main.as_deref(), js.main_is_javascript),
            (Some("1 + 1"), true)
        );
        let py = LessonScripts::collect([
            (ScriptRole::Main, "x = 2".to_string()),
            (ScriptRole::JavaScript, "1 + 1".to_string()),
        ]);
        assert_eq!(
            (py.main.as_deref(), py.main_is_javascript),
            (Some("x = 2"), false)
        );
    }

    #[test]
    fn env_names_follow_den_names() {
        assert_eq!(env_name(" lesson1 "), Ok("lesson1"));
        assert!(env_name("").is_err());
        assert!(env_name("has space").is_err());
        assert!(env_name(&"x".repeat(65)).is_err());
    }

    #[test]
    fn setup_runs_once_per_interpreter() {
        let mut log = SetupLog::default();
        assert!(log.claim("import math", 0));
        assert!(!log.claim("import math", 0));
        assert!(
            log.claim("import os", 0),
            "another element's setup runs too"
        );
        log.undo("import os");
        assert!(log.claim("import os", 0), "a failed setup is tried again");
        log.clear();
        assert!(log.claim("import math", 0), "a reset runs it again");
        assert!(
            log.claim("import math", 1),
            "a new interpreter runs it again"
        );
        assert!(log.claim("import os", 1));
        assert!(!log.claim("import os", 1));
    }

    #[test]
    fn tags_round_trip() {
        assert_eq!(RunTag::decode(0), None);
        for member in [1, 2, 77, u32::MAX >> 2] {
            for hidden in [false, true] {
                let t = RunTag { member, hidden };
                assert_ne!(t.encode(), 0);
                assert_eq!(RunTag::decode(t.encode()), Some(t));
            }
        }
    }

    #[test]
    fn runs_go_to_the_member_that_started_them() {
        let mut r = RunRouter::default();
        let a = r.join();
        let b = r.join();
        assert_ne!(a, b);
        assert_eq!(r.members(), &[a, b]);
        let ta = RunTag {
            member: a,
            hidden: false,
        };
        let tb = RunTag {
            member: b,
            hidden: true,
        };
        assert_eq!(r.start(1, ta.encode()), Route::One(ta));
        assert_eq!(r.route(1), Route::One(ta));
        assert_eq!(r.start(2, tb.encode()), Route::One(tb));
        assert_eq!(r.end(1), Route::One(ta));
        assert_eq!(r.route(1), Route::All, "an unknown run goes to everyone");
        assert_eq!(
            r.start(3, 0),
            Route::All,
            "an untagged run goes to everyone"
        );
        r.leave(b);
        assert_eq!(r.route(2), Route::Nobody, "its member left");
        assert_eq!(r.end(2), Route::Nobody);
        assert_eq!(r.members(), &[a]);
    }

    fn py(ty: &str, message: &str, traceback: &str) -> RunError {
        RunError {
            kind: ErrorKind::Python,
            ty: ty.into(),
            message: message.into(),
            traceback: traceback.into(),
        }
    }

    #[test]
    fn check_results() {
        let pass = CheckResult::of_check(None);
        assert!(pass.passed);
        assert_eq!(pass.message, "Passed: well done!");
        let worded =
            CheckResult::of_check(Some(&py("AssertionError", "total should be 10, not 9", "")));
        assert_eq!(
            worded,
            CheckResult {
                passed: false,
                message: "Not yet: total should be 10, not 9".into()
            }
        );
        let bare = CheckResult::of_check(Some(&py(
            "AssertionError",
            "",
            "Traceback (most recent call last):\n  File \"<exec>\", line 1, in <module>\n    assert total == 10\nAssertionError\n",
        )));
        assert_eq!(bare.message, "Not yet: assert total == 10");
        let broken =
            CheckResult::of_check(Some(&py("NameError", "name 'total' is not defined", "")));
        assert!(!broken.passed);
        assert_eq!(
            broken.message,
            "Not yet: NameError: name 'total' is not defined"
        );
        let timeout = RunError::new(ErrorKind::Timeout, "TimeoutError", "over 5000 ms");
        assert_eq!(
            CheckResult::of_check(Some(&timeout)).message,
            "The check did not finish: TimeoutError: over 5000 ms"
        );
        let code = CheckResult::code_failed(&py("ZeroDivisionError", "division by zero", ""));
        assert!(!code.passed);
        assert_eq!(
            code.message,
            "Your code did not finish: ZeroDivisionError: division by zero"
        );
    }
}
