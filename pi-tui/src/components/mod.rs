//! The built-in components.

mod boxed;
mod loader;
mod spacer;
mod text;
mod truncated_text;

pub use boxed::Box;
pub use loader::{Loader, SPINNER_FRAMES, SPINNER_INTERVAL};
pub use spacer::Spacer;
pub use text::Text;
pub use truncated_text::TruncatedText;
