//! The cache warmer's clock: wall time in milliseconds and a sleep until a point in it, so tests
//! can advance time instead of waiting minutes.

use futures::future::BoxFuture;

/// Time as the cache warmer sees it.
pub trait CacheWarmingClock: Send + Sync {
    /// Milliseconds since the Unix epoch.
    fn now(&self) -> u64;
    /// Resolves once [`now`](Self::now) reaches `at_ms`.
    fn sleep_until(&self, at_ms: u64) -> BoxFuture<'static, ()>;
}

/// The system clock and tokio's timer.
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemClock;

impl CacheWarmingClock for SystemClock {
    fn now(&self) -> u64 {
        pi_ai::now_ms()
    }

    fn sleep_until(&self, at_ms: u64) -> BoxFuture<'static, ()> {
        let wait = at_ms.saturating_sub(pi_ai::now_ms());
        Box::pin(tokio::time::sleep(std::time::Duration::from_millis(wait)))
    }
}
