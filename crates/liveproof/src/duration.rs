//! Durations as kubectl takes them (`--timeout`, `--request-timeout`, `--since 10m`): Go's
//! `time.ParseDuration` units (`500ms`, `90s`, `1h30m`), days too (`1d`, 24 hours), and a
//! bare number as seconds (`--request-timeout 5`, `--timeout 60`), as kubectl reads one. Our
//! own parser, so an error says what was wrong in our words, never a library's.

use std::time::Duration;

/// Nanoseconds in each unit, longest name first where one is a prefix of another.
const UNITS: &[(&str, u128)] = &[
    ("ns", 1),
    ("us", 1_000),
    ("µs", 1_000),
    ("ms", 1_000_000),
    ("s", 1_000_000_000),
    ("m", 60 * 1_000_000_000),
    ("h", 3_600 * 1_000_000_000),
    ("d", 86_400 * 1_000_000_000),
];

/// `text` as a duration; the reason it is not one otherwise (a phrase to follow "is not a
/// duration: "). Zero is a duration: callers that need more say so.
pub fn parse(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    if text.is_empty() {
        return Err("it is empty (e.g. 90s, 5m, 1h30m, or 60 for seconds)".into());
    }
    if text.starts_with('-') {
        return Err("it must not be negative".into());
    }
    let text = text.strip_prefix('+').unwrap_or(text);
    // `1m 30s`, as our own messages write a duration, reads back as one.
    let text: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    let text = text.as_str();
    // A bare number is seconds, as kubectl reads `--request-timeout 5`.
    if text.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        let seconds = number(text)?;
        return nanos(seconds * 1e9);
    }
    let mut rest = text;
    let mut total: f64 = 0.0;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        if digits == 0 {
            return Err(format!(
                "expected a number before `{rest}` (e.g. 90s, 5m, 1h30m, 1d)"
            ));
        }
        let value = number(&rest[..digits])?;
        rest = &rest[digits..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let unit = &rest[..unit_len];
        let Some((_, per)) = UNITS.iter().find(|(name, _)| *name == unit) else {
            return Err(format!(
                "`{unit}` is not a unit: use ms, s, m, h or d (e.g. 90s, 5m, 1h30m, 1d)"
            ));
        };
        rest = &rest[unit_len..];
        #[expect(clippy::cast_precision_loss, reason = "units are far below 2^53 ns")]
        let per = *per as f64;
        total += value * per;
    }
    nanos(total)
}

/// A decimal number as written (`5`, `1.5`).
fn number(text: &str) -> Result<f64, String> {
    text.parse::<f64>()
        .ok()
        .filter(|n| n.is_finite())
        .ok_or_else(|| format!("`{text}` is not a number"))
}

/// `n` nanoseconds as a duration, if one can hold it.
fn nanos(n: f64) -> Result<Duration, String> {
    // Past about 584 years a duration of nanoseconds does not fit; nothing waits that long.
    const MOST: f64 = 1.8e19;
    if !(0.0..MOST).contains(&n) {
        return Err("it is longer than liveproof can wait".into());
    }
    Ok(Duration::from_secs_f64(n / 1e9))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubectl_durations_days_and_bare_seconds() {
        let secs = Duration::from_secs;
        for (text, want) in [
            ("60", secs(60)),
            ("0", secs(0)),
            ("1.5", Duration::from_millis(1500)),
            ("90s", secs(90)),
            ("5m", secs(300)),
            ("1h30m", secs(5400)),
            ("1d", secs(86_400)),
            ("1d2h", secs(93_600)),
            ("500ms", Duration::from_millis(500)),
            ("1.5h", secs(5400)),
            (" 10s ", secs(10)),
            ("1m 30s", secs(90)),
        ] {
            assert_eq!(parse(text), Ok(want), "{text}");
        }
    }

    #[test]
    fn refusals_say_what_is_wrong_in_our_words() {
        for (text, says) in [
            ("", "empty"),
            ("-5s", "negative"),
            ("5x", "`x` is not a unit"),
            ("1y", "`y` is not a unit"),
            ("abc", "expected a number before `abc`"),
            ("1..2s", "`1..2` is not a number"),
            ("99999999999999999999d", "longer than"),
        ] {
            let err = parse(text).expect_err(text);
            assert!(err.contains(says), "{text}: {err}");
            assert!(!err.contains("jiff") && !err.contains("friendly"), "{err}");
        }
    }
}
