//! JSON objects that keep their key order across a read/write round trip.
//!
//! The TypeScript pi writes the same message type with its keys in different orders depending on
//! which code built it (a provider sets `responseId` before `timestamp`, the agent adds
//! `thinkingLevel` last). A fixed serde field order would rewrite those files differently. The
//! [`json_object!`](crate::json_object) macro generates structs that:
//!
//! - write their fields in declaration order when built in Rust (the common, fast path);
//! - remember the key order they were read in, when it differs, and write it back the same way;
//! - keep unknown fields in `extra` and write them back where they stood;
//! - read and write their own tag (`"role": "system"`, `"type": "text"`), so a tagged enum built with
//!   [`json_tagged_enum!`](crate::json_tagged_enum) dispatches without buffering the object.

/// Slot of the tag key in a [`KeyOrder`].
#[doc(hidden)]
pub const TAG_SLOT: u16 = 0;
/// Slot of an unknown (extra) key in a [`KeyOrder`]; extras are consumed in map order.
#[doc(hidden)]
pub const EXTRA_SLOT: u16 = u16::MAX;

/// The order in which an object's keys were read, when it differs from the declaration order.
///
/// This is presentation only: two values that differ only in key order compare equal. A value
/// built in Rust has the default (declaration) order.
#[derive(Clone, Debug, Default)]
pub struct KeyOrder(Option<Box<[u16]>>);

impl KeyOrder {
    /// The declaration order.
    pub const fn canonical() -> Self {
        KeyOrder(None)
    }

    /// Whether the declaration order applies.
    pub fn is_canonical(&self) -> bool {
        self.0.is_none()
    }

    #[doc(hidden)]
    pub fn slots(&self) -> Option<&[u16]> {
        self.0.as_deref()
    }

    /// Builds the order from the slots seen while reading; canonical orders are not stored.
    #[doc(hidden)]
    pub fn from_read(slots: &[u16]) -> Self {
        if slots.windows(2).all(|w| w[0] < w[1] || (w[0] == EXTRA_SLOT && w[1] == EXTRA_SLOT)) {
            KeyOrder(None)
        } else {
            KeyOrder(Some(slots.into()))
        }
    }
}

impl PartialEq for KeyOrder {
    fn eq(&self, _other: &Self) -> bool {
        true
    }
}

/// Declares a JSON object struct with key-order memory, unknown-field preservation and an optional
/// tag. Each field is `name: req Type = "jsonKey"` (must be present), `name: opt Type = "jsonKey"`
/// (becomes `Option<Type>`, omitted when `None`) or `name: num f64 = "jsonKey"` (a required number
/// written as JavaScript writes it).
#[macro_export]
#[doc(hidden)]
macro_rules! json_object {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident $( tag($tag_key:literal = $tag_val:literal) )? {
            $(
                $(#[$fmeta:meta])*
                $field:ident : $kind:ident $ty:ty = $key:literal
            ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        $vis struct $name {
            $(
                $(#[$fmeta])*
                pub $field: $crate::__json_field_ty!($kind $ty),
            )*
            /// Fields this version does not know, kept so that a round trip loses nothing.
            pub extra: $crate::json::Extra,
            /// The key order this value was read in (presentation only; ignored by `==`).
            pub key_order: $crate::json::KeyOrder,
        }

        impl $name {
            /// The JSON keys this type knows, in declaration order.
            pub const JSON_KEYS: &'static [&'static str] = &[$($key),*];

            #[doc(hidden)]
            #[allow(unused_mut, unused_variables, unused_assignments)]
            pub fn __json_visit<'de, A: ::serde::de::MapAccess<'de>>(
                prefix: Vec<(String, ::serde_json::Value)>,
                tag_seen: bool,
                mut map: A,
            ) -> Result<Self, A::Error> {
                use ::serde::de::Error as _;
                let mut slots = $crate::json::SlotBuf::default();
                let mut extra = $crate::json::Extra::default();
                $( let mut $field: Option<$ty> = None; )*
                for (key, value) in prefix {
                    let mut value = Some(value);
                    let mut idx: u16 = 0;
                    $(
                        idx += 1;
                        if key == $key {
                            if let Some(v) = value.take() {
                                let parsed = $crate::__json_parse_value!($kind $ty, v)
                                    .map_err(|e| A::Error::custom(format_args!("{}: {}", $key, e)))?;
                                if $field.is_none() { slots.push(idx); }
                                $field = parsed;
                            }
                        }
                    )*
                    if let Some(value) = value {
                        if !extra.contains_key(&key) { slots.push($crate::json::EXTRA_SLOT); }
                        extra.insert(key, value);
                    }
                }
                if tag_seen {
                    slots.push($crate::json::TAG_SLOT);
                }
                let seed = $crate::json::KeySeed { tag: $crate::__json_tag_key!($($tag_key)?), keys: Self::JSON_KEYS };
                while let Some(key) = map.next_key_seed(seed)? {
                    match key {
                        $crate::json::KeyId::Tag => {
                            $(
                                let tag = map.next_value_seed($crate::json::TagSeed { values: &[$tag_val] })?;
                                if let $crate::json::TagId::Unknown(tag) = tag {
                                    return Err(A::Error::custom(format_args!(
                                        "expected {} {:?}, found {:?}", $tag_key, $tag_val, tag
                                    )));
                                }
                            )?
                            slots.push($crate::json::TAG_SLOT);
                        }
                        $crate::json::KeyId::Field(slot) => {
                            let mut idx: u16 = 0;
                            $(
                                idx += 1;
                                if slot == idx {
                                    let parsed = $crate::__json_parse_next!($kind $ty, map);
                                    if $field.is_none() { slots.push(idx); }
                                    $field = parsed;
                                }
                            )*
                        }
                        $crate::json::KeyId::Other(key) => {
                            let value: ::serde_json::Value = map.next_value()?;
                            if !extra.contains_key(&key) { slots.push($crate::json::EXTRA_SLOT); }
                            extra.insert(key, value);
                        }
                    }
                }
                Ok($name {
                    $( $field: $crate::__json_finish!($kind $field, $key), )*
                    extra,
                    key_order: $crate::json::KeyOrder::from_read(slots.as_slice()),
                })
            }
        }

        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> ::serde::de::Visitor<'de> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                        f.write_str(concat!("a JSON object (", stringify!($name), ")"))
                    }
                    fn visit_map<A: ::serde::de::MapAccess<'de>>(self, map: A) -> Result<$name, A::Error> {
                        $name::__json_visit(Vec::new(), false, map)
                    }
                }
                deserializer.deserialize_map(V)
            }
        }

        impl ::serde::Serialize for $name {
            #[allow(unused_mut, unused_variables, unused_assignments)]
            fn serialize<S: ::serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                use ::serde::ser::SerializeMap as _;
                let mut m = serializer.serialize_map(None)?;
                match self.key_order.slots() {
                    None => {
                        $( m.serialize_entry($tag_key, $tag_val)?; )?
                        $( $crate::__json_write!($kind m, $key, &self.$field); )*
                        for (k, v) in self.extra.iter() {
                            m.serialize_entry(k, v)?;
                        }
                    }
                    Some(slots) => {
                        let mut written: u64 = 0;
                        let mut extras = self.extra.iter();
                        $(
                            if !slots.contains(&$crate::json::TAG_SLOT) {
                                m.serialize_entry($tag_key, $tag_val)?;
                            }
                        )?
                        for &slot in slots {
                            if slot == $crate::json::TAG_SLOT {
                                $( m.serialize_entry($tag_key, $tag_val)?; )?
                            } else if slot == $crate::json::EXTRA_SLOT {
                                if let Some((k, v)) = extras.next() {
                                    m.serialize_entry(k, v)?;
                                }
                            } else {
                                let mut idx: u16 = 0;
                                $(
                                    idx += 1;
                                    if slot == idx && written & (1u64 << (idx % 64)) == 0 {
                                        written |= 1u64 << (idx % 64);
                                        $crate::__json_write!($kind m, $key, &self.$field);
                                    }
                                )*
                            }
                        }
                        let mut idx: u16 = 0;
                        $(
                            idx += 1;
                            if written & (1u64 << (idx % 64)) == 0 {
                                $crate::__json_write!($kind m, $key, &self.$field);
                            }
                        )*
                        for (k, v) in extras {
                            m.serialize_entry(k, v)?;
                        }
                    }
                }
                m.end()
            }
        }
    };
}

#[macro_export]
#[doc(hidden)]
macro_rules! __json_tag_key {
    () => {
        None
    };
    ($tag_key:literal) => {
        Some($tag_key)
    };
}

#[macro_export]
#[doc(hidden)]
macro_rules! __json_field_ty {
    (req $ty:ty) => { $ty };
    (num $ty:ty) => { $ty };
    (opt $ty:ty) => { Option<$ty> };
}

#[macro_export]
#[doc(hidden)]
macro_rules! __json_parse_value {
    (req $ty:ty, $value:expr) => {
        ::serde_json::from_value::<$ty>($value).map(Some)
    };
    (opt $ty:ty, $value:expr) => {
        ::serde_json::from_value::<Option<$ty>>($value)
    };
    (num $ty:ty, $value:expr) => {
        ::serde_json::from_value::<$crate::json::JsNumber>($value).map(|n| Some(n.0))
    };
}

#[macro_export]
#[doc(hidden)]
macro_rules! __json_parse_next {
    (req $ty:ty, $map:ident) => {
        Some($map.next_value::<$ty>()?)
    };
    (opt $ty:ty, $map:ident) => {
        $map.next_value::<Option<$ty>>()?
    };
    (num $ty:ty, $map:ident) => {
        Some($map.next_value::<$crate::json::JsNumber>()?.0)
    };
}

#[macro_export]
#[doc(hidden)]
macro_rules! __json_finish {
    (req $field:ident, $key:literal) => {
        $field.ok_or_else(|| A::Error::missing_field($key))?
    };
    (opt $field:ident, $key:literal) => {
        $field
    };
    (num $field:ident, $key:literal) => {
        $field.ok_or_else(|| A::Error::missing_field($key))?
    };
}

#[macro_export]
#[doc(hidden)]
macro_rules! __json_write {
    (req $m:ident, $key:literal, $value:expr) => {
        $m.serialize_entry($key, $value)?;
    };
    (opt $m:ident, $key:literal, $value:expr) => {
        if let Some(v) = $value {
            $m.serialize_entry($key, v)?;
        }
    };
    (num $m:ident, $key:literal, $value:expr) => {
        $m.serialize_entry($key, &$crate::json::JsNumber(*$value))?;
    };
}

/// Declares an enum over [`json_object!`](crate::json_object) structs, dispatched on a tag key
/// (`"role"` or `"type"`). The tag is read wherever it stands; keys before it are buffered.
#[macro_export]
#[doc(hidden)]
macro_rules! json_tagged_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident tag($tag_key:literal) shared {
            $(
                $(#[$vmeta:meta])*
                $variant:ident($ty:ty) = $tag_val:literal
            ),* $(,)?
        }
    ) => {
        $crate::json_tagged_enum! { @impl
            $(#[$meta])*
            $vis enum $name tag($tag_key) {
                $( $(#[$vmeta])* $variant($crate::Shared<$ty>; $ty) = $tag_val ),*
            }
        }
    };
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident tag($tag_key:literal) {
            $(
                $(#[$vmeta:meta])*
                $variant:ident($ty:ty) = $tag_val:literal
            ),* $(,)?
        }
    ) => {
        $crate::json_tagged_enum! { @impl
            $(#[$meta])*
            $vis enum $name tag($tag_key) {
                $( $(#[$vmeta])* $variant($ty; $ty) = $tag_val ),*
            }
        }
    };
    (@impl
        $(#[$meta:meta])*
        $vis:vis enum $name:ident tag($tag_key:literal) {
            $(
                $(#[$vmeta:meta])*
                $variant:ident($store:ty; $ty:ty) = $tag_val:literal
            ),*
        }
    ) => {
        $(#[$meta])*
        $vis enum $name {
            $(
                $(#[$vmeta])*
                $variant($store),
            )*
        }

        impl $name {
            /// The tag value of this variant.
            pub fn tag(&self) -> &'static str {
                match self {
                    $( $name::$variant(_) => $tag_val, )*
                }
            }

            #[doc(hidden)]
            pub fn __json_dispatch<'de, A: ::serde::de::MapAccess<'de>>(
                tag: &str,
                prefix: Vec<(String, ::serde_json::Value)>,
                map: A,
            ) -> Result<Self, A::Error> {
                match tag {
                    $( $tag_val => <$ty>::__json_visit(prefix, true, map).map(|v| $name::$variant(v.into())), )*
                    other => Err(<A::Error as ::serde::de::Error>::unknown_variant(other, &[$($tag_val),*])),
                }
            }
        }

        $(
            impl From<$ty> for $name {
                fn from(value: $ty) -> Self {
                    $name::$variant(value.into())
                }
            }
        )*

        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> ::serde::de::Visitor<'de> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                        f.write_str(concat!("a JSON object with a \"", $tag_key, "\" key"))
                    }
                    fn visit_map<A: ::serde::de::MapAccess<'de>>(self, mut map: A) -> Result<$name, A::Error> {
                        let mut prefix: Vec<(String, ::serde_json::Value)> = Vec::new();
                        let seed = $crate::json::KeySeed { tag: Some($tag_key), keys: &[] };
                        while let Some(key) = map.next_key_seed(seed)? {
                            match key {
                                $crate::json::KeyId::Other(key) => {
                                    let value: ::serde_json::Value = map.next_value()?;
                                    prefix.push((key, value));
                                }
                                _ => {
                                    let tag = map.next_value_seed($crate::json::TagSeed { values: &[$($tag_val),*] })?;
                                    return match tag {
                                        $crate::json::TagId::Known(tag) => $name::__json_dispatch(tag, prefix, map),
                                        $crate::json::TagId::Unknown(other) => Err(
                                            <A::Error as ::serde::de::Error>::unknown_variant(&other, &[$($tag_val),*])
                                        ),
                                    };
                                }
                            }
                        }
                        Err(<A::Error as ::serde::de::Error>::missing_field($tag_key))
                    }
                }
                deserializer.deserialize_map(V)
            }
        }

        impl ::serde::Serialize for $name {
            fn serialize<S: ::serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                match self {
                    $( $name::$variant(v) => v.serialize(serializer), )*
                }
            }
        }
    };
}
