//! The built-in components.

mod boxed;
mod editor;
mod input;
mod loader;
pub mod markdown;
mod select_list;
mod spacer;
mod text;
pub mod text_edit;
mod truncated_text;

pub use boxed::Box;
pub use editor::{AutocompleteProvider, Editor, EditorTheme};
pub use input::Input;
pub use loader::{CancellableLoader, Loader, SPINNER_FRAMES, SPINNER_INTERVAL};
pub use markdown::{DefaultTextStyle, Markdown, MarkdownOptions, MarkdownTheme, MarkdownTransform};
pub use select_list::{SelectItem, SelectList, SelectListLayout, SelectListTheme};
pub use spacer::Spacer;
pub use text::Text;
pub use truncated_text::TruncatedText;
