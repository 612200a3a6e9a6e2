//! The `application/vnd.amazon.eventstream` binary framing: each message is a 12-byte prelude
//! (total length, headers length, CRC32 of those 8 bytes), typed headers, the payload and a CRC32
//! of everything before it. [`Decoder`] splits a byte stream into messages, checking both CRCs
//! with the AWS SDK's wording; [`encode`] writes one (tests, benches and local servers use it).
//!
//! ```
//! use pi_ai::providers::bedrock::eventstream::{Decoder, HeaderValue, encode};
//! let frame = encode(&[(":event-type", HeaderValue::String("messageStart".into()))], br#"{"role":"assistant"}"#);
//! let mut decoder = Decoder::default();
//! decoder.push(&frame[..5]);
//! assert!(decoder.next_message().unwrap().is_none());
//! decoder.push(&frame[5..]);
//! let message = decoder.next_message().unwrap().unwrap();
//! assert_eq!(message.header(":event-type"), Some("messageStart"));
//! assert_eq!(message.payload, br#"{"role":"assistant"}"#);
//! ```

/// Prelude: total length, headers length, prelude CRC.
const PRELUDE: usize = 12;
/// Prelude plus the trailing message CRC.
const OVERHEAD: usize = PRELUDE + 4;
/// The largest message the SDK accepts (16 MiB).
const MAX_MESSAGE: usize = 16 * 1024 * 1024;

/// A header value, by the wire's type tag.
#[derive(Clone, Debug, PartialEq)]
pub enum HeaderValue {
    /// Tags 0 and 1.
    Bool(bool),
    /// Tag 2.
    Byte(i8),
    /// Tag 3.
    Short(i16),
    /// Tag 4.
    Int(i32),
    /// Tag 5.
    Long(i64),
    /// Tag 6.
    Bytes(Vec<u8>),
    /// Tag 7.
    String(String),
    /// Tag 8: milliseconds since the epoch.
    Timestamp(i64),
    /// Tag 9.
    Uuid([u8; 16]),
}

/// One decoded message.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Message {
    /// Headers in wire order.
    pub headers: Vec<(String, HeaderValue)>,
    /// The payload bytes.
    pub payload: Vec<u8>,
}

impl Message {
    /// A string header's value.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k == name).and_then(|(_, v)| match v {
            HeaderValue::String(s) => Some(s.as_str()),
            _ => None,
        })
    }
}

/// A malformed frame (the AWS SDK's messages).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    /// The stated length cannot hold a message.
    #[error("Provided message too short to accommodate event stream message overhead")]
    TooShort,
    /// The stated length is over the limit.
    #[error("Reported message length does not match received message length")]
    BadLength,
    /// The prelude CRC is wrong.
    #[error(
        "The prelude checksum specified in the message ({expected}) does not match the calculated CRC32 checksum ({actual})"
    )]
    PreludeCrc {
        /// Stated.
        expected: u32,
        /// Computed.
        actual: u32,
    },
    /// The message CRC is wrong.
    #[error("The message checksum ({actual}) did not match the expected value of {expected}")]
    MessageCrc {
        /// Stated.
        expected: u32,
        /// Computed.
        actual: u32,
    },
    /// A header is cut short or has an unknown type.
    #[error("Unrecognized header type tag")]
    BadHeader,
}

/// Splits a byte stream into messages.
#[derive(Debug, Default)]
pub struct Decoder {
    buffer: Vec<u8>,
    start: usize,
}

fn be32(bytes: &[u8], at: usize) -> u32 {
    let mut word = [0u8; 4];
    word.copy_from_slice(&bytes[at..at + 4]);
    u32::from_be_bytes(word)
}

impl Decoder {
    /// Appends received bytes.
    pub fn push(&mut self, bytes: &[u8]) {
        if self.start > 0 && self.start == self.buffer.len() {
            self.buffer.clear();
            self.start = 0;
        }
        self.buffer.extend_from_slice(bytes);
    }

    /// Whether bytes of an incomplete message are buffered.
    pub fn has_partial(&self) -> bool {
        self.start < self.buffer.len()
    }

    /// The next complete message, `Ok(None)` when more bytes are needed.
    pub fn next_message(&mut self) -> Result<Option<Message>, FrameError> {
        let rest = &self.buffer[self.start..];
        if rest.len() < PRELUDE {
            return Ok(None);
        }
        let total = be32(rest, 0) as usize;
        if total < OVERHEAD {
            return Err(FrameError::TooShort);
        }
        if total > MAX_MESSAGE {
            return Err(FrameError::BadLength);
        }
        let actual = crc32fast::hash(&rest[..8]);
        let expected = be32(rest, 8);
        if actual != expected {
            return Err(FrameError::PreludeCrc { expected, actual });
        }
        if rest.len() < total {
            return Ok(None);
        }
        let frame = &rest[..total];
        let actual = crc32fast::hash(&frame[..total - 4]);
        let expected = be32(frame, total - 4);
        if actual != expected {
            return Err(FrameError::MessageCrc { expected, actual });
        }
        let headers_len = be32(frame, 4) as usize;
        if PRELUDE + headers_len > total - 4 {
            return Err(FrameError::BadHeader);
        }
        let headers = parse_headers(&frame[PRELUDE..PRELUDE + headers_len])?;
        let payload = frame[PRELUDE + headers_len..total - 4].to_vec();
        self.start += total;
        if self.start == self.buffer.len() {
            self.buffer.clear();
            self.start = 0;
        } else if self.start > 64 * 1024 {
            self.buffer.drain(..self.start);
            self.start = 0;
        }
        Ok(Some(Message { headers, payload }))
    }
}

fn take<'a>(bytes: &'a [u8], at: &mut usize, n: usize) -> Result<&'a [u8], FrameError> {
    let slice = bytes.get(*at..*at + n).ok_or(FrameError::BadHeader)?;
    *at += n;
    Ok(slice)
}

fn parse_headers(bytes: &[u8]) -> Result<Vec<(String, HeaderValue)>, FrameError> {
    let mut headers = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let name_len = usize::from(take(bytes, &mut at, 1)?[0]);
        let name = String::from_utf8_lossy(take(bytes, &mut at, name_len)?).into_owned();
        let tag = take(bytes, &mut at, 1)?[0];
        let fixed = |at: &mut usize, n: usize| -> Result<[u8; 8], FrameError> {
            let mut word = [0u8; 8];
            word[8 - n..].copy_from_slice(take(bytes, at, n)?);
            Ok(word)
        };
        let value = match tag {
            0 => HeaderValue::Bool(true),
            1 => HeaderValue::Bool(false),
            2 => HeaderValue::Byte(i64::from_be_bytes(fixed(&mut at, 1)?) as u8 as i8),
            3 => HeaderValue::Short(i64::from_be_bytes(fixed(&mut at, 2)?) as u16 as i16),
            4 => HeaderValue::Int(i64::from_be_bytes(fixed(&mut at, 4)?) as u32 as i32),
            5 => HeaderValue::Long(i64::from_be_bytes(fixed(&mut at, 8)?)),
            8 => HeaderValue::Timestamp(i64::from_be_bytes(fixed(&mut at, 8)?)),
            6 | 7 => {
                let len = u16::from_be_bytes([take(bytes, &mut at, 1)?[0], take(bytes, &mut at, 1)?[0]]);
                let raw = take(bytes, &mut at, usize::from(len))?;
                if tag == 6 {
                    HeaderValue::Bytes(raw.to_vec())
                } else {
                    HeaderValue::String(String::from_utf8_lossy(raw).into_owned())
                }
            }
            9 => {
                let mut uuid = [0u8; 16];
                uuid.copy_from_slice(take(bytes, &mut at, 16)?);
                HeaderValue::Uuid(uuid)
            }
            _ => return Err(FrameError::BadHeader),
        };
        headers.push((name, value));
    }
    Ok(headers)
}

fn write_header(out: &mut Vec<u8>, name: &str, value: &HeaderValue) {
    let name = &name.as_bytes()[..name.len().min(255)];
    out.push(name.len() as u8);
    out.extend_from_slice(name);
    match value {
        HeaderValue::Bool(true) => out.push(0),
        HeaderValue::Bool(false) => out.push(1),
        HeaderValue::Byte(v) => {
            out.push(2);
            out.extend_from_slice(&v.to_be_bytes());
        }
        HeaderValue::Short(v) => {
            out.push(3);
            out.extend_from_slice(&v.to_be_bytes());
        }
        HeaderValue::Int(v) => {
            out.push(4);
            out.extend_from_slice(&v.to_be_bytes());
        }
        HeaderValue::Long(v) => {
            out.push(5);
            out.extend_from_slice(&v.to_be_bytes());
        }
        HeaderValue::Timestamp(v) => {
            out.push(8);
            out.extend_from_slice(&v.to_be_bytes());
        }
        HeaderValue::Bytes(v) => {
            out.push(6);
            let v = &v[..v.len().min(usize::from(u16::MAX))];
            out.extend_from_slice(&(v.len() as u16).to_be_bytes());
            out.extend_from_slice(v);
        }
        HeaderValue::String(v) => {
            out.push(7);
            let v = &v.as_bytes()[..v.len().min(usize::from(u16::MAX))];
            out.extend_from_slice(&(v.len() as u16).to_be_bytes());
            out.extend_from_slice(v);
        }
        HeaderValue::Uuid(v) => {
            out.push(9);
            out.extend_from_slice(v);
        }
    }
}

/// One message with correct CRCs.
pub fn encode(headers: &[(&str, HeaderValue)], payload: &[u8]) -> Vec<u8> {
    let mut header_bytes = Vec::new();
    for (name, value) in headers {
        write_header(&mut header_bytes, name, value);
    }
    let total = OVERHEAD + header_bytes.len() + payload.len();
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(&(total as u32).to_be_bytes());
    out.extend_from_slice(&(header_bytes.len() as u32).to_be_bytes());
    let prelude_crc = crc32fast::hash(&out);
    out.extend_from_slice(&prelude_crc.to_be_bytes());
    out.extend_from_slice(&header_bytes);
    out.extend_from_slice(payload);
    let crc = crc32fast::hash(&out);
    out.extend_from_slice(&crc.to_be_bytes());
    out
}

/// A Bedrock event message: `:event-type`, `:content-type: application/json`, `:message-type: event`.
pub fn encode_event(event_type: &str, payload: &[u8]) -> Vec<u8> {
    encode(
        &[
            (":event-type", HeaderValue::String(event_type.to_owned())),
            (":content-type", HeaderValue::String("application/json".to_owned())),
            (":message-type", HeaderValue::String("event".to_owned())),
        ],
        payload,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_every_header_type() {
        let headers = [
            ("t", HeaderValue::Bool(true)),
            ("f", HeaderValue::Bool(false)),
            ("b", HeaderValue::Byte(-3)),
            ("s", HeaderValue::Short(-300)),
            ("i", HeaderValue::Int(70_000)),
            ("l", HeaderValue::Long(-5_000_000_000)),
            ("x", HeaderValue::Bytes(vec![1, 2, 3])),
            ("str", HeaderValue::String("é".into())),
            ("ts", HeaderValue::Timestamp(1_700_000_000_000)),
            ("u", HeaderValue::Uuid([7; 16])),
        ];
        let frame = encode(&headers, b"{}");
        let mut decoder = Decoder::default();
        for byte in &frame {
            assert!(decoder.next_message().unwrap().is_none());
            decoder.push(std::slice::from_ref(byte));
        }
        let message = decoder.next_message().unwrap().unwrap();
        let expected: Vec<(String, HeaderValue)> = headers.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
        assert_eq!(message.headers, expected);
        assert!(!decoder.has_partial());
    }

    /// The example message of AWS's event-stream documentation (no headers, no payload).
    #[test]
    fn empty_message_matches_the_known_crc() {
        let frame = encode(&[], b"");
        assert_eq!(frame, [0, 0, 0, 0x10, 0, 0, 0, 0, 0x05, 0xc2, 0x48, 0xeb, 0x7d, 0x98, 0xc8, 0xff]);
    }

    #[test]
    fn corrupt_crcs_are_refused() {
        let mut frame = encode_event("messageStop", br#"{"stopReason":"end_turn"}"#);
        let last = frame.len() - 6;
        frame[last] ^= 1;
        let mut decoder = Decoder::default();
        decoder.push(&frame);
        assert!(matches!(decoder.next_message(), Err(FrameError::MessageCrc { .. })));
        let mut frame = encode_event("x", b"");
        frame[9] ^= 0xff;
        let mut decoder = Decoder::default();
        decoder.push(&frame);
        let error = decoder.next_message().unwrap_err();
        assert!(error.to_string().starts_with("The prelude checksum specified in the message ("), "{error}");
    }
}
