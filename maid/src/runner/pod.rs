//! The task inside its pod (`butler task run`): the base commit fetched from the shared
//! destination, the very same task run as locally, the task line pushed back, the Result
//! Contract handed back.
