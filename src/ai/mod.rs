//! The layer that talks to models: provider-neutral message types, the streaming event
//! protocol, the model registry and one client per wire API. Knows nothing of sessions,
//! agents or terminals.

pub mod message;
pub mod model;
pub mod stream;
