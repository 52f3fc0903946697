//! A message selected for a summary, without copying it out of the session.
//!
//! Most selected messages are `message` entries and are simply borrowed; the few built
//! from other entries (`custom_message`, `branch_summary`, `compaction`) are owned. Unlike
//! `Cow<AgentMessage>` (which stores a whole message inline, about 500 bytes), this is two
//! words, so selecting tens of thousands of messages stays cheap.

use std::borrow::Borrow;
use std::ops::Deref;

use serde::{Serialize, Serializer};

use crate::messages::AgentMessage;

/// A borrowed or converted [`AgentMessage`]; dereferences to the message.
#[derive(Debug, Clone, PartialEq)]
pub enum MessageRef<'a> {
    /// The message of a `message` entry.
    Borrowed(&'a AgentMessage),
    /// A message converted from another kind of entry.
    Converted(Box<AgentMessage>),
}

impl MessageRef<'_> {
    /// A copy that no longer borrows the session entries.
    pub fn into_owned(self) -> MessageRef<'static> {
        match self {
            MessageRef::Borrowed(m) => MessageRef::Converted(Box::new(m.clone())),
            MessageRef::Converted(m) => MessageRef::Converted(m),
        }
    }
}

impl Deref for MessageRef<'_> {
    type Target = AgentMessage;

    fn deref(&self) -> &AgentMessage {
        match self {
            MessageRef::Borrowed(m) => m,
            MessageRef::Converted(m) => m,
        }
    }
}

impl Borrow<AgentMessage> for MessageRef<'_> {
    fn borrow(&self) -> &AgentMessage {
        self
    }
}

impl Serialize for MessageRef<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        (**self).serialize(serializer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ai::message::UserMessage;

    #[test]
    fn is_two_words_and_serializes_as_the_message() {
        assert_eq!(
            std::mem::size_of::<MessageRef<'_>>(),
            2 * std::mem::size_of::<usize>()
        );
        let m = AgentMessage::User(UserMessage::text("hi", 7));
        let r = MessageRef::Borrowed(&m);
        assert_eq!(
            serde_json::to_string(&r).unwrap(),
            r#"{"role":"user","content":[{"type":"text","text":"hi"}],"timestamp":7}"#
        );
        assert_eq!(
            r.clone().into_owned(),
            MessageRef::Converted(Box::new(m.clone()))
        );
        assert_eq!(*r, m);
    }
}
