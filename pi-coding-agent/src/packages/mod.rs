//! pi packages: `pi install|remove|update|list|config`, sources, manifests and resource loading.
