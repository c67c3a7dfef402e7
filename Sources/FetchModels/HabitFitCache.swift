import FetchSupport
import FetchTraces
import Foundation

// MARK: - Shared fits

/// Habit fits shared by the policies replayed for one user.
///
/// Every learning policy of a run (each `ios-minimum` and `ios-custom`
/// setting, IMP) fits the same (user, app) pairs on the same windows: the
/// training part, then nightly the history up to the same refit times. A fit
/// depends only on its sample window, prior, fitter and IRLS start, so the
/// first policy to ask computes it and the others reuse it.
///
/// Given the user's whole trace, the cache also builds each app's design
/// once for the whole window (features, counts and exposures of every bin;
/// ``HabitDesignTable``): a window starting at the trace start is a prefix
/// of it (the bins, their features and their counts are the same, only the
/// last bin is cut at the window end), so a nightly refit costs its IRLS
/// iterations only. The results are bit for bit those of
/// ``HabitFitter/fit(_:prior:start:)`` (tested).
///
/// The learning policies use ``refit(_:base:prior:fitter:)`` instead: the
/// training fit by grouped IRLS (the same optimum), and each nightly refit
/// from the one a day earlier with the rows already seen summarised by
/// their normal equations (``HabitDesignTable/fastFit(to:base:prior:fitter:)``).
/// The apps' tables share the columns that do not depend on the app
/// (``HabitUserDesign``).
///
/// Thread-safe (a lock), but meant for one user's replays on one thread.
package final class HabitFitCache: @unchecked Sendable {
  struct Key: Hashable {
    var user: String
    var app: Int32
    var from: UInt64
    var to: UInt64
    var fitter: HabitFitter
    var start: [UInt64]?
  }

  /// The user's whole trace, for the design tables (nil: none).
  private let trace: UserTrace?
  struct FastKey: Hashable {
    var window: Key
    var base: UInt64
  }

  private var fits: [Key: HabitModel] = [:]
  /// Fits of ``refit(_:base:prior:fitter:)``.
  var fastFits: [FastKey: HabitModel] = [:]
  private var tables: [Int32: HabitDesignTable] = [:]
  /// The open probabilities shared per fast fit (when ``sharesOpenProbabilities``).
  private var openTables: [FastKey: SharedOpenProbabilities] = [:]
  /// Whether ``openProbabilities(user:app:from:to:base:fitter:)`` shares
  /// tables: worth it when several Minimum-scheduler settings are replayed
  /// with this cache (a run decides from its policies), not for one.
  package let sharesOpenProbabilities: Bool
  /// The columns the apps' tables share.
  private var userDesign: HabitUserDesign?
  let lock = NSLock()
  /// Fits computed and fits reused, for tests and benchmarks.
  package internal(set) var computed = 0
  package internal(set) var reused = 0
  /// Row evaluations of the fits from the design tables so far (a
  /// deterministic measure of their work, for scaling tests).
  package var rowsEvaluated: Int {
    lock.lock()
    defer { lock.unlock() }
    return tables.values.reduce(0) { $0 + $1.rowsEvaluated }
  }

  /// - Parameter trace: the user's whole trace; samples of this user starting
  ///   at its start (and ending within it) are fitted from per-app design
  ///   tables. Their traces must hold the same opens before the window end
  ///   (a training part and the opens seen since, as the policies keep).
  ///   - sharesOpenProbabilities: whether the policies share the open
  ///     probabilities of each fast fit (``openProbabilities(user:app:from:to:base:fitter:)``).
  package init(trace: UserTrace? = nil, sharesOpenProbabilities: Bool = false) {
    self.trace = trace
    self.sharesOpenProbabilities = sharesOpenProbabilities
  }

  /// The open probabilities shared by the policies whose habit model is
  /// ``refit(user:app:from:to:base:prior:fitter:sample:)``'s fit of the
  /// same arguments (one table per fit, made on first use); nil unless
  /// ``sharesOpenProbabilities``.
  package func openProbabilities(
    user: String, app: Int32, from: Double, to: Double, base: Double, fitter: HabitFitter
  ) -> SharedOpenProbabilities? {
    guard sharesOpenProbabilities else { return nil }
    let key = FastKey(
      window: Key(user: user, app: app, from: from.bitPattern, to: to.bitPattern, fitter: fitter, start: nil),
      base: base.bitPattern)
    lock.lock()
    defer { lock.unlock() }
    if let t = openTables[key] { return t }
    let t = SharedOpenProbabilities()
    openTables[key] = t
    return t
  }

  /// `fitter.fit(sample, prior:, start:)`, computed once per distinct
  /// (user, app, window, fitter, start); `prior` must be the same on every
  /// call (one population model per run).
  package func fit(_ sample: HabitSample, prior: HabitModel?, fitter: HabitFitter, start: [Double]? = nil) -> HabitModel {
    let key = Key(
      user: sample.trace.user, app: sample.app, from: sample.from.bitPattern, to: sample.to.bitPattern,
      fitter: fitter, start: start?.map(\.bitPattern))
    lock.lock()
    defer { lock.unlock() }
    if let m = fits[key] {
      reused += 1
      return m
    }
    let m: HabitModel
    if let table = table(for: sample, fitter: fitter) {
      m = table.fit(to: sample.to, prior: prior, fitter: fitter, start: start)
    } else {
      m = fitter.fit(sample, prior: prior, start: start)
    }
    fits[key] = m
    computed += 1
    return m
  }

  /// The design table of `sample`'s app when it covers the sample's window
  /// (made on first use), else nil. Call with the lock held.
  func table(for sample: HabitSample, fitter: HabitFitter) -> HabitDesignTable? {
    table(user: sample.trace.user, app: sample.app, from: sample.from, to: sample.to, fitter: fitter)
  }

  /// ``table(for:fitter:)`` of the window [`from`, `to`) of `user`'s `app`.
  func table(user: String, app: Int32, from: Double, to: Double, fitter: HabitFitter) -> HabitDesignTable? {
    guard let trace, user == trace.user, from == trace.start, to <= trace.end,
      app >= 0, Int(app) < trace.apps.count, to > from,
      HabitBins(from: from, to: to, binSeconds: fitter.binSeconds).count > 0
    else { return nil }
    if let t = tables[app], t.bins.binSeconds == fitter.binSeconds { return t }
    if userDesign?.bins.binSeconds != fitter.binSeconds {
      userDesign = HabitUserDesign(trace: trace, binSeconds: fitter.binSeconds)
    }
    let table = HabitDesignTable(shared: userDesign!, trace: trace, app: app)
    tables[app] = table
    return table
  }
}

/// One app's design over a user's whole trace: the rows of every bin from
/// the trace start (features at the bin start, opens in the bin, exposure),
/// the app's open times, and the prior's per-row shape once known.
final class HabitDesignTable {
  let bins: HabitBins
  /// The 12 design columns, `bins.count` × 12, column-major: the user's
  /// shared columns with this app's `recency_app` in column 10
  /// (``recencyApp``), or the table's own when built alone.
  private let columns: [Double]
  /// This app's `recency_app` column when ``columns`` are the user's
  /// shared ones (whose column 10 is a placeholder); nil when built alone.
  private let recencyApp: [Double]?
  /// `bins.count` × 12, column-major (assembled on first use for a table
  /// built from shared columns: only the row-wise fallback and the tests
  /// need it whole).
  private(set) lazy var x: [Double] = {
    guard let recencyApp else { return columns }
    var x = columns
    let n = bins.count
    for i in 0..<n { x[i + 10 * n] = recencyApp[i] }
    return x
  }()
  let y: [Double]
  let exposure: [Double]
  /// The app's open times in the window, sorted.
  let opens: [Double]
  /// ``HabitFitter/priorShape(x:row:rows:mean:)`` of every row, and the prior it is for.
  private var shape: (prior: [Double], values: [Double])?
  /// Running sums of exposure × prior shape over the rows, for the prior
  /// mean of a window's fit (``scaledExposure(rows:last:prior:)``), and
  /// the prior they were summed for (nil: none).
  private var scaledSums: (prior: [Double]?, sums: [Double])?
  /// Row evaluations of this table's fits (one per row per IRLS pass of a
  /// grouped fit; a row-wise fit's window once), for scaling tests.
  var rowsEvaluated = 0
  /// y log y and log exposure of every row (for the grouped fits).
  private(set) lazy var yLogY: [Double] = y.map { $0 > 0 ? $0 * log($0) : 0 }
  private(set) lazy var logExposure: [Double] = shared?.logExposure ?? exposure.map { log($0) }
  /// The columns every app of the user shares, when built from them.
  private let shared: HabitUserDesign?
  /// The rows grouped by time of day (``HabitGroupedDesign``), built on first use.
  private(set) lazy var grouped: HabitGroupedDesign = {
    let n = bins.count
    let app = recencyApp ?? Array(columns[(10 * n)..<(11 * n)])
    let groups = shared?.groups ?? HabitTimeGroups(x: columns, rows: n, binSeconds: bins.binSeconds)
    return HabitGroupedDesign(groups: groups, recencyApp: app, recencyAny: Array(columns[(11 * n)..<(12 * n)]))
  }()
  /// Base fits of ``fastFit(to:base:prior:fitter:)`` by (base end, fitter):
  /// the model and its training rows' normal equations (nil when the
  /// grouped fit failed and the row-wise one was used).
  var bases: [BaseKey: (model: HabitModel, frozen: HabitFrozenRows?)] = [:]

  struct BaseKey: Hashable {
    var to: UInt64
    var fitter: HabitFitter
  }

  /// Links of ``chainFit(to:base:prior:fitter:)``.
  var chain: [ChainKey: (model: HabitModel, frozen: HabitFrozenRows?)] = [:]

  struct ChainKey: Hashable {
    var to: UInt64
    var base: UInt64
    var fitter: HabitFitter
  }

  /// The table of `app` from the columns `shared` holds for every app of
  /// `trace`: only the `recency_app` column, the counts and the open times
  /// are the app's own. The same rows, bit for bit, as
  /// ``init(trace:app:binSeconds:)``'s (tested).
  ///
  /// - Complexity: O(events + bins), one `log1p` per bin; the shared
  ///   columns are not copied.
  init(shared: HabitUserDesign, trace: UserTrace, app: Int32) {
    self.shared = shared
    let bins = shared.bins
    self.bins = bins
    let n = bins.count
    var column = [Double](repeating: 0, count: n)
    var y = [Double](repeating: 0, count: n)
    // One pass over the events: the app's open times (in trace order).
    let opens = trace.events.compactMap { $0.kind == .open && $0.app == app ? $0.time : nil }
    var p = 0
    var lastApp = -Double.infinity
    column.withUnsafeMutableBufferPointer { col in
      for i in 0..<n {
        let t0 = bins.start(bins.first + i)
        while p < opens.count && opens[p] < t0 {
          lastApp = opens[p]
          p += 1
        }
        // As HabitModel.forEachFeature's recency_app of Recency(sinceAppOpenS: t0 − lastApp).
        col[i] = HabitModel.cappedLog1p(t0 - lastApp, cap: HabitModel.appRecencyCapS, scale: 3600)
      }
    }
    // Counts as HabitModel.fillDesign counts them.
    if n > 0 {
      let lo = bins.start(bins.first)
      for t in opens where t >= lo && t < bins.to {
        let k = min(n - 1, max(0, Int(((t - lo) / bins.binSeconds).rounded(.down))))
        y[k] += 1
      }
    }
    columns = shared.x
    recencyApp = column
    self.y = y
    exposure = shared.exposure
    self.opens = opens
  }

  init(trace: UserTrace, app: Int32, binSeconds: Double) {
    shared = nil
    bins = HabitBins(from: trace.start, to: trace.end, binSeconds: binSeconds)
    let n = bins.count
    var x = [Double](repeating: 0, count: n * HabitModel.featureCount)
    var y = [Double](repeating: 0, count: n)
    var exposure = [Double](repeating: 0, count: n)
    let sample = HabitSample(trace: trace, app: app, from: trace.start, to: trace.end)
    _ = HabitModel.fillDesign(sample, bins: bins, x: &x, y: &y, exposure: &exposure, rowOffset: 0, totalRows: n)
    columns = x
    recencyApp = nil
    self.y = y
    self.exposure = exposure
    opens = trace.events.compactMap { $0.kind == .open && $0.app == app ? $0.time : nil }
  }

  /// Opens in [a, b).
  func opens(from a: Double, to b: Double) -> Int {
    let lo = firstIndex(in: 0..<opens.count) { opens[$0] >= a }
    let hi = firstIndex(in: 0..<opens.count) { opens[$0] >= b }
    return max(0, hi - lo)
  }

  /// The fit of the window [trace start, `to`): the first rows of the table,
  /// the last one cut at `to` as ``HabitBins`` cuts it.
  func fit(to: Double, prior: HabitModel?, fitter: HabitFitter, start: [Double]?) -> HabitModel {
    let window = HabitBins(from: bins.from, to: to, binSeconds: bins.binSeconds)
    let n = window.count
    let N = bins.count
    let p = HabitModel.featureCount
    var wx = [Double](repeating: 0, count: n * p)
    for j in 0..<p {
      for i in 0..<n { wx[i + j * n] = x[i + j * N] }
    }
    var wy = Array(y[0..<n])
    var we = Array(exposure[0..<n])
    wy[n - 1] = Double(lastRowOpens(to: to, rows: n))
    we[n - 1] = window.exposure(n - 1)
    rowsEvaluated += n
    var shapeValues: [Double]?
    if let prior {
      shapeValues = Array(priorShapes(prior)[0..<n])
    }
    return fitter.fit(
      x: wx, y: wy, exposure: we, opens: opens(from: bins.from, to: to), prior: prior, start: start,
      priorShape: shapeValues)
  }

  /// The opens before `to` that ``HabitModel/fillDesign(_:bins:x:y:exposure:rowOffset:totalRows:)``'s
  /// bin formula puts in the last of a window's `rows` rows (a sliver too
  /// short for a bin of its own included).
  func lastRowOpens(to: Double, rows n: Int) -> Int {
    let lo = bins.from, b = bins.binSeconds
    var i = firstIndex(in: 0..<opens.count) { opens[$0] >= to } - 1
    var last = 0
    while i >= 0 && opens[i] >= lo && Int(((opens[i] - lo) / b).rounded(.down)) >= n - 1 {
      last += 1
      i -= 1
    }
    return last
  }

  /// The scaled exposure of the window of the first `n` rows, whose last
  /// row's exposure is `last`: Σ_{i<n−1} exposure_i · shape_i + last ·
  /// shape_{n−1} (shape 1 without a prior). The running sums are added in
  /// row order once per prior, so the value has the bits of that loop.
  ///
  /// - Complexity: O(1) after the first call for a prior, O(rows) then.
  func scaledExposure(rows n: Int, last: Double, prior: HabitModel?) -> Double {
    let shape = prior.map(priorShapes)
    if scaledSums == nil || scaledSums!.prior != prior?.coefficients {
      var sums = [Double](repeating: 0, count: exposure.count + 1)
      var s = 0.0
      for i in 0..<exposure.count {
        if let shape { s += exposure[i] * shape[i] } else { s += exposure[i] }
        sums[i + 1] = s
      }
      scaledSums = (prior?.coefficients, sums)
    }
    let before = scaledSums!.sums[n - 1]
    return shape.map { before + last * $0[n - 1] } ?? before + last
  }

  /// ``HabitFitter/priorShape(x:row:rows:mean:)`` of every table row for `prior`.
  func priorShapes(_ prior: HabitModel) -> [Double] {
    if let shape, shape.prior == prior.coefficients { return shape.values }
    let p = HabitModel.featureCount
    let N = bins.count
    var mean = [Double](repeating: 0, count: p)
    for j in 1..<p { mean[j] = prior.coefficients[j] }
    guard let recencyApp else {
      let values = (0..<N).map { HabitFitter.priorShape(x: columns, row: $0, rows: N, mean: mean) }
      shape = (prior.coefficients, values)
      return values
    }
    // HabitFitter.priorShape of the assembled rows: the same terms in the same order.
    let values = (0..<N).map { i in
      var s = 0.0
      for j in 1..<p { s += (j == 10 ? recencyApp[i] : columns[i + j * N]) * mean[j] }
      return exp(HabitModel.clampEta(s))
    }
    shape = (prior.coefficients, values)
    return values
  }
}
