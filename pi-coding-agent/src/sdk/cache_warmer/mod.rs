//! The prompt cache warmer (pi's `CacheWarmer`): keeps the cache entry of the session's last
//! request alive by re-sending it with a one-token output cap before the entry expires, while
//! the conversation still extends that request, under the economics and safety limits of
//! [`pi_ai::cache_warming`]. Each refresh is a `usage` entry of kind `cache_warm`.

mod clock;
mod stats;
mod status;

use std::sync::{Arc, Mutex, OnceLock, Weak};

use futures::future::BoxFuture;
use pi_ai::cache_warming::{
    CACHE_WARMING_MAX_AGE_MS, CACHE_WARMING_MAX_IDLE_AGE_MS, CacheWarmingAction, CacheWarmingDecision,
    CacheWarmingPhase, evaluate_cache_warming, get_cache_warming_delay_ms, get_cache_warming_request_options,
    get_prompt_cache_ttl_ms, is_cache_warming_replayable,
};
use pi_ai::options::{CacheRetention, StreamOptions};
use pi_ai::transcript::TranscriptContext;
use pi_ai::{AssistantMessageEventStream, Model, StopReason, Usage};
use tokio_util::sync::CancellationToken;

pub use clock::{CacheWarmingClock, SystemClock};
pub use stats::{CACHE_TTL_MS, CacheMiss, CacheWaste, collect_cache_misses, compute_cache_waste, detect_cache_miss};
pub use status::{CacheWarmingState, CacheWarmingStatus, format_cache_warming_status, format_cache_warming_usage};

use crate::extensions::{CacheWarmingDecisionEvent, ExtensionRunner};
use crate::settings::CacheWarming;

/// What the warmer needs from its session (the session implements it; the warmer holds it weakly).
pub(crate) trait WarmHost: Send + Sync {
    /// The global `cacheWarming` mode.
    fn mode(&self) -> CacheWarming;
    /// Prompt size of the most recent real request on the branch, as the provider reported it.
    fn last_prompt_tokens(&self) -> u64;
    /// The extensions that decide with pi.
    fn runner(&self) -> Option<Arc<ExtensionRunner>>;
    /// Sends a request with the session's request function.
    fn stream(&self, model: &Model, context: TranscriptContext, options: StreamOptions) -> AssistantMessageEventStream;
    /// Appends a `usage` entry of `kind` and announces it.
    fn record_usage(&self, kind: &str, provider: &str, model: &str, usage: Usage, note: Option<&str>);
}

/// Whether the conversation still extends the request a run keeps warm.
pub(crate) type IsCurrent = Box<dyn Fn() -> bool + Send + Sync>;

/// The request a run replays.
pub(crate) struct WarmRequest {
    pub(crate) model: Model,
    pub(crate) context: TranscriptContext,
    pub(crate) options: StreamOptions,
}

struct Run {
    id: u64,
    request: Arc<WarmRequest>,
    is_current: Arc<IsCurrent>,
    ttl_ms: u64,
    delay_ms: u64,
    refresh_deadline_at: u64,
    started_at: u64,
    cancel: CancellationToken,
    phase: CacheWarmingPhase,
    next_warm_at: u64,
    extension_override: bool,
    /// A refresh is waiting on its timer (pi's `run.timer !== undefined`).
    timer: bool,
}

struct State {
    run: Option<Run>,
    inactive: CacheWarmingStatus,
    next_id: u64,
}

/// The session's cache warmer. `start` replaces any previous run; refreshes never extend the
/// fixed safety windows.
pub struct CacheWarmer {
    state: Mutex<State>,
    clock: Mutex<Arc<dyn CacheWarmingClock>>,
    host: OnceLock<Weak<dyn WarmHost>>,
}

impl std::fmt::Debug for CacheWarmer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CacheWarmer").finish_non_exhaustive()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl CacheWarmer {
    pub(crate) fn new() -> Self {
        CacheWarmer {
            state: Mutex::new(State {
                run: None,
                inactive: CacheWarmingStatus::inactive("waiting for first request"),
                next_id: 1,
            }),
            clock: Mutex::new(Arc::new(SystemClock)),
            host: OnceLock::new(),
        }
    }

    /// Binds the warmer to its session (once, after the session exists).
    pub(crate) fn bind(&self, host: Weak<dyn WarmHost>) {
        let _ = self.host.set(host);
    }

    /// Replaces the clock (tests advance a manual one); affects runs started afterwards.
    pub fn set_clock(&self, clock: Arc<dyn CacheWarmingClock>) {
        *lock(&self.clock) = clock;
    }

    fn clock(&self) -> Arc<dyn CacheWarmingClock> {
        lock(&self.clock).clone()
    }

    fn host(&self) -> Option<Arc<dyn WarmHost>> {
        self.host.get()?.upgrade()
    }

    fn mode(&self) -> CacheWarming {
        self.host().map(|h| h.mode()).unwrap_or(CacheWarming::Off)
    }

    fn last_prompt_tokens(&self) -> u64 {
        self.host().map(|h| h.last_prompt_tokens()).unwrap_or(0)
    }

    fn evaluate(&self, model: &Model, phase: CacheWarmingPhase) -> CacheWarmingDecision {
        evaluate_cache_warming(model, self.last_prompt_tokens(), phase)
    }

    /// pi's `status`: what `/session` shows.
    pub fn status(&self) -> CacheWarmingStatus {
        if self.mode() == CacheWarming::Off {
            return CacheWarmingStatus::inactive("cache warming disabled");
        }
        let (model, phase, is_current, refreshing, next_warm_at, extension_override) = {
            let st = lock(&self.state);
            let Some(run) = &st.run else { return st.inactive.clone() };
            (
                run.request.model.clone(),
                run.phase,
                run.is_current.clone(),
                !run.timer,
                run.next_warm_at,
                run.extension_override,
            )
        };
        if !is_current() {
            return CacheWarmingStatus::inactive("conversation context changed");
        }
        let decision = self.evaluate(&model, phase);
        if !decision.economics_available && !refreshing {
            return CacheWarmingStatus::inactive("cache economics unavailable");
        }
        CacheWarmingStatus {
            state: if refreshing { CacheWarmingState::Refreshing } else { CacheWarmingState::Scheduled },
            reason: None,
            next_warm_at: Some(next_warm_at),
            decision: Some(decision),
            extension_override,
        }
    }

    /// Keeps the cache entry written by a request for `model` with `options` warm while the
    /// request's check holds. `make` builds the request to replay and its check, only once
    /// warming starts (a copy of a long transcript is not made for nothing).
    pub(crate) fn start(
        self: &Arc<Self>,
        model: &Model,
        options: &StreamOptions,
        make: impl FnOnce() -> (WarmRequest, IsCurrent),
    ) {
        self.clear_run();
        if self.mode() == CacheWarming::Off {
            return self.stop("cache warming disabled", None, false);
        }
        if !is_cache_warming_replayable(model, options) {
            return self.stop("request cannot be replayed safely", None, false);
        }
        let Some(ttl_ms) = get_prompt_cache_ttl_ms(model, options) else {
            let reason = if options.cache_retention == Some(CacheRetention::None) {
                "request disabled prompt caching"
            } else {
                "cache lifetime unavailable"
            };
            return self.stop(reason, None, false);
        };
        let Some(delay_ms) = get_cache_warming_delay_ms(ttl_ms) else {
            return self.stop("cache lifetime unavailable", None, false);
        };
        let (request, is_current) = make();
        let id = {
            let mut st = lock(&self.state);
            let id = st.next_id;
            st.next_id += 1;
            st.run = Some(Run {
                id,
                request: Arc::new(request),
                is_current: Arc::new(is_current),
                ttl_ms,
                delay_ms,
                refresh_deadline_at: 0,
                started_at: self.clock().now(),
                cancel: CancellationToken::new(),
                phase: CacheWarmingPhase::Streaming,
                next_warm_at: 0,
                extension_override: false,
                timer: false,
            });
            id
        };
        self.schedule(id);
    }

    /// The agent run settled: streaming warming stops, idle warming continues within 30 minutes.
    pub(crate) fn on_agent_settled(&self) {
        let mode = self.mode();
        let stop = {
            let mut st = lock(&self.state);
            let Some(run) = st.run.as_mut() else { return };
            if mode == CacheWarming::Streaming {
                Some("agent run settled")
            } else {
                run.phase = CacheWarmingPhase::Idle;
                let deadline = run.started_at + CACHE_WARMING_MAX_IDLE_AGE_MS;
                (run.next_warm_at > deadline || self.clock().now() >= deadline)
                    .then_some("30-minute idle safety limit reached")
            }
        };
        if let Some(reason) = stop {
            self.stop(reason, None, false);
        }
    }

    /// Reconciles an active run after the persisted warming mode changed.
    pub fn on_mode_changed(&self) {
        let phase = match &lock(&self.state).run {
            Some(run) => run.phase,
            None => return,
        };
        if let Some(reason) = self.mode_stop_reason(phase) {
            self.stop(reason, None, false);
        }
    }

    /// Stops warming (the session is disposed).
    pub(crate) fn cancel(&self) {
        self.stop("inactive", None, false);
    }

    fn clear_run(&self) {
        if let Some(run) = lock(&self.state).run.take() {
            run.cancel.cancel();
        }
    }

    fn stop(&self, reason: &str, decision: Option<CacheWarmingDecision>, extension_override: bool) {
        self.clear_run();
        let mut status = CacheWarmingStatus::inactive(reason);
        status.decision = decision;
        status.extension_override = extension_override;
        lock(&self.state).inactive = status;
    }

    fn mode_stop_reason(&self, phase: CacheWarmingPhase) -> Option<&'static str> {
        match self.mode() {
            CacheWarming::Off => Some("cache warming disabled"),
            CacheWarming::Streaming if phase == CacheWarmingPhase::Idle => Some("agent run settled"),
            _ => None,
        }
    }

    fn schedule(self: &Arc<Self>, id: u64) {
        let clock = self.clock();
        let now = clock.now();
        let (at, cancel, stop) = {
            let mut st = lock(&self.state);
            let Some(run) = st.run.as_mut().filter(|r| r.id == id) else { return };
            run.extension_override = false;
            run.next_warm_at = now + run.delay_ms;
            // Keep half of the planned pre-expiry margin for a late timer and the dispatch.
            run.refresh_deadline_at = run.next_warm_at + (run.ttl_ms - run.delay_ms) / 2;
            let idle = run.phase == CacheWarmingPhase::Idle;
            let deadline = run.started_at + if idle { CACHE_WARMING_MAX_IDLE_AGE_MS } else { CACHE_WARMING_MAX_AGE_MS };
            let stop = (run.next_warm_at > deadline || now >= deadline).then_some(if idle {
                "30-minute idle safety limit reached"
            } else {
                "one-hour safety limit reached"
            });
            run.timer = stop.is_none();
            (run.next_warm_at, run.cancel.clone(), stop)
        };
        if let Some(reason) = stop {
            return self.stop(reason, None, false);
        }
        let Ok(handle) = tokio::runtime::Handle::try_current() else {
            return self.stop("cache warming unavailable", None, false);
        };
        let warmer = self.clone();
        let task = handle.spawn(async move {
            tokio::select! {
                _ = cancel.cancelled() => {}
                _ = clock.sleep_until(at) => warmer.refresh(id).await,
            }
        });
        drop(task);
    }

    /// The run `id` while it is the current one and still valid (pi's `validateRun`).
    fn validate(&self, id: u64) -> Option<(Arc<WarmRequest>, CacheWarmingPhase, CancellationToken)> {
        let (phase, is_current, request, cancel) = {
            let st = lock(&self.state);
            let run = st.run.as_ref().filter(|r| r.id == id)?;
            (run.phase, run.is_current.clone(), run.request.clone(), run.cancel.clone())
        };
        let reason = self.mode_stop_reason(phase).or_else(|| (!is_current()).then_some("conversation context changed"));
        if let Some(reason) = reason {
            self.stop(reason, None, false);
            return None;
        }
        Some((request, phase, cancel))
    }

    fn deadline_missed(&self, id: u64) -> bool {
        let deadline = match lock(&self.state).run.as_ref().filter(|r| r.id == id) {
            Some(run) => run.refresh_deadline_at,
            None => return true,
        };
        if self.clock().now() <= deadline {
            return false;
        }
        self.stop("cache refresh deadline missed", None, false);
        true
    }

    fn refresh(self: Arc<Self>, id: u64) -> BoxFuture<'static, ()> {
        Box::pin(async move {
            if let Some(run) = lock(&self.state).run.as_mut().filter(|r| r.id == id) {
                run.timer = false;
            }
            let Some((request, phase, _)) = self.validate(id) else { return };
            if self.deadline_missed(id) {
                return;
            }
            let decision = self.evaluate(&request.model, phase);
            let event = CacheWarmingDecisionEvent {
                warm_cost: decision.warm_cost,
                miss_cost: decision.miss_cost,
                continuation_probability: decision.continuation_probability,
                action: decision.action,
            };
            let runner = self.host().and_then(|h| h.runner());
            let action = match runner {
                Some(runner) => runner.emit_cache_warming_decision(event).await,
                None => decision.action,
            };
            let Some((_, _, cancel)) = self.validate(id) else { return };
            if self.deadline_missed(id) {
                return;
            }
            let extension_override = action != decision.action;
            if action == CacheWarmingAction::Stop {
                let reason = if extension_override {
                    "stopped by extension"
                } else if decision.economics_available {
                    "expected savings below threshold"
                } else {
                    "cache economics unavailable"
                };
                return self.stop(reason, Some(decision), extension_override);
            }
            if let Some(run) = lock(&self.state).run.as_mut().filter(|r| r.id == id) {
                run.extension_override = extension_override;
            }
            self.send(id, &request, cancel, extension_override).await;
            let still = lock(&self.state).run.as_ref().is_some_and(|r| r.id == id);
            if still {
                self.schedule(id);
            }
        })
    }

    /// Sends the refresh and records its usage; failures are best-effort silence, as pi.
    async fn send(&self, id: u64, request: &WarmRequest, cancel: CancellationToken, extension_override: bool) {
        let Some(host) = self.host() else { return };
        let mut options = get_cache_warming_request_options(&request.options);
        options.cancel = Some(cancel);
        let message = host.stream(&request.model, request.context.clone(), options).result().await;
        if self.validate(id).is_none() || matches!(message.stop_reason, StopReason::Error | StopReason::Aborted) {
            return;
        }
        let model = message.response_model.as_deref().unwrap_or(&message.model);
        let note = extension_override.then_some("extension override");
        host.record_usage("cache_warm", &message.provider, model, message.usage.clone(), note);
    }
}
