//! Which summary a summarization request produces: named in error messages and sent to
//! backends. Its own module so both `backend` and `error` can use it.

use serde::Serialize;

/// Which summary a request produces (used in error messages and visible to backends).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum SummaryKind {
    /// The history before the cut point (first summary or an update of the previous one).
    History,
    /// The beginning of a turn that was cut in the middle.
    TurnPrefix,
    /// A branch the user navigated away from.
    Branch,
}
