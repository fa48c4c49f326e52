//! Durations as the knobs write them: `250ms`, `2s`, `1.5s`, `5m`, `1h`.

use std::time::Duration;

use crate::error::{Error, Result};

/// Parses `250ms`, `2s`, `1.5s`, `5m`, `1h`, `100us`. A bare number is rejected
/// (the unit would be a guess), except `0`.
pub fn parse_duration(knob: &str, v: &str) -> Result<Duration> {
    let t = v.trim();
    let bad = || {
        Error::config(format!(
            "{knob} must be a duration such as 250ms, 2s, 5m or 1h, got {v:?}"
        ))
    };
    if t == "0" {
        return Ok(Duration::ZERO);
    }
    if t.starts_with('-') {
        return Err(Error::config(format!(
            "{knob} must not be negative, got {v:?}"
        )));
    }
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .ok_or_else(bad)?;
    let (num, unit) = t.split_at(split);
    let n: f64 = num.parse().map_err(|_| bad())?;
    let secs = match unit {
        "us" | "µs" => n / 1e6,
        "ms" => n / 1e3,
        "s" => n,
        "m" | "min" => n * 60.0,
        "h" => n * 3600.0,
        "d" => n * 86400.0,
        _ => return Err(bad()),
    };
    if !secs.is_finite() || secs > 1e9 {
        return Err(bad());
    }
    Ok(Duration::from_secs_f64(secs))
}

pub(crate) fn parse_opt_duration(knob: &str, v: &str) -> Result<Option<Duration>> {
    match v.trim() {
        "off" | "none" | "0" => Ok(None),
        _ => parse_duration(knob, v).map(Some),
    }
}

/// Formats a duration the way URLs write it (`250ms`, `2s`, `1.5s`).
pub fn fmt_duration(d: Duration) -> String {
    let ms = d.as_secs_f64() * 1e3;
    if d.is_zero() {
        "0".into()
    } else if ms < 1.0 {
        format!("{}us", d.as_micros())
    } else if ms < 1000.0 {
        format!("{}ms", (ms * 10.0).round() / 10.0)
    } else {
        format!("{}s", (ms / 100.0).round() / 10.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(
            parse_duration("k", "1.5s").unwrap(),
            Duration::from_millis(1500)
        );
        assert_eq!(parse_duration("k", "5m").unwrap(), Duration::from_secs(300));
        assert_eq!(
            parse_duration("k", "100us").unwrap(),
            Duration::from_micros(100)
        );
        assert!(parse_duration("k", "5x").is_err());
        assert!(parse_duration("k", "").is_err());
        assert_eq!(fmt_duration(Duration::from_millis(250)), "250ms");
        assert_eq!(fmt_duration(Duration::from_millis(2500)), "2.5s");
    }
}
