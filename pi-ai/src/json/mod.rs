//! JSON fidelity helpers: pi's files are the contract, so what we read we write back unchanged.
//!
//! - [`JsNumber`]: numbers formatted as JavaScript formats them; [`to_js_json`] and
//!   [`to_js_json_pretty`]: any value written as `JSON.stringify` writes it.
//! - [`KeyOrder`] and the `json_object!` / `json_tagged_enum!` macros: structs that remember the
//!   key order they were read in and keep unknown fields.

mod extra;
pub(crate) mod frame;
mod key;
mod number;
mod object;
pub(crate) mod scan;
mod write;

pub use extra::Extra;
#[doc(hidden)]
pub use key::{KeyId, KeySeed, SlotBuf, TagId, TagSeed};
pub use number::{JsNumber, js_number_to_string};
pub use object::{EXTRA_SLOT, KeyOrder, TAG_SLOT};
pub use write::{to_js_json, to_js_json_pretty};
