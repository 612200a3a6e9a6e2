//! pi's automatic theme setting (`"light/dark"`): which of the two names applies, decided by the
//! terminal's appearance. This port does not query the terminal's colours, so the appearance comes
//! from what pi uses when the terminal reports no background: the `COLORFGBG` variable, then dark.

/// A terminal's light or dark appearance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Appearance {
    /// A light background.
    Light,
    /// A dark background.
    Dark,
}

/// pi's `parseAutoThemeSetting`: `"light/dark"` (exactly one `/`, both names non-empty after
/// trimming) as `(light, dark)`.
pub fn parse_auto_theme_setting(setting: &str) -> Option<(&str, &str)> {
    let (light, dark) = setting.split_once('/')?;
    if dark.contains('/') {
        return None;
    }
    let (light, dark) = (light.trim(), dark.trim());
    (!light.is_empty() && !dark.is_empty()).then_some((light, dark))
}

/// pi's `resolveThemeSetting`: the theme name a setting selects for `appearance`; `None` for no
/// setting or a malformed pair (pi then uses its default theme).
pub fn resolve_theme_setting(setting: Option<&str>, appearance: Appearance) -> Option<&str> {
    let setting = setting?;
    if let Some((light, dark)) = parse_auto_theme_setting(setting) {
        return Some(if appearance == Appearance::Light { light } else { dark });
    }
    (!setting.contains('/')).then_some(setting)
}

/// pi's `detectColorFgBgTheme`: the background index of `COLORFGBG` (`fg;bg` or `fg;xpm;bg`)
/// classified as Vim does: 0–6 and 8 dark, 7 and 9–15 light; `None` without a usable index.
pub fn colorfgbg_appearance(value: Option<&str>) -> Option<Appearance> {
    let bg = value?.rsplit(';').next()?.trim();
    if bg.is_empty() || bg.len() > 2 || !bg.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let index: u8 = bg.parse().ok()?;
    match index {
        0..=6 | 8 => Some(Appearance::Dark),
        7 | 9..=15 => Some(Appearance::Light),
        _ => None,
    }
}

/// The terminal's appearance without a colour report: `COLORFGBG`, then dark.
pub fn terminal_appearance() -> Appearance {
    colorfgbg_appearance(std::env::var("COLORFGBG").ok().as_deref()).unwrap_or(Appearance::Dark)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_resolve_by_appearance_and_malformed_ones_do_not() {
        assert_eq!(resolve_theme_setting(Some("light/dark"), Appearance::Light), Some("light"));
        assert_eq!(resolve_theme_setting(Some(" paper / night "), Appearance::Dark), Some("night"));
        assert_eq!(resolve_theme_setting(Some("a/b/c"), Appearance::Dark), None);
        assert_eq!(resolve_theme_setting(Some("/dark"), Appearance::Dark), None);
        assert_eq!(resolve_theme_setting(Some("dark"), Appearance::Light), Some("dark"));
        assert_eq!(resolve_theme_setting(None, Appearance::Light), None);
    }

    #[test]
    fn colorfgbg_is_classified_by_the_background_index() {
        assert_eq!(colorfgbg_appearance(Some("15;0")), Some(Appearance::Dark));
        assert_eq!(colorfgbg_appearance(Some("0;15")), Some(Appearance::Light));
        assert_eq!(colorfgbg_appearance(Some("12;8")), Some(Appearance::Dark));
        assert_eq!(colorfgbg_appearance(Some("0;default;7")), Some(Appearance::Light));
        assert_eq!(colorfgbg_appearance(Some("0;default")), None);
        assert_eq!(colorfgbg_appearance(Some("0;16")), None);
        assert_eq!(colorfgbg_appearance(None), None);
    }
}
