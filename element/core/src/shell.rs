//! The read-only shell behind `den.sh` (being written; see issue 4).
