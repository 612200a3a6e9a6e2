//! The CLI's model registry is the SDK's ([`crate::sdk::ModelRegistry`]).

pub use crate::sdk::ModelRegistry as CliRegistry;
