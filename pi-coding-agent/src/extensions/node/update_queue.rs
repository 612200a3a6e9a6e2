//! `message_update` to the JavaScript host without a round trip per delta.
//!
//! pi awaits every handler of every event; for `message_update`, whose handlers answer nothing,
//! that is only an order: each handler runs after the one before and before the message's end.
//! Across a process boundary, waiting for each would cost a round trip per streamed delta (two
//! processes woken, a hundred times an in-process call). So pi-rs sends each update as a request
//! and goes on; the host runs them in order, one after the other; the answers are collected as
//! they come (at most [`WINDOW`] unanswered: the stream waits for the oldest beyond that), and
//! every one is awaited before `message_end` goes on ([`UpdateQueue::settle`]). A handler's
//! failure is reported as it would be, once its answer arrives.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::process::{Answer, Connection};
use crate::extensions::subprocess::protocol::METHOD_EVENT;

/// How many updates may be unanswered before the stream waits for the oldest: enough that
/// neither process waits on the other's wake-ups, few enough that an aborted run waits for at
/// most this many handlers before its `message_end`.
pub(crate) const WINDOW: usize = 16;

/// One update sent and not yet answered.
struct Sent {
    conn: Arc<Connection>,
    id: u64,
    answer: Answer,
}

/// The updates of one extension sent and not yet answered, oldest first.
#[derive(Default)]
pub(crate) struct UpdateQueue {
    sent: tokio::sync::Mutex<VecDeque<Sent>>,
}

impl UpdateQueue {
    /// Sends one update; the failures of the answers collected meanwhile are returned (the
    /// oldest is awaited when [`WINDOW`] are unanswered). `Err`: the update could not be sent.
    pub(crate) async fn send(
        &self,
        conn: Arc<Connection>,
        params: Value,
        timeout: Duration,
    ) -> Result<Vec<String>, String> {
        let mut sent = self.sent.lock().await;
        let mut failures = collect_answered(&mut sent);
        while sent.len() >= WINDOW {
            if let Some(oldest) = sent.pop_front()
                && let Err(e) = oldest.conn.answer(oldest.id, oldest.answer, "message_update", timeout).await
            {
                failures.push(e);
            }
        }
        let (id, answer) = conn.send(METHOD_EVENT, params)?;
        sent.push_back(Sent { conn, id, answer });
        Ok(failures)
    }

    /// Waits for every update sent; their failures.
    pub(crate) async fn settle(&self, timeout: Duration) -> Vec<String> {
        let mut sent = self.sent.lock().await;
        let mut failures = Vec::new();
        while let Some(oldest) = sent.pop_front() {
            if let Err(e) = oldest.conn.answer(oldest.id, oldest.answer, "message_update", timeout).await {
                failures.push(e);
            }
        }
        failures
    }
}

/// Takes the answers that have arrived, oldest first, up to the first still awaited.
fn collect_answered(sent: &mut VecDeque<Sent>) -> Vec<String> {
    let mut failures = Vec::new();
    while let Some(oldest) = sent.front_mut() {
        match oldest.answer.try_recv() {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => failures.push(e.message),
            Err(tokio::sync::oneshot::error::TryRecvError::Closed) => {
                failures.push(crate::extensions::subprocess::register::NOT_RUNNING.to_owned());
            }
            Err(tokio::sync::oneshot::error::TryRecvError::Empty) => break,
        }
        sent.pop_front();
    }
    failures
}
