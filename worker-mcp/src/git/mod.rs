//! The git worker (filled in by its owner).
