//! Growing a host that is not attached to a session yet: pi 1.6 loads the user's and the
//! command line's extensions first, asks them about project trust (`project_trust`), and
//! only then loads the rest. The extensions that ran for the question keep running (their
//! factory is not called twice), take their place in the final load order, and share the
//! channels the host was loaded with.

use std::sync::Arc;

use super::host::{ExtensionHost, HostParts, assemble, start_connections};
use super::source::ExtensionSource;

impl ExtensionHost {
    /// The host of `sources` (the final list, in load order): extensions already running
    /// here keep running and keep their registrations, the others start now. One that
    /// runs here but is not in `sources` is stopped. Call before the host is attached to
    /// a session (nothing else may hold it yet).
    pub async fn extend(self, sources: Vec<ExtensionSource>) -> ExtensionHost {
        let inner = &self.inner;
        let running = |source: &ExtensionSource| {
            inner
                .connections
                .iter()
                .find(|c| c.path == source.path)
                .cloned()
        };
        let unchanged = sources.len() == inner.connections.len()
            && sources
                .iter()
                .zip(&inner.connections)
                .all(|(s, c)| s.path == c.path);
        if unchanged {
            return self;
        }
        // One that failed to start already is not tried again (its error stays).
        let failed = |source: &ExtensionSource| {
            inner
                .start_errors
                .iter()
                .any(|e| e.fatal && e.path == source.path)
        };
        let new: Vec<ExtensionSource> = sources
            .iter()
            .filter(|s| running(s).is_none() && !failed(s))
            .cloned()
            .collect();
        let (started, new_errors) = start_connections(&new, &inner.options, &inner.outputs).await;
        let grace = inner.options.shutdown_grace;
        for dropped in inner
            .connections
            .iter()
            .filter(|c| !sources.iter().any(|s| s.path == c.path))
        {
            dropped.close(grace).await;
        }
        let connections = sources
            .iter()
            .filter_map(|s| {
                running(s).or_else(|| started.iter().find(|c| c.path == s.path).cloned())
            })
            .collect::<Vec<Arc<_>>>();
        let mut start_errors = inner.start_errors.clone();
        start_errors.extend(new_errors);
        assemble(HostParts {
            connections,
            start_errors,
            options: inner.options.clone(),
            outputs: inner.outputs.clone(),
            stream_owner: inner.stream_owner,
        })
    }
}
