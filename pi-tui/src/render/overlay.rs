//! Overlay placement: size values, anchors, margins (pi's `resolveOverlayLayout`).

use std::rc::Rc;

/// An absolute size or a percentage of the terminal dimension.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SizeValue {
    /// Columns or rows.
    Abs(usize),
    /// Percent of the reference size (floored).
    Percent(f64),
}

impl SizeValue {
    fn resolve(self, reference: usize) -> usize {
        match self {
            SizeValue::Abs(n) => n,
            SizeValue::Percent(p) => ((reference as f64) * p / 100.0).floor() as usize,
        }
    }
}

/// Where an overlay sits when no row/col is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Anchor {
    /// Centred (default).
    #[default]
    Center,
    /// Top left corner.
    TopLeft,
    /// Top edge, centred.
    TopCenter,
    /// Top right corner.
    TopRight,
    /// Left edge, centred.
    LeftCenter,
    /// Right edge, centred.
    RightCenter,
    /// Bottom left corner.
    BottomLeft,
    /// Bottom edge, centred.
    BottomCenter,
    /// Bottom right corner.
    BottomRight,
}

/// Options of an overlay (pi's `OverlayOptions`).
#[derive(Clone, Default)]
pub struct OverlayOptions {
    /// Width; default `min(80, available)`.
    pub width: Option<SizeValue>,
    /// Minimum width.
    pub min_width: Option<usize>,
    /// Maximum height (lines beyond are cut).
    pub max_height: Option<SizeValue>,
    /// Anchor used when `row`/`col` are not given.
    pub anchor: Anchor,
    /// Horizontal offset applied after positioning.
    pub offset_x: i64,
    /// Vertical offset applied after positioning.
    pub offset_y: i64,
    /// Absolute row, or a percentage of the free space.
    pub row: Option<SizeValue>,
    /// Absolute column, or a percentage of the free space.
    pub col: Option<SizeValue>,
    /// Margins: top, right, bottom, left.
    pub margin: [usize; 4],
    /// When true the overlay does not take focus.
    pub non_capturing: bool,
    /// Per-frame visibility given (columns, rows).
    pub visible: Option<Rc<dyn Fn(usize, usize) -> bool>>,
}

/// A resolved overlay rectangle: `(width, row, col, max_height)`.
pub fn resolve_overlay_layout(
    opt: &OverlayOptions,
    overlay_height: usize,
    term_width: usize,
    term_height: usize,
) -> (usize, usize, usize, Option<usize>) {
    let [mt, mr, mb, ml] = opt.margin;
    let avail_w = term_width.saturating_sub(ml + mr).max(1);
    let avail_h = term_height.saturating_sub(mt + mb).max(1);
    let mut width = opt.width.map(|w| w.resolve(term_width)).unwrap_or(80.min(avail_w));
    if let Some(min) = opt.min_width {
        width = width.max(min);
    }
    width = width.min(avail_w).max(1);
    let max_height = opt.max_height.map(|h| h.resolve(term_height).min(avail_h).max(1));
    let eff_h = max_height.map_or(overlay_height, |m| overlay_height.min(m));
    let anchor_row = |a: Anchor| -> i64 {
        match a {
            Anchor::TopLeft | Anchor::TopCenter | Anchor::TopRight => mt as i64,
            Anchor::BottomLeft | Anchor::BottomCenter | Anchor::BottomRight => {
                mt as i64 + avail_h as i64 - eff_h as i64
            }
            _ => mt as i64 + (avail_h as i64 - eff_h as i64).div_euclid(2),
        }
    };
    let anchor_col = |a: Anchor| -> i64 {
        match a {
            Anchor::TopLeft | Anchor::LeftCenter | Anchor::BottomLeft => ml as i64,
            Anchor::TopRight | Anchor::RightCenter | Anchor::BottomRight => ml as i64 + avail_w as i64 - width as i64,
            _ => ml as i64 + (avail_w as i64 - width as i64).div_euclid(2),
        }
    };
    let mut row = match opt.row {
        Some(SizeValue::Abs(r)) => r as i64,
        Some(SizeValue::Percent(p)) => mt as i64 + ((avail_h.saturating_sub(eff_h)) as f64 * p / 100.0).floor() as i64,
        None => anchor_row(opt.anchor),
    };
    let mut col = match opt.col {
        Some(SizeValue::Abs(c)) => c as i64,
        Some(SizeValue::Percent(p)) => ml as i64 + ((avail_w.saturating_sub(width)) as f64 * p / 100.0).floor() as i64,
        None => anchor_col(opt.anchor),
    };
    row += opt.offset_y;
    col += opt.offset_x;
    row = row.min(term_height as i64 - mb as i64 - eff_h as i64).max(mt as i64);
    col = col.min(term_width as i64 - mr as i64 - width as i64).max(ml as i64);
    (width, row.max(0) as usize, col.max(0) as usize, max_height)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn centres_by_default() {
        let opt = OverlayOptions { width: Some(SizeValue::Abs(4)), ..Default::default() };
        assert_eq!(resolve_overlay_layout(&opt, 1, 12, 4), (4, 1, 4, None));
        let pct =
            OverlayOptions { width: Some(SizeValue::Percent(50.0)), anchor: Anchor::BottomRight, ..Default::default() };
        assert_eq!(resolve_overlay_layout(&pct, 2, 20, 10), (10, 8, 10, None));
    }
}
