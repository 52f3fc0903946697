//! pi packages: extensions, skills, prompt templates and themes shared through npm or
//! git (or a local folder), as pi 0.73 manages them — `pi install / remove / update /
//! list`, the `packages` setting with its filters, and `-e npm:…` / `-e git:…`.
//!
//! - [`source`]: what a source string means (`npm:`, `git:`, URL, path);
//! - [`collect`]: which files of a package are which resources (the `pi` manifest in
//!   `package.json`, the conventional folders, the settings' filters);
//! - [`manager`]: installing with the user's `npm` and `git`, the settings' `packages`
//!   lists, and resolving the configured packages to files at startup;
//! - [`run`]: running those commands, and the errors;
//! - [`config`]: what `pi config` lists and the settings edits it makes.
//!
//! The files found are handed to the usual loaders (extensions, skills, prompt templates)
//! as one more source, after everything else (pi's lowest precedence).

pub mod collect;
pub mod config;
pub mod manager;
pub mod run;
pub mod source;

pub use collect::{PackageFile, ResourceKind};
pub use manager::{
    ConfiguredPackage, PackageManager, PackageResource, PackageScope, ResolvedPackages,
    offline_from_env,
};
pub use run::{PackageError, dim, style};
pub use source::{PackageSource, is_package_source};
