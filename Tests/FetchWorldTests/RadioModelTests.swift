import FetchWorld
import Testing

/// The radio model's physics in closed form, on a radio with round numbers:
/// promotion from idle 0.5 s at 1.2 W, β = 1 W, 8 Mbps down at 0.1 W/Mbps,
/// 4 Mbps up at 0.25 W/Mbps, and a two-stage tail: 5 s at 0.6 W (no
/// promotion back), then 10 s at 0.3 W (0.4 s at 1.1 W back).
@Suite("Radio model")
struct RadioModelTests {
  let radio = RadioProfile(
    promotionTimeS: 0.5, promotionPowerW: 1.2, connectedPowerW: 1, downlinkWPerMbps: 0.1, uplinkWPerMbps: 0.25,
    downlinkMbps: 8, uplinkMbps: 4,
    tail: [TailStage(durationS: 5, powerW: 0.6), TailStage(durationS: 10, powerW: 0.3, promotionTimeS: 0.4, promotionPowerW: 1.1)])

  /// E(S ∪ {f}) − E(S), J.
  func marginal(_ f: BusyInterval, given s: [BusyInterval]) -> Double {
    radio.withModel { m in
      s.withUnsafeBufferPointer { b in
        m.marginalEnergy(
          of: f, background: b, from: 0, own: UnsafeBufferPointer(start: nil, count: 0), from: 0, lo: -.infinity, hi: .infinity)
      }
    }
  }

  @Test("the stage table: running bounds, promotion energies, tail length and look-around")
  func stageTable() {
    #expect(radio.stages.map(\.start) == [0, 5])
    #expect(radio.stages.map(\.end) == [5, 15])
    #expect(radio.stages.map(\.promotionJ) == [0, 0.4 * 1.1])
    #expect(radio.tailDurationS == 15)
    #expect(radio.terms.lookAroundS == 16.5)
    #expect(radio.terms.wholeTailJ.isApproximatelyEqual(to: 5 * 0.6 + 10 * 0.3))
    var r = radio
    r.tail[1].durationS = 20
    #expect(r.stages.map(\.end) == [5, 25], "the table follows the tail")
  }

  @Test("one fetch on an idle radio: promotion, β for the rest, the whole tail; plus the throughput term")
  func idleFetch() {
    // [0, 2]: 0.5 s promotion at 1.2 W, 1.5 s at β, then 5·0.6 + 10·0.3 J of tail.
    let e = radio.energy(ofSorted: [BusyInterval(start: 0, end: 2)])
    #expect(e.isApproximatelyEqual(to: 0.6 + 1.5 + 6))
    // 1 MB down (1 s at 8 Mbps), 1 kB up (2 ms at 4 Mbps): promotion, β for
    // the transfer, αd·td·1 + αu·tu·0.002, the whole tail.
    let t = radio.transferTime(downBytes: 1_000_000, upBytes: 1000)
    #expect(t.down.isApproximatelyEqual(to: 1) && t.up.isApproximatelyEqual(to: 0.002))
    let iso = radio.isolatedTransferEnergy(downBytes: 1_000_000, upBytes: 1000)
    #expect(iso.isApproximatelyEqual(to: 0.6 + 1.002 + (0.8 + 0.002) + 6))
    #expect(radio.marginalEnergyEstimate(afterQuietGap: .infinity, downBytes: 1_000_000, upBytes: 1000, extraConnectedS: 0) == iso)
  }

  @Test("a fetch in another's tail pays only the increment: the tail it used, its promotion, β")
  func fetchInTail() {
    let a = BusyInterval(start: 0, end: 2)
    // 2 s into the first stage: 2·0.6 J of tail, no promotion, 1 s at β.
    #expect(marginal(BusyInterval(start: 4, end: 5), given: [a]).isApproximatelyEqual(to: 1.2 + 1))
    // 7 s after: 5·0.6 + 2·0.3 J of tail, 0.4 s at 1.1 W, 0.6 s at β.
    #expect(marginal(BusyInterval(start: 9, end: 10), given: [a]).isApproximatelyEqual(to: 3.6 + 0.44 + 0.6))
    // Beyond the tail: an isolated fetch.
    #expect(marginal(BusyInterval(start: 100, end: 102), given: [a]).isApproximatelyEqual(to: 0.6 + 1.5 + 6))
    // Inside the other's busy time: nothing.
    #expect(marginal(BusyInterval(start: 0.5, end: 1.5), given: [a]) == 0)
    // The estimate from the past alone agrees (no later activity), with the
    // throughput term on top.
    let x = radio.transferTime(downBytes: 1_000_000, upBytes: 0)
    let estimate = radio.marginalEnergyEstimate(afterQuietGap: 7, downBytes: 1_000_000, upBytes: 0, extraConnectedS: 0)
    #expect(estimate.isApproximatelyEqual(to: 3.6 + 0.44 + 1 * x.down + 0.8 * x.down))
  }

  @Test("the tail the chart draws ends at the tail's end or the next activity")
  func tailEnd() {
    #expect(radio.terms.tailEnd(after: 100) == 115)
    #expect(radio.terms.tailEnd(after: 100, nextActivityAt: 104) == 104)
  }
}

extension Double {
  /// Equal within 1e-12 relative (absolute below 1).
  fileprivate func isApproximatelyEqual(to b: Double) -> Bool { abs(self - b) <= 1e-12 * Swift.max(1, abs(b)) }
}
