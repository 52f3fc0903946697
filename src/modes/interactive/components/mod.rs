//! Pure renderers for everything the chat screen shows. Each takes plain data (messages
//! from [`crate::messages`], tool call state, footer numbers) and returns lines for a
//! width; none of them knows about sessions, agents or the terminal.

pub mod select_list;
