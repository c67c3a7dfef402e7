import FetchModels
import FetchSupport
import FetchTraces
import FetchWorld

/// How a policy hands large content to the device's background transfer
/// queue (`NSURLSession` background sessions, Apple URLSession documentation): set on
/// ``PolicyContext/transfers`` by the policy, read by the engine when one of
/// the policy's fetches finds new content.
package struct TransferSettings: Sendable, Hashable {
  /// Whether the transfer is `discretionary` (waits for WiFi ∧ charging
  /// until ``deadlineS`` after it was handed over, then goes on any network).
  package var discretionary: Bool
  /// How long a discretionary transfer may wait for WiFi and power, s
  /// (NV: Apple documents no limit; the brief's 24 h).
  package var deadlineS: Double
  /// Items at least this large go to the queue, bytes; smaller ones the
  /// handler downloads itself, as before.
  package var minBytes: Double

  package init(discretionary: Bool, deadlineS: Double = 86_400, minBytes: Double = 1_000_000) {
    self.discretionary = discretionary
    self.deadlineS = deadlineS
    self.minBytes = minBytes
  }
}

/// One background download: an app's content item, handed over by a
/// fetch's handler, moved in chunks (one per stretch of eligible network)
/// until it is whole.
struct Transfer {
  /// The lane (app) it belongs to and the content version it brings.
  let lane: Int
  let version: Int
  /// The item's size and the bytes already on the device.
  let totalBytes: Double
  var doneBytes = 0.0
  /// When a discretionary transfer stops waiting for WiFi and power,
  /// Unix s (`-∞` for immediate ones).
  let deadline: Double
}

/// A stretch of one transfer on one network: a resumed request (HTTP range
/// request: promotion, request, server latency) then downlink at the
/// network's throughput until the item is whole or the stretch is cut (a
/// network change, the charger unplugged under a discretionary wait, the
/// window's end).
struct TransferChunk {
  let start: Double
  let end: Double
  /// Downlink bytes it moves.
  let bytes: Double
  let energyJ: Double
  let network: NetworkKind
}

/// One chunk of a background transfer as the replay records it (with
/// `recordEvents`): tests and invariants check the charges against it.
package struct TransferChunkRecord: Sendable, Equatable {
  /// Start and end, Unix s.
  package var start: Double
  package var end: Double
  /// Downlink bytes of the item it moved (the request's bytes apart).
  package var bytes: Double
  /// CPU plus marginal radio energy, J.
  package var energyJ: Double
  package var network: NetworkKind
  /// Whether the item was whole at its end.
  package var completes: Bool
}

/// The device's background transfer queue (one per replayed device, out of
/// process: not bound by the 30 s fetch budget, survives suspension,
/// resumes after a network loss from the bytes it has). First in, first
/// out among the transfers eligible now; one moves at a time (the
/// daemon's downlink is shared, so the total time is the same; the order
/// of completions is the simplification).
struct TransferQueue {
  var waiting: [Transfer] = []
  /// The chunk under way (of `waiting[running]`).
  var chunk: TransferChunk?
  var running = 0
  /// With nothing moving: when the queue looks again (a network or
  /// charging change, a deadline).
  var wakeAt = Double.infinity
  /// The times of the trace's charging events, sorted; built when the
  /// first transfer is handed over.
  var chargeTimes: [Double] = []
  var prepared = false

  var isEmpty: Bool { waiting.isEmpty }
  /// When the queue next needs the engine.
  var nextTime: Double { waiting.isEmpty ? .infinity : chunk?.end ?? wakeAt }

  /// The first charging change strictly after `t`, or `.infinity`.
  func nextChargeChange(after t: Double) -> Double {
    let i = firstIndex(in: 0..<chargeTimes.count) { chargeTimes[$0] > t }
    return i < chargeTimes.count ? chargeTimes[i] : .infinity
  }
}

extension ReplayEngine {
  /// Hands lane `j`'s item `version` to the queue at `t` (a fetch's handler
  /// found it and it is at least ``TransferSettings/minBytes``).
  mutating func enqueueTransfer(_ j: Int, version v: Int, at t: Double, settings s: TransferSettings) {
    if !transfers.prepared {
      for e in u.trace.events where e.kind == .chargeStart || e.kind == .chargeEnd {
        transfers.chargeTimes.append(e.time)
      }
      transfers.prepared = true
    }
    guard !transfers.waiting.contains(where: { $0.lane == j && $0.version >= v }) else { return }
    // A newer item supersedes the app's queued ones but keeps the earliest
    // deadline: the content has waited since the first hand-over (else
    // frequent updates would push the deadline back for ever).
    var deadline = s.discretionary ? t + s.deadlineS : -.infinity
    for x in transfers.waiting where x.lane == j { deadline = min(deadline, x.deadline) }
    transfers.waiting.append(Transfer(
      lane: j, version: v, totalBytes: lanes[j].newDataBytes(version: v), deadline: deadline))
    lanes[j].summary.transfersQueued += 1
    if transfers.chunk == nil { startTransfer(at: t) }
  }

  /// Finishes the chunk that ends at `t` (handing a whole item to its app)
  /// and starts the next one, or sets when to look again.
  mutating func stepTransfers(at t: Double) {
    if let c = transfers.chunk, c.end <= t {
      transfers.chunk = nil
      let r = transfers.running
      transfers.waiting[r].doneBytes = min(transfers.waiting[r].totalBytes, transfers.waiting[r].doneBytes + c.bytes)
      let x = transfers.waiting[r]
      lanes[x.lane].summary.transferEnergyJ += c.energyJ
      lanes[x.lane].summary.energyJ += c.energyJ
      if c.network.isCellular {
        lanes[x.lane].summary.transferCellularBytes += c.bytes + w.fetch.requestBytes
        lanes[x.lane].summary.cellularBytes += c.bytes + w.fetch.requestBytes
      } else {
        lanes[x.lane].summary.transferWifiBytes += c.bytes + w.fetch.requestBytes
        lanes[x.lane].summary.wifiBytes += c.bytes + w.fetch.requestBytes
      }
      lanes[x.lane].summary.transferChunks += 1
      if options.recordEvents {
        lanes[x.lane].transferChunks.append(TransferChunkRecord(
          start: c.start, end: c.end, bytes: c.bytes, energyJ: c.energyJ, network: c.network,
          completes: x.doneBytes >= x.totalBytes))
      }
      let charging = u.isCharging(at: c.start)
      if charging { lanes[x.lane].summary.chargingEnergyJ += c.energyJ }
      drainBattery(c.energyJ, charging: charging)
      if x.doneBytes >= x.totalBytes {
        transfers.waiting.remove(at: r)
        lanes[x.lane].summary.transfersCompleted += 1
        // The system relaunches the app and hands it the file.
        lanes[x.lane].sync(to: x.version, at: min(c.end, u.trace.end))
      }
    }
    startTransfer(at: t)
  }

  /// Starts the first eligible transfer at `t`, dropping the ones whose
  /// content the app already has (a fetch or a foreground refresh brought
  /// it or a newer one) or that a newer untouched item of the same app
  /// supersedes.
  mutating func startTransfer(at t: Double) {
    guard transfers.chunk == nil else { return }
    transfers.wakeAt = .infinity
    let all = transfers.waiting
    let versions = lanes.indices.map { lanes[$0].version }
    transfers.waiting.removeAll { x in
      versions[x.lane] >= x.version
        || (x.doneBytes == 0 && all.contains { $0.lane == x.lane && $0.version > x.version })
    }
    guard !transfers.waiting.isEmpty, t < u.trace.end else { return }
    let seg = u.networkIndex(at: t, hint: &netHint)
    let net = u.netKinds[seg]
    let nextNet = seg + 1 < u.netTimes.count ? u.netTimes[seg + 1] : .infinity
    let charging = u.isCharging(at: t)
    let nextCharge = transfers.nextChargeChange(after: t)
    let gated = { (x: Transfer) in t < x.deadline && !(net == .wifi && charging) }
    guard net != .offline, let r = transfers.waiting.firstIndex(where: { !gated($0) }) else {
      // Look again when the network, the charger or a deadline changes.
      var wake = min(nextNet, nextCharge)
      for x in transfers.waiting where x.deadline > t { wake = min(wake, x.deadline) }
      transfers.wakeAt = wake
      return
    }
    let x = transfers.waiting[r]
    // A discretionary transfer before its deadline runs only while plugged in.
    let stop = min(nextNet, u.trace.end, x.deadline > t ? nextCharge : .infinity)
    transfers.running = r
    transfers.chunk = planChunk(remaining: x.totalBytes - x.doneBytes, at: t, on: net, cutAt: stop)
  }

  /// Works out a chunk from `s` on `net`: the radio's promotion, the
  /// resumed request, the server latency, then `remaining` bytes down,
  /// unless cut at `cut`. Charged like a fetch: CPU wake and activity,
  /// the marginal radio energy given everything planned before it on the
  /// interface, and the throughput term; its busy time joins the radio.
  mutating func planChunk(remaining: Double, at s: Double, on net: NetworkKind, cutAt cut: Double) -> TransferChunk {
    guard let k = PreparedUser.interface(net) else {
      preconditionFailure("a transfer chunk needs a network (startTransfer checks it)")
    }
    let radio = radio(net)
    let under = promotionUnderWay(k, at: s, radio)
    let waiting = s >= under.from && s < under.to ? under.to - s : 0
    let promoS = max(radio.promotion(afterGap: quietGap(k, at: s)).timeS, waiting)
    let x = radio.transferTime(downBytes: remaining, upBytes: w.fetch.requestBytes)
    let downStart = s + promoS + x.up + w.fetch.serverLatencyS
    var end = downStart + x.down
    var bytes = remaining
    var downS = x.down
    if cut < end {
      downS = max(0, cut - downStart)
      bytes = x.down > 0 ? remaining * downS / x.down : 0
      end = cut
    }
    let iv = BusyInterval(start: s, end: end)
    let radioJ = marginalEnergy(k, net, iv) + radio.throughputEnergy(downS: downS, upS: min(x.up, end - s))
    addOwn(k, iv, now: s)
    let energy = w.device.cpuWakeEnergyJ + w.device.cpuActivePowerW * (end - s) + radioJ
    return TransferChunk(start: s, end: end, bytes: bytes, energyJ: energy, network: net)
  }
}
