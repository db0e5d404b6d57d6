//! Choosing the issue backend from configuration (filled in by its owner).
