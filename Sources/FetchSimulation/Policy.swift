import FetchTraces
import FetchWorld

/// The result a background launch reports, as in iOS's
/// `UIBackgroundFetchResult`.
public enum FetchResult: UInt8, Sendable, CustomStringConvertible {
  case newData, noData, failed

  /// `new_data`, `no_data` or `failed`, as in the CSV files.
  public var description: String {
    switch self {
    case .newData: "new_data"
    case .noData: "no_data"
    case .failed: "failed"
    }
  }
}

/// What a policy learns when one of its fetches finishes.
public struct FetchOutcome: Sendable, Equatable {
  /// When the fetch started and finished, Unix s.
  public var start: Double
  /// When the fetch finished, Unix s.
  public var end: Double
  /// What the fetch reported.
  public var result: FetchResult
  /// Bytes moved (both directions).
  public var bytes: Double
  /// Energy charged to the fetch (CPU and marginal radio), J.
  public var energyJ: Double
  /// The network the fetch used.
  public var network: NetworkKind
  /// Whether the device was on the charger when the fetch started (its
  /// energy then counts as drawn from the charger, `charging_energy_j`).
  public var charging: Bool

  /// The part of ``energyJ`` drawn from the battery, J: all of it, or 0
  /// when the fetch started on the charger (`battery_energy_j`). What the
  /// budgeted policies (`planner`, `imp`, `oracle-budget:XJ`) count against
  /// their energy budgets.
  public var batteryEnergyJ: Double { charging ? 0 : energyJ }
}

/// A fetch-scheduling policy: the thing FetchLab compares.
///
/// The engine calls the policy in time order with only what it may legally
/// observe: the user's past events (opens of any app, wakes, battery,
/// charging and network changes, never content updates), its own fetch
/// outcomes, and the device state in ``PolicyContext``. The policy acts by
/// asking for a fetch or setting its one timer on the context.
///
/// Policies are value types; the engine is generic over them and
/// pre-specialized for the built-in ones (`ReplayEngine.run`), so their
/// calls are static and a replay allocates nothing per event; a policy
/// registered from outside runs the generic code, with the same results. Policies that know the
/// future (oracles) get it through their own initialiser, never through the
/// engine.
public protocol FetchPolicy {
  /// Whether the engine should keep ``PolicyContext/radioQuietGapS`` up to
  /// date before each call (a binary search per event; off by default).
  static var observesRadio: Bool { get }
  /// Which trace events the policy is shown (default ``ObservedEvents/all``).
  /// With less, the engine walks only the replayed app's opens instead of
  /// every event, which makes the replay several times faster; the results
  /// are the same as long as the policy ignores the rest.
  static var observedEvents: ObservedEvents { get }
  /// Called once at the start of the replay window.
  mutating func start(_ ctx: inout PolicyContext)
  /// Called after each observable trace event has been applied.
  mutating func observe(_ event: TraceEvent, _ ctx: inout PolicyContext)
  /// Called when the timer set with ``PolicyContext/setTimer(at:)`` fires.
  mutating func timerFired(_ ctx: inout PolicyContext)
  /// Called when a fetch the policy asked for has finished.
  mutating func fetchFinished(_ outcome: FetchOutcome, _ ctx: inout PolicyContext)
}

/// The trace events a policy is shown through ``FetchPolicy/observe(_:_:)``.
public enum ObservedEvents: Sendable {
  /// Every observable event, and the device state in ``PolicyContext``
  /// (network, charging, battery) kept up to date; not `location` rows (a
  /// policy that does not react to location wakes never sees them, so it
  /// replays the same with or without them).
  case all
  /// As ``all``, and `location` rows (location wakes) too.
  case allWithLocation
  /// Only the opens of the replayed app. ``PolicyContext/network``,
  /// ``PolicyContext/isCharging`` and ``PolicyContext/batteryPct`` are then
  /// not maintained.
  case appOpens
  /// None; as ``appOpens`` for the device state.
  case none
}

extension FetchPolicy {
  /// Off.
  public static var observesRadio: Bool { false }
  /// Every event but location rows.
  public static var observedEvents: ObservedEvents { .all }
  /// Does nothing.
  public mutating func start(_ ctx: inout PolicyContext) {}
  /// Does nothing.
  public mutating func observe(_ event: TraceEvent, _ ctx: inout PolicyContext) {}
  /// Does nothing.
  public mutating func timerFired(_ ctx: inout PolicyContext) {}
  /// Does nothing.
  public mutating func fetchFinished(_ outcome: FetchOutcome, _ ctx: inout PolicyContext) {}
}

/// The policy's view of the device and its means to act.
public struct PolicyContext: Sendable {
  /// Current time, Unix s.
  public internal(set) var now: Double
  /// The app whose content the policy fetches: index into the trace's apps.
  public let app: Int32
  /// The app's name.
  public let appName: String
  /// Start of the replay window, Unix s.
  public let windowStart: Double
  /// The user's time zone (for time-of-day habits).
  public let timeZone: TraceTimeZone
  /// The network the device is on now.
  public internal(set) var network: NetworkKind
  /// Whether the device is on the charger.
  public internal(set) var isCharging = false
  /// Battery level in %, `nil` while unknown.
  public internal(set) var batteryPct: Double?
  /// Whether a fetch is running (or scheduled to start); a new request is
  /// ignored until it finishes.
  public internal(set) var fetchInFlight = false
  /// Seconds the radio of the current network has been quiet (0 while it
  /// is busy, ∞ if never used or offline), from past activity only; kept
  /// up to date only for policies whose ``FetchPolicy/observesRadio`` is true.
  public internal(set) var radioQuietGapS = Double.infinity
  /// How long the radio of the current network stays up after its last
  /// transfer (its whole tail), s; kept with ``radioQuietGapS``. The radio
  /// is up while `radioQuietGapS < radioTailS`.
  package internal(set) var radioTailS = 0.0
  /// When the policy's timer fires; `.infinity` when unset.
  public internal(set) var timerAt = Double.infinity

  /// Whether (and how) the policy's fetches hand large items to the
  /// device's background transfer queue (`TransferQueue.swift`); nil: the
  /// handler downloads everything itself, within the fetch budget.
  package var transfers: TransferSettings?
  /// Whether the app monitors location (regions, significant changes):
  /// it then pays `device.location_monitoring_w` over the whole window.
  package var monitorsLocation = false
  /// Background wakes of the app that started no fetch since the engine
  /// last looked; each is charged a CPU wake (`device.cpu_wake_j`).
  var wakesWithoutFetch: Int32 = 0

  enum Request: Equatable { case now, completing(at: Double), within(Double) }
  var request: Request?

  init(now: Double, app: Int32, appName: String, windowStart: Double, timeZone: TraceTimeZone, network: NetworkKind) {
    self.now = now
    self.app = app
    self.appName = appName
    self.windowStart = windowStart
    self.timeZone = timeZone
    self.network = network
  }

  /// Asks for a background fetch starting now.
  public mutating func requestFetch() {
    request = .now
  }

  /// Asks for a background fetch starting now that must finish within
  /// `seconds` of background time (a location wake's ~10 s, a background
  /// task's minutes) instead of ``FetchExchange/fetchBudgetS``: a fetch
  /// still running then is cut (failure `budget`).
  package mutating func requestFetch(withinS seconds: Double) {
    request = .within(max(0, seconds))
  }

  /// Asks for a fetch timed to finish as late as possible but no later than
  /// `t`: exactly at `t` when it can run whole in the network segment that
  /// ends there, else at the end of the latest earlier online segment where
  /// it fits (else it starts now). The engine computes the start from its
  /// radio model and the future network, so this is for oracle policies only.
  public mutating func requestFetch(completingBy t: Double) {
    request = .completing(at: t)
  }

  /// Records that the system woke the app in the background (a location
  /// wake) and it started no fetch: the wake's CPU energy,
  /// `device.cpu_wake_j`, is charged to the app as monitoring energy.
  package mutating func chargeWakeWithoutFetch() {
    wakesWithoutFetch += 1
  }

  /// Sets the policy's single timer to `t`, replacing any earlier one.
  public mutating func setTimer(at t: Double) {
    timerAt = max(t, now)
  }

  /// Cancels the timer.
  public mutating func cancelTimer() {
    timerAt = .infinity
  }
}
