//! The terminal's input reader: a thread that waits on the input descriptor and on a wake pipe
//! with `poll(2)`, reads only what `poll` says is there, and leaves at once when woken. Stopping
//! it therefore leaves every unread byte in the terminal for whoever takes it next (an external
//! editor, the shell after a suspend), and bytes read before the stop stay in the channel for the
//! next start: nothing is lost and nothing is stolen.

use std::io::Read;
use std::os::fd::{AsFd, OwnedFd};
use std::sync::Arc;
use std::sync::mpsc::Sender;
use std::thread::JoinHandle;

use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};

/// Called after each chunk of input is delivered (an event loop's wake-up).
pub(crate) type Wakeup = Arc<dyn Fn() + Send + Sync>;

/// Where the terminal's input comes from.
pub(crate) enum InputSource {
    /// A descriptor `poll(2)` can wait on (the process's stdin, a pty the caller opened).
    Fd(Arc<OwnedFd>),
    /// A reader that cannot be polled: read on a thread that lives until the end of the input,
    /// started once and kept across stop/start (its bytes cannot be handed to another program).
    Reader(Option<Box<dyn Read + Send>>),
}

/// A running reader: its wake pipe and its thread.
pub(crate) struct ReaderThread {
    wake: Option<OwnedFd>,
    handle: Option<JoinHandle<()>>,
}

impl ReaderThread {
    /// Starts reading `source` into `tx`. A [`InputSource::Reader`] already started returns a
    /// reader that does nothing (its thread still runs).
    pub(crate) fn start(
        source: &mut InputSource,
        tx: Sender<Vec<u8>>,
        wakeup: Option<Wakeup>,
    ) -> std::io::Result<ReaderThread> {
        match source {
            InputSource::Fd(fd) => {
                let (wake_r, wake_w) =
                    nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).map_err(std::io::Error::from)?;
                let fd = fd.clone();
                let handle = std::thread::Builder::new()
                    .name("pi-tui-stdin".into())
                    .spawn(move || pump_fd(&fd, &wake_r, &tx, wakeup.as_ref()))?;
                Ok(ReaderThread { wake: Some(wake_w), handle: Some(handle) })
            }
            InputSource::Reader(reader) => {
                if let Some(mut reader) = reader.take() {
                    std::thread::Builder::new().name("pi-tui-stdin".into()).spawn(move || {
                        let mut buf = [0u8; 4096];
                        loop {
                            match reader.read(&mut buf) {
                                Ok(0) | Err(_) => break,
                                Ok(n) => {
                                    if tx.send(buf[..n].to_vec()).is_err() {
                                        break;
                                    }
                                    if let Some(w) = &wakeup {
                                        w();
                                    }
                                }
                            }
                        }
                    })?;
                }
                Ok(ReaderThread { wake: None, handle: None })
            }
        }
    }

    /// Wakes the thread and waits until it has left: after this, nothing reads the input.
    pub(crate) fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        if let Some(wake) = self.wake.take() {
            if let Err(e) = nix::unistd::write(&wake, b"x") {
                tracing::warn!(error = %e, "waking the input reader failed");
            }
            if let Some(handle) = self.handle.take()
                && handle.join().is_err()
            {
                tracing::warn!("the input reader panicked");
            }
        }
    }
}

impl Drop for ReaderThread {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// The thread's loop: wait for input or the wake pipe; the wake pipe wins when both are ready.
fn pump_fd(fd: &OwnedFd, wake: &OwnedFd, tx: &Sender<Vec<u8>>, wakeup: Option<&Wakeup>) {
    let mut buf = [0u8; 4096];
    loop {
        let mut fds = [PollFd::new(fd.as_fd(), PollFlags::POLLIN), PollFd::new(wake.as_fd(), PollFlags::POLLIN)];
        match poll(&mut fds, PollTimeout::NONE) {
            Ok(_) => {}
            Err(Errno::EINTR | Errno::EAGAIN) => continue,
            Err(e) => {
                tracing::warn!(error = %e, "waiting for terminal input failed");
                return;
            }
        }
        if fds[1].any().unwrap_or(true) {
            return;
        }
        let ready = fds[0].revents().unwrap_or(PollFlags::POLLNVAL);
        if ready.intersects(PollFlags::POLLNVAL) {
            return;
        }
        if !ready.intersects(PollFlags::POLLIN | PollFlags::POLLHUP | PollFlags::POLLERR) {
            continue;
        }
        match nix::unistd::read(fd, &mut buf) {
            // End of input, or the terminal is gone (EIO on a closed pty).
            Ok(0) => return,
            Ok(n) => {
                if tx.send(buf[..n].to_vec()).is_err() {
                    return;
                }
                if let Some(w) = wakeup {
                    w();
                }
            }
            Err(Errno::EINTR | Errno::EAGAIN) => continue,
            Err(_) => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc::channel;
    use std::time::Duration;

    #[test]
    fn a_stopped_reader_leaves_later_bytes_unread() {
        let (r, w) = nix::unistd::pipe().expect("pipe");
        let mut source = InputSource::Fd(Arc::new(r));
        let (tx, rx) = channel();
        let reader = ReaderThread::start(&mut source, tx.clone(), None).expect("start");
        nix::unistd::write(&w, b"before").expect("write");
        assert_eq!(rx.recv_timeout(Duration::from_secs(10)).expect("bytes"), b"before");
        reader.stop();
        nix::unistd::write(&w, b"after").expect("write");
        // Nobody reads while stopped: the bytes are still in the pipe for another reader.
        let InputSource::Fd(fd) = &source else { unreachable!("constructed as Fd") };
        let mut buf = [0u8; 16];
        let n = nix::unistd::read(fd.as_fd(), &mut buf).expect("read");
        assert_eq!(&buf[..n], b"after");
        assert!(rx.try_recv().is_err());
        // A restarted reader sees what comes next.
        let reader = ReaderThread::start(&mut source, tx, None).expect("restart");
        nix::unistd::write(&w, b"again").expect("write");
        assert_eq!(rx.recv_timeout(Duration::from_secs(10)).expect("bytes"), b"again");
        reader.stop();
    }
}
