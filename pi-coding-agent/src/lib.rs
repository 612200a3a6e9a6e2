//! The coding agent of pi (work in progress; see the workspace issues).
