//! The Gitea / Forgejo issue backend (filled in by its owner).
