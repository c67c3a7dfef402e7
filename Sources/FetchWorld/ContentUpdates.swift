/// Where the content-update times of an app come from.
package enum ContentSource: String, Sendable, CaseIterable {
  /// The trace's `update` rows when it has any for the app, else the model.
  case auto
  /// Only the trace's `update` rows (an app without any never changes).
  case trace
  /// Always the stochastic model, ignoring `update` rows.
  case model
}

/// The stochastic content-update model.
package enum ContentModelKind: String, Sendable, CaseIterable {
  /// Homogeneous Poisson updates at the app's rate.
  case poisson
  /// Poisson updates whose rate follows ``ContentUpdates/diurnalProfile`` in
  /// the user's local time, with the same daily mean.
  case diurnal
}

/// When the apps' server-side content changes (`content.*`): the trace's
/// `update` rows or a stochastic model, and the model's rates and daily
/// shape. Sources per field in ``WorldParameters/registry``.
package struct ContentUpdates: Sendable, Equatable {
  /// Where content-update times come from.
  package var source = ContentSource.auto
  /// The stochastic update model.
  package var model = ContentModelKind.poisson
  /// Mean content-update rate of an app, per hour.
  package var ratePerHour = 1.0
  /// Per-app overrides of the update rate, per hour
  /// (`content.app_rate_per_hour.<app>`).
  package var appRatePerHour: [String: Double] = [:]
  /// Relative update intensity by local hour 00…23 for the diurnal model
  /// (normalised to mean 1 when used).
  package var diurnalProfile: [Double] = ContentUpdates.ubiqlogHourlyShare

  /// The documented defaults.
  package init() {}

  /// Share of app opens by local hour in UbiqLog (D, computed from the UbiqLog dataset).
  package static let ubiqlogHourlyShare: [Double] = [
    0.046, 0.020, 0.012, 0.009, 0.004, 0.005, 0.017, 0.025, 0.030, 0.041, 0.051, 0.051,
    0.057, 0.052, 0.050, 0.046, 0.046, 0.056, 0.058, 0.062, 0.064, 0.061, 0.069, 0.068,
  ]

  /// Update rate of `app`, per second.
  package func updateRate(app: String) -> Double {
    (appRatePerHour[app] ?? ratePerHour) / 3600
  }
}
