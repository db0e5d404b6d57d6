//! Remote URL resolution (filled in by its owner).
