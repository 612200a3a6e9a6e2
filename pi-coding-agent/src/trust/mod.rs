//! Project trust: the trust store, `defaultProjectTrust` and which project resources wait for trust.
