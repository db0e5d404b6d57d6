//! Issue backends (filled in by its owner).
