//! Image support of the read tool: MIME type from magic bytes (pi's
//! `detectSupportedImageMimeType`), and BMP converted to PNG since models do not take BMP.

/// Bytes read to sniff an image type (pi's `IMAGE_TYPE_SNIFF_BYTES`).
pub const IMAGE_SNIFF_BYTES: usize = 4100;

const PNG_SIGNATURE: [u8; 8] = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

fn u16_le(b: &[u8], o: usize) -> u32 {
    u32::from(b.get(o).copied().unwrap_or(0)) | (u32::from(b.get(o + 1).copied().unwrap_or(0)) << 8)
}

fn u32_le(b: &[u8], o: usize) -> u32 {
    u16_le(b, o) | (u16_le(b, o + 2) << 16)
}

fn u32_be(b: &[u8], o: usize) -> u32 {
    (0..4).fold(0u32, |acc, i| (acc << 8) | u32::from(b.get(o + i).copied().unwrap_or(0)))
}

fn ascii_at(b: &[u8], o: usize, text: &str) -> bool {
    b.len() >= o + text.len() && &b[o..o + text.len()] == text.as_bytes()
}

/// The supported image type of these leading bytes: `image/jpeg`, `image/png` (not animated),
/// `image/gif`, `image/webp` or `image/bmp`.
///
/// ```
/// use pi_coding_agent::tools::image::detect_image_mime;
/// assert_eq!(detect_image_mime(b"GIF89a......"), Some("image/gif"));
/// assert_eq!(detect_image_mime(b"hello"), None);
/// ```
pub fn detect_image_mime(b: &[u8]) -> Option<&'static str> {
    if b.starts_with(&[0xff, 0xd8, 0xff]) {
        return if b.get(3) == Some(&0xf7) { None } else { Some("image/jpeg") };
    }
    if b.starts_with(&PNG_SIGNATURE) {
        return (is_png(b) && !is_animated_png(b)).then_some("image/png");
    }
    if ascii_at(b, 0, "GIF87a") || ascii_at(b, 0, "GIF89a") {
        return Some("image/gif");
    }
    if ascii_at(b, 0, "RIFF") && ascii_at(b, 8, "WEBP") {
        return Some("image/webp");
    }
    if ascii_at(b, 0, "BM") && is_bmp(b) {
        return Some("image/bmp");
    }
    None
}

fn is_png(b: &[u8]) -> bool {
    b.len() >= 16 && u32_be(b, 8) == 13 && ascii_at(b, 12, "IHDR")
}

fn is_animated_png(b: &[u8]) -> bool {
    let mut offset = PNG_SIGNATURE.len();
    while offset + 8 <= b.len() {
        let len = u32_be(b, offset) as usize;
        if ascii_at(b, offset + 4, "acTL") {
            return true;
        }
        if ascii_at(b, offset + 4, "IDAT") {
            return false;
        }
        let next = offset.saturating_add(12).saturating_add(len);
        if next <= offset || next > b.len() {
            return false;
        }
        offset = next;
    }
    false
}

fn is_bmp(b: &[u8]) -> bool {
    if b.len() < 26 {
        return false;
    }
    let size = u32_le(b, 2);
    let data_offset = u32_le(b, 10);
    let dib = u32_le(b, 14);
    if size != 0 && size < 26 {
        return false;
    }
    if u64::from(data_offset) < 14 + u64::from(dib) {
        return false;
    }
    if size != 0 && data_offset >= size {
        return false;
    }
    let (planes, bpp) = if dib == 12 {
        (u16_le(b, 22), u16_le(b, 24))
    } else if (40..=124).contains(&dib) {
        if b.len() < 30 {
            return false;
        }
        (u16_le(b, 26), u16_le(b, 28))
    } else {
        return false;
    };
    planes == 1 && [1, 4, 8, 16, 24, 32].contains(&bpp)
}

/// The bytes to send for an image of type `mime`, their type, and a hint for the model: unchanged
/// for PNG/JPEG/GIF/WebP, converted to PNG for BMP (`None` when a BMP cannot be decoded).
pub fn to_inline_image(bytes: &[u8], mime: &str) -> Option<(Vec<u8>, &'static str, Option<String>)> {
    match mime {
        "image/png" => Some((bytes.to_vec(), "image/png", None)),
        "image/jpeg" => Some((bytes.to_vec(), "image/jpeg", None)),
        "image/gif" => Some((bytes.to_vec(), "image/gif", None)),
        "image/webp" => Some((bytes.to_vec(), "image/webp", None)),
        "image/bmp" => {
            let png = bmp_to_png(bytes)?;
            Some((png, "image/png", Some("[Image converted from image/bmp to image/png.]".to_owned())))
        }
        _ => None,
    }
}

/// Decodes an uncompressed BMP (1/4/8-bit palette, 24/32-bit) and encodes it as an RGBA PNG.
pub fn bmp_to_png(b: &[u8]) -> Option<Vec<u8>> {
    let data_offset = u32_le(b, 10) as usize;
    let dib = u32_le(b, 14);
    let (width, height, bpp, compression) = if dib == 12 {
        (u16_le(b, 18) as i64, u16_le(b, 20) as i64, u16_le(b, 24), 0)
    } else {
        (i64::from(u32_le(b, 18) as i32), i64::from(u32_le(b, 22) as i32), u16_le(b, 28), u32_le(b, 30))
    };
    // BI_RGB, or BI_BITFIELDS with the usual masks for 32-bit.
    if !(compression == 0 || (compression == 3 && bpp == 32)) || width <= 0 || height == 0 {
        return None;
    }
    let top_down = height < 0;
    let (w, h) = (width as usize, height.unsigned_abs() as usize);
    if w.checked_mul(h)? > 50_000_000 {
        return None;
    }
    let palette_offset = 14 + dib as usize;
    let entry = if dib == 12 { 3 } else { 4 };
    let row_bytes = (w * usize::from(bpp as u8)).div_ceil(32) * 4;
    let mut rgba = vec![0u8; w * h * 4];
    for y in 0..h {
        let src_row = if top_down { y } else { h - 1 - y };
        let row = b.get(data_offset + src_row * row_bytes..data_offset + (src_row + 1) * row_bytes)?;
        for x in 0..w {
            let px = match bpp {
                24 => [row[x * 3 + 2], row[x * 3 + 1], row[x * 3], 255],
                32 => [row[x * 4 + 2], row[x * 4 + 1], row[x * 4], 255],
                1 | 4 | 8 => {
                    let bits = usize::from(bpp as u8);
                    let bit = x * bits;
                    let byte = row[bit / 8];
                    let index = (byte >> (8 - bits - bit % 8)) & ((1u16 << bits) - 1) as u8;
                    let p = palette_offset + usize::from(index) * entry;
                    let c = b.get(p..p + 3)?;
                    [c[2], c[1], c[0], 255]
                }
                _ => return None,
            };
            rgba[(y * w + x) * 4..(y * w + x) * 4 + 4].copy_from_slice(&px);
        }
    }
    Some(encode_png(w as u32, h as u32, &rgba))
}

fn crc32(data: &[u8]) -> u32 {
    let mut crc = 0xffff_ffffu32;
    for &byte in data {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 != 0 { (crc >> 1) ^ 0xedb8_8320 } else { crc >> 1 };
        }
    }
    !crc
}

fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    let start = out.len();
    out.extend_from_slice(kind);
    out.extend_from_slice(data);
    let crc = crc32(&out[start..]);
    out.extend_from_slice(&crc.to_be_bytes());
}

/// An RGBA8 PNG with stored (uncompressed) deflate blocks.
fn encode_png(w: u32, h: u32, rgba: &[u8]) -> Vec<u8> {
    let mut raw = Vec::with_capacity(rgba.len() + h as usize);
    for row in rgba.chunks(w as usize * 4) {
        raw.push(0); // filter: none
        raw.extend_from_slice(row);
    }
    let mut z = vec![0x78, 0x01];
    let blocks: Vec<&[u8]> = raw.chunks(65535).collect();
    for (i, block) in blocks.iter().enumerate() {
        z.push(u8::from(i + 1 == blocks.len()));
        let len = block.len() as u16;
        z.extend_from_slice(&len.to_le_bytes());
        z.extend_from_slice(&(!len).to_le_bytes());
        z.extend_from_slice(block);
    }
    if blocks.is_empty() {
        z.extend_from_slice(&[1, 0, 0, 0xff, 0xff]);
    }
    let (mut a, mut b) = (1u32, 0u32);
    for &byte in &raw {
        a = (a + u32::from(byte)) % 65521;
        b = (b + a) % 65521;
    }
    z.extend_from_slice(&((b << 16) | a).to_be_bytes());
    let mut ihdr = Vec::with_capacity(13);
    ihdr.extend_from_slice(&w.to_be_bytes());
    ihdr.extend_from_slice(&h.to_be_bytes());
    ihdr.extend_from_slice(&[8, 6, 0, 0, 0]);
    let mut out = PNG_SIGNATURE.to_vec();
    chunk(&mut out, b"IHDR", &ihdr);
    chunk(&mut out, b"IDAT", &z);
    chunk(&mut out, b"IEND", &[]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bmp_converts_to_png() {
        // 2x1 24-bit BMP: blue, red.
        let mut bmp = b"BM".to_vec();
        bmp.extend_from_slice(&(62u32).to_le_bytes());
        bmp.extend_from_slice(&[0, 0, 0, 0]);
        bmp.extend_from_slice(&(54u32).to_le_bytes());
        bmp.extend_from_slice(&(40u32).to_le_bytes());
        bmp.extend_from_slice(&(2i32).to_le_bytes());
        bmp.extend_from_slice(&(1i32).to_le_bytes());
        bmp.extend_from_slice(&1u16.to_le_bytes());
        bmp.extend_from_slice(&24u16.to_le_bytes());
        bmp.extend_from_slice(&[0; 24]);
        bmp.extend_from_slice(&[255, 0, 0, 0, 0, 255, 0, 0]);
        assert_eq!(detect_image_mime(&bmp), Some("image/bmp"));
        let png = bmp_to_png(&bmp).unwrap();
        assert_eq!(detect_image_mime(&png), Some("image/png"));
        assert_eq!(crc32(b"IEND"), 0xae42_6082);
    }
}
