//! HTTP plumbing shared by the HTTP providers (`openai-completions`, `openai-responses`,
//! `anthropic-messages`).
//!
//! - [`client`]: one lazily built [`reqwest::Client`] for the process.
//! - [`HeaderMap`]: request headers merged case-insensitively, later sources winning, `None`
//!   removing a header (pi's `{name: string | null}` headers).
//! - [`send_with_retries`]: POST a JSON body, check the status, retry 408/409/429/5xx (or what
//!   `x-should-retry` says) with pi's backoff, honour cancellation and the idle timeout.
//! - [`ResponseBody`]: the answer's bytes, with the idle timeout and cancellation applied to every
//!   read.
//! - [`HttpError`] and [`ErrorStyle`]: failures, formatted exactly as each API of pi words them.
//! - [`ProviderOutput`]: the message being built by a provider and the events it emits.
//!
//! ```
//! use pi_ai::http::{HeaderMap, user_agent};
//! let mut headers = HeaderMap::new();
//! headers.set("User-Agent", user_agent());
//! headers.merge([("user-agent".to_owned(), None), ("X-Extra".to_owned(), Some("1".to_owned()))]);
//! assert_eq!(headers.get("x-extra"), Some("1"));
//! assert_eq!(headers.get("User-Agent"), None);
//! ```

pub(crate) mod body;
mod client;
mod error;
pub(crate) mod json_out;
mod output;
mod request;
pub mod shared;

pub use client::{HeaderMap, PI_VERSION, client, client_with_connect_timeout, user_agent};
pub use error::{ErrorStyle, HttpError, MAX_ERROR_BODY_CHARS, truncate_error_text};
pub(crate) use output::ObservedEvents;
pub use output::{ProviderOutput, SseHandler, StreamContext, stream_sse};
pub use request::{BodySource, HttpRequest, ResponseBody, send_with_retries, server_retry_delay};
