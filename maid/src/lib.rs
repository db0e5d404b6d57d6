//! The ImplementMaid: runs an implementation agent on a task branch under supervision.
