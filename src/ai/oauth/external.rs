//! Sign-in flows provided from outside this crate: pi's `registerProvider(name, { oauth })`,
//! where an extension implements `login`, `refreshToken` and `getApiKey`. The extension
//! host registers one [`ExternalOAuth`] per provider id; `/login` lists them after the
//! built-in subscriptions, and an expired stored credential of such a provider is
//! refreshed through it.

use std::collections::BTreeMap;
use std::sync::{Arc, LazyLock, RwLock};

use futures::future::BoxFuture;
use serde_json::Value;

use super::flow::{LoginError, LoginIo};

/// A provider's OAuth flow run elsewhere (pi's `OAuthProviderInterface`).
pub trait ExternalOAuth: Send + Sync {
    /// pi's `oauth.name`, the label `/login` shows.
    fn name(&self) -> String;
    /// Runs `login(callbacks)`; the result is the credentials object (`refresh`,
    /// `access`, `expires`, …).
    fn login(&self, io: LoginIo) -> BoxFuture<'static, Result<Value, LoginError>>;
    /// Runs `refreshToken(credentials)`.
    fn refresh(&self, credentials: Value) -> BoxFuture<'static, Result<Value, String>>;
    /// Runs `getApiKey(credentials)`.
    fn api_key(&self, credentials: Value) -> BoxFuture<'static, Result<String, String>>;
}

struct Entry {
    owner: u64,
    flow: Arc<dyn ExternalOAuth>,
}

static TABLE: LazyLock<RwLock<BTreeMap<String, Entry>>> = LazyLock::new(Default::default);

fn write() -> std::sync::RwLockWriteGuard<'static, BTreeMap<String, Entry>> {
    TABLE.write().unwrap_or_else(|p| p.into_inner())
}

/// Makes `flow` the sign-in of `provider`, on behalf of `owner`.
pub fn register(provider: &str, owner: u64, flow: Arc<dyn ExternalOAuth>) {
    write().insert(provider.to_string(), Entry { owner, flow });
}

/// Forgets `provider`'s flow if `owner` registered it.
pub fn unregister(provider: &str, owner: u64) {
    let mut table = write();
    if table.get(provider).is_some_and(|e| e.owner == owner) {
        table.remove(provider);
    }
}

/// Forgets every flow `owner` registered.
pub fn unregister_owner(owner: u64) {
    write().retain(|_, e| e.owner != owner);
}

/// The flow of `provider`, if an extension registered one.
pub fn get(provider: &str) -> Option<Arc<dyn ExternalOAuth>> {
    TABLE
        .read()
        .unwrap_or_else(|p| p.into_inner())
        .get(provider)
        .map(|e| e.flow.clone())
}

/// Every registered provider id with its name.
pub fn providers() -> Vec<(String, String)> {
    TABLE
        .read()
        .unwrap_or_else(|p| p.into_inner())
        .iter()
        .map(|(id, e)| (id.clone(), e.flow.name()))
        .collect()
}

/// The auth.json entry for credentials a flow returned: `type: "oauth"` and every field
/// the extension gave (pi stores `{ type: "oauth", ...credentials }`).
pub fn credential_entry(credentials: &Value) -> Result<Value, String> {
    let Value::Object(fields) = credentials else {
        return Err("the sign-in returned no credentials object".into());
    };
    for key in ["access", "refresh"] {
        if !fields.get(key).is_some_and(Value::is_string) {
            return Err(format!("the credentials have no \"{key}\" string"));
        }
    }
    if !fields.get("expires").is_some_and(Value::is_number) {
        return Err("the credentials have no \"expires\" number".into());
    }
    let mut entry = serde_json::Map::new();
    entry.insert("type".into(), Value::from("oauth"));
    for (k, v) in fields {
        if k != "type" {
            entry.insert(k.clone(), v.clone());
        }
    }
    Ok(Value::Object(entry))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn credentials_become_a_pi_oauth_entry() {
        let entry =
            credential_entry(&json!({"refresh": "r", "access": "a", "expires": 5, "extra": 1}));
        assert_eq!(
            entry,
            Ok(json!({"type": "oauth", "refresh": "r", "access": "a", "expires": 5, "extra": 1}))
        );
        assert!(credential_entry(&json!({"access": "a"})).is_err());
        assert!(credential_entry(&json!("token")).is_err());
    }
}
