/// One tail stage as the radio model prices it, s, W and J: where it
/// starts and ends as a quiet gap after the radio's last activity (the
/// running sum of the stage durations before it), its power, and the
/// promotion back to the transfer state from it.
@usableFromInline package struct RadioStage: Sendable, Equatable {
  @usableFromInline package var start: Double
  @usableFromInline package var end: Double
  @usableFromInline package var durationS: Double
  @usableFromInline package var powerW: Double
  @usableFromInline package var promotionS: Double
  @usableFromInline package var promotionJ: Double

  @inlinable package init(start: Double, end: Double, durationS: Double, powerW: Double, promotionS: Double, promotionJ: Double) {
    self.start = start
    self.end = end
    self.durationS = durationS
    self.powerW = powerW
    self.promotionS = promotionS
    self.promotionJ = promotionJ
  }

  /// The stage table of `tail`, in order: each stage's bounds are the
  /// running sum of the durations before it.
  package static func table(of tail: [TailStage]) -> [RadioStage] {
    var stages: [RadioStage] = []
    stages.reserveCapacity(tail.count)
    var offset = 0.0
    for s in tail {
      stages.append(
        RadioStage(
          start: offset, end: offset + s.durationS, durationS: s.durationS, powerW: s.powerW,
          promotionS: s.promotionTimeS, promotionJ: s.promotionTimeS * s.promotionPowerW))
      offset += s.durationS
    }
    return stages
  }
}

/// The scalar terms of a radio, as plain numbers (a ``RadioProfile`` holds
/// an array; reading these retains nothing).
@usableFromInline package struct RadioTerms: Sendable, Equatable {
  /// Downlink and uplink rates, bit/s.
  @usableFromInline package var downBitsPerS = 0.0
  @usableFromInline package var upBitsPerS = 0.0
  /// Throughput power terms, W: αd·td and αu·tu.
  @usableFromInline package var downW = 0.0
  @usableFromInline package var upW = 0.0
  /// Connected power β, W.
  @usableFromInline package var connectedW = 0.0
  /// Promotion time from idle, s, and its energy, J.
  @usableFromInline package var idlePromotionS = 0.0
  @usableFromInline package var idlePromotionJ = 0.0
  /// The whole tail's energy, J, and its length, s.
  @usableFromInline package var wholeTailJ = 0.0
  @usableFromInline package var tailDurationS = 0.0

  /// All zero: a radio that is never used (offline).
  @inlinable package init() {}

  /// The terms of `r`, whose stage table is `stages`.
  package init(_ r: RadioProfile, stages: [RadioStage]) {
    downBitsPerS = r.downlinkMbps * 1e6
    upBitsPerS = r.uplinkMbps * 1e6
    downW = r.downlinkWPerMbps * r.downlinkMbps
    upW = r.uplinkWPerMbps * r.uplinkMbps
    connectedW = r.connectedPowerW
    idlePromotionS = r.promotionTimeS
    idlePromotionJ = r.promotionTimeS * r.promotionPowerW
    tailDurationS = stages.last?.end ?? 0
    let terms = self
    wholeTailJ = stages.withUnsafeBufferPointer { RadioModel(terms: terms, stages: $0).tailEnergy(gap: .infinity) }
  }

  /// How far from an interval another can change its radio cost, s: the
  /// tail plus the idle promotion, and a second of margin.
  @inlinable package var lookAroundS: Double { tailDurationS + idlePromotionS + 1 }

  /// When the tail that follows activity ending at `end` stops, Unix s:
  /// at the end of its last stage, or at the next activity (`next`) if
  /// that comes first.
  @inlinable package func tailEnd(after end: Double, nextActivityAt next: Double = .infinity) -> Double {
    min(end + tailDurationS, next)
  }
}

/// The radio model: the power state machine of one radio technology read
/// from its terms and its stage table, so that pricing retains nothing.
///
/// Energy of one isolated transfer (Huang et al., "A close examination of
/// performance and power characteristics of 4G LTE networks", MobiSys
/// 2012, doi:10.1145/2307636.2307658):
///
///     E = P_pro·T_pro + (αu·tu + αd·td + β)·T_xfer + Σ P_tail,i·T_tail,i
///
/// Every price of radio activity in the package (the engine's marginal
/// energy, the policies' estimates, the budgeted oracle's costs and the
/// timeline's tails) is one of these methods. ``RadioProfile`` makes one
/// with ``RadioProfile/withModel(_:)``; the engine makes one from its table
/// of every radio's stages.
@usableFromInline package struct RadioModel {
  @usableFromInline package let terms: RadioTerms
  /// This radio's stages; valid while the caller holds their storage.
  @usableFromInline package let stages: UnsafeBufferPointer<RadioStage>

  @inlinable package init(terms: RadioTerms, stages: UnsafeBufferPointer<RadioStage>) {
    self.terms = terms
    self.stages = stages
  }

  /// Energy of the tail spent during a quiet gap of `gap` seconds, J.
  @inlinable package func tailEnergy(gap: Double) -> Double {
    var e = 0.0
    for s in stages {
      let inStage = min(max(gap - s.start, 0), s.durationS)
      e += inStage * s.powerW
      if gap <= s.end { break }
    }
    return e
  }

  /// Promotion needed to transfer again after a quiet gap of `gap` seconds:
  /// (time s, energy J). Zero while still in the first tail stage.
  @inlinable package func promotion(afterGap gap: Double) -> (timeS: Double, energyJ: Double) {
    for s in stages where gap < s.end { return (s.promotionS, s.promotionJ) }
    return (terms.idlePromotionS, terms.idlePromotionJ)
  }

  /// Seconds to move `downBytes` downlink and `upBytes` uplink, excluding promotion.
  @inlinable package func transferTime(downBytes: Double, upBytes: Double) -> (down: Double, up: Double) {
    (downBytes * 8 / terms.downBitsPerS, upBytes * 8 / terms.upBitsPerS)
  }

  /// Throughput-dependent transfer energy (αd·td·T_down + αu·tu·T_up), J;
  /// the β part is charged through the connected time.
  @inlinable package func throughputEnergy(downS: Double, upS: Double) -> Double {
    terms.downW * downS + terms.upW * upS
  }

  /// Energy of one isolated transfer from and back to idle, J: promotion,
  /// β for the transfer (and `extraConnectedS`), the throughput term and
  /// the whole tail.
  @inlinable package func isolatedTransferEnergy(downBytes: Double, upBytes: Double, extraConnectedS: Double) -> Double {
    let t = transferTime(downBytes: downBytes, upBytes: upBytes)
    return terms.idlePromotionJ
      + terms.connectedW * (t.down + t.up + extraConnectedS)
      + throughputEnergy(downS: t.down, upS: t.up)
      + tailEnergy(gap: .infinity)
  }

  /// Energy a fetch would add if started now, J, judged from the past only:
  /// the radio has been quiet for `gap` seconds (0 while busy) and no other
  /// activity is assumed to follow. It pays the tail it prolongs, the
  /// promotion it needs, `connectedS` seconds at β and the throughput term;
  /// after a long gap this is ``isolatedTransferEnergy(downBytes:upBytes:extraConnectedS:)``.
  @inlinable package func marginalEnergyEstimate(afterQuietGap gap: Double, downBytes: Double, upBytes: Double, extraConnectedS: Double) -> Double {
    let t = transferTime(downBytes: downBytes, upBytes: upBytes)
    let promo = promotion(afterGap: gap)
    let tail = gap > 0 ? tailEnergy(gap: gap) : 0
    return tail + promo.energyJ + terms.connectedW * (t.down + t.up + extraConnectedS)
      + throughputEnergy(downS: t.down, upS: t.up)
  }

  /// The cost of one merged component `c` after a quiet gap that ended the
  /// previous component at `prevEnd` (`-∞` for the first), J: the tail
  /// spent in the gap, the promotion, and β for the component's length, the
  /// promotion's own time counted at promotion power instead.
  @inlinable package func componentCost(_ c: BusyInterval, after prevEnd: Double) -> Double {
    let gap = c.start - prevEnd
    let promo = promotion(afterGap: gap)
    let lead = prevEnd == -.infinity ? 0 : tailEnergy(gap: gap)
    return lead + promo.energyJ - terms.connectedW * min(promo.timeS, c.end - c.start)
      + terms.connectedW * (c.end - c.start)
  }

  /// Radio energy of a set of busy intervals, J, up to a constant that is
  /// the same for any two sets that agree outside the window they cover.
  ///
  /// Overlapping intervals are merged into components. Each component costs
  /// its promotion (from idle for the first; after the preceding quiet gap
  /// otherwise), β for its length, and the tail energy of the gap after it
  /// (the whole tail after the last one). The promotion's time is counted at
  /// promotion power instead of β.
  ///
  /// - Parameter intervals: sorted by `start`.
  /// - Complexity: O(n · tail stages).
  @inlinable package func energy(ofSorted intervals: UnsafeBufferPointer<BusyInterval>) -> Double {
    var e = RadioEnergySum()
    for iv in intervals { e.add(iv, self) }
    return e.total(self)
  }

  /// The marginal radio energy of `f`, `E(S ∪ {f}) − E(S)` (at least 0), J,
  /// where S is the intervals of `background[i...]` and `own[m...]` (each
  /// sorted by start) that reach the window [`lo`, `hi`]: one pass that
  /// prices the set without `f` and, forked where `f` falls in start order,
  /// the set with it. A fetch inside a tail that someone else paid for
  /// costs only the increment. Intervals further than ``RadioTerms/lookAroundS``
  /// from `f` cannot change the difference, so that window is exact.
  ///
  /// - Complexity: O(intervals reaching the window · tail stages).
  @inlinable package func marginalEnergy(
    of f: BusyInterval, background b: UnsafeBufferPointer<BusyInterval>, from i: Int,
    own o: UnsafeBufferPointer<BusyInterval>, from m: Int, lo: Double, hi: Double
  ) -> Double {
    var i = i, m = m
    var without = RadioEnergySum()
    var with = RadioEnergySum()
    var forked = false
    while true {
      let bg = i < b.count && b[i].start <= hi
      let ow = m < o.count && o[m].start <= hi
      if ow && o[m].end < lo {
        m += 1
        continue
      }
      let next: BusyInterval
      if bg && (!ow || b[i].start <= o[m].start) {
        next = b[i]
        i += 1
      } else if ow {
        next = o[m]
        m += 1
      } else {
        break
      }
      if !forked && next.start > f.start {
        with = without
        with.add(f, self)
        forked = true
      }
      without.add(next, self)
      if forked { with.add(next, self) }
    }
    if !forked {
      with = without
      with.add(f, self)
    }
    return max(0, with.total(self) - without.total(self))
  }
}
