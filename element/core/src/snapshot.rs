//! The snapshot codec (being written; see issue 3).
