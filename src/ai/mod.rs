//! The layer that talks to models: provider-neutral message types, the streaming event
//! protocol, the model registry and one client per wire API. Knows nothing of sessions,
//! agents or terminals.

pub mod auth;
pub mod catalog;
pub mod http;
pub mod js;
pub mod json_partial;
pub mod message;
pub mod model;
pub mod models;
pub mod oauth;
pub mod overflow;
pub mod providers;
pub mod retry;
pub mod sse;
pub mod stream;
pub mod transform;
