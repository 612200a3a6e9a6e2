//! A large request body in segments, measured and written on two threads.
//!
//! A body's write function calls `flush` between the items of its message list; the text before
//! the first call, between two calls and after the last is a *segment*. A large body is written
//! twice: once to learn its length (pi sends a `Content-Length`), then into the connection. Each
//! pass runs the write function on two threads at once, each producing only its share of the
//! segments: in the other thread's segments long strings are skipped ([`LongStrings::Skip`]), so
//! a thread walks the whole transcript but escapes only about half of its text.
//!
//! - [`measure`]: the first pass. The body is written whole until its text passes a chunk (a
//!   small body comes back whole); from there, groups of segments alternate between this thread
//!   and a helper, long strings measured, not written. The result: every segment's length.
//! - [`stream`]: the second pass. The segments are cut into pieces of about a chunk; two threads
//!   each write alternate pieces into a channel of their own, and the connection takes the pieces
//!   from the two channels in turn (so at most a few pieces are held at once).
//!
//! On a machine with one core, one thread does all of it.

use std::sync::{Arc, OnceLock};

use bytes::Bytes;
use futures::Stream;
use tokio::sync::mpsc::{Receiver, Sender};

use crate::http::json_out::{LongStringMode, LongStrings};

/// What writes a body: JSON into the buffer, calling the flush callback between the items of its
/// message list. It must write the same bytes every time.
pub(crate) type BodyWrite = dyn Fn(&mut Vec<u8>, &mut dyn FnMut(&mut Vec<u8>)) -> Result<(), String> + Send + Sync;

/// Segments per group in the measuring pass; groups alternate between the two threads.
const GROUP: usize = 16;

/// What the measuring pass found.
pub(crate) enum Measured {
    /// A body of at most a chunk, written whole.
    Whole(Vec<u8>),
    /// A larger body: the length of each segment.
    Large(Layout),
}

/// The lengths of a large body's segments, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Layout {
    segments: Vec<u64>,
}

/// A run of segments sent as one piece: the last segment's index and the piece's length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Piece {
    last: usize,
    len: u64,
}

impl Layout {
    /// The body's length in bytes.
    pub(crate) fn len(&self) -> u64 {
        self.segments.iter().sum()
    }

    /// The pieces the body is sent in: a piece ends with the first segment that brings it to
    /// `chunk` bytes; the last piece holds the rest.
    fn pieces(&self, chunk: usize) -> Vec<Piece> {
        let chunk = chunk.max(1) as u64;
        let mut pieces = Vec::new();
        let mut len = 0;
        for (k, &n) in self.segments.iter().enumerate() {
            len += n;
            if len >= chunk || k + 1 == self.segments.len() {
                pieces.push(Piece { last: k, len });
                len = 0;
            }
        }
        pieces
    }
}

/// How many threads write a large body: two when the machine has more than one core.
fn threads() -> usize {
    static THREADS: OnceLock<usize> = OnceLock::new();
    *THREADS.get_or_init(|| if std::thread::available_parallelism().map_or(1, |n| n.get()) > 1 { 2 } else { 1 })
}

/// The error of a body whose text changed between two writes.
fn changed(detail: &str) -> String {
    format!("Could not serialize the request: its body changed between two writes ({detail})")
}

/// Which thread measures segment `k` of a body found large at segment `split`: the calling
/// thread (0) everything up to `split`, then groups of [`GROUP`] segments alternate, the helper
/// (1) first (the caller is already there; the helper starts from the beginning).
fn measurer(k: usize, split: usize, threads: usize) -> usize {
    if threads == 1 || k <= split { 0 } else { ((k - split - 1) / GROUP + 1) % 2 }
}

/// The mode of thread `me` in segment `k`.
fn measuring_mode(me: usize, k: usize, split: usize, threads: usize) -> LongStrings {
    if measurer(k, split, threads) == me { LongStrings::Measure } else { LongStrings::Skip }
}

/// The measuring pass (see the module): a body of at most `chunk` bytes comes back whole; a
/// larger one as its segments' lengths.
pub(crate) fn measure(write: &Arc<BodyWrite>, chunk: usize) -> Result<Measured, String> {
    /// Once the body is known to be large: where, this thread's mode, the helper.
    struct Large {
        split: usize,
        scope: LongStringMode,
        helper: Option<std::thread::JoinHandle<Result<Vec<u64>, String>>>,
    }
    let threads = threads();
    let mut out = Vec::with_capacity(64 * 1024);
    let mut segments: Vec<u64> = Vec::new();
    let mut large: Option<Large> = None;
    // Where the current segment began in `out` while the body is written whole.
    let mut mark = 0usize;
    let result = (**write)(&mut out, &mut |buf: &mut Vec<u8>| {
        let k = segments.len();
        if let Some(Large { split, scope, .. }) = &large {
            let n = buf.len() as u64 + scope.take_measured();
            segments.push(if measurer(k, *split, threads) == 0 { n } else { 0 });
            buf.clear();
            scope.set(measuring_mode(0, k + 1, *split, threads));
            return;
        }
        segments.push((buf.len() - mark) as u64);
        mark = buf.len();
        if buf.len() >= chunk {
            buf.clear();
            let helper = (threads > 1).then(|| {
                let write = Arc::clone(write);
                std::thread::spawn(move || measure_share(&*write, k))
            });
            let scope = LongStringMode::enter(measuring_mode(0, k + 1, k, threads));
            large = Some(Large { split: k, scope, helper });
        }
    });
    let Some(Large { split, scope, helper }) = large else {
        result?;
        return Ok(Measured::Whole(out));
    };
    let k = segments.len();
    let n = out.len() as u64 + scope.take_measured();
    segments.push(if measurer(k, split, threads) == 0 { n } else { 0 });
    drop(scope);
    // The helper is waited for even when this thread failed (no thread outlives the request).
    let theirs = helper.map(|h| h.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)));
    result?;
    if let Some(theirs) = theirs {
        let theirs = theirs?;
        if theirs.len() != segments.len() {
            return Err(changed(&format!("{} segments, then {}", segments.len(), theirs.len())));
        }
        for (mine, their) in segments.iter_mut().zip(theirs) {
            *mine += their;
        }
    }
    Ok(Measured::Large(Layout { segments }))
}

/// The helper's share of the measuring pass: the lengths of the segments it measures (0 for the
/// others).
fn measure_share(write: &BodyWrite, split: usize) -> Result<Vec<u64>, String> {
    let scope = LongStringMode::enter(measuring_mode(1, 0, split, 2));
    let mut segments = Vec::new();
    let mut out = Vec::new();
    let end_segment = |buf: &mut Vec<u8>, segments: &mut Vec<u64>| {
        let k = segments.len();
        let n = buf.len() as u64 + scope.take_measured();
        segments.push(if measurer(k, split, 2) == 1 { n } else { 0 });
        buf.clear();
        scope.set(measuring_mode(1, k + 1, split, 2));
    };
    write(&mut out, &mut |buf| end_segment(buf, &mut segments))?;
    end_segment(&mut out, &mut segments);
    Ok(segments)
}

/// One piece, or the error that ends the body.
type Item = Result<Bytes, std::io::Error>;

/// The second pass (see the module): the body laid out by `layout`, in pieces of about `chunk`
/// bytes, written on blocking threads at most a piece or two ahead of the connection. Dropping
/// the stream stops handing pieces over.
pub(crate) fn stream(
    write: Arc<BodyWrite>,
    layout: &Layout,
    chunk: usize,
) -> impl Stream<Item = Item> + Send + 'static + use<> {
    let pieces: Arc<[Piece]> = layout.pieces(chunk).into();
    let threads = if pieces.len() > 1 { threads() } else { 1 };
    let receivers: Vec<Receiver<Item>> = (0..threads)
        .map(|me| {
            let (tx, rx) = tokio::sync::mpsc::channel::<Item>(1);
            let (write, pieces) = (Arc::clone(&write), Arc::clone(&pieces));
            tokio::task::spawn_blocking(move || produce_share(&*write, &pieces, me, threads, &tx));
            rx
        })
        .collect();
    let count = pieces.len();
    futures::stream::unfold((receivers, 0usize), move |(mut receivers, p)| async move {
        if p >= count {
            return None;
        }
        let from = p % receivers.len();
        let item = receivers[from].recv().await.unwrap_or_else(|| {
            Err(std::io::Error::other("Could not serialize the request: its writer stopped before the end"))
        });
        let next = if item.is_ok() { p + 1 } else { count };
        Some((item, (receivers, next)))
    })
}

/// Thread `me` of `threads`: writes the whole body, keeping the pieces it owns (every
/// `threads`-th, from its own index) and sending each into `tx` once complete.
fn produce_share(write: &BodyWrite, pieces: &[Piece], me: usize, threads: usize, tx: &Sender<Item>) {
    let mut share = Share {
        pieces,
        me,
        threads,
        tx,
        scope: LongStringMode::enter(LongStrings::Skip),
        piece: 0,
        k: 0,
        stopped: false,
    };
    share.scope.set(share.mode());
    let first = if share.owned(0) { 0 } else { me };
    let mut out = Vec::with_capacity(share.capacity(first));
    match write(&mut out, &mut |buf| share.end_segment(buf)) {
        Ok(()) => {
            share.end_segment(&mut out);
            if share.piece != pieces.len() {
                share.fail(changed("fewer segments than measured"));
            }
        }
        Err(error) => share.fail(error),
    }
}

/// One thread's share of the second pass, segment by segment.
struct Share<'a> {
    pieces: &'a [Piece],
    me: usize,
    threads: usize,
    tx: &'a Sender<Item>,
    scope: LongStringMode,
    /// The piece and segment being written.
    piece: usize,
    k: usize,
    /// Whether pieces are no longer handed over (the connection went away, or an error was sent).
    stopped: bool,
}

impl Share<'_> {
    fn owned(&self, piece: usize) -> bool {
        piece % self.threads == self.me
    }

    /// Long strings are written in this thread's pieces, skipped in the others.
    fn mode(&self) -> LongStrings {
        if self.stopped || !self.owned(self.piece) { LongStrings::Skip } else { LongStrings::Write }
    }

    fn capacity(&self, piece: usize) -> usize {
        self.pieces.get(piece).map_or(0, |p| usize::try_from(p.len).unwrap_or(0))
    }

    /// Sends `error` (once) and stops.
    fn fail(&mut self, error: String) {
        if !self.stopped {
            self.stopped = true;
            let _ = self.tx.blocking_send(Err(std::io::Error::other(error)));
        }
    }

    /// Segment `k` ends with `buf`: kept within an owned piece, sent at its end, else dropped.
    fn end_segment(&mut self, buf: &mut Vec<u8>) {
        let Some(current) = self.pieces.get(self.piece).copied() else {
            buf.clear();
            self.fail(changed("more segments than measured"));
            return;
        };
        let last_of_piece = self.k == current.last;
        if !self.owned(self.piece) || self.stopped {
            buf.clear();
        } else if last_of_piece {
            if buf.len() as u64 == current.len {
                let next = std::mem::replace(buf, Vec::with_capacity(self.capacity(self.piece + self.threads)));
                // A closed channel: the request was dropped; the rest is skipped.
                self.stopped = self.tx.blocking_send(Ok(Bytes::from(next))).is_err();
            } else {
                let detail = format!("a piece of {} bytes, not {}", buf.len(), current.len);
                buf.clear();
                self.fail(changed(&detail));
            }
        }
        self.scope.take_measured();
        self.k += 1;
        if last_of_piece {
            self.piece += 1;
        }
        self.scope.set(self.mode());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::json_out::write_str;
    use futures::StreamExt;

    /// A body like a provider's: a head, `items` strings of varied lengths and escapes (long
    /// ones measured or skipped), flushed between items, and a tail.
    fn body_of(items: Vec<String>) -> Arc<BodyWrite> {
        Arc::new(move |out: &mut Vec<u8>, flush: &mut dyn FnMut(&mut Vec<u8>)| {
            out.extend_from_slice(b"{\"messages\":[");
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_str(out, item);
                flush(out);
            }
            out.extend_from_slice(b"],\"stream\":true}");
            Ok(())
        })
    }

    fn items(count: usize) -> Vec<String> {
        let line = "fn main() { println!(\"hello, \\\"world\\\"\"); }\t// ünïcödé\n";
        (0..count).map(|i| format!("item {i}: {}", line.repeat(i * 37 % 300))).collect()
    }

    fn whole(write: &BodyWrite) -> Vec<u8> {
        let mut out = Vec::new();
        write(&mut out, &mut |_| {}).expect("written");
        out
    }

    async fn streamed(write: Arc<BodyWrite>, layout: &Layout, chunk: usize) -> Result<Vec<u8>, std::io::Error> {
        let mut pieces = Box::pin(stream(write, layout, chunk));
        let mut body = Vec::new();
        while let Some(piece) = pieces.next().await {
            body.extend_from_slice(&piece?);
        }
        Ok(body)
    }

    #[test]
    fn a_small_body_comes_back_whole() {
        let write = body_of(items(5));
        let Ok(Measured::Whole(out)) = measure(&write, 1 << 20) else { panic!("whole") };
        assert_eq!(out, whole(&*write));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_large_body_measures_and_streams_exactly_as_it_is_written_whole() {
        let write = body_of(items(300));
        let expected = whole(&*write);
        // Chunks from smaller than one item to most of the body: many pieces, two, one.
        for chunk in [1usize, 700, 20_000, 100_000, expected.len() / 2, expected.len() - 100] {
            let Ok(Measured::Large(layout)) = measure(&write, chunk) else { panic!("large at {chunk}") };
            assert_eq!(layout.len(), expected.len() as u64, "chunk {chunk}");
            assert_eq!(streamed(write.clone(), &layout, chunk).await.ok(), Some(expected.clone()), "chunk {chunk}");
        }
    }

    #[test]
    fn segments_alternate_in_groups_after_the_split() {
        assert_eq!((0..=5).map(|k| measurer(k, 5, 2)).collect::<Vec<_>>(), [0; 6]);
        assert_eq!(measurer(6, 5, 2), 1);
        assert_eq!(measurer(5 + GROUP, 5, 2), 1);
        assert_eq!(measurer(6 + GROUP, 5, 2), 0);
        assert_eq!(measurer(6 + 2 * GROUP, 5, 2), 1);
        assert!((0..100).all(|k| measurer(k, 5, 1) == 0));
    }

    #[test]
    fn pieces_close_at_the_chunk_and_the_last_takes_the_rest() {
        let layout = Layout { segments: vec![3, 4, 5, 1, 1, 2] };
        assert_eq!(layout.pieces(7), [Piece { last: 1, len: 7 }, Piece { last: 4, len: 7 }, Piece { last: 5, len: 2 }]);
        assert_eq!(layout.pieces(100), [Piece { last: 5, len: 16 }]);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_body_that_changes_between_writes_is_an_error_not_a_wrong_body() {
        let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let seen = calls.clone();
        let base = items(300);
        let write: Arc<BodyWrite> = Arc::new(move |out: &mut Vec<u8>, flush: &mut dyn FnMut(&mut Vec<u8>)| {
            // Every write after the measuring pass's adds a byte to one item.
            let call = seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            out.push(b'[');
            for (i, item) in base.iter().enumerate() {
                write_str(out, item);
                if call >= threads() && i == 250 {
                    out.push(b' ');
                }
                flush(out);
            }
            out.push(b']');
            Ok(())
        });
        let Ok(Measured::Large(layout)) = measure(&write, 10_000) else { panic!("large") };
        let error = streamed(write, &layout, 10_000).await.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(error.starts_with("Could not serialize the request: its body changed"), "{error}");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_write_error_ends_the_body_with_that_error() {
        let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let seen = calls.clone();
        let inner = body_of(items(300));
        let write: Arc<BodyWrite> = Arc::new(move |out: &mut Vec<u8>, flush: &mut dyn FnMut(&mut Vec<u8>)| {
            if seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst) >= threads() {
                return Err("the transcript went away".to_owned());
            }
            inner(out, flush)
        });
        let Ok(Measured::Large(layout)) = measure(&write, 10_000) else { panic!("large") };
        let error = streamed(write, &layout, 10_000).await.err().map(|e| e.to_string()).unwrap_or_default();
        assert_eq!(error, "the transcript went away");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn dropping_the_stream_early_stops_the_writers() {
        let write = body_of(items(700));
        let Ok(Measured::Large(layout)) = measure(&write, 1_000) else { panic!("large") };
        let mut pieces = Box::pin(stream(write.clone(), &layout, 1_000));
        assert!(matches!(pieces.next().await, Some(Ok(_))));
        drop(pieces);
        // The writers finish on their own (skipping the rest): the body's closure is released.
        for _ in 0..500 {
            if Arc::strong_count(&write) == 1 {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        panic!("the writers still hold the body");
    }
}
