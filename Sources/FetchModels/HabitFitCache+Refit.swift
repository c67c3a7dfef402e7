import FetchTraces
import Foundation

extension HabitFitCache {
  /// A fast fit of `sample`'s window for the learning policies: its training
  /// part [trace start, `base`) fitted once, each later window refitted from
  /// it, only the rows after the training part evaluated
  /// (``HabitDesignTable/fastFit(to:base:prior:fitter:)``). `sample.to ≤
  /// base` is the training fit itself.
  ///
  /// The same optimum as ``fit(_:prior:fitter:start:)`` for the training
  /// window (up to the IRLS tolerance); refits approximate the training
  /// rows' deviance by its quadratic at the training fit (held-out
  /// log-likelihood within 0.01 % of full refits on the synthetic
  /// population, tested). Computed once per distinct (user, app, window,
  /// base, fitter) and shared by every learning policy of the run; a pure
  /// function of those, whichever policy asks first. Samples the design
  /// tables do not cover are fitted by ``fit(_:prior:fitter:start:)``.
  ///
  /// - Complexity: O(rows since `base`) per IRLS iteration after the
  ///   training fit.
  package func refit(_ sample: HabitSample, base: Double, prior: HabitModel?, fitter: HabitFitter) -> HabitModel {
    refit(
      user: sample.trace.user, app: sample.app, from: sample.from, to: sample.to, base: base, prior: prior,
      fitter: fitter
    ) { sample }
  }

  /// ``refit(_:base:prior:fitter:)`` of the sample of `user`'s `app` over
  /// [`from`, `to`) that `sample` makes: called only when neither a fit
  /// nor a design table covers the window, so a caller need not assemble
  /// the trace (a policy's training part and the opens since) otherwise.
  package func refit(
    user: String, app: Int32, from: Double, to: Double, base: Double, prior: HabitModel?, fitter: HabitFitter,
    sample: () -> HabitSample
  ) -> HabitModel {
    let key = FastKey(
      window: Key(user: user, app: app, from: from.bitPattern, to: to.bitPattern, fitter: fitter, start: nil),
      base: base.bitPattern)
    lock.lock()
    if let m = fastFits[key] {
      reused += 1
      lock.unlock()
      return m
    }
    guard let table = table(user: user, app: app, from: from, to: to, fitter: fitter) else {
      lock.unlock()
      return fit(sample(), prior: prior, fitter: fitter)
    }
    defer { lock.unlock() }
    let m = table.fastFit(to: to, base: base, prior: prior, fitter: fitter)
    fastFits[key] = m
    computed += 1
    return m
  }
}
