extension UserTrace {
  /// Splits the window at `t` into a training part [start, t] and a test
  /// part [t, end] (t clamped into the window).
  ///
  /// Events before `t` go to the training part, events at or after `t` to the
  /// test part. The test part starts with the device state in force at `t`:
  /// a `network` row (the last network before `t`), a `battery` row (the
  /// last sample) and a `charge_start` row if the device was charging, so a
  /// replay of the test part sees the same device as the full trace would.
  /// Opens of the training part are not repeated; a policy learns them from
  /// the training part. Both parts record in ``splitUpdateApps`` the apps
  /// with `update` rows anywhere in the window, so the trace's content
  /// times are used for the whole window, not only the part holding rows.
  public func split(at t: Double) -> (train: UserTrace, test: UserTrace) {
    let s = min(max(t, start), end)
    let cut = events.firstIndex { $0.time >= s } ?? events.count
    // The apps with update rows, marked in an array (a set insertion per
    // update row would be half the cost of a split) and then added to the set.
    var updated = [Bool](repeating: false, count: apps.count)
    var updateApps = splitUpdateApps
    for e in events where e.kind == .update {
      let a = Int(e.app)
      if a >= 0 && a < updated.count { updated[a] = true } else { updateApps.insert(e.app) }
    }
    for (a, u) in updated.enumerated() where u { updateApps.insert(Int32(a)) }
    var train = self
    train.splitUpdateApps = updateApps
    train.end = s
    train.events = Array(events[..<cut])
    var test = self
    test.start = s
    test.splitUpdateApps = updateApps
    var state: [TraceEvent] = []
    var network: TraceEvent?, battery: TraceEvent?
    var charging = false
    for e in events[..<cut] {
      switch e.kind {
      case .network: network = e
      case .battery: battery = e
      case .chargeStart: charging = true
      case .chargeEnd: charging = false
      default: break
      }
    }
    if var n = network { n.time = s; state.append(n) }
    if var b = battery { b.time = s; state.append(b) }
    if charging { state.append(TraceEvent(time: s, kind: .chargeStart)) }
    var testEvents: [TraceEvent] = []
    testEvents.reserveCapacity(state.count + events.count - cut)
    testEvents.append(contentsOf: state)
    testEvents.append(contentsOf: events[cut...])
    test.events = testEvents
    return (train, test)
  }
}
