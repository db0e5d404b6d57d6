//! The ledger (filled in by its owner).
