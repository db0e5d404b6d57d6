//! Issue backends (filled in by its owner).

pub mod gitea;
pub mod select;
