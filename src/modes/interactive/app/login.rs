//! `/login`, `/logout` and `/model <id>` as in pi. `/login` asks for a subscription or an
//! API key, lists the providers of that kind, then runs the provider's sign-in flow (a
//! task that talks to the login dialog through channels) or asks for the key. The
//! credential goes to auth.json; when no model was chosen yet, the provider's default
//! model is selected, so the footer shows it at once and the next prompt can use it.

use tokio::sync::mpsc;

use super::msg::{AppMsg, LoginMsg};
use super::overlay::{Overlay, SelectPurpose};
use super::state::App;
use crate::ai::auth::{OAuthProvider, provider_display_name};
use crate::ai::models::builtin_providers;
use crate::ai::models::resolve::{default_model_for, find_exact};
use crate::ai::oauth::login::{LoginError, LoginIo, login};
use crate::modes::interactive::autocomplete::CompletionItem;
use crate::modes::interactive::components::login_dialog::LoginDialog;
use crate::modes::interactive::components::login_selector::{
    AuthKind, LoginMode, LoginOption, LoginSelector,
};
use crate::modes::interactive::theme::ThemeToken;

const SUBSCRIPTION: &str = "Use a subscription";
const API_KEY: &str = "Use an API key";
const BEDROCK: &str = "amazon-bedrock";

impl App {
    /// `/login`: subscription or API key?
    pub fn open_login(&mut self) {
        let items = [SUBSCRIPTION, API_KEY]
            .into_iter()
            .map(|o| CompletionItem {
                value: o.to_string(),
                label: o.to_string(),
                description: None,
            })
            .collect();
        self.overlay = Some(Overlay::select(
            "Select authentication method:",
            items,
            SelectPurpose::LoginMethod,
        ));
    }

    /// The answer to "Select authentication method:".
    pub fn on_login_method(&mut self, choice: &str) {
        let kind = if choice == SUBSCRIPTION {
            AuthKind::OAuth
        } else {
            AuthKind::ApiKey
        };
        let options = self.login_options(kind);
        if options.is_empty() {
            self.overlay = None;
            self.show_status(match kind {
                AuthKind::OAuth => "No subscription providers available.",
                AuthKind::ApiKey => "No API key providers available.",
            });
            return;
        }
        self.overlay = Some(Overlay::LoginProviders(Box::new(LoginSelector::new(
            LoginMode::Login(kind),
            options,
        ))));
    }

    fn option(&self, id: &str, name: String, kind: AuthKind) -> LoginOption {
        LoginOption::new(
            id,
            &name,
            kind,
            self.session.stored_credential_type(id),
            self.session.auth_source(id),
        )
    }

    /// pi's providers for `/login`: the subscription ones, or those of the known models
    /// that take an API key (built-in ones pi names, and custom ones), sorted by name.
    fn login_options(&mut self, kind: AuthKind) -> Vec<LoginOption> {
        let mut options: Vec<LoginOption> = match kind {
            AuthKind::OAuth => {
                let mut options: Vec<LoginOption> = OAuthProvider::ALL
                    .into_iter()
                    .map(|p| self.option(p.id(), p.name().to_string(), kind))
                    .collect();
                // Providers extensions registered with `oauth`, under their `oauth.name`.
                for (id, name) in crate::ai::oauth::external::providers() {
                    if !options.iter().any(|o| o.id == id) {
                        options.push(self.option(&id, name, kind));
                    }
                }
                options
            }
            AuthKind::ApiKey => {
                let _ = self.session.reload_models();
                let builtin = builtin_providers();
                let mut seen: Vec<String> = Vec::new();
                for model in self.session.all_models() {
                    if !seen.contains(&model.provider) {
                        seen.push(model.provider);
                    }
                }
                seen.into_iter()
                    .filter(|p| is_api_key_provider(p, &builtin))
                    .map(|p| self.option(&p, provider_display_name(&p), kind))
                    .collect()
            }
        };
        options.sort_by_key(|o| o.name.to_lowercase());
        options
    }

    /// `/logout`: the providers with a stored credential.
    pub fn open_logout(&mut self) {
        let _ = self.session.reload_models();
        let mut options: Vec<LoginOption> = self
            .session
            .stored_credentials()
            .into_iter()
            .map(|id| {
                let kind = match self.session.stored_credential_type(&id).as_deref() {
                    Some("oauth") => AuthKind::OAuth,
                    _ => AuthKind::ApiKey,
                };
                self.option(&id, provider_display_name(&id), kind)
            })
            .collect();
        if options.is_empty() {
            self.show_status("No stored credentials to remove. /logout only removes credentials saved by /login; environment variables and models.json config are unchanged.");
            return;
        }
        options.sort_by_key(|o| o.name.to_lowercase());
        self.overlay = Some(Overlay::LoginProviders(Box::new(LoginSelector::new(
            LoginMode::Logout,
            options,
        ))));
    }

    /// Escape in the provider list: back to the method question (`/login`) or closed.
    pub fn on_login_providers_cancelled(&mut self, mode: LoginMode) {
        match mode {
            LoginMode::Login(_) => self.open_login(),
            LoginMode::Logout => self.overlay = None,
        }
    }

    /// A provider picked in the `/login` or `/logout` list.
    pub fn on_login_provider_chosen(&mut self, mode: LoginMode, option: LoginOption) {
        self.overlay = None;
        match mode {
            LoginMode::Logout => self.logout(&option),
            LoginMode::Login(AuthKind::OAuth) => {
                if let Some(provider) = OAuthProvider::for_provider(&option.id) {
                    self.start_oauth_login(provider, &option.name);
                } else if let Some(flow) = crate::ai::oauth::external::get(&option.id) {
                    self.start_extension_login(flow, &option.id, &option.name);
                }
            }
            LoginMode::Login(AuthKind::ApiKey) if option.id == BEDROCK => {
                let docs = crate::core::auth_guidance::docs_dir();
                let docs = docs.join("providers.md");
                self.overlay = Some(Overlay::Login(Box::new(LoginDialog::info(
                    &option.id,
                    &option.name,
                    "Amazon Bedrock setup",
                    vec![
                        (
                            "Amazon Bedrock uses AWS credentials instead of a single API key."
                                .into(),
                            ThemeToken::Text,
                        ),
                        (
                            "Configure an AWS profile, IAM keys, bearer token, or role-based credentials."
                                .into(),
                            ThemeToken::Text,
                        ),
                        ("See:".into(), ThemeToken::Muted),
                        (format!("  {}", docs.display()), ThemeToken::Accent),
                    ],
                ))));
            }
            LoginMode::Login(AuthKind::ApiKey) => {
                self.overlay = Some(Overlay::Login(Box::new(LoginDialog::api_key(
                    &option.id,
                    &option.name,
                ))));
            }
        }
    }

    fn logout(&mut self, option: &LoginOption) {
        match self.session.remove_credential(&option.id) {
            Ok(()) => {
                let _ = self.session.reload_models();
                self.refresh_autocomplete();
                self.refresh_usage();
                self.footer_cache = None;
                self.show_status(match option.kind {
                    AuthKind::OAuth => format!("Logged out of {}", option.name),
                    AuthKind::ApiKey => format!(
                        "Removed stored API key for {}. Environment variables and models.json config are unchanged.",
                        option.name
                    ),
                });
            }
            Err(e) => self.notice(format!("Error: Logout failed: {e}")),
        }
    }

    /// Starts `provider`'s sign-in as a task; its dialog replaces the editor.
    fn start_oauth_login(&mut self, provider: OAuthProvider, name: &str) {
        let (input_tx, input) = mpsc::unbounded_channel();
        let (events, mut events_rx) = mpsc::unbounded_channel();
        self.overlay = Some(Overlay::Login(Box::new(LoginDialog::oauth(
            provider.id(),
            name,
            input_tx,
        ))));
        let copilot_models: Vec<String> = self
            .session
            .all_models()
            .into_iter()
            .filter(|m| m.provider == OAuthProvider::GitHubCopilot.id())
            .map(|m| m.id)
            .collect();
        let tx = self.tx.clone();
        let forward = tx.clone();
        tokio::spawn(async move {
            while let Some(event) = events_rx.recv().await {
                if forward.send(AppMsg::Login(LoginMsg::Event(event))).is_err() {
                    return;
                }
            }
        });
        tokio::spawn(async move {
            let mut io = LoginIo { events, input };
            let http = crate::ai::http::shared_client();
            let result = login(provider, &mut io, &http, &copilot_models).await;
            let _ = tx.send(AppMsg::Login(LoginMsg::Done { provider, result }));
        });
    }

    /// Starts the sign-in of a provider an extension registered with `oauth`: its
    /// `login(callbacks)` runs in the extension, the callbacks drive the same dialog.
    fn start_extension_login(
        &mut self,
        flow: std::sync::Arc<dyn crate::ai::oauth::external::ExternalOAuth>,
        id: &str,
        name: &str,
    ) {
        let (input_tx, input) = mpsc::unbounded_channel();
        let (events, mut events_rx) = mpsc::unbounded_channel();
        self.overlay = Some(Overlay::Login(Box::new(LoginDialog::oauth(
            id, name, input_tx,
        ))));
        let tx = self.tx.clone();
        let forward = tx.clone();
        tokio::spawn(async move {
            while let Some(event) = events_rx.recv().await {
                if forward.send(AppMsg::Login(LoginMsg::Event(event))).is_err() {
                    return;
                }
            }
        });
        let (id, name) = (id.to_string(), name.to_string());
        tokio::spawn(async move {
            let result = flow.login(LoginIo { events, input }).await;
            let _ = tx.send(AppMsg::Login(LoginMsg::ExtensionDone { id, name, result }));
        });
    }

    /// What a sign-in flow reported.
    pub fn on_login_msg(&mut self, msg: LoginMsg) {
        match msg {
            LoginMsg::Event(event) => {
                if let Some(Overlay::Login(dialog)) = &mut self.overlay
                    && dialog.is_oauth()
                {
                    dialog.show(event);
                }
            }
            LoginMsg::Done { provider, result } => {
                if matches!(&self.overlay, Some(Overlay::Login(d)) if d.provider == provider.id()) {
                    self.overlay = None;
                }
                let name = provider.name();
                match result {
                    Ok(entry) => match self.session.save_credential(provider.id(), entry) {
                        Ok(()) => self.complete_provider_auth(provider.id(), name, AuthKind::OAuth),
                        Err(e) => self.notice(format!("Error: Failed to login to {name}: {e}")),
                    },
                    Err(LoginError::Cancelled) => {}
                    Err(LoginError::Failed(e)) => {
                        self.notice(format!("Error: Failed to login to {name}: {e}"));
                    }
                }
            }
            LoginMsg::ExtensionDone { id, name, result } => {
                if matches!(&self.overlay, Some(Overlay::Login(d)) if d.provider == id) {
                    self.overlay = None;
                }
                match result {
                    Ok(entry) => match self.session.save_credential(&id, entry) {
                        Ok(()) => self.complete_provider_auth(&id, &name, AuthKind::OAuth),
                        Err(e) => self.notice(format!("Error: Failed to login to {name}: {e}")),
                    },
                    Err(LoginError::Cancelled) => {}
                    Err(LoginError::Failed(e)) => {
                        self.notice(format!("Error: Failed to login to {name}: {e}"));
                    }
                }
            }
        }
        self.dirty = true;
    }

    /// An API key typed in the dialog.
    pub fn on_api_key_entered(&mut self, provider: &str, name: &str, key: &str) {
        self.overlay = None;
        let key = key.trim();
        if key.is_empty() {
            self.notice(format!(
                "Error: Failed to save API key for {name}: API key cannot be empty."
            ));
            return;
        }
        match self
            .session
            .save_api_key(provider, &crate::ai::auth::ApiKey::new(key))
        {
            Ok(()) => self.complete_provider_auth(provider, name, AuthKind::ApiKey),
            Err(e) => self.notice(format!("Error: Failed to save API key for {name}: {e}")),
        }
    }

    /// pi's `completeProviderAuthentication`: without a model yet, the provider's default
    /// one is selected and saved as the default model; the footer follows.
    fn complete_provider_auth(&mut self, provider: &str, name: &str, kind: AuthKind) {
        let _ = self.session.reload_models();
        self.refresh_autocomplete();
        let action = match kind {
            AuthKind::OAuth => format!("Logged in to {name}"),
            AuthKind::ApiKey => format!("Saved API key for {name}"),
        };
        let mut selected = None;
        let mut error = None;
        if self.session.model().is_none() {
            let provider_models: Vec<_> = self
                .session
                .available_models()
                .into_iter()
                .filter(|m| m.provider == provider)
                .collect();
            match default_model_for(provider) {
                None => {
                    error = Some(format!(
                        "{action}, but no default model is configured for provider \"{provider}\". Use /model to select a model."
                    ))
                }
                Some(_) if provider_models.is_empty() => {
                    error = Some(format!(
                        "{action}, but no models are available for that provider. Use /model to select a model."
                    ))
                }
                Some(id) => match provider_models.into_iter().find(|m| m.id == id) {
                    None => {
                        error = Some(format!(
                            "{action}, but its default model \"{id}\" is not available. Use /model to select a model."
                        ))
                    }
                    Some(model) => match self.session.set_model_as_default(model.clone()) {
                        Ok(()) => selected = Some(model.id),
                        Err(e) => {
                            error = Some(format!(
                                "{action}, but selecting its default model failed: {e}. Use /model to select a model."
                            ))
                        }
                    },
                },
            }
        }
        self.refresh_usage();
        self.footer_cache = None;
        let path = self.session.auth_path();
        match selected {
            Some(id) => {
                self.show_status(format!(
                    "{action}. Selected {id}. Credentials saved to {}",
                    path.display()
                ));
                self.warn_anthropic_extra_usage();
            }
            None => {
                self.show_status(format!("{action}. Credentials saved to {}", path.display()));
                match error {
                    Some(e) => self.notice(format!("Error: {e}")),
                    None => self.warn_anthropic_extra_usage(),
                }
            }
        }
    }

    /// `/model <id>`: an exact `provider/id` or id among the candidates (the scope, else
    /// every model with credentials) is selected at once; anything else opens the
    /// selector searching for it.
    pub fn model_command(&mut self, search: &str) {
        let search = search.trim();
        if search.is_empty() {
            self.open_model_selector();
            return;
        }
        let scoped = self.session.scoped_models();
        let candidates = if scoped.is_empty() {
            let _ = self.session.reload_models();
            self.session.available_models()
        } else {
            scoped
        };
        match find_exact(search, &candidates).cloned() {
            Some(model) => {
                let id = model.id.clone();
                match self.session.set_model(model) {
                    Ok(()) => {
                        self.show_status(format!("Model: {id}"));
                        self.warn_anthropic_extra_usage();
                    }
                    Err(e) => self.notice(format!("Error: {e}")),
                }
                self.footer_cache = None;
            }
            None => self.open_model_selector_with(search),
        }
    }
}

/// pi's `isApiKeyLoginProvider`: built-in providers it names, and custom providers that
/// are not subscription ones.
fn is_api_key_provider(provider: &str, builtin: &[&str]) -> bool {
    if crate::ai::auth::BUILT_IN_PROVIDER_DISPLAY_NAMES
        .iter()
        .any(|(id, _)| *id == provider)
    {
        return true;
    }
    if builtin.contains(&provider) {
        return false;
    }
    OAuthProvider::for_provider(provider).is_none()
        && crate::ai::oauth::external::get(provider).is_none()
}
