//! The repository's label list, cached per backend instance (names are resolved with
//! [`crate::issues::resolve_label_names`], as every backend does).

use std::sync::{Arc, Mutex};

use crate::issues::Label;

/// The cached label list of one repository.
#[derive(Default)]
pub(crate) struct LabelCache {
    labels: Mutex<Option<Arc<Vec<Label>>>>,
}

impl LabelCache {
    pub(super) fn get(&self) -> Option<Arc<Vec<Label>>> {
        self.labels
            .lock()
            .expect("label cache lock is never poisoned")
            .clone()
    }

    pub(crate) fn put(&self, labels: Vec<Label>) -> Arc<Vec<Label>> {
        let labels = Arc::new(labels);
        *self
            .labels
            .lock()
            .expect("label cache lock is never poisoned") = Some(labels.clone());
        labels
    }
}
