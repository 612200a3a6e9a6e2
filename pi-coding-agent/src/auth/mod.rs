//! Credentials: `auth.json` (`AuthStorage`), its lock and lookup order, and the model registry with auth.
