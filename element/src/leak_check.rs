//! Live counters of Rust-owned JS callbacks and open dens, so tests can prove nothing leaks.

use std::cell::Cell;

thread_local! {
    static LISTENERS: Cell<i64> = const { Cell::new(0) };
    static CONNECTIONS: Cell<i64> = const { Cell::new(0) };
}

pub fn listener_created() {
    LISTENERS.with(|c| c.set(c.get() + 1));
}
pub fn listener_dropped() {
    LISTENERS.with(|c| c.set(c.get() - 1));
}
pub fn connection_created() {
    CONNECTIONS.with(|c| c.set(c.get() + 1));
}
pub fn connection_dropped() {
    CONNECTIONS.with(|c| c.set(c.get() - 1));
}

/// (live listeners, live connections)
pub fn counts() -> (i64, i64) {
    (LISTENERS.with(|c| c.get()), CONNECTIONS.with(|c| c.get()))
}
