//! The life of a `<foxden-den>` element as one explicit state, and the pure decision of what a
//! change (connection, attributes) does to it.
//!
//! The element (element/src/element/lifecycle.rs) holds a `Phase<Opening, Den>` and, in a
//! microtask after every batch of changes, asks [`reconcile`] what to do; the browser work
//! (closing a den, opening one, settling the `ready` promise, events) stays there.

/// Where an element is. `O` is what an opening in progress holds (dropping it cancels the
/// opening), `L` is the open den.
#[derive(Debug, Default)]
pub enum Phase<O, L> {
    /// Not in the document (never connected, or removed): no den.
    #[default]
    Detached,
    /// In the document, but its attributes do not make a valid den, and it has none.
    Invalid,
    /// The opening for `key` failed (its `ready` rejected). Other attributes, or removing and
    /// inserting the element, try again; a move or a change of other attributes does not.
    Failed {
        /// The attributes whose opening failed.
        key: String,
    },
    /// `loading="lazy"`: the attributes for `key` are valid and the den opens once the element
    /// nears the viewport or something needs it (a method, the Run button); nothing is loaded yet.
    Waiting {
        /// The attributes the den will open with.
        key: String,
    },
    /// Opening the den described by `key` (every attribute that needs a new den when it changes).
    Opening {
        /// The attributes being opened.
        key: String,
        /// The opening in progress.
        opening: O,
    },
    /// The den for `key` is open.
    Live {
        /// The attributes it was opened with.
        key: String,
        /// The den.
        den: L,
    },
    /// `close()` closed the den for `key`: it stays closed until the attributes or the
    /// connection change.
    Closed {
        /// The attributes of the closed den.
        key: String,
    },
}

/// The phase without its payload (for tests and messages).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PhaseName {
    /// [`Phase::Detached`].
    Detached,
    /// [`Phase::Invalid`].
    Invalid,
    /// [`Phase::Failed`].
    Failed,
    /// [`Phase::Waiting`].
    Waiting,
    /// [`Phase::Opening`].
    Opening,
    /// [`Phase::Live`].
    Live,
    /// [`Phase::Closed`].
    Closed,
}

impl<O, L> Phase<O, L> {
    /// The payload-free name.
    pub fn name(&self) -> PhaseName {
        match self {
            Phase::Detached => PhaseName::Detached,
            Phase::Invalid => PhaseName::Invalid,
            Phase::Failed { .. } => PhaseName::Failed,
            Phase::Waiting { .. } => PhaseName::Waiting,
            Phase::Opening { .. } => PhaseName::Opening,
            Phase::Live { .. } => PhaseName::Live,
            Phase::Closed { .. } => PhaseName::Closed,
        }
    }

    /// The key of the phase's attributes, whatever the phase (none when detached or invalid).
    pub fn key(&self) -> Option<&str> {
        match self {
            Phase::Failed { key }
            | Phase::Waiting { key }
            | Phase::Opening { key, .. }
            | Phase::Live { key, .. }
            | Phase::Closed { key } => Some(key),
            Phase::Detached | Phase::Invalid => None,
        }
    }

    /// The key of the den that is open or opening.
    pub fn active_key(&self) -> Option<&str> {
        match self {
            Phase::Opening { key, .. } | Phase::Live { key, .. } => Some(key),
            _ => None,
        }
    }

    /// The open den.
    pub fn den(&self) -> Option<&L> {
        match self {
            Phase::Live { den, .. } => Some(den),
            _ => None,
        }
    }

    /// The phase `close()` leaves: a den that was open, opening or waiting to open is
    /// remembered as closed (so the same attributes do not reopen it); otherwise nothing changes.
    pub fn closed(&self) -> Option<Phase<O, L>> {
        match self {
            Phase::Waiting { key } => Some(key.as_str()),
            _ => self.active_key(),
        }
        .map(|k| Phase::Closed { key: k.to_owned() })
    }
}

/// What a reconcile must do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// The element left the document: close the den, cancel an opening, reject `ready`, drop
    /// the UI. Next phase: [`Phase::Detached`].
    Detach,
    /// The attributes are invalid: report each error. A den that is open or opening keeps
    /// its last valid attributes (phase unchanged); otherwise `ready` rejects and the phase
    /// becomes [`Phase::Invalid`] (a closed den stays [`Phase::Closed`]).
    Invalid {
        /// There is no den and no opening: `ready` rejects with the first error.
        reject_ready: bool,
        /// The next phase is [`Phase::Invalid`] (else it is unchanged).
        to_invalid: bool,
    },
    /// Nothing changes (same den, or closed by `close()` with these very attributes).
    Keep,
    /// Close the den (if any), cancel an opening (if any) and open one for the new key. Next
    /// phase: [`Phase::Opening`].
    Open,
    /// As [`Step::Open`], but the element is lazy and nothing asked for its den yet: close
    /// the den (if any) and cancel an opening (if any), then wait. Next phase: [`Phase::Waiting`].
    Wait,
}

/// Decides what a batch of changes does. `connected`: the element is in the document; `key`:
/// its attributes' key, or `None` when they are invalid; `wait`: the element is lazy
/// (`loading="lazy"`) and neither the viewport nor a call asked for its den yet.
pub fn reconcile<O, L>(
    phase: &Phase<O, L>,
    connected: bool,
    key: Option<&str>,
    wait: bool,
) -> Step {
    if !connected {
        return Step::Detach;
    }
    let Some(key) = key else {
        let has_den = phase.active_key().is_some();
        return Step::Invalid {
            reject_ready: !has_den,
            to_invalid: matches!(
                phase,
                Phase::Detached | Phase::Invalid | Phase::Failed { .. } | Phase::Waiting { .. }
            ),
        };
    };
    match phase {
        Phase::Opening { key: k, .. }
        | Phase::Live { key: k, .. }
        | Phase::Closed { key: k }
        | Phase::Failed { key: k }
            if k == key =>
        {
            Step::Keep
        }
        Phase::Waiting { key: k } if k == key && wait => Step::Keep,
        _ if wait => Step::Wait,
        _ => Step::Open,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type P = Phase<(), ()>;

    fn failed(k: &str) -> P {
        Phase::Failed { key: k.into() }
    }

    fn opening(k: &str) -> P {
        Phase::Opening {
            key: k.into(),
            opening: (),
        }
    }
    fn live(k: &str) -> P {
        Phase::Live {
            key: k.into(),
            den: (),
        }
    }
    fn closed(k: &str) -> P {
        Phase::Closed { key: k.into() }
    }

    #[test]
    fn removal_always_detaches() {
        for p in [
            P::Detached,
            P::Invalid,
            failed("a"),
            opening("a"),
            live("a"),
            closed("a"),
        ] {
            assert_eq!(reconcile(&p, false, Some("a"), false), Step::Detach);
            assert_eq!(reconcile(&p, false, None, false), Step::Detach);
        }
    }

    #[test]
    fn connecting_with_valid_attributes_opens() {
        for p in [P::Detached, P::Invalid, failed("b")] {
            assert_eq!(reconcile(&p, true, Some("a"), false), Step::Open);
        }
    }

    fn waiting(k: &str) -> P {
        Phase::Waiting { key: k.into() }
    }

    #[test]
    fn a_lazy_element_waits_until_asked_then_opens() {
        // Connected, valid, nothing asked yet: no den, wait.
        for p in [P::Detached, P::Invalid, failed("b")] {
            assert_eq!(reconcile(&p, true, Some("a"), true), Step::Wait);
        }
        // Still waiting: another batch of changes (a move, a timeout) keeps waiting, and new
        // den attributes wait under the new key.
        assert_eq!(reconcile(&waiting("a"), true, Some("a"), true), Step::Keep);
        assert_eq!(reconcile(&waiting("a"), true, Some("b"), true), Step::Wait);
        // Asked (the viewport, a method, Run) or made eager: open what it waited for.
        assert_eq!(reconcile(&waiting("a"), true, Some("a"), false), Step::Open);
        // Removed while waiting: detached; invalid attributes reject `ready`.
        assert_eq!(
            reconcile(&waiting("a"), false, Some("a"), true),
            Step::Detach
        );
        assert_eq!(
            reconcile(&waiting("a"), true, None, true),
            Step::Invalid {
                reject_ready: true,
                to_invalid: true
            }
        );
        // close() while waiting: closed, and the same attributes do not open it.
        let shut = waiting("a").closed();
        assert_eq!(shut.as_ref().map(Phase::name), Some(PhaseName::Closed));
        assert_eq!(shut.as_ref().and_then(|p| p.active_key()), None);
        assert_eq!(
            reconcile(&shut.unwrap_or_default(), true, Some("a"), false),
            Step::Keep
        );
        // Waiting is neither a den nor an opening.
        assert_eq!(waiting("a").active_key(), None);
        assert!(waiting("a").den().is_none());
    }

    #[test]
    fn same_key_keeps_and_new_key_reopens() {
        assert_eq!(reconcile(&live("a"), true, Some("a"), false), Step::Keep);
        assert_eq!(reconcile(&opening("a"), true, Some("a"), false), Step::Keep);
        assert_eq!(reconcile(&live("a"), true, Some("b"), false), Step::Open);
        assert_eq!(reconcile(&opening("a"), true, Some("b"), false), Step::Open);
    }

    #[test]
    fn closed_stays_closed_until_the_attributes_change() {
        assert_eq!(reconcile(&closed("a"), true, Some("a"), false), Step::Keep);
        assert_eq!(reconcile(&closed("a"), true, Some("b"), false), Step::Open);
        assert_eq!(
            live("a").closed().map(|p| p.name()),
            Some(PhaseName::Closed)
        );
        assert_eq!(
            opening("a")
                .closed()
                .and_then(|p| p.active_key().map(str::to_owned)),
            None
        );
        assert!(P::Invalid.closed().is_none());
        assert!(failed("a").closed().is_none());
    }

    #[test]
    fn invalid_attributes_keep_a_den_and_reject_otherwise() {
        let keep = Step::Invalid {
            reject_ready: false,
            to_invalid: false,
        };
        assert_eq!(reconcile(&live("a"), true, None, false), keep);
        assert_eq!(reconcile(&opening("a"), true, None, false), keep);
        for p in [P::Detached, P::Invalid, failed("b")] {
            assert_eq!(
                reconcile(&p, true, None, false),
                Step::Invalid {
                    reject_ready: true,
                    to_invalid: true
                }
            );
        }
        assert_eq!(
            reconcile(&closed("a"), true, None, false),
            Step::Invalid {
                reject_ready: true,
                to_invalid: false
            }
        );
    }

    /// A walk through an element's life: every step's decision and the phase the element
    /// then sets, as lifecycle.rs does.
    #[test]
    fn a_life() {
        let mut p = P::Detached;
        let apply = |p: &mut P, connected: bool, key: Option<&str>| {
            let step = reconcile(p, connected, key, false);
            *p = match step {
                Step::Detach => P::Detached,
                Step::Invalid { to_invalid, .. } if to_invalid => P::Invalid,
                Step::Invalid { .. } | Step::Keep => std::mem::take(p),
                Step::Open => opening(key.unwrap_or_default()),
                Step::Wait => P::Waiting {
                    key: key.unwrap_or_default().into(),
                },
            };
            step
        };
        assert_eq!(
            apply(&mut p, true, None),
            Step::Invalid {
                reject_ready: true,
                to_invalid: true
            }
        );
        assert_eq!(apply(&mut p, true, Some("a")), Step::Open);
        p = live("a"); // the opening succeeded
        assert_eq!(
            apply(&mut p, true, None).to_owned(),
            Step::Invalid {
                reject_ready: false,
                to_invalid: false
            }
        );
        assert_eq!(p.name(), PhaseName::Live);
        p = p.closed().unwrap_or_default(); // close()
        assert_eq!(apply(&mut p, true, Some("a")), Step::Keep);
        assert_eq!(p.name(), PhaseName::Closed);
        assert_eq!(apply(&mut p, false, Some("a")), Step::Detach);
        assert_eq!(apply(&mut p, true, Some("a")), Step::Open);
        p = failed("a"); // the opening failed
        assert_eq!(
            apply(&mut p, true, Some("a")),
            Step::Keep,
            "a move does not retry"
        );
        assert_eq!(
            apply(&mut p, true, Some("b")),
            Step::Open,
            "other attributes do"
        );
        p = failed("a");
        assert_eq!(apply(&mut p, false, Some("a")), Step::Detach);
        assert_eq!(
            apply(&mut p, true, Some("a")),
            Step::Open,
            "so does re-insertion"
        );
    }
}
