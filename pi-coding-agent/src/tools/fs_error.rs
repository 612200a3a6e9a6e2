//! File-system errors worded as Node.js words them (`ENOENT: no such file or directory, access
//! '/x'`), because pi's tools pass Node's messages to the model unchanged.

use std::io;

/// Node's error code (`ENOENT`, `EACCES`, …) and libuv's description of an I/O error.
pub fn node_code(err: &io::Error) -> (&'static str, &'static str) {
    use nix::errno::Errno;
    let Some(raw) = err.raw_os_error() else {
        return match err.kind() {
            io::ErrorKind::NotFound => ("ENOENT", "no such file or directory"),
            io::ErrorKind::PermissionDenied => ("EACCES", "permission denied"),
            io::ErrorKind::AlreadyExists => ("EEXIST", "file already exists"),
            io::ErrorKind::IsADirectory => ("EISDIR", "illegal operation on a directory"),
            io::ErrorKind::NotADirectory => ("ENOTDIR", "not a directory"),
            io::ErrorKind::InvalidInput => ("EINVAL", "invalid argument"),
            _ => ("EIO", "i/o error"),
        };
    };
    match Errno::from_raw(raw) {
        Errno::ENOENT => ("ENOENT", "no such file or directory"),
        Errno::EACCES => ("EACCES", "permission denied"),
        Errno::EPERM => ("EPERM", "operation not permitted"),
        Errno::EISDIR => ("EISDIR", "illegal operation on a directory"),
        Errno::ENOTDIR => ("ENOTDIR", "not a directory"),
        Errno::EEXIST => ("EEXIST", "file already exists"),
        Errno::ELOOP => ("ELOOP", "too many symbolic links encountered"),
        Errno::ENAMETOOLONG => ("ENAMETOOLONG", "name too long"),
        Errno::ENOSPC => ("ENOSPC", "no space left on device"),
        Errno::EROFS => ("EROFS", "read-only file system"),
        Errno::EMFILE => ("EMFILE", "too many open files"),
        Errno::EBUSY => ("EBUSY", "resource busy or locked"),
        Errno::EINVAL => ("EINVAL", "invalid argument"),
        Errno::ETXTBSY => ("ETXTBSY", "text file is busy"),
        Errno::EFBIG => ("EFBIG", "file too large"),
        Errno::EXDEV => ("EXDEV", "cross-device link not permitted"),
        Errno::ENOTEMPTY => ("ENOTEMPTY", "directory not empty"),
        _ => ("EIO", "i/o error"),
    }
}

/// Node's message for a failed call: `CODE: description, syscall 'path'`, or `CODE: description,
/// syscall` when the call names no path (as Node's `read` on a directory).
///
/// ```
/// use std::io;
/// use pi_coding_agent::tools::fs_error::node_message;
/// let e = io::Error::from_raw_os_error(2);
/// assert_eq!(node_message(&e, "access", Some("/x")), "ENOENT: no such file or directory, access '/x'");
/// ```
pub fn node_message(err: &io::Error, syscall: &str, path: Option<&str>) -> String {
    let (code, description) = node_code(err);
    match path {
        Some(p) => format!("{code}: {description}, {syscall} '{p}'"),
        None => format!("{code}: {description}, {syscall}"),
    }
}
