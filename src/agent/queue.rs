//! Messages typed while the agent works: steering messages (delivered after the tool
//! calls in progress) and follow-up messages (delivered when the agent would stop).
//! Both queues are shared between the running loop and whoever feeds them (UI, RPC).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};

use crate::messages::AgentMessage;

/// How many queued messages are delivered at a time (`steeringMode` / `followUpMode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DeliveryMode {
    #[default]
    OneAtATime,
    All,
}

#[derive(Debug, Default)]
struct Inner {
    steering: VecDeque<AgentMessage>,
    follow_up: VecDeque<AgentMessage>,
    steering_mode: DeliveryMode,
    follow_up_mode: DeliveryMode,
}

/// The two queues. Cloning shares them.
#[derive(Debug, Clone, Default)]
pub struct MessageQueues {
    inner: Arc<Mutex<Inner>>,
}

impl MessageQueues {
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A poisoned lock only means another thread panicked mid-push; the queue itself
        // is still consistent, so keep going.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn set_modes(&self, steering: DeliveryMode, follow_up: DeliveryMode) {
        let mut q = self.lock();
        q.steering_mode = steering;
        q.follow_up_mode = follow_up;
    }

    pub fn steering_mode(&self) -> DeliveryMode {
        self.lock().steering_mode
    }

    pub fn follow_up_mode(&self) -> DeliveryMode {
        self.lock().follow_up_mode
    }

    pub fn push_steering(&self, message: AgentMessage) {
        self.lock().steering.push_back(message);
    }

    pub fn push_follow_up(&self, message: AgentMessage) {
        self.lock().follow_up.push_back(message);
    }

    /// Takes the steering messages due now (one, or all, per the mode).
    pub fn take_steering(&self) -> Vec<AgentMessage> {
        let mut q = self.lock();
        let mode = q.steering_mode;
        take(&mut q.steering, mode)
    }

    /// Takes the follow-up messages due now (one, or all, per the mode).
    pub fn take_follow_up(&self) -> Vec<AgentMessage> {
        let mut q = self.lock();
        let mode = q.follow_up_mode;
        take(&mut q.follow_up, mode)
    }

    pub fn has_steering(&self) -> bool {
        !self.lock().steering.is_empty()
    }

    pub fn len(&self) -> usize {
        let q = self.lock();
        q.steering.len() + q.follow_up.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Snapshot of both queues (steering first) for display.
    pub fn pending(&self) -> (Vec<AgentMessage>, Vec<AgentMessage>) {
        let q = self.lock();
        (
            q.steering.iter().cloned().collect(),
            q.follow_up.iter().cloned().collect(),
        )
    }

    /// Empties both queues and returns what was in them (steering first): what Esc gives
    /// back to the editor after an abort.
    pub fn drain_all(&self) -> Vec<AgentMessage> {
        let mut q = self.lock();
        let mut out: Vec<AgentMessage> = q.steering.drain(..).collect();
        out.extend(q.follow_up.drain(..));
        out
    }
}

impl MessageQueues {
    /// Empties both queues at once and returns (steering, follow-up).
    pub fn drain_split(&self) -> (Vec<AgentMessage>, Vec<AgentMessage>) {
        let mut q = self.lock();
        let steering = q.steering.drain(..).collect();
        let follow_up = q.follow_up.drain(..).collect();
        (steering, follow_up)
    }
}

fn take(queue: &mut VecDeque<AgentMessage>, mode: DeliveryMode) -> Vec<AgentMessage> {
    match mode {
        DeliveryMode::All => queue.drain(..).collect(),
        DeliveryMode::OneAtATime => queue.pop_front().into_iter().collect(),
    }
}
