//! What a package source string means (pi 0.73's `parseSource`): `npm:<spec>`, a git
//! location (`git:` shorthand or a protocol URL), or a local path.
//!
//! - `npm:@scope/name@1.2.3`: the name is everything up to the first `@` after an
//!   optional leading one; a version (any npm spec: `1.2.3`, `^1`, `file:…`) pins it.
//! - `git:host/user/repo[@ref]`, `git:git@host:user/repo[@ref]`, and without the prefix
//!   only `https://`, `http://`, `ssh://`, `git://` URLs. The repository is identified by
//!   host and path (without `.git`), so SSH and HTTPS forms of one repository match; a
//!   ref pins it.
//! - Anything else is a path, relative to the settings file it is written in.

/// A parsed package source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PackageSource {
    Npm(NpmSource),
    Git(GitSource),
    Local { path: String },
}

/// `npm:<spec>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NpmSource {
    /// What follows `npm:` (handed to `npm install` as is).
    pub spec: String,
    /// The package name (the folder under `node_modules`).
    pub name: String,
    /// A version was given: `pi update` leaves the package alone.
    pub pinned: bool,
}

/// A git repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitSource {
    /// What `git clone` is given.
    pub repo: String,
    /// Host name, without user or port.
    pub host: String,
    /// `user/repo`, without `.git`.
    pub path: String,
    /// The ref after `@`, checked out after cloning.
    pub git_ref: Option<String>,
}

impl GitSource {
    /// A ref was given: `pi update` leaves the checkout alone.
    pub fn pinned(&self) -> bool {
        self.git_ref.is_some()
    }
}

impl PackageSource {
    /// Parses a source string as pi does; never fails (unknown forms are local paths).
    pub fn parse(source: &str) -> PackageSource {
        if let Some(spec) = source.strip_prefix("npm:") {
            let spec = spec.trim();
            let (name, version) = split_npm_spec(spec);
            return PackageSource::Npm(NpmSource {
                spec: spec.to_string(),
                name,
                pinned: version.is_some(),
            });
        }
        if is_local_path(source) {
            return PackageSource::Local {
                path: source.to_string(),
            };
        }
        match parse_git(source) {
            Some(git) => PackageSource::Git(git),
            None => PackageSource::Local {
                path: source.to_string(),
            },
        }
    }

    /// Whether `pi update` skips it (versioned npm spec, git ref, local path).
    pub fn pinned_or_local(&self) -> bool {
        match self {
            PackageSource::Npm(n) => n.pinned,
            PackageSource::Git(g) => g.pinned(),
            PackageSource::Local { .. } => true,
        }
    }
}

/// pi's `isLocalPath`: not a package or URL prefix.
pub fn is_local_path(value: &str) -> bool {
    let t = value.trim();
    !["npm:", "git:", "github:", "http:", "https:", "ssh:"]
        .iter()
        .any(|p| t.starts_with(p))
}

/// Whether a `-e` value names a package to install rather than a file.
pub fn is_package_source(value: &str) -> bool {
    !matches!(PackageSource::parse(value), PackageSource::Local { .. })
}

/// `name[@version]`, the name possibly scoped (`@scope/name`).
fn split_npm_spec(spec: &str) -> (String, Option<String>) {
    let start = usize::from(spec.starts_with('@'));
    let Some(at) = spec[start..].find('@').map(|i| i + start) else {
        return (spec.to_string(), None);
    };
    let (name, version) = (&spec[..at], &spec[at + 1..]);
    if name.len() <= start || version.is_empty() {
        return (spec.to_string(), None);
    }
    (name.to_string(), Some(version.to_string()))
}

/// A location and the ref after its path's first `@` (pi's `splitRef`).
fn split_ref(url: &str) -> (String, Option<String>) {
    let split_path = |path: &str| -> Option<(String, String)> {
        let (repo, git_ref) = path.split_once('@')?;
        (!repo.is_empty() && !git_ref.is_empty()).then(|| (repo.to_string(), git_ref.to_string()))
    };
    if let Some(rest) = url.strip_prefix("git@")
        && let Some((host, path)) = rest.split_once(':')
    {
        return match split_path(path) {
            Some((repo, r)) => (format!("git@{host}:{repo}"), Some(r)),
            None => (url.to_string(), None),
        };
    }
    if let Some((scheme, rest)) = url.split_once("://") {
        let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
        let path = path.trim_start_matches('/');
        return match split_path(path) {
            Some((repo, r)) => (format!("{scheme}://{authority}/{repo}"), Some(r)),
            None => (url.to_string(), None),
        };
    }
    let Some((host, path)) = url.split_once('/') else {
        return (url.to_string(), None);
    };
    match split_path(path) {
        Some((repo, r)) => (format!("{host}/{repo}"), Some(r)),
        None => (url.to_string(), None),
    }
}

/// Host (no user, no port) and path of a protocol URL.
fn url_host_path(url: &str) -> Option<(String, String)> {
    let (_, rest) = url.split_once("://")?;
    let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = if host_port.starts_with('[') {
        host_port.split_once(']').map(|(h, _)| format!("{h}]"))?
    } else {
        host_port.split(':').next().unwrap_or("").to_string()
    };
    let path = path.split(['?', '#']).next().unwrap_or("");
    Some((
        host.to_lowercase(),
        path.trim_start_matches('/').to_string(),
    ))
}

/// pi's `parseGitUrl` for the forms it documents.
fn parse_git(source: &str) -> Option<GitSource> {
    let trimmed = source.trim();
    let (has_prefix, url) = match trimmed.strip_prefix("git:") {
        Some(rest) => (true, rest.trim()),
        None => (false, trimmed),
    };
    let lower = url.to_lowercase();
    let has_protocol = ["https://", "http://", "ssh://", "git://"]
        .iter()
        .any(|p| lower.starts_with(p));
    if !has_prefix && !has_protocol {
        return None;
    }
    let (repo_no_ref, git_ref) = split_ref(url);
    let mut repo = repo_no_ref.clone();
    let (host, path) = if let Some(rest) = repo_no_ref.strip_prefix("git@")
        && let Some((host, path)) = rest.split_once(':')
        && !repo_no_ref.contains("://")
    {
        (host.to_string(), path.to_string())
    } else if has_protocol {
        url_host_path(&repo_no_ref)?
    } else {
        let (host, path) = repo_no_ref.split_once('/')?;
        if !host.contains('.') && host != "localhost" {
            return None;
        }
        repo = format!("https://{repo_no_ref}");
        (host.to_string(), path.to_string())
    };
    let path = path.trim_start_matches('/');
    let path = path.strip_suffix(".git").unwrap_or(path).to_string();
    if host.is_empty() || path.is_empty() || path.split('/').count() < 2 {
        return None;
    }
    Some(GitSource {
        repo,
        host,
        path,
        git_ref,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git(s: &str) -> GitSource {
        match PackageSource::parse(s) {
            PackageSource::Git(g) => g,
            other => panic!("{s}: {other:?}"),
        }
    }

    #[test]
    fn npm_specs_split_name_and_version_as_pi() {
        let cases = [
            ("npm:pkg", "pkg", false),
            ("npm:pkg@1.2.3", "pkg", true),
            ("npm:@scope/pkg", "@scope/pkg", false),
            ("npm:@scope/pkg@^2", "@scope/pkg", true),
            ("npm:fx@file:/tmp/fx-1.0.0.tgz", "fx", true),
            ("npm:pkg@", "pkg@", false),
        ];
        for (source, name, pinned) in cases {
            let PackageSource::Npm(n) = PackageSource::parse(source) else {
                panic!("{source}");
            };
            assert_eq!((n.name.as_str(), n.pinned), (name, pinned), "{source}");
        }
    }

    #[test]
    fn git_forms_share_an_identity_and_refs_pin() {
        let a = git("git:github.com/user/repo@v1");
        assert_eq!(a.repo, "https://github.com/user/repo");
        assert_eq!(
            (a.host.as_str(), a.path.as_str()),
            ("github.com", "user/repo")
        );
        assert_eq!(a.git_ref.as_deref(), Some("v1"));
        let b = git("git:git@github.com:user/repo.git");
        assert_eq!(b.repo, "git@github.com:user/repo.git");
        assert_eq!(
            (b.host.as_str(), b.path.as_str()),
            (a.host.as_str(), "user/repo")
        );
        let c = git("https://github.com/user/repo@v2");
        assert_eq!(c.repo, "https://github.com/user/repo");
        assert_eq!(c.git_ref.as_deref(), Some("v2"));
        let d = git("ssh://git@example.org:2222/team/tool");
        assert_eq!(
            (d.host.as_str(), d.path.as_str()),
            ("example.org", "team/tool")
        );
        assert!(!d.pinned());
    }

    #[test]
    fn other_forms_are_local_paths() {
        for s in [
            "./pkg",
            "/abs/pkg",
            "pkg",
            "github.com/user/repo",
            "git:nohost/repo",
            "git:github.com/onlyone",
        ] {
            assert!(
                matches!(PackageSource::parse(s), PackageSource::Local { .. }),
                "{s}"
            );
        }
        assert!(is_package_source("npm:x") && is_package_source("git:a.b/c/d"));
        assert!(!is_package_source("./x.ts"));
    }
}
