//! The embedded issue store (in progress).
