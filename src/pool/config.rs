//! The pool's own knobs: sizes and time limits, independent of MySQL (as
//! r2d2 keeps its `Builder` beside `Pool`). The URL and builder forms are in
//! the crate's `config` module, which fills this in.

use std::time::Duration;

use crate::duration::fmt_duration;
use crate::error::{Error, Result};

/// Pool knobs, independent of MySQL. See [`Builder`](crate::Builder) for what each one means.
#[derive(Clone, Debug, PartialEq)]
pub struct PoolConfig {
    pub(crate) max_size: usize,
    /// The hard cap `max_size` can be raised to while the pool runs (None:
    /// the default, see [`max_size_cap`](PoolConfig::max_size_cap)).
    pub(crate) max_size_cap: Option<usize>,
    pub(crate) min_idle: usize,
    pub(crate) connection_timeout: Duration,
    pub(crate) connect_timeout: Duration,
    pub(crate) validation_timeout: Duration,
    pub(crate) idle_timeout: Option<Duration>,
    pub(crate) max_lifetime: Option<Duration>,
    pub(crate) keepalive_interval: Option<Duration>,
    pub(crate) leak_detection_threshold: Option<Duration>,
    pub(crate) adder_threads: usize,
    pub(crate) alive_bypass_window: Duration,
    pub(crate) initialization_fail_timeout: Option<Duration>,
    /// The pool's name in metrics and logs (None: `staunch-N`, N the
    /// number of unnamed pools the process opened so far).
    pub(crate) name: Option<String>,
    /// Whether borrows and statements are timed from the start (they are
    /// from the first export on anyway).
    pub(crate) timings: bool,
}

impl Default for PoolConfig {
    fn default() -> Self {
        PoolConfig {
            max_size: 10,
            max_size_cap: None,
            min_idle: 0,
            connection_timeout: Duration::from_secs(10),
            connect_timeout: Duration::from_secs(3),
            validation_timeout: Duration::from_secs(1),
            idle_timeout: Some(Duration::from_secs(600)),
            max_lifetime: Some(Duration::from_secs(1800)),
            keepalive_interval: Some(Duration::from_secs(120)),
            leak_detection_threshold: None,
            adder_threads: 2,
            alive_bypass_window: Duration::from_millis(500),
            initialization_fail_timeout: None,
            name: None,
            timings: false,
        }
    }
}

impl PoolConfig {
    /// Most connections the pool holds (idle + in use).
    pub fn max_size(&self) -> usize {
        self.max_size
    }
    /// Most connections the pool can ever hold: the largest `max_size` it
    /// can be raised to while it runs (its slot array is this long, one
    /// 256-byte slot per connection). Set with the `max_size_cap` knob;
    /// defaults to twice `max_size`, at least 64 and at most 4096.
    pub fn max_size_cap(&self) -> usize {
        self.max_size_cap
            .unwrap_or_else(|| (self.max_size * 2).clamp(DEFAULT_CAP_MIN, MAX_POOL_SIZE))
            .max(self.max_size)
    }
    /// Fewest idle connections the housekeeper keeps.
    pub fn min_idle(&self) -> usize {
        self.min_idle
    }
    /// Longest `get()` waits.
    pub fn connection_timeout(&self) -> Duration {
        self.connection_timeout
    }
    /// Hard deadline of one whole connect.
    pub fn connect_timeout(&self) -> Duration {
        self.connect_timeout
    }
    /// Bound on one validation, and on the return path's round trips.
    pub fn validation_timeout(&self) -> Duration {
        self.validation_timeout
    }
    /// A borrow held longer than this is reported (None: off).
    pub fn leak_detection_threshold(&self) -> Option<Duration> {
        self.leak_detection_threshold
    }

    /// Checks every range and every relation between knobs.
    pub fn validate(&self) -> Result<()> {
        fn range(knob: &str, v: Duration, min: Duration, max: Duration) -> Result<()> {
            if v < min || v > max {
                return Err(Error::config(format!(
                    "{knob} must be between {} and {}, got {}",
                    fmt_duration(min),
                    fmt_duration(max),
                    fmt_duration(v)
                )));
            }
            Ok(())
        }
        let ms = Duration::from_millis;
        let hour = Duration::from_secs(3600);
        if self.max_size == 0 || self.max_size > MAX_POOL_SIZE {
            return Err(Error::config(format!(
                "max_size must be between 1 and {MAX_POOL_SIZE}, got {}",
                self.max_size
            )));
        }
        if let Some(cap) = self.max_size_cap {
            if cap < self.max_size || cap > MAX_POOL_SIZE {
                return Err(Error::config(format!(
                    "max_size_cap must be between max_size ({}) and {MAX_POOL_SIZE}, got {cap}",
                    self.max_size
                )));
            }
        }
        if self.min_idle > self.max_size {
            return Err(Error::config(format!(
                "min_idle ({}) must not exceed max_size ({})",
                self.min_idle, self.max_size
            )));
        }
        range("connection_timeout", self.connection_timeout, ms(1), hour)?;
        range("connect_timeout", self.connect_timeout, ms(1), hour)?;
        range("validation_timeout", self.validation_timeout, ms(1), hour)?;
        range("alive_bypass_window", self.alive_bypass_window, ms(0), hour)?;
        for (knob, v) in [
            ("idle_timeout", self.idle_timeout),
            ("max_lifetime", self.max_lifetime),
            ("keepalive_interval", self.keepalive_interval),
            ("leak_detection_threshold", self.leak_detection_threshold),
        ] {
            if let Some(v) = v {
                range(knob, v, ms(10), Duration::from_secs(7 * 24 * 3600))?;
            }
        }
        if let Some(v) = self.initialization_fail_timeout {
            range("initialization_fail_timeout", v, ms(0), hour)?;
        }
        if let Some(name) = &self.name {
            if name.is_empty() || name.len() > 128 || name.chars().any(char::is_control) {
                return Err(Error::config(format!(
                    "pool_name must be 1 to 128 bytes without control characters, got {name:?}"
                )));
            }
        }
        if self.adder_threads == 0 || self.adder_threads > 64 {
            return Err(Error::config(format!(
                "adder_threads must be between 1 and 64, got {}",
                self.adder_threads
            )));
        }
        if let (Some(k), Some(l)) = (self.keepalive_interval, self.max_lifetime) {
            if k >= l {
                return Err(Error::config(format!(
                    "keepalive_interval ({}) must be shorter than max_lifetime ({}), or off",
                    fmt_duration(k),
                    fmt_duration(l)
                )));
            }
        }
        Ok(())
    }
}

/// Largest `max_size` accepted.
pub const MAX_POOL_SIZE: usize = 4096;

/// The smallest default `max_size_cap` (when not set): room to grow a small
/// pool at run time for a few kilobytes.
const DEFAULT_CAP_MIN: usize = 64;
