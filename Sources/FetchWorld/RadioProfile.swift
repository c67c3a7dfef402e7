/// One stage of a radio's tail: after the last transfer the radio stays in
/// this state for `durationS` seconds drawing `powerW`, then moves on.
package struct TailStage: Sendable, Equatable {
  /// Seconds spent in this stage.
  package var durationS: Double
  /// Power drawn in this stage, W.
  package var powerW: Double
  /// Time to get back to the transfer state from this stage, s.
  package var promotionTimeS: Double
  /// Power drawn while promoting from this stage, W.
  package var promotionPowerW: Double

  package init(durationS: Double, powerW: Double, promotionTimeS: Double = 0, promotionPowerW: Double = 0) {
    self.durationS = durationS
    self.powerW = powerW
    self.promotionTimeS = promotionTimeS
    self.promotionPowerW = promotionPowerW
  }
}

/// The parameters of one radio technology: promotion from idle, transfer
/// power `P = αu·tu + αd·td + β`, and a tail of one or more stages.
///
/// The physics is ``RadioModel``'s: every method here prices through
/// ``withModel(_:)``, from the stage table the profile keeps (``stages``,
/// rebuilt whenever ``tail`` changes). Defaults and sources are in
/// ``WorldParameters`` (see `fetchlab params`).
package struct RadioProfile: Sendable, Equatable {
  /// Promotion from idle to the transfer state: time (s) and power (W).
  package var promotionTimeS: Double
  package var promotionPowerW: Double
  /// β: power while connected and transferring, W.
  package var connectedPowerW: Double
  /// αd and αu: extra power per Mbps of downlink and uplink throughput, W/Mbps.
  package var downlinkWPerMbps: Double
  package var uplinkWPerMbps: Double
  /// Throughputs td and tu, Mbps.
  package var downlinkMbps: Double
  package var uplinkMbps: Double
  /// Tail stages, in the order the radio passes through them.
  package var tail: [TailStage] { didSet { stages = RadioStage.table(of: tail) } }
  /// The tail as the radio model reads it (``RadioStage/table(of:)``).
  package private(set) var stages: [RadioStage]

  package init(
    promotionTimeS: Double, promotionPowerW: Double, connectedPowerW: Double,
    downlinkWPerMbps: Double, uplinkWPerMbps: Double, downlinkMbps: Double,
    uplinkMbps: Double, tail: [TailStage]
  ) {
    self.promotionTimeS = promotionTimeS
    self.promotionPowerW = promotionPowerW
    self.connectedPowerW = connectedPowerW
    self.downlinkWPerMbps = downlinkWPerMbps
    self.uplinkWPerMbps = uplinkWPerMbps
    self.downlinkMbps = downlinkMbps
    self.uplinkMbps = uplinkMbps
    self.tail = tail
    stages = RadioStage.table(of: tail)
  }

  /// The profile's scalar terms (``RadioTerms``).
  package var terms: RadioTerms { RadioTerms(self, stages: stages) }

  /// Calls `body` with the radio model of this profile.
  package func withModel<R>(_ body: (RadioModel) throws -> R) rethrows -> R {
    let terms = terms
    return try stages.withUnsafeBufferPointer { try body(RadioModel(terms: terms, stages: $0)) }
  }

  /// Total tail length, s: beyond this gap the radio is idle.
  package var tailDurationS: Double { stages.last?.end ?? 0 }

  /// Energy of the tail spent during a quiet gap of `gap` seconds, J
  /// (``RadioModel/tailEnergy(gap:)``).
  package func tailEnergy(gap: Double) -> Double { withModel { $0.tailEnergy(gap: gap) } }

  /// Promotion needed to transfer again after a quiet gap of `gap` seconds:
  /// (time s, energy J) (``RadioModel/promotion(afterGap:)``).
  package func promotion(afterGap gap: Double) -> (timeS: Double, energyJ: Double) {
    withModel { $0.promotion(afterGap: gap) }
  }

  /// Seconds to move `downBytes` downlink and `upBytes` uplink, excluding
  /// promotion (``RadioModel/transferTime(downBytes:upBytes:)``).
  package func transferTime(downBytes: Double, upBytes: Double) -> (down: Double, up: Double) {
    withModel { $0.transferTime(downBytes: downBytes, upBytes: upBytes) }
  }

  /// Throughput-dependent transfer energy, J (``RadioModel/throughputEnergy(downS:upS:)``).
  package func throughputEnergy(downS: Double, upS: Double) -> Double {
    withModel { $0.throughputEnergy(downS: downS, upS: upS) }
  }

  /// Energy of one isolated transfer from and back to idle, J
  /// (``RadioModel/isolatedTransferEnergy(downBytes:upBytes:extraConnectedS:)``).
  package func isolatedTransferEnergy(downBytes: Double, upBytes: Double = 0, extraConnectedS: Double = 0) -> Double {
    withModel { $0.isolatedTransferEnergy(downBytes: downBytes, upBytes: upBytes, extraConnectedS: extraConnectedS) }
  }

  /// Energy a fetch would add if started now after a quiet gap of `gap`
  /// seconds, J (``RadioModel/marginalEnergyEstimate(afterQuietGap:downBytes:upBytes:extraConnectedS:)``).
  package func marginalEnergyEstimate(afterQuietGap gap: Double, downBytes: Double, upBytes: Double, extraConnectedS: Double) -> Double {
    withModel {
      $0.marginalEnergyEstimate(afterQuietGap: gap, downBytes: downBytes, upBytes: upBytes, extraConnectedS: extraConnectedS)
    }
  }

  /// Radio energy of a set of busy intervals sorted by start, J
  /// (``RadioModel/energy(ofSorted:)``).
  package func energy(ofSorted intervals: [BusyInterval]) -> Double {
    intervals.withUnsafeBufferPointer { b in withModel { $0.energy(ofSorted: b) } }
  }
}
