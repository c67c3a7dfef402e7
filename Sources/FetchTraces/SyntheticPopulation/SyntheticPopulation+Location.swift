import FetchSupport
import Foundation

extension SyntheticPopulation {
  /// A place of the synthetic day with a monitored region.
  enum Place: Int32 {
    case home = 0
    case work = 1

    /// The region id in the trace (`enter:home`).
    var regionID: String {
      switch self {
      case .home: "home"
      case .work: "work"
      }
    }
  }

  /// A move of the user between places (a commute or an outing from home
  /// and back), UTC Unix s, as ``generateNetwork(_:into:trips:using:)``
  /// laid it out.
  struct Trip: Equatable {
    var start: Double
    var end: Double
    var from: Place
    var to: Place
  }

  /// Appends the user's `location` rows for `trips` and returns the region
  /// table (``UserTrace/regions``: `home`, then `work` for commuters).
  ///
  /// Per trip (Apple Core Location; the numbers are M, hence parameters): an
  /// `exit:<from>` row when it starts, `significant` rows while the user
  /// moves, spaced ``Parameters/significantChangeMinMinutes`` plus an
  /// exponential extra of mean ``Parameters/significantChangeExtraMinutes``
  /// (the service reports after ~500 m, no more often than about every
  /// 5 min), and an `enter:<to>` row when it ends. A commute moves
  /// throughout; an outing moves for its first and last
  /// ``Parameters/outingMovingMinutes`` (and stays put in between). Rows
  /// outside the window are dropped; times are whole milliseconds.
  ///
  /// - Complexity: O(rows).
  func generateLocations(
    _ tr: Traits, trips: [Trip], into events: inout [TraceEvent],
    using rng: inout SplitMix64
  ) -> [String] {
    let p = parameters
    let minGap = p.significantChangeMinMinutes * 60
    let extra = p.significantChangeExtraMinutes * 60
    let moving = p.outingMovingMinutes * 60
    let usesWork = trips.contains { $0.from == .work || $0.to == .work }
    let regions = usesWork ? ["home", "work"] : ["home"]
    func add(_ t: Double, _ c: LocationChange) {
      let tt = Self.ms(t)
      guard tt >= tr.start && tt <= tr.end else { return }
      events.append(TraceEvent(time: tt, kind: .location, value: c.code))
    }
    // Significant changes keep the minimum spacing across trips too.
    var last = -Double.infinity
    func significant(from a: Double, to b: Double) {
      var t = max(a, last) + minGap + extra * -log(rng.uniformPositive())
      while t < b {
        add(t, LocationChange(.significant))
        last = t
        t += minGap + extra * -log(rng.uniformPositive())
      }
    }
    for trip in trips.sorted(by: { $0.start < $1.start }) {
      add(trip.start, LocationChange(.exit, region: trip.from.rawValue))
      if trip.from == trip.to {
        let m = min(moving, (trip.end - trip.start) / 2)
        significant(from: trip.start, to: trip.start + m)
        significant(from: trip.end - m, to: trip.end)
      } else {
        significant(from: trip.start, to: trip.end)
      }
      add(trip.end, LocationChange(.enter, region: trip.to.rawValue))
    }
    return regions
  }
}
