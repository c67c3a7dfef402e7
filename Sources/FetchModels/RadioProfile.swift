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

/// The power state machine of one radio technology: promotion from idle,
/// transfer power `P = αu·tu + αd·td + β`, and a tail of one or more stages.
///
/// Energy of one isolated transfer (Huang et al., MobiSys 2012):
///
///     E = P_pro·T_pro + (αu·tu + αd·td + β)·T_xfer + Σ P_tail,i·T_tail,i
///
/// Defaults and sources are in ``WorldParameters`` (see `fetchlab params`).
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
  package var tail: [TailStage]

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
  }

  /// Total tail length, s: beyond this gap the radio is idle.
  package var tailDurationS: Double { tail.reduce(0) { $0 + $1.durationS } }

  /// Energy of the tail spent during a quiet gap of `gap` seconds, J.
  package func tailEnergy(gap: Double) -> Double {
    var e = 0.0
    var offset = 0.0
    for s in tail {
      let inStage = min(max(gap - offset, 0), s.durationS)
      e += inStage * s.powerW
      offset += s.durationS
      if gap <= offset { break }
    }
    return e
  }

  /// Promotion needed to transfer again after a quiet gap of `gap` seconds:
  /// (time s, energy J). Zero while still in the first tail stage.
  package func promotion(afterGap gap: Double) -> (timeS: Double, energyJ: Double) {
    var offset = 0.0
    for s in tail {
      if gap < offset + s.durationS {
        return (s.promotionTimeS, s.promotionTimeS * s.promotionPowerW)
      }
      offset += s.durationS
    }
    return (promotionTimeS, promotionTimeS * promotionPowerW)
  }

  /// Seconds to move `bytes` downlink and `upBytes` uplink, excluding promotion.
  package func transferTime(downBytes: Double, upBytes: Double) -> (down: Double, up: Double) {
    (downBytes * 8 / (downlinkMbps * 1e6), upBytes * 8 / (uplinkMbps * 1e6))
  }

  /// Throughput-dependent transfer energy (αd·td·T_down + αu·tu·T_up), J;
  /// the β part is charged through the connected time.
  package func throughputEnergy(downS: Double, upS: Double) -> Double {
    downlinkWPerMbps * downlinkMbps * downS + uplinkWPerMbps * uplinkMbps * upS
  }

  /// Energy of one isolated transfer from and back to idle, J.
  package func isolatedTransferEnergy(downBytes: Double, upBytes: Double = 0, extraConnectedS: Double = 0) -> Double {
    let t = transferTime(downBytes: downBytes, upBytes: upBytes)
    return promotionTimeS * promotionPowerW
      + connectedPowerW * (t.down + t.up + extraConnectedS)
      + throughputEnergy(downS: t.down, upS: t.up)
      + tailEnergy(gap: .infinity)
  }
}

extension RadioProfile {
  /// Energy a fetch would add if started now, J, judged from the past only:
  /// the radio has been quiet for `gap` seconds (0 while busy) and no other
  /// activity is assumed to follow. It pays the tail it prolongs, the
  /// promotion it needs, `connectedS` seconds at β and the throughput term;
  /// after a long gap this is ``isolatedTransferEnergy(downBytes:upBytes:extraConnectedS:)``.
  package func marginalEnergyEstimate(afterQuietGap gap: Double, downBytes: Double, upBytes: Double, extraConnectedS: Double) -> Double {
    let t = transferTime(downBytes: downBytes, upBytes: upBytes)
    let promo = promotion(afterGap: gap)
    let tail = gap > 0 ? tailEnergy(gap: gap) : 0
    return tail + promo.energyJ + connectedPowerW * (t.down + t.up + extraConnectedS)
      + throughputEnergy(downS: t.down, upS: t.up)
  }
}
