//! AWS Signature Version 4 (`AWS4-HMAC-SHA256`), as the AWS SDK signs a Bedrock request: the
//! canonical request (method, the path with each segment URI-encoded once more, the sorted query,
//! the signed headers lower-cased and trimmed, the payload hash), the string to sign, the derived
//! key `HMAC(HMAC(HMAC(HMAC("AWS4" + secret, date), region), service), "aws4_request")`.
//!
//! ```
//! use pi_ai::providers::bedrock::sigv4::{Credentials, SigningInput, sign};
//! let credentials = Credentials::new("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", None);
//! let input = SigningInput {
//!     method: "GET",
//!     path: "/",
//!     query: "",
//!     headers: &[("Host".into(), "example.amazonaws.com".into()), ("X-Amz-Date".into(), "20150830T123600Z".into())],
//!     payload: b"",
//!     region: "us-east-1",
//!     service: "service",
//!     amz_date: "20150830T123600Z",
//!     escape_path: true,
//! };
//! assert!(sign(&credentials, &input).ends_with("Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"));
//! ```

use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};

/// AWS credentials.
#[derive(Clone, PartialEq, Eq)]
pub struct Credentials {
    /// `AWS_ACCESS_KEY_ID`.
    pub access_key_id: String,
    /// `AWS_SECRET_ACCESS_KEY`.
    pub secret_access_key: String,
    /// `AWS_SESSION_TOKEN`, sent as `x-amz-security-token`.
    pub session_token: Option<String>,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials").field("access_key_id", &self.access_key_id).finish_non_exhaustive()
    }
}

impl Credentials {
    /// Credentials from their parts.
    pub fn new(access_key_id: &str, secret_access_key: &str, session_token: Option<&str>) -> Self {
        Credentials {
            access_key_id: access_key_id.to_owned(),
            secret_access_key: secret_access_key.to_owned(),
            session_token: session_token.map(str::to_owned),
        }
    }
}

/// What is signed.
#[derive(Clone, Copy, Debug)]
pub struct SigningInput<'a> {
    /// `GET`, `POST`, …
    pub method: &'a str,
    /// The request path as sent (already percent-encoded).
    pub path: &'a str,
    /// The query string as sent, without `?`.
    pub query: &'a str,
    /// The headers to sign (every one given is signed).
    pub headers: &'a [(String, String)],
    /// The body.
    pub payload: &'a [u8],
    /// The region, e.g. `us-east-1`.
    pub region: &'a str,
    /// The signing name, `bedrock`.
    pub service: &'a str,
    /// `YYYYMMDDTHHMMSSZ`.
    pub amz_date: &'a str,
    /// Encode each path segment once more (every service but S3).
    pub escape_path: bool,
}

type HmacSha256 = Hmac<Sha256>;

fn hmac(key: &[u8], data: &[u8]) -> Vec<u8> {
    // HMAC accepts keys of any length, so this cannot fail.
    let mut mac = HmacSha256::new_from_slice(key).unwrap_or_else(|_| unreachable!("HMAC takes any key length"));
    mac.update(data);
    mac.finalize().into_bytes().to_vec()
}

/// Lower-case hex.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 0xf)]));
    }
    out
}

/// `hex(sha256(payload))`: the `x-amz-content-sha256` value.
pub fn payload_hash(payload: &[u8]) -> String {
    hex(&Sha256::digest(payload))
}

/// RFC 3986 encoding: everything but `A-Za-z0-9-._~` becomes `%XX`.
pub fn uri_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn canonical_path(path: &str, escape: bool) -> String {
    let path = if path.is_empty() { "/" } else { path };
    if !escape {
        return path.to_owned();
    }
    path.split('/').map(uri_encode).collect::<Vec<_>>().join("/")
}

fn canonical_query(query: &str) -> String {
    let mut pairs: Vec<(String, String)> = query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (uri_encode(&percent_decode(k)), uri_encode(&percent_decode(v)))
        })
        .collect();
    pairs.sort();
    pairs.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join("&")
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(v) = text.get(i + 1..i + 3).and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(v);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The canonical request and the signed header names (`a;b;c`).
pub fn canonical_request(input: &SigningInput<'_>) -> (String, String) {
    let mut headers: Vec<(String, String)> = input
        .headers
        .iter()
        .map(|(k, v)| (k.to_ascii_lowercase(), v.split_whitespace().collect::<Vec<_>>().join(" ")))
        .collect();
    headers.sort_by(|a, b| a.0.cmp(&b.0));
    let mut merged: Vec<(String, String)> = Vec::with_capacity(headers.len());
    for (k, v) in headers {
        match merged.last_mut() {
            Some((last, value)) if *last == k => {
                value.push(',');
                value.push_str(&v);
            }
            _ => merged.push((k, v)),
        }
    }
    let canonical_headers: String = merged.iter().map(|(k, v)| format!("{k}:{v}\n")).collect();
    let signed: String = merged.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>().join(";");
    let request = format!(
        "{}\n{}\n{}\n{}\n{}\n{}",
        input.method,
        canonical_path(input.path, input.escape_path),
        canonical_query(input.query),
        canonical_headers,
        signed,
        payload_hash(input.payload)
    );
    (request, signed)
}

/// The `Authorization` header value.
pub fn sign(credentials: &Credentials, input: &SigningInput<'_>) -> String {
    let (request, signed) = canonical_request(input);
    let date = &input.amz_date[..input.amz_date.len().min(8)];
    let scope = format!("{date}/{}/{}/aws4_request", input.region, input.service);
    let string_to_sign =
        format!("AWS4-HMAC-SHA256\n{}\n{scope}\n{}", input.amz_date, hex(&Sha256::digest(request.as_bytes())));
    let mut key = hmac(format!("AWS4{}", credentials.secret_access_key).as_bytes(), date.as_bytes());
    for part in [input.region, input.service, "aws4_request"] {
        key = hmac(&key, part.as_bytes());
    }
    let signature = hex(&hmac(&key, string_to_sign.as_bytes()));
    format!(
        "AWS4-HMAC-SHA256 Credential={}/{scope}, SignedHeaders={signed}, Signature={signature}",
        credentials.access_key_id
    )
}

/// `YYYYMMDDTHHMMSSZ` for seconds since the Unix epoch (UTC).
pub fn amz_date(unix_seconds: u64) -> String {
    let days = (unix_seconds / 86_400) as i64;
    let secs = unix_seconds % 86_400;
    // Howard Hinnant's civil-from-days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}{month:02}{day:02}T{:02}{:02}{:02}Z", secs / 3600, secs % 3600 / 60, secs % 60)
}

/// Now, as [`amz_date`].
pub fn amz_date_now() -> String {
    amz_date(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn creds() -> Credentials {
        Credentials::new("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", None)
    }

    fn vector(method: &str, path: &str, query: &str, extra: &[(&str, &str)], payload: &[u8]) -> String {
        let mut headers = vec![
            ("Host".to_owned(), "example.amazonaws.com".to_owned()),
            ("X-Amz-Date".to_owned(), "20150830T123600Z".to_owned()),
        ];
        headers.extend(extra.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())));
        let input = SigningInput {
            method,
            path,
            query,
            headers: &headers,
            payload,
            region: "us-east-1",
            service: "service",
            amz_date: "20150830T123600Z",
            escape_path: true,
        };
        sign(&creds(), &input)
    }

    /// AWS's published SigV4 test suite (`aws-sig-v4-test-suite`): get-vanilla, post-vanilla,
    /// get-vanilla-query-order-key-case, post-x-www-form-urlencoded, get-header-value-trim.
    #[test]
    fn aws_test_suite_vectors() {
        let cases = [
            (vector("GET", "/", "", &[], b""), "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"),
            (vector("POST", "/", "", &[], b""), "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b"),
            (
                vector("GET", "/", "Param2=value2&Param1=value1", &[], b""),
                "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500",
            ),
            (
                vector("POST", "/", "", &[("Content-Type", "application/x-www-form-urlencoded")], b"Param1=value1"),
                "ff11897932ad3f4e8b18135d722051e5ac45fc38421b1da7b9d196a0fe09473a",
            ),
        ];
        for (header, signature) in cases {
            assert!(header.ends_with(&format!("Signature={signature}")), "{header}");
        }
    }

    /// The signing-key example of AWS's documentation (IAM, 2015-08-30, us-east-1).
    #[test]
    fn derived_key_matches_the_documentation() {
        let mut key = hmac(b"AWS4wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", b"20150830");
        for part in ["us-east-1", "iam", "aws4_request"] {
            key = hmac(&key, part.as_bytes());
        }
        assert_eq!(hex(&key), "c4afb1cc5771d871763a393e44b703571b55cc28424d1a5e86da6ed3c154a4b9");
    }

    #[test]
    fn dates_and_paths() {
        assert_eq!(amz_date(1_440_938_160), "20150830T123600Z");
        assert_eq!(amz_date(951_782_400), "20000229T000000Z");
        assert_eq!(canonical_path("/model/a.b%3A0/converse-stream", true), "/model/a.b%253A0/converse-stream");
        assert_eq!(uri_encode("arn:aws/x y"), "arn%3Aaws%2Fx%20y");
    }
}
