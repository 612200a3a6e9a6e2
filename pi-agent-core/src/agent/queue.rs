//! The steering and follow-up queues and how they are drained.

use std::collections::VecDeque;
use std::sync::Mutex;

use super::{Agent, lock};
use crate::message::{AgentMessage, CustomMessage};

/// How a queue is drained.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum QueueMode {
    /// The oldest message per drain (pi's default).
    #[default]
    OneAtATime,
    /// Everything queued.
    All,
}

impl<C: CustomMessage> Agent<C> {
    /// Queues a steering message, injected after the current turn.
    pub fn steer(&self, message: impl Into<AgentMessage<C>>) {
        lock(&self.inner.steering).push_back(message.into());
    }

    /// Queues a follow-up message, injected when the agent would otherwise stop.
    pub fn follow_up(&self, message: impl Into<AgentMessage<C>>) {
        lock(&self.inner.follow_up).push_back(message.into());
    }

    /// Empties the steering queue.
    pub fn clear_steering_queue(&self) {
        lock(&self.inner.steering).clear();
    }

    /// Empties the follow-up queue.
    pub fn clear_follow_up_queue(&self) {
        lock(&self.inner.follow_up).clear();
    }

    /// Empties both queues.
    pub fn clear_all_queues(&self) {
        self.clear_steering_queue();
        self.clear_follow_up_queue();
    }

    /// Whether a queue holds messages.
    pub fn has_queued_messages(&self) -> bool {
        !lock(&self.inner.steering).is_empty() || !lock(&self.inner.follow_up).is_empty()
    }

    /// The next drain without consuming it: the steering batch if any, else the follow-up batch.
    pub fn peek_queued_messages(&self) -> Vec<AgentMessage<C>> {
        let peek = |q: &VecDeque<AgentMessage<C>>, mode: QueueMode| match mode {
            QueueMode::All => q.iter().cloned().collect(),
            QueueMode::OneAtATime => q.front().cloned().into_iter().collect::<Vec<_>>(),
        };
        let steering = peek(&lock(&self.inner.steering), self.steering_mode());
        if !steering.is_empty() {
            return steering;
        }
        peek(&lock(&self.inner.follow_up), self.follow_up_mode())
    }

    /// The steering queue mode.
    pub fn steering_mode(&self) -> QueueMode {
        *lock(&self.inner.steering_mode)
    }

    /// Sets the steering queue mode (applies at the next drain).
    pub fn set_steering_mode(&self, mode: QueueMode) {
        *lock(&self.inner.steering_mode) = mode;
    }

    /// The follow-up queue mode.
    pub fn follow_up_mode(&self) -> QueueMode {
        *lock(&self.inner.follow_up_mode)
    }

    /// Sets the follow-up queue mode.
    pub fn set_follow_up_mode(&self, mode: QueueMode) {
        *lock(&self.inner.follow_up_mode) = mode;
    }
}

pub(super) fn drain_queue<C>(queue: &Mutex<VecDeque<AgentMessage<C>>>, mode: QueueMode) -> Vec<AgentMessage<C>> {
    let mut q = lock(queue);
    match mode {
        QueueMode::All => q.drain(..).collect(),
        QueueMode::OneAtATime => q.pop_front().into_iter().collect(),
    }
}
