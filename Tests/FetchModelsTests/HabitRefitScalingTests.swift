import FetchModels
import FetchTraces
import Testing

@Suite("Nightly refits scale with the window")
struct HabitRefitScalingTests {
  /// Row evaluations of the nightly refits (03:00) of a user's top app
  /// over `days` days with an empty training part, as a learning policy
  /// run with `--train-fraction 0` asks for them.
  static func nightlyRefitWork(days: Int) -> Int {
    let trace = SyntheticPopulation(seed: 11, days: days).user(0)
    let fitter = HabitFitter()
    let cache = HabitFitCache(trace: trace)
    let app = trace.events.first { $0.kind == .open }!.app
    for night in 1..<days {
      let to = trace.start + Double(night) * 86_400 + 3 * 3600
      _ = cache.refit(
        user: trace.user, app: app, from: trace.start, to: to, base: trace.start, prior: nil, fitter: fitter
      ) { HabitSample(trace: trace, app: app, from: trace.start, to: to) }
    }
    return cache.rowsEvaluated
  }

  @Test("without a training part, doubling the window about doubles the refits' row evaluations (not four times)")
  func linearWithoutTraining() {
    let short = Self.nightlyRefitWork(days: 24)
    let long = Self.nightlyRefitWork(days: 48)
    #expect(short > 0)
    // Each night evaluates its new day's rows (a few IRLS passes): linear.
    // Refitting the whole history each night would be quadratic (ratio ≈ 4).
    let ratio = Double(long) / Double(short)
    #expect(ratio < 2.6, "rows \(short) → \(long), ratio \(ratio)")
  }
}
