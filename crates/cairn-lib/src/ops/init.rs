//! `init`: makes a store at an address, encrypted or not, before anything is saved in it.
//!
//! A remote store is encrypted unless asked otherwise; a directory is plain unless asked to
//! be encrypted, and then holds objects only (its catalog is cached on this machine, as a
//! remote store's is). An address that already holds a store is refused in one line, and
//! nothing is changed: making it again would orphan every key and snapshot it has.

use serde::{Deserialize, Serialize};

use super::resolve::CallContext;
use crate::Repository;
use crate::error::{Error, Result};
use crate::store::address::StoreAddress;
use crate::store::remote::{STORE_OBJECT, read_info};
use crate::store::{OpenMode, Store, Unlock};

/// How to make the store.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct InitOptions {
    /// Encrypt a store in a local directory (remote stores are encrypted by default).
    #[schemars(
        description = "Encrypt a store in a local directory; remote stores are encrypted by default."
    )]
    #[cfg_attr(feature = "clap", arg(long))]
    pub encrypt: bool,
    /// Make a remote store without encryption (the service's own encryption at rest only).
    #[schemars(description = "Make a remote store without client-side encryption.")]
    #[cfg_attr(feature = "clap", arg(long, conflicts_with = "encrypt"))]
    pub no_encrypt: bool,
}

/// The store made.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct InitResult {
    /// Where it is.
    pub location: String,
    /// Whether it is encrypted.
    pub encrypted: bool,
    /// The id of its first key, when it is encrypted.
    pub key: Option<String>,
}

impl Repository {
    /// Makes a store at `address` (see the module documentation), asking `unlock` for the
    /// first key's secret when it is encrypted. `unlock` rather than the options carries the
    /// secret, since options are what a tool call shows.
    pub fn init(
        address: &StoreAddress,
        options: &InitOptions,
        unlock: &Unlock,
        _context: &CallContext,
    ) -> Result<InitResult> {
        let store = match address {
            StoreAddress::Dir(dir) => {
                let marker = dir.join(STORE_OBJECT);
                if marker.exists() || dir.join("FORMAT").exists() {
                    return Err(exists(&dir.display().to_string(), marker.exists()));
                }
                if options.no_encrypt {
                    return Err(Error::invalid(
                        "a store in a local directory is plain already; leave the option out",
                    )
                    .hint(crate::error::Hint::DropOption("no_encrypt")));
                }
                if !options.encrypt {
                    Repository::open_in(dir, OpenMode::CreateIfMissing)?
                } else {
                    if std::fs::read_dir(dir).is_ok_and(|mut entries| entries.next().is_some()) {
                        return Err(Error::conflict(format!(
                            "{} is not empty; an encrypted store is made in a new or empty directory",
                            dir.display()
                        )));
                    }
                    Store::open_object_dir(dir, OpenMode::CreateIfMissing, &unlock.clone().encrypt_new(true))
                        .map(Repository::from)?
                }
            }
            StoreAddress::S3 { settings, cache_home } => {
                let backend = std::sync::Arc::new(crate::store::s3::S3Backend::new(settings)?);
                if let Some(info) = read_info(backend.as_ref())? {
                    return Err(exists(&settings.address(), info.encryption.is_some()));
                }
                let unlock = unlock.clone().encrypt_new(!options.no_encrypt);
                Repository::open_shared_with(backend, cache_home, OpenMode::CreateIfMissing, &unlock)?
            }
        };
        Ok(InitResult {
            location: store.location(),
            encrypted: store.is_encrypted(),
            key: store.key_id().map(str::to_owned),
        })
    }
}

fn exists(location: &str, encrypted: bool) -> Error {
    let kind = if encrypted { "an encrypted" } else { "a plain" };
    Error::conflict(format!("there is already {kind} store at {location}; nothing was changed"))
}
